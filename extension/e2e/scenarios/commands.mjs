// The commands and keys no other scenario drives, each checked where its result lands:
// Alt+\ asks for ghost text again after Esc; the status menu (Ctrl+Alt+K) → Switch effort → the
// setting on disk and the `reasoning_effort` of the next chat request the model receives; Switch
// Provider (palette) → the settings on disk and completions asked on the FIM endpoint; the menu's
// Restart language server → a new kestrel-lsp process that completes again; Show Logs → the
// Kestrel output with the restart in it and no key; Clear API Key → the model's requests carry the
// key no more. Runs last: it leaves the user settings as the session wrote them.
import * as fs from "node:fs";
import * as path from "node:path";
import { API_KEY, COMPLETION, OUT } from "../lib/config.mjs";
import { chatRequests, openChat } from "../lib/chat.mjs";
import { completesAgain, runCommand, typeUntil } from "../lib/editor.mjs";
import { authRecordingProxy, recordingEndpoint, setMock } from "../lib/mock.mjs";
import { findServerPid } from "../lib/processes.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

/** Opens the status menu with its key and picks the row with `label`. */
async function menu(page, label) {
  await page.keyboard.press("Control+Alt+K");
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "Kestrel" }).waitFor({ state: "visible" });
  await page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first().click();
}

/** Picks the row labelled exactly `label` ("high", not "xhigh") in the quick pick titled `title`. */
async function pick(page, title, label) {
  await page.locator(".quick-input-widget .quick-input-title", { hasText: title }).waitFor({ state: "visible" });
  const name = page.locator(".label-name", { hasText: new RegExp(`^\\s*${label}\\s*$`) });
  await page.locator(".quick-input-list .monaco-list-row").filter({ has: name }).first().click();
}

/** Fills the input box titled `title` and presses Enter. */
async function answer(page, title, value) {
  await page.locator(".quick-input-widget .quick-input-title", { hasText: title }).waitFor({ state: "visible" });
  await page.locator(".quick-input-widget input").fill(value);
  await page.keyboard.press("Enter");
}

/** The user's settings on disk: code-server's remote (Machine) file over the User file, as VS Code
 *  reads them (a value the Machine file sets is written back there). */
function userSettings(t) {
  const read = (scope) => JSON.parse(fs.readFileSync(path.join(t.dirs.data, scope, "settings.json"), "utf8"));
  return { ...read("User"), ...read("Machine") };
}

export default async function commands(t) {
  const { page, editor, results, mockUrl, codeServer } = t;
  const checks = (results.checks.commands = {});
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  const rec = await recordingEndpoint(mockUrl);
  try {
    // 1. Alt+\: after Esc the ghost text is gone; the key asks for it again.
    t.writeSettings({ ...t.settings, "kestrel.baseUrl": rec.url });
    await completesAgain(t, "before Alt+\\", "q = ");
    await t.noGhost();
    const asked = rec.requests.length;
    await page.keyboard.press("Alt+\\");
    await waitFor("ghost text after Alt+\\", async () => (await t.ghostText()) === COMPLETION, 30_000, 50);
    await page.keyboard.press("Escape");
    checks.triggerKey = `ghost text back after Esc (${rec.requests.length - asked} model requests meanwhile)`;

    // 2. Ctrl+Alt+K → Switch effort → high: on disk, and in the next chat request the model gets.
    t.writeSettings({ ...t.settings, "kestrel.baseUrl": rec.url, "kestrel.model": "openai/gpt-oss-20b" });
    await sleep(1000);
    await menu(page, "Switch effort");
    await pick(page, "reasoning effort", "high");
    await waitFor("kestrel.effort on disk", () => userSettings(t)["kestrel.effort"] === "high", 10_000, 100);
    const frame = await openChat(page);
    const question = `which effort is this? ${Date.now()}`; // found in the mock's log (its last 50 requests)
    const input = frame.locator("#input");
    await input.fill(question);
    await input.press("Enter");
    const turn = async () => (await chatRequests(mockUrl)).find((r) => r.messages.includes(question));
    await waitFor("the chat request", turn, 30_000, 100);
    const effort = (await turn()).body.reasoning_effort;
    if (effort !== "high") throw new Error(`the chat request's reasoning_effort is ${effort}, not high`);
    checks.switchEffort = "menu → high: kestrel.effort on disk, reasoning_effort high in the chat request";
    await editor.locator(".view-lines").click();

    // 3. Switch Provider → fim (a raw transport: base URL and model asked): on disk, then FIM requests.
    await runCommand(page, "Kestrel: Switch Provider");
    await pick(page, "model provider", "fim");
    await answer(page, "base URL", rec.url);
    await answer(page, "model id", "mock-model");
    await waitFor("the provider on disk", () => {
      const s = userSettings(t);
      return s["kestrel.provider"] === "fim" && s["kestrel.baseUrl"] === rec.url && s["kestrel.model"] === "mock-model";
    }, 10_000, 100);
    const fimFrom = rec.requests.length;
    await typeUntil(t, "a completion on the FIM endpoint", () =>
      rec.requests.slice(fimFrom).some((r) => r.path === "/v1/completions"), "v = ");
    await page.keyboard.press("Escape");
    checks.switchProvider = "fim: provider, base URL and model on disk; completions asked at /v1/completions";

    // 4. Ctrl+Alt+K → Restart language server: another process, which completes again.
    const oldPid = findServerPid(codeServer.pid);
    await menu(page, "Restart language server");
    await waitFor("a new kestrel-lsp process", () => {
      const pid = findServerPid(codeServer.pid);
      return pid && pid !== oldPid;
    }, 60_000, 250);
    await waitFor("Kestrel ready after the restart", async () => /Kestrel (ready|thinking)/.test(await t.statusText()), 60_000, 200);
    await completesAgain(t, "after Restart language server", "r = ");
    checks.restartServer = "menu → another kestrel-lsp pid, ghost text again";

    // 5. Show Logs: the Kestrel output, with the restart in it.
    await menu(page, "Show logs");
    const output = page.locator(".part.panel .monaco-editor .view-lines").first();
    await waitFor("the restart in the Kestrel output", async () =>
      ((await output.textContent().catch(() => "")) || "").replace(/\u00a0/g, " ").includes("Restarting the language server: restart requested"), 20_000, 200);
    if (((await output.textContent()) || "").includes(API_KEY)) throw new Error("the API key is in the output channel");
    await page.screenshot({ path: path.join(OUT, "show-logs.png") });
    checks.showLogs = "the Kestrel output shows 'Restarting the language server: restart requested'";
    await runCommand(page, "View: Hide Panel");
    await editor.locator(".view-lines").click();
  } finally {
    rec.server.close();
  }

  // 6. Clear API Key: the key the session stored (the API-key scenario's, or one set here) stops.
  const proxy = t.proxy ?? (t.proxy = await authRecordingProxy(mockUrl));
  t.writeSettings({ ...t.settings, "kestrel.baseUrl": proxy.url });
  if (!t.proxy.seen.some((h) => h === `Bearer ${API_KEY}`)) {
    await runCommand(page, "Kestrel: Set API Key");
    await page.locator(".quick-input-widget input[type=password]").waitFor({ state: "visible" });
    await page.keyboard.type(API_KEY);
    await page.keyboard.press("Enter");
  }
  const keyed = proxy.seen.length;
  await typeUntil(t, "the key at the model", () => proxy.seen.slice(keyed).some((h) => h === `Bearer ${API_KEY}`), "k = ");
  await page.keyboard.press("Escape");
  await runCommand(page, "Kestrel: Clear API Key");
  await t.toast("API key for").waitFor({ timeout: 20_000 });
  await sleep(1000); // the server hears of the removal through the client's settings push
  const cleared = proxy.seen.length;
  await typeUntil(t, "completions after the key was cleared", () => proxy.seen.length - cleared >= 2, "c = ");
  await page.keyboard.press("Escape");
  const after = proxy.seen.slice(cleared);
  if (after.some((h) => h.includes(API_KEY))) throw new Error("the model still got the API key after Clear API Key");
  checks.clearApiKey = `${after.length} requests after the clear, none with the key`;
  t.writeSettings(t.settings);
  log("commands: Alt+\\, effort, provider, restart, logs and clear key checked", JSON.stringify(checks));
}
