// Chat keys and the streaming state: Ctrl+Alt+I puts the caret in the chat input (nothing typed
// after it is lost), the "thinking" indicator and Stop show at once after Enter, Esc stops the
// answer (and the model's stream is really cut), ↑ recalls earlier prompts, the transcript stops
// following when the reader scrolls up (Jump to latest brings it back), Ctrl+L starts a new chat.
// Starts and ends in main.py with the mock answering COMPLETION.
import * as path from "node:path";
import { chatWebviewFrame } from "../lib/axe.mjs";
import { answered, chatFrame, openChat } from "../lib/chat.mjs";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { httpGet, log, sleep, waitFor } from "../lib/util.mjs";

/** The mock's tokenizer (kestrel.testing.mock_model.script.tokenize): how many tokens `text` streams as. */
const tokenCount = (text) => (text.match(/\s+|\w+|[^\w\s]/g) ?? []).length;
const squash = (s) => (s ?? "").replace(/\s+/g, " ").trim();

async function mockStats(mockUrl) {
  return JSON.parse((await httpGet(`${mockUrl.replace(/\/v1$/, "")}/_mock/stats`)).body);
}

/** The chat panel, opened through the command palette unless its input is already there. */
async function ensureChat(page) {
  const frame = chatFrame(page);
  if ((await frame.locator("#input").count().catch(() => 0)) === 0) await openChat(page);
  return frame;
}

/** Position of #transcript: scrollTop, how far from the bottom, total height, how much of it is out of view. */
function scrollMetrics(doc) {
  return doc.evaluate(() => {
    const t = document.getElementById("transcript");
    return { top: t.scrollTop, fromBottom: t.scrollHeight - t.scrollTop - t.clientHeight, height: t.scrollHeight, overflow: t.scrollHeight - t.clientHeight };
  });
}

export default async function chatKeys(t) {
  const { page, editor, results, mockUrl } = t;
  const checks = (results.checks.chatKeys = {});
  const frame = await ensureChat(page);
  const doc = await chatWebviewFrame(page);
  const input = frame.locator("#input");
  const send = frame.locator("#send");
  const stop = frame.locator("#stop");
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });

  // 1. Ctrl+Alt+I from the editor: the caret lands in #input and the keys typed next arrive there.
  await input.fill("");
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  const editorBefore = await editor.locator(".view-lines").innerText();
  await page.keyboard.press("Control+Alt+I");
  await sleep(150); // a fast typist's reaction time after a shortcut; the keys then come 30 ms apart
  await page.keyboard.type("hello", { delay: 30 });
  await waitFor("the typed text in #input", async () => (await input.inputValue()) === "hello", 3000, 50).catch(async () => {
    const editorAfter = await editor.locator(".view-lines").innerText();
    throw new Error(`after Ctrl+Alt+I the chat input holds ${JSON.stringify(await input.inputValue())}, not "hello"` +
      (editorAfter !== editorBefore ? " (the keys went into main.py)" : ""));
  });
  if ((await editor.locator(".view-lines").innerText()) !== editorBefore) throw new Error("keys typed after Ctrl+Alt+I changed main.py");
  checks.focusShortcut = "Ctrl+Alt+I from main.py, 'hello' typed 150 ms later: all of it in #input";
  await input.fill("");

  // A first short exchange, for ↑ to go back to.
  await setMock(mockUrl, { text: "First answer.", tps: 0, ttft_ms: 0, rules: [] });
  await input.fill("Recall me first");
  await input.press("Enter");
  await answered(frame, "First answer.");

  // 2. Enter with a slow model (TTFT 1.5 s): the thinking indicator, Stop instead of Send, at once.
  const FULL = "Progress answer: " + "word ".repeat(300);
  await setMock(mockUrl, { text: FULL, tps: 20, ttft_ms: 1500, rules: [] });
  // Measured in the webview itself (performance.now() from the Enter keydown to the first animation
  // frame where all three hold), so the test's own round trips do not count.
  await doc.evaluate(() => {
    const probe = (window.__kestrelProgressProbe = { enterAt: undefined, shownAt: undefined });
    window.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && probe.enterAt === undefined) probe.enterAt = performance.now();
    }, { capture: true });
    const shown = (el) => Boolean(el) && el.checkVisibility();
    const deadline = performance.now() + 10_000;
    const check = () => {
      const progress = document.querySelector('.turn.assistant.streaming[aria-busy="true"] .progress');
      if (probe.enterAt !== undefined && shown(progress) && shown(document.getElementById("stop")) && !shown(document.getElementById("send"))) {
        probe.shownAt = performance.now();
      } else if (performance.now() < deadline) requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
  const statsBefore = await mockStats(mockUrl);
  await input.fill("Progress please");
  await input.press("Enter");
  const progress = frame.locator('.turn.assistant.streaming[aria-busy="true"] .progress');
  await progress.waitFor({ state: "visible", timeout: 1000 });
  if (!(await stop.isVisible()) || (await send.isVisible())) throw new Error("while the answer is pending, #stop is not shown instead of #send");
  await page.screenshot({ path: path.join(OUT, "chat-streaming.png") });
  const probe = await waitFor("the progress probe", async () => {
    const p = await doc.evaluate(() => window.__kestrelProgressProbe);
    return p.shownAt !== undefined ? p : undefined;
  }, 5000, 50);
  checks.enterToProgressMs = +(probe.shownAt - probe.enterAt).toFixed(1);
  if (checks.enterToProgressMs > 300) throw new Error(`the thinking indicator / Stop showed ${checks.enterToProgressMs} ms after Enter (limit 300 ms)`);
  log("chat keys: Enter -> thinking indicator, Stop shown in", checks.enterToProgressMs, "ms");

  // The first token replaces the indicator.
  const streaming = frame.locator(".turn.assistant.streaming").last();
  await waitFor("the first token", async () => squash(await streaming.locator(".markdown").first().textContent({ timeout: 500 })).length > 0, 10_000, 20);
  if (await progress.isVisible()) throw new Error("the thinking indicator is still shown after the first token");
  checks.firstTokenMs = Number(await streaming.getAttribute("data-first-token-ms")) || null;

  // 3. Esc in the input stops the running answer; the model's stream is cut.
  await waitFor("a few streamed words", async () => squash(await streaming.locator(".markdown").first().textContent({ timeout: 500 })).includes("word word"), 10_000, 50);
  await input.press("Escape");
  await waitFor("the answer to stop", async () => (await frame.locator(".turn.assistant.streaming").count()) === 0, 10_000, 50);
  const stopped = frame.locator(".turn.assistant").last();
  const notice = squash(await stopped.locator(".notice").allTextContents().then((a) => a.join(" ")));
  if (!/stopped/i.test(notice)) throw new Error(`the stopped turn is not marked "stopped" (notice: ${JSON.stringify(notice)})`);
  const kept = squash(await stopped.locator(".markdown").allTextContents().then((a) => a.join(" ")));
  if (!kept || !squash(FULL).startsWith(kept) || kept.length >= squash(FULL).length) {
    throw new Error(`the stopped answer is not a strict prefix of the full text (${kept.length} of ${squash(FULL).length} chars)`);
  }
  const cut = await waitFor("the mock to see the stream cancelled", async () => {
    const s = await mockStats(mockUrl);
    return s.streams_cancelled > statsBefore.streams_cancelled ? s : undefined;
  }, 10_000, 100);
  const sent = cut.tokens_sent - statsBefore.tokens_sent;
  if (sent >= tokenCount(FULL)) throw new Error(`the mock streamed all ${sent} tokens: Esc did not cut the stream`);
  await waitFor("#send back, #stop hidden", async () => (await send.isVisible()) && !(await stop.isVisible()), 5000, 50);
  checks.escStop = `stopped after ${sent} of ${tokenCount(FULL)} tokens; kept ${kept.length} chars, marked "stopped"`;
  log("chat keys:", checks.escStop);

  // 4. ↑ in the empty input recalls the last prompt; ↑ again the one before.
  await input.fill("");
  await input.press("ArrowUp");
  await waitFor("↑ to recall the last prompt", async () => (await input.inputValue()) === "Progress please", 3000, 50)
    .catch(async () => { throw new Error(`↑ in the empty input gave ${JSON.stringify(await input.inputValue())}, not the last prompt`); });
  await input.press("ArrowUp");
  await waitFor("↑ again to recall the prompt before", async () => (await input.inputValue()) === "Recall me first", 3000, 50)
    .catch(async () => { throw new Error(`↑ again gave ${JSON.stringify(await input.inputValue())}, not the prompt before`); });
  checks.recall = "↑ recalled 'Progress please', ↑ again 'Recall me first'";
  await input.fill("");

  // 5. Scroll lock: a long slow answer; scrolled up 300 px it stays put and offers Jump to latest.
  const LINES = Array.from({ length: 1200 }, (_, i) => `L${i}`).join("\n\n"); // 2 tokens a paragraph: 20 paragraphs/s at 40 tps
  await setMock(mockUrl, { text: LINES, tps: 40, ttft_ms: 0, rules: [] });
  await input.fill("Long answer please");
  await input.press("Enter");
  // Its own length matters, not the transcript's (earlier scenarios may have filled that already).
  const longTurn = frame.locator(".turn.assistant.streaming").last();
  await waitFor("40 paragraphs of the long answer, overflowing the transcript", async () =>
    /\bL40\b/.test(await longTurn.textContent({ timeout: 500 })) && (await scrollMetrics(doc)).overflow > 700, 60_000, 100);
  const following = await scrollMetrics(doc);
  if (following.fromBottom > 30) throw new Error(`the transcript does not follow the stream (${following.fromBottom} px from the bottom)`);
  const box = await frame.locator("#transcript").boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -300);
  await sleep(300); // a smooth-scroll animation ends
  const scrolled = await scrollMetrics(doc);
  // Measured from the bottom: between `following` and the wheel the transcript may still have followed a paragraph or two down.
  if (scrolled.fromBottom < 250) throw new Error(`300 ms after a 300 px wheel up the transcript is ${scrolled.fromBottom} px from the bottom: the wheel did not move it, or it snapped back`);
  await sleep(1000);
  const later = await scrollMetrics(doc);
  if (later.height <= scrolled.height) throw new Error("the answer stopped growing during the scroll-lock check (it proves nothing then)");
  if (Math.abs(later.top - scrolled.top) > 2) throw new Error(`scrolled up, the transcript moved anyway (scrollTop ${scrolled.top} -> ${later.top} while the answer streamed)`);
  if (!(await frame.locator("#jump").isVisible())) throw new Error("scrolled up during a stream, #jump (Jump to latest) is not shown");
  await frame.locator("#jump").click();
  await waitFor("Jump to latest to reach the bottom", async () => (await scrollMetrics(doc)).fromBottom <= 30, 3000, 50);
  const jumped = await scrollMetrics(doc);
  await sleep(1000);
  const followingAgain = await scrollMetrics(doc);
  if (followingAgain.height <= jumped.height) throw new Error("the answer stopped growing during the follow-again check");
  if (followingAgain.fromBottom > 30) throw new Error(`after Jump to latest the transcript does not follow the stream (${followingAgain.fromBottom} px from the bottom)`);
  if (await frame.locator("#jump").isVisible()) throw new Error("#jump still shown at the bottom");
  checks.scrollLock = `scrolled to ${scrolled.fromBottom} px above the bottom: stayed for 1 s while the answer grew ${later.height - scrolled.height} px; Jump to latest followed again`;
  log("chat keys:", checks.scrollLock);
  await stop.click();
  await waitFor("the long answer to stop", async () => (await frame.locator(".turn.assistant.streaming").count()) === 0, 10_000, 50);

  // 6. Ctrl+L: a new chat, its empty state teaching the keys.
  await input.press("Control+L");
  await frame.locator("#empty").waitFor({ state: "visible", timeout: 10_000 });
  const turnsLeft = await frame.locator("#transcript .turn").count();
  if (turnsLeft !== 0) throw new Error(`Ctrl+L left ${turnsLeft} turns in the transcript`);
  await page.screenshot({ path: path.join(OUT, "chat-empty.png") });
  checks.newChatKey = "Ctrl+L: empty transcript, #empty shown";
  log("chat keys: Ctrl+L -> new chat with the empty state");

  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
