/**
 * Which process runs the language server. Order:
 *   1. `kestrel.server.command` (used as given),
 *   2. `kestrel.server.python`, else the Python extension's active interpreter, else `python3`,
 *   3. Kestrel's private virtual environment (created by "Install Language Server"), when
 *      the interpreter from 2. does not have `kestrel` installed.
 * Pure functions here; probing and spawning live in extension code.
 */
import * as path from "node:path";

export type LaunchSource = "setting:command" | "setting:python" | "python-extension" | "python3" | "private-venv";

export interface Launch {
  command: string;
  args: string[];
  source: LaunchSource;
  /** Interpreter to probe for `kestrel` before using it (undefined for an explicit command). */
  python?: string;
}

export interface LaunchInputs {
  command?: string[] | string;
  python?: string;
  pythonExtension?: string;
  privateVenvPython?: string;
  logLevel?: string;
  platform?: NodeJS.Platform;
  /** False when the settings choose a remote provider (or turn the embedded model off): the server then
   * does not start the embedded model's process before its settings arrive (`--no-prestart-local`). */
  embeddedModelWanted?: boolean;
}

/** A python -c script: exit 0 when the Kestrel server package is importable, 3 when not. */
export const PROBE_SCRIPT =
  "import importlib.util,sys\n" +
  "try:\n ok = importlib.util.find_spec('kestrel.server') is not None\n" +
  "except Exception:\n ok = False\n" +
  "sys.exit(0 if ok else 3)";

export function splitCommand(command: string[] | string | undefined): string[] {
  if (Array.isArray(command)) return command.filter((x) => typeof x === "string" && x !== "");
  if (typeof command !== "string") return [];
  // A single string: split on whitespace, honouring simple double/single quotes.
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(command)) !== null) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

export function pythonArgs(logLevel: string | undefined, embeddedModelWanted = true): string[] {
  const level = (logLevel ?? "INFO").toUpperCase();
  return ["-m", "kestrel", "--log-level", ["DEBUG", "INFO", "WARNING", "ERROR"].includes(level) ? level : "INFO",
    ...(embeddedModelWanted ? [] : ["--no-prestart-local"])];
}

export function defaultPython(platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? "python" : "python3";
}

export function venvPython(venvDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? path.win32.join(venvDir, "Scripts", "python.exe") : path.posix.join(venvDir, "bin", "python");
}

/** Candidates in order of preference; the caller takes the first whose interpreter has `kestrel`. */
export function launchCandidates(inputs: LaunchInputs): Launch[] {
  const cmd = splitCommand(inputs.command);
  if (cmd.length > 0) return [{ command: cmd[0], args: cmd.slice(1), source: "setting:command" }];
  const args = pythonArgs(inputs.logLevel, inputs.embeddedModelWanted ?? true);
  const out: Launch[] = [];
  const python = inputs.python?.trim();
  if (python) out.push({ command: python, args, source: "setting:python", python });
  else if (inputs.pythonExtension) out.push({ command: inputs.pythonExtension, args, source: "python-extension", python: inputs.pythonExtension });
  else {
    const p = defaultPython(inputs.platform);
    out.push({ command: p, args, source: "python3", python: p });
  }
  if (inputs.privateVenvPython && inputs.privateVenvPython !== out[0].python) {
    out.push({ command: inputs.privateVenvPython, args, source: "private-venv", python: inputs.privateVenvPython });
  }
  return out;
}

export function describeLaunch(l: Launch): string {
  const where: Record<LaunchSource, string> = {
    "setting:command": "kestrel.server.command",
    "setting:python": "kestrel.server.python",
    "python-extension": "the Python extension's interpreter",
    python3: "python3 on PATH",
    "private-venv": "Kestrel's private environment",
  };
  return `${[l.command, ...l.args].join(" ")} (${where[l.source]})`;
}

/** The interpreter path from whatever the Python extension's API returns (several API generations). */
export function interpreterFromPythonApi(api: unknown, resource?: unknown): Promise<string | undefined> {
  return (async () => {
    const a = api as {
      environments?: { getActiveEnvironmentPath?: (r?: unknown) => { path?: string } | undefined };
      settings?: { getExecutionDetails?: (r?: unknown) => { execCommand?: string[] } | undefined };
    } | undefined;
    try {
      const p = a?.environments?.getActiveEnvironmentPath?.(resource)?.path;
      if (p) return p;
    } catch {
      /* older API */
    }
    try {
      const exec = a?.settings?.getExecutionDetails?.(resource)?.execCommand;
      if (exec && exec.length === 1 && exec[0]) return exec[0];
    } catch {
      /* no API */
    }
    return undefined;
  })();
}
