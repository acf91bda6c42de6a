/**
 * The language server never starts inside the workspace folder. vscode-languageclient starts the
 * server in the workspace folder unless told otherwise, and `python -m kestrel` puts its working
 * directory first on sys.path: a folder with its own `kestrel/__main__.py` (or `asyncio.py`, ...)
 * would run its code the moment Kestrel starts, trusted or not. Attack: such a folder, and the
 * server started exactly as the extension starts it.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";

const captured: { serverOptions?: { command: string; args: string[]; options?: { cwd?: string; env?: NodeJS.ProcessEnv } } } = {};

vi.mock("vscode", () => ({}));
vi.mock("vscode-languageclient/node", () => ({
  ErrorAction: { Continue: 1 },
  RevealOutputChannelOn: { Never: 4 },
  LanguageClient: class {
    constructor(_id: string, _name: string, serverOptions: never) {
      captured.serverOptions = serverOptions;
    }
  },
}));

import { createLanguageClient } from "../src/languageClient";

const REPO_PYTHON = path.resolve(__dirname, "..", "..", ".venv", "bin", "python");

/** A workspace whose `kestrel` package writes `pwned` next to itself when imported. */
function hostileWorkspace(): { dir: string; marker: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kestrel-hostile-ws-"));
  const marker = path.join(dir, "pwned");
  fs.mkdirSync(path.join(dir, "kestrel"));
  const payload = `open(${JSON.stringify(marker)}, "w").write("ran from the workspace")\n`;
  fs.writeFileSync(path.join(dir, "kestrel", "__init__.py"), payload);
  fs.writeFileSync(path.join(dir, "kestrel", "__main__.py"), payload);
  return { dir, marker };
}

/** Starts the server the way vscode-languageclient does: `options.cwd`, else the workspace folder. */
function startAsTheClientDoes(workspace: string, env?: NodeJS.ProcessEnv) {
  const so = captured.serverOptions!;
  return spawnSync(so.command, so.args, { cwd: so.options?.cwd ?? workspace, env: env ?? so.options?.env, encoding: "utf8", timeout: 60_000 });
}

describe("the server process", () => {
  const hooks = { log: {} as never, initializationOptions: () => ({}), middleware: {}, closed: () => ({}) as never };

  it("does not run in the workspace folder", () => {
    const { dir } = hostileWorkspace();
    createLanguageClient({ command: "python3", args: ["-m", "kestrel"], source: "python3", python: "python3" }, hooks);
    const cwd = captured.serverOptions?.options?.cwd;
    expect(cwd).toBeDefined();
    expect(path.resolve(cwd!)).not.toBe(path.resolve(dir));
    expect(captured.serverOptions?.options?.env?.PYTHONSAFEPATH).toBe("1");
  });

  it.skipIf(!fs.existsSync(REPO_PYTHON))("a workspace's own kestrel package is not what runs", () => {
    const { dir, marker } = hostileWorkspace();
    createLanguageClient({ command: REPO_PYTHON, args: ["-m", "kestrel", "--version"], source: "setting:python", python: REPO_PYTHON }, hooks);
    const r = startAsTheClientDoes(dir);
    expect(fs.existsSync(marker)).toBe(false);
    expect(r.stdout).toMatch(/kestrel-lsp/);
  });

  it.skipIf(!fs.existsSync(REPO_PYTHON))("not even on a Python that ignores PYTHONSAFEPATH (< 3.11): the working directory is Kestrel's own", () => {
    const { dir, marker } = hostileWorkspace();
    createLanguageClient({ command: REPO_PYTHON, args: ["-m", "kestrel", "--version"], source: "setting:python", python: REPO_PYTHON }, hooks);
    const env = { ...captured.serverOptions!.options!.env };
    delete env.PYTHONSAFEPATH;
    const r = startAsTheClientDoes(dir, env);
    expect(fs.existsSync(marker)).toBe(false);
    expect(r.stdout).toMatch(/kestrel-lsp/);
  });
});
