/** Small child-process helpers (probe an interpreter, run a command with streamed output). */
import { spawn } from "node:child_process";
import { serverSpawnOptions } from "./serverProcess";

export interface RunResult {
  code: number | null;
  /** Set when the program could not be started (e.g. ENOENT). */
  spawnError?: string;
  output: string;
}

export interface RunOptions {
  timeoutMs?: number;
  onLine?: (line: string) => void;
  signal?: AbortSignal;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export function run(command: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = "";
    let pending = "";
    let settled = false;
    const done = (r: RunResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(r);
      }
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], signal: opts.signal });
    } catch (e) {
      resolve({ code: null, spawnError: String((e as Error).message ?? e), output: "" });
      return;
    }
    const onData = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      if (output.length < 200_000) output += text;
      if (opts.onLine) {
        pending += text;
        const lines = pending.split(/\r?\n/);
        pending = lines.pop() ?? "";
        for (const l of lines) if (l.trim()) opts.onLine(l);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("error", (err) => done({ code: null, spawnError: err.message, output }));
    child.on("close", (code) => {
      if (pending.trim() && opts.onLine) opts.onLine(pending);
      done({ code, output });
    });
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          child.kill("SIGKILL");
          done({ code: null, spawnError: `timed out after ${opts.timeoutMs} ms`, output });
        }, opts.timeoutMs)
      : undefined;
  });
}

export type ProbeResult = "installed" | "missing" | "no-interpreter";

/** Does this interpreter have the Kestrel server package? */
export async function probeKestrel(python: string, script: string): Promise<{ result: ProbeResult; detail: string }> {
  // In Kestrel's own folder with PYTHONSAFEPATH, like the server itself: a `kestrel/` package in
  // whatever folder the extension host runs in must not be the one the probe imports.
  const r = await run(python, ["-c", script], { timeoutMs: 20_000, ...serverSpawnOptions(__dirname) });
  if (r.spawnError !== undefined) return { result: "no-interpreter", detail: r.spawnError };
  if (r.code === 0) return { result: "installed", detail: "" };
  if (r.code === 3) return { result: "missing", detail: "" };
  return { result: "no-interpreter", detail: r.output.trim().split("\n").slice(-3).join(" ") };
}
