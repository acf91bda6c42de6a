// A second kestrel-lsp process driven straight over stdio (JSON-RPC, no editor in between): what
// the server alone does, to set beside what the same request costs through VS Code and the panel.
// Started as tests/conftest.py starts it (`python -m kestrel --log-level INFO`, no KESTREL_/OPENAI_
// variables from the shell, no embedded model), configured as lib/codeServer.mjs's baseSettings.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { OUT, PYTHON, REPO } from "./config.mjs";
import { log, sleep, waitFor } from "./util.mjs";

/** The environment the server gets: the test's, minus model settings that would override ours. */
function serverEnv(env) {
  const clean = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith("KESTREL_") && !k.startsWith("OPENAI_")));
  return { ...clean, KESTREL_LOCAL: "0" };
}

/**
 * Starts kestrel-lsp, initializes it with `kestrel` settings (provider, baseUrl, model…) and waits
 * until its status says ready. Returns { request, onNotification, status, close }.
 * Its stderr (the server's log) goes to OUT/<name>.log.
 */
export async function startLspClient({ name = "kestrel-lsp-direct", env = process.env, kestrel }) {
  const logFile = fs.openSync(path.join(OUT, `${name}.log`), "w");
  const child = spawn(PYTHON, ["-m", "kestrel", "--log-level", "INFO"], { cwd: REPO, env: serverEnv(env), stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.on("data", (d) => fs.writeSync(logFile, d));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => {
    try {
      fs.writeSync(logFile, `\n[exit code=${code} signal=${signal}]\n`);
      fs.closeSync(logFile);
    } catch {
      /* closed */
    }
    resolve();
  }));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  let status;
  connection.onNotification("kestrel/status", (s) => (status = s));
  // Whatever else the server asks of its client (e.g. showMessageRequest) gets the empty answer.
  connection.onRequest(() => null);
  connection.onError(([err]) => log(`${name}: JSON-RPC error:`, err?.message ?? err));
  connection.listen();

  const close = async () => {
    try {
      await Promise.race([connection.sendRequest("shutdown"), sleep(3000)]);
      await connection.sendNotification("exit");
    } catch {
      /* already gone */
    }
    connection.dispose();
    child.stdin.end(); // stdin's end also stops the server
    const gone = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
    if (!gone) {
      child.kill("SIGKILL");
      await exited;
    }
  };

  try {
    await connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
      initializationOptions: { kestrel },
    });
    await connection.sendNotification("initialized", {});
    await waitFor(`${name} ready`, () => status && ["ready", "busy"].includes(status.state) && status.connection === "connected", 60_000, 50);
  } catch (err) {
    await close();
    throw err;
  }
  log(`${name}: pid ${child.pid}, ${status.provider} · ${status.model} ${status.connection}`);
  return {
    pid: child.pid,
    request: (method, params) => connection.sendRequest(method, params),
    onNotification: (method, handler) => connection.onNotification(method, handler),
    status: () => status,
    close,
  };
}
