// One test session: everything started before the scenarios (mock, extension, settings, code-server,
// Chromium, main.py open) and everything collected after them (logs, the key-leak scan, results.json).
import * as fs from "node:fs";
import * as path from "node:path";
import { API_KEY, OUT } from "./config.mjs";
import { launchBrowser, openWorkbench } from "./browser.mjs";
import { baseSettings, checkPrerequisites, installExtension, makeSandbox, settingsWriter, startCodeServer, writeWorkspace } from "./codeServer.mjs";
import { openMainPy, waitForReady, workbenchHelpers } from "./editor.mjs";
import { startMock } from "./mock.mjs";
import { stopAll } from "./processes.mjs";
import { findFile, t0 } from "./util.mjs";

/**
 * The state the scenarios share: `t.results` (written to results.json), the sandbox (tmp, dirs, env),
 * mockUrl, settings + writeSettings, mainPy, codeServer, context, page, editor (main.py), the
 * workbench helpers (status, statusText, ghost, ghostText, noGhost, toast, openFile) and, once the
 * API-key scenario ran, proxy.
 */
export function newSession() {
  checkPrerequisites();
  return { ...makeSandbox(), results: { startedAt: new Date().toISOString(), samples: [], checks: {} } };
}

export async function setUp(t) {
  // 1. The mock model (TTFT 0).
  t.mockUrl = await startMock(t.env);
  // 2. The extension: from the VSIX through code-server's CLI, else the built folder.
  t.results.install = installExtension(t.dirs, t.env);
  // 3. Settings and a workspace.
  t.settings = baseSettings(t.mockUrl);
  t.writeSettings = settingsWriter(t.dirs);
  t.writeSettings(t.settings);
  t.mainPy = writeWorkspace(t.dirs);
  // 4. code-server.
  const { codeServer, base } = await startCodeServer(t.tmp, t.dirs, t.env);
  t.codeServer = codeServer;
  // 5. Chromium, the workbench, Kestrel ready.
  t.context = await launchBrowser(t.dirs);
  t.page = await openWorkbench(t.context, base, t.dirs);
  Object.assign(t, workbenchHelpers(t.page));
  await waitForReady(t);
  // 6. Open main.py.
  t.editor = await openMainPy(t.page);
}

/** After a failure: what the model saw so far and a screenshot. */
export async function recordFailure(t, err) {
  t.results.error = String(err?.stack || err);
  if (t.proxy) t.results.checks.authorizationSeenByModel = [...new Set(t.proxy.seen.map((h) => h.replace(API_KEY, "<the key>") || "(none)"))];
  if (t.context) {
    await t.context.pages()[0]?.screenshot({ path: path.join(OUT, "failure.png") }).catch(() => undefined);
  }
}

/** Stops everything, copies the logs, checks the API key is in none of them, writes results.json. */
export async function tearDown(t) {
  const { results, dirs } = t;
  await t.context?.close().catch(() => undefined);
  t.proxy?.server.close();
  await stopAll();
  // Logs (including the "Kestrel" output channel) for diagnosis; then make sure the key is in none of them.
  const logsDir = path.join(dirs.data, "logs");
  if (fs.existsSync(logsDir)) fs.cpSync(logsDir, path.join(OUT, "vscode-logs"), { recursive: true });
  const leaks = [];
  const scan = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) scan(p);
      else if (e.isFile() && fs.statSync(p).size < 50_000_000 && fs.readFileSync(p).includes(API_KEY)) leaks.push(p);
    }
  };
  scan(OUT);
  for (const p of [path.join(dirs.data, "User"), path.join(dirs.data, "Machine")]) if (fs.existsSync(p)) scan(p);
  results.checks.apiKeyLeaks = leaks;
  const kestrelLog = findFile(path.join(OUT, "vscode-logs"), /Kestrel\.log$/);
  if (kestrelLog) {
    results.checks.outputChannelLog = kestrelLog;
    const rt = [...fs.readFileSync(kestrelLog, "utf8").matchAll(/round trip .*?: p50 ([\d.]+) ms, p95 ([\d.]+) ms/g)];
    if (rt.length && results.latency) results.latency.extensionHostToServerRoundTripMs = rt.map((m) => ({ p50: +m[1], p95: +m[2] }));
  }
  results.totalSeconds = +((Date.now() - t0) / 1000).toFixed(1);
  fs.writeFileSync(path.join(OUT, "results.json"), JSON.stringify(results, null, 2));
  if (!process.env.KESTREL_E2E_KEEP) fs.rmSync(t.tmp, { recursive: true, force: true });
  if (leaks.length && !results.error) {
    console.error("the API key was written to:", leaks);
    process.exitCode = 1;
  }
}
