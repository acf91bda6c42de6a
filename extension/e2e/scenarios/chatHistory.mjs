// Chat history and what survives a reload: the history panel lists the conversations with dates,
// its search filters by title, rename (VS Code input box) and delete (modal confirm) work; the
// header shows the model and disables the effort picker where the provider has none. A stopped
// answer, and one cut off by a reload mid-stream ("interrupted"), keep the text that had arrived.
// Starts and ends in main.py with the mock answering COMPLETION.
import { answered, chatFrame, openChat } from "../lib/chat.mjs";
import { COMPLETION } from "../lib/config.mjs";
import { openMainPy, waitForReady } from "../lib/editor.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

const squash = (s) => (s ?? "").replace(/\s+/g, " ").trim();
/** Something a reader takes for a date or a time ("12 Nov", "14:03", "today", "2 min ago"). */
const DATE_LIKE = /\d|today|yesterday|now|ago/i;

async function ensureChat(page) {
  const frame = chatFrame(page);
  if ((await frame.locator("#input").count().catch(() => 0)) === 0) await openChat(page);
  return frame;
}

/** The assistant turn's answer text (its Markdown, without the role label or notices). */
async function answerText(turn) {
  return squash((await turn.locator(".markdown").allTextContents()).join(" "));
}

/** The browser reloads the workbench (the extension host restarts); back to a ready Kestrel and the chat. */
async function reloadWindow(t) {
  await t.page.reload({ waitUntil: "domcontentloaded", timeout: 120_000 });
  await t.page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
  await waitForReady(t);
  await openChat(t.page);
}

export default async function chatHistory(t) {
  const { page, results, mockUrl } = t;
  const checks = (results.checks.chatHistory = {});
  let frame = await ensureChat(page);
  const input = () => frame.locator("#input");

  // A few conversations, each a new chat.
  const titles = { alpha: "Alpha: parsing a config file", beta: "Beta: sockets and timeouts", gamma: "Gamma: caching strategies" };
  for (const [key, title] of Object.entries(titles)) {
    await setMock(mockUrl, { text: `Answer ${key}.`, tps: 0, ttft_ms: 0, rules: [] });
    await frame.locator("#new").click();
    await waitFor("the new chat to be empty", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 50);
    await input().fill(title);
    await input().press("Enter");
    await answered(frame, `Answer ${key}.`);
  }

  const panel = frame.locator("#history-panel");
  const openHistory = async () => {
    if (!(await panel.isVisible())) await frame.locator("#history-toggle").click();
    await panel.waitFor({ state: "visible", timeout: 5000 });
  };
  const row = (text) => panel.locator(".history-item").filter({ hasText: text });
  const rows = () => panel.locator(".history-item").evaluateAll((els) => els.map((el) => ({
    title: (el.querySelector(".history-title")?.textContent ?? "").trim(),
    date: (el.querySelector(".history-date")?.textContent ?? "").trim(),
    shown: el.checkVisibility(),
    current: el.getAttribute("aria-current") === "true" || Boolean(el.querySelector('[aria-current="true"]')),
  })));

  // 1. The panel lists them, with dates; the open one is marked current.
  await openHistory();
  await waitFor("the three conversations in the history panel", async () => {
    const r = await rows();
    return Object.values(titles).every((title) => r.some((x) => x.title.includes(title)));
  }, 10_000, 100);
  const listed = (await rows()).filter((x) => Object.values(titles).some((title) => x.title.includes(title)));
  const undated = listed.filter((x) => !DATE_LIKE.test(x.date));
  if (undated.length) throw new Error(`history rows without a date: ${JSON.stringify(undated)}`);
  const current = (await rows()).filter((x) => x.current);
  if (current.length !== 1 || !current[0].title.includes(titles.gamma)) throw new Error(`the open conversation is not the one marked current: ${JSON.stringify(current)}`);
  checks.listed = listed.map((x) => `${x.title} — ${x.date}`);

  // 2. Search filters by title.
  await frame.locator("#history-search").fill("sockets");
  await waitFor("the search to filter the rows", async () => {
    const shown = (await rows()).filter((x) => x.shown);
    return shown.length >= 1 && shown.every((x) => /sockets/i.test(x.title));
  }, 5000, 50).catch(async () => { throw new Error(`searching "sockets" shows ${JSON.stringify((await rows()).filter((x) => x.shown).map((x) => x.title))}`); });
  await frame.locator("#history-search").fill("");
  await waitFor("all rows back after clearing the search", async () => {
    const shown = (await rows()).filter((x) => x.shown);
    return Object.values(titles).every((title) => shown.some((x) => x.title.includes(title)));
  }, 5000, 50);
  checks.search = "'sockets' showed only the Beta conversation; clearing it showed all again";

  // 3. Rename through VS Code's input box.
  const renamed = "Renamed: alpha parser chat";
  await row(titles.alpha).locator(".history-rename").click();
  const box = page.locator(".quick-input-widget input");
  await box.waitFor({ state: "visible", timeout: 10_000 });
  await box.fill(renamed);
  await box.press("Enter");
  await openHistory();
  await waitFor("the renamed row", async () => (await row(renamed).count()) === 1 && (await row(titles.alpha).count()) === 0, 10_000, 100);
  checks.rename = `'${titles.alpha}' -> '${renamed}'`;

  // 4. Delete after a modal confirm.
  await row(titles.beta).locator(".history-delete").click();
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ state: "visible", timeout: 10_000 });
  checks.deleteConfirm = squash(await dialog.innerText());
  await dialog.getByRole("button", { name: /^Delete/ }).click();
  await dialog.waitFor({ state: "hidden", timeout: 10_000 });
  await openHistory();
  await waitFor("the deleted row to go", async () => (await row(titles.beta).count()) === 0, 10_000, 100);
  checks.delete = `'${titles.beta}' deleted after the confirm`;
  log("chat history: listed with dates, search, rename, delete ok");

  // 5. Header: the model in use; no effort picker where the provider has no reasoning effort.
  await waitFor("#model to name mock-model", async () => squash(await frame.locator("#model").textContent()).includes("mock-model"), 30_000, 200)
    .catch(async () => { throw new Error(`#model shows ${JSON.stringify(await frame.locator("#model").textContent())}`); });
  checks.model = squash(await frame.locator("#model").textContent());
  await waitFor("#effort disabled for the chat provider", async () => await frame.locator("#effort").isDisabled(), 30_000, 200)
    .catch(() => { throw new Error("#effort is enabled on the chat provider with mock-model, which has no reasoning effort"); });
  checks.effortTooltip = (await frame.locator("#effort").getAttribute("title")) ?? "";
  if (!checks.effortTooltip.trim()) throw new Error("the disabled #effort has no tooltip (title) saying why");
  log("chat header:", checks.model, "| effort:", checks.effortTooltip);
  await frame.locator("#history-toggle").click(); // close the panel again

  // 6. Stop, then a reload 0.2 s later: the stopped answer keeps what had arrived.
  const FULL = "Kept words " + "kept words ".repeat(500);
  await setMock(mockUrl, { text: FULL, tps: 40, ttft_ms: 0, rules: [] });
  await frame.locator("#new").click();
  await input().fill("Slow answer to stop");
  await input().press("Enter");
  const streaming = frame.locator(".turn.assistant.streaming").last();
  await waitFor("a part of the slow answer", async () => (await answerText(streaming)).length > 100, 30_000, 50);
  const beforeStop = await answerText(streaming);
  await frame.locator("#stop").click();
  const stopAt = Date.now();
  await sleep(200);
  const last = frame.locator(".turn.assistant").last();
  const finishedBeforeReload = !(await last.evaluate((el) => el.classList.contains("streaming")));
  const shownAtReload = await answerText(last);
  checks.stopToReloadMs = Date.now() - stopAt;
  await reloadWindow(t);
  frame = chatFrame(page);
  const keptTurn = frame.locator(".turn.assistant").last();
  await keptTurn.waitFor({ timeout: 30_000 });
  const keptStopped = await answerText(keptTurn);
  const stoppedNotice = squash((await keptTurn.locator(".notice").allTextContents()).join(" "));
  if (!squash(FULL).startsWith(keptStopped) || keptStopped.length < beforeStop.length) {
    throw new Error(`after the reload the stopped answer has ${keptStopped.length} chars (${beforeStop.length} had arrived before Stop): ${JSON.stringify(keptStopped.slice(0, 80))}`);
  }
  if (finishedBeforeReload && keptStopped !== shownAtReload) throw new Error("after the reload the stopped answer differs from the one shown before it");
  if (!/stopped/i.test(stoppedNotice)) throw new Error(`after the reload the stopped answer is not marked "stopped" (notice: ${JSON.stringify(stoppedNotice)})`);
  const userTurns = squash((await frame.locator(".turn.user").allTextContents()).join(" "));
  if (!userTurns.includes("Slow answer to stop")) throw new Error("after the reload the question of the stopped answer is gone");
  checks.reloadAfterStop = `reload ${checks.stopToReloadMs} ms after Stop: kept ${keptStopped.length} chars (${beforeStop.length} before Stop), marked "${stoppedNotice}"`;
  log("chat history:", checks.reloadAfterStop);

  // Rename and delete were saved too.
  await openHistory();
  if ((await row(renamed).count()) !== 1 || (await row(titles.beta).count()) !== 0) throw new Error("the rename or the delete did not survive the reload");
  await frame.locator("#history-toggle").click();

  // 7. A reload mid-stream (no Stop): the partial answer is kept, marked "interrupted".
  await frame.locator("#new").click();
  await input().fill("Slow answer to interrupt");
  await input().press("Enter");
  const live = frame.locator(".turn.assistant.streaming").last();
  await waitFor("two seconds of the slow answer", async () => (await answerText(live)).length > 200, 30_000, 50);
  const beforeReload = await answerText(live);
  await reloadWindow(t);
  frame = chatFrame(page);
  const interrupted = frame.locator(".turn.assistant").last();
  await interrupted.waitFor({ timeout: 30_000 });
  const keptPartial = await answerText(interrupted);
  const interruptedNotice = squash((await interrupted.locator(".notice").allTextContents()).join(" "));
  // Saved as it streams, throttled (~250 ms): at most about a second of tokens (40 tps, ~110 chars) may be missing.
  if (!keptPartial || !squash(FULL).startsWith(keptPartial) || keptPartial.length < beforeReload.length - 120) {
    throw new Error(`after a reload mid-stream the answer has ${keptPartial.length} chars (${beforeReload.length} were shown before the reload)`);
  }
  if (!/interrupted/i.test(interruptedNotice)) throw new Error(`the answer cut off by the reload is not marked "interrupted" (notice: ${JSON.stringify(interruptedNotice)})`);
  if ((await frame.locator(".turn.assistant.streaming").count()) !== 0) throw new Error("after the reload an answer still shows as streaming");
  checks.reloadMidStream = `kept ${keptPartial.length} chars (${beforeReload.length} shown before the reload), marked "${interruptedNotice}"`;
  log("chat history:", checks.reloadMidStream);

  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await openMainPy(page);
}
