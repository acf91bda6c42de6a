/**
 * Which interpreter runs `kestrel-lsp`: the configured command or Python, else the Python
 * extension's interpreter, else Kestrel's private environment, else `python3`; the first candidate
 * whose interpreter has `kestrel` wins (see serverCommand.ts for the order).
 */
import * as vscode from "vscode";
import * as fs from "node:fs";
import { config } from "./config";
import { privateVenvDir } from "./install";
import { probeKestrel } from "./process";
import {
  PROBE_SCRIPT,
  describeLaunch,
  interpreterFromPythonApi,
  launchCandidates,
  splitCommand,
  venvPython,
  type Launch,
} from "./serverCommand";

/** A launch to start, or why none works and which Python to offer the install for. */
export type Located = { launch: Launch } | { missing: { python: string; problem: string } };

export async function locateServer(globalStoragePath: string, log: vscode.LogOutputChannel): Promise<Located> {
  const cfg = config();
  const venvPy = venvPython(privateVenvDir(globalStoragePath));
  const command = cfg.get<string[] | string>("server.command");
  const python = cfg.get<string>("server.python")?.trim();
  const explicit = !!python || splitCommand(command).length > 0;
  const candidates = launchCandidates({
    command,
    python,
    pythonExtension: explicit ? undefined : await pythonExtensionInterpreter(log),
    privateVenvPython: fs.existsSync(venvPy) ? venvPy : undefined,
    logLevel: cfg.get<string>("server.logLevel"),
    embeddedModelWanted: !cfg.get<string>("provider") && cfg.get<boolean>("local.enabled") !== false,
  });
  const problems: string[] = [];
  for (const c of candidates) {
    if (!c.python) return { launch: c };
    const probe = await probeKestrel(c.python, PROBE_SCRIPT);
    if (probe.result === "installed") {
      if (c !== candidates[0]) log.info(`Using ${describeLaunch(c)}: ${problems.join("; ")}`);
      return { launch: c };
    }
    problems.push(probe.result === "missing" ? `kestrel is not installed for ${c.python}` : `${c.python} cannot run (${probe.detail})`);
  }
  log.warn(`Kestrel language server not found: ${problems.join("; ")}.`);
  return { missing: { python: candidates[0].python ?? "python3", problem: problems[0] } };
}

/** The Python extension's active interpreter, if that extension is installed and answers. */
export async function pythonExtensionInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await Promise.race([ext.activate(), new Promise((r) => setTimeout(r, 10_000))]);
    return await interpreterFromPythonApi(api, vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri);
  } catch (err) {
    log.warn(`Python extension interpreter unavailable: ${String(err)}`);
    return undefined;
  }
}
