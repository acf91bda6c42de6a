#!/usr/bin/env node
// End-to-end test in real VS Code: code-server (Node 24) + Chromium driven by playwright-core,
// the Kestrel extension installed from the VSIX (or the built folder), kestrel-lsp from the repo's
// .venv, and the mock model (TTFT 0). Everything is started here on 127.0.0.1 and stopped at the end.
//
//   node extension/e2e/run.mjs            (make test-e2e sets up the tools first)
//   KESTREL_E2E_ONLY=untrustedWorkspace node extension/e2e/run.mjs   (only these scenarios, comma-separated)
//
// This file is the driver: lib/session.mjs sets up and tears down (lib/ holds the shared helpers,
// lib/config.mjs the environment variables), scenarios/ holds one file per feature, run in order on
// one workbench, each adding to results.json in test-output/e2e/.
import * as fs from "node:fs";
import * as path from "node:path";
import { OUT, REPO } from "./lib/config.mjs";
import { httpGet, log, t0 } from "./lib/util.mjs";
import { stopAll } from "./lib/processes.mjs";
import { newSession, recordFailure, setUp, tearDown } from "./lib/session.mjs";
import ghostText from "./scenarios/ghostText.mjs";
import nextSuggestion from "./scenarios/nextSuggestion.mjs";
import latency from "./scenarios/latency.mjs";
import toggle from "./scenarios/toggle.mjs";
import repoContext from "./scenarios/repoContext.mjs";
import readAhead from "./scenarios/readAhead.mjs";
import chatFit from "./scenarios/chatFit.mjs";
import chat from "./scenarios/chat.mjs";
import quickFix from "./scenarios/quickFix.mjs";
import quickFixTypeScript from "./scenarios/quickFixTypeScript.mjs";
import inlineEdit from "./scenarios/inlineEdit.mjs";
import nextEdit from "./scenarios/nextEdit.mjs";
import chatApply from "./scenarios/chatApply.mjs";
import chatQueue from "./scenarios/chatQueue.mjs";
import chatContext from "./scenarios/chatContext.mjs";
import codebaseChat from "./scenarios/codebaseChat.mjs";
import agentChat from "./scenarios/agentChat.mjs";
import agentWrites from "./scenarios/agentWrites.mjs";
import agentRun from "./scenarios/agentRun.mjs";
import chatMentions from "./scenarios/chatMentions.mjs";
import chatFiles from "./scenarios/chatFiles.mjs";
import chatTerminal from "./scenarios/chatTerminal.mjs";
import chatRetry from "./scenarios/chatRetry.mjs";
import chatControls from "./scenarios/chatControls.mjs";
import chatKeys from "./scenarios/chatKeys.mjs";
import chatHistory from "./scenarios/chatHistory.mjs";
import chatThemes from "./scenarios/chatThemes.mjs";
import apiKey from "./scenarios/apiKey.mjs";
import crashRestart from "./scenarios/crashRestart.mjs";
import privateInstall from "./scenarios/privateInstall.mjs";
import untrustedWorkspace from "./scenarios/untrustedWorkspace.mjs";
import commands from "./scenarios/commands.mjs";
import chatLatency from "./scenarios/chatLatency.mjs";

// In this order: later scenarios start from the editor state the earlier ones leave
// (untrustedWorkspace runs its own code-server and leaves the first one alone).
const ALL = [ghostText, nextSuggestion, latency, toggle, chat, quickFix, quickFixTypeScript, inlineEdit, nextEdit, chatApply, chatQueue, chatContext, chatFit, codebaseChat, agentChat, agentWrites, agentRun, chatMentions, chatFiles, chatTerminal, chatRetry, chatControls, chatKeys, chatThemes, chatHistory, apiKey, crashRestart, privateInstall, untrustedWorkspace, repoContext, readAhead, commands];
// Benchmarks (make bench) run only when named: they measure, they do not test.
const BENCH_ONLY = [chatLatency];
const ONLY = (process.env.KESTREL_E2E_ONLY || "").split(",").map((s) => s.trim()).filter(Boolean);
const SCENARIOS = ONLY.length ? [...ALL, ...BENCH_ONLY].filter((s) => ONLY.includes(s.name)) : ALL;
if (ONLY.length && SCENARIOS.length !== ONLY.length) {
  throw new Error(`KESTREL_E2E_ONLY: unknown scenario in ${ONLY.join(",")}; known: ${[...ALL, ...BENCH_ONLY].map((s) => s.name).join(", ")}`);
}

async function main() {
  const t = newSession();
  try {
    await setUp(t);
    for (const scenario of SCENARIOS) await scenario(t);
    await t.page.screenshot({ path: path.join(OUT, "final.png") });
    t.results.checks.screenshots = fs.readdirSync(OUT).filter((f) => f.endsWith(".png")).sort().map((f) => path.join(OUT, f));
    t.results.mockStats = JSON.parse((await httpGet(`${t.mockUrl.replace(/\/v1$/, "")}/_mock/stats`)).body);
  } catch (err) {
    await recordFailure(t, err);
    throw err;
  } finally {
    await tearDown(t);
  }
}

const watchdog = setTimeout(() => {
  console.error("e2e: overall timeout (20 min)");
  stopAll().finally(() => process.exit(2));
}, 20 * 60_000);
watchdog.unref();

main().then(
  () => {
    log(`PASS (${((Date.now() - t0) / 1000).toFixed(1)} s); results in ${path.relative(REPO, OUT)}/results.json`);
  },
  (err) => {
    console.error("e2e FAILED:", err?.stack || err);
    process.exitCode = 1;
  },
);
