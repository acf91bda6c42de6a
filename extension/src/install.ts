/**
 * "Install Language Server": a private virtual environment in the extension's global storage,
 * with the server bundled in this extension (pyproject.toml + pyserver/) or
 * `kestrel.server.installSource` installed into it by pip.
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { run } from "./process";
import { venvPython } from "./serverCommand";

export interface InstallReporter {
  step(message: string): void;
  log(line: string): void;
}

export class InstallError extends Error {}

export function privateVenvDir(globalStoragePath: string): string {
  return path.join(globalStoragePath, "venv");
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

/** Copy the bundled server sources somewhere writable (pip builds in the source tree). */
async function stageBundledServer(extensionPath: string, globalStoragePath: string): Promise<string> {
  const pyproject = path.join(extensionPath, "pyproject.toml");
  const pyserver = path.join(extensionPath, "pyserver");
  if (!(await exists(pyproject)) || !(await exists(pyserver))) {
    throw new InstallError(
      "This build of the extension does not bundle the Kestrel server; set kestrel.server.installSource (e.g. a path to the Kestrel repository).",
    );
  }
  const dest = path.join(globalStoragePath, "server-src");
  await fs.rm(dest, { recursive: true, force: true });
  await fs.mkdir(dest, { recursive: true });
  await fs.cp(pyproject, path.join(dest, "pyproject.toml"));
  await fs.cp(pyserver, path.join(dest, "pyserver"), {
    recursive: true,
    filter: (src) => !src.includes("__pycache__") && !src.endsWith(".egg-info"),
  });
  const readme = path.join(extensionPath, "README.md");
  await fs.writeFile(
    path.join(dest, "README.md"),
    (await exists(readme)) ? await fs.readFile(readme) : "Kestrel language server\n",
  );
  return dest;
}

export async function installPrivateServer(opts: {
  basePython: string;
  extensionPath: string;
  globalStoragePath: string;
  installSource?: string;
  reporter: InstallReporter;
  signal?: AbortSignal;
}): Promise<string> {
  const { reporter, signal } = opts;
  await fs.mkdir(opts.globalStoragePath, { recursive: true });
  const venv = privateVenvDir(opts.globalStoragePath);
  const python = venvPython(venv);

  if (!(await exists(python))) {
    reporter.step(`Creating a virtual environment with ${opts.basePython}…`);
    const r = await run(opts.basePython, ["-m", "venv", venv], { onLine: reporter.log, signal, timeoutMs: 180_000 });
    if (r.code !== 0) {
      await fs.rm(venv, { recursive: true, force: true });
      const hint = /ensurepip|venv/.test(r.output) ? " On Debian/Ubuntu: sudo apt install python3-venv." : "";
      throw new InstallError(`Could not create a virtual environment with ${opts.basePython}: ${r.spawnError ?? r.output.trim().split("\n").pop() ?? ""}.${hint}`);
    }
  }

  const source = opts.installSource?.trim() || (await stageBundledServer(opts.extensionPath, opts.globalStoragePath));
  reporter.step("Installing the Kestrel language server (pip)…");
  const r = await run(python, ["-m", "pip", "install", "--disable-pip-version-check", "--upgrade", source], {
    onLine: (line) => {
      reporter.log(line);
      const m = /^(Collecting|Downloading|Installing collected packages|Building wheel for|Successfully installed)\s*(\S*)/.exec(line);
      if (m) reporter.step(`${m[1]} ${m[2]}`.trim());
    },
    signal,
    timeoutMs: 15 * 60_000,
  });
  if (r.code !== 0) {
    throw new InstallError(`pip could not install the Kestrel server: ${r.spawnError ?? r.output.trim().split("\n").slice(-2).join(" ")}`);
  }
  // The methods attrs compiles at every server start, compiled once now (kestrel/compiled_methods.py:
  // a fifth of the start). Best effort: without them the server starts as before, only slower.
  reporter.step("Preparing the server's start…");
  await run(python, ["-m", "kestrel", "--compile-methods"], { onLine: reporter.log, signal, timeoutMs: 120_000 });
  return python;
}
