// The processes the test starts (mock model, code-server), each in its own process group with a
// log in OUT, and how to stop them all.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { OUT } from "./config.mjs";
import { sleep } from "./util.mjs";

const children = [];

export function start(name, cmd, args, opts = {}) {
  const logFile = fs.openSync(path.join(OUT, `${name}.log`), "w");
  const child = spawn(cmd, args, { ...opts, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", (d) => fs.writeSync(logFile, d));
  child.stderr.on("data", (d) => fs.writeSync(logFile, d));
  child.on("exit", (code, signal) => {
    try {
      fs.writeSync(logFile, `\n[exit code=${code} signal=${signal}]\n`);
    } catch {
      /* closed */
    }
  });
  children.push({ name, child });
  return child;
}

export async function stopAll() {
  for (const { child } of children.reverse()) await stop(child);
}

/** Stops one child started here, with its process group (code-server spawns children). */
export async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    /* gone */
  }
  const exited = await Promise.race([new Promise((r) => child.once("exit", () => r(true))), sleep(5000).then(() => false)]);
  if (!exited) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

/** The kestrel-lsp process started by code-server's extension host (same process group). */
export function findServerPid(groupLeader) {
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      if (!(cmd.includes("-m") && cmd.includes("kestrel") && cmd.includes("--log-level"))) continue;
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const pgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgid === groupLeader) return Number(d);
    } catch {
      /* exited */
    }
  }
  return undefined;
}
