// The chat panel's remaining controls, each checked where its effect lands:
//  - Copy: "Copied" feedback, and the browser's clipboard really holds the block;
//  - the queue's Edit (the text back in the input, out of the queue) and Remove (never sent);
//  - Stop Chat Answer from the editor (Ctrl+Alt+Backspace while an answer streams) and from the view's
//    title bar (its Stop icon, there only while an answer streams), and the title bar's New Chat;
//  - the effort picker on a model that takes an effort: "high" reaches the request as
//    reasoning_effort (and on mock-model it stays disabled: chatHistory checks that).
// Starts and ends in main.py with the mock answering COMPLETION.
import { COMPLETION } from "../lib/config.mjs";
import { answered, chatFrame, chatRequests, openChat } from "../lib/chat.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

const CODE = "def copied_block():\n    return 'from the clipboard'";

export default async function chatControls(t) {
  const { page, editor, results, mockUrl } = t;
  const frame = (await chatFrame(page).locator("#input").isVisible().catch(() => false)) ? chatFrame(page) : await openChat(page);
  const input = frame.locator("#input");
  await frame.locator("#new").click();
  await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 50);

  // Copy: feedback in the button, and the clipboard holds the code.
  await setMock(mockUrl, { text: "Here:\n\n```python\n" + CODE + "\n```\n", tps: 0, ttft_ms: 0, rules: [] });
  await input.fill("Give me a block to copy");
  await input.press("Enter");
  const turn = await answered(frame, "copied_block");
  const copy = turn.locator("button.code-copy").first();
  // The permissions a user's browser has, granted before the click (granting them after it let a
  // loaded machine read the clipboard before the copy reached it).
  await t.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(page.url()).origin });
  await copy.click();
  await waitFor("Copy to say it copied", async () => /Copied/.test((await copy.textContent()) || ""), 5_000, 50);
  // What the browser's clipboard now holds (what a paste anywhere would give), once the copy landed.
  let clip = "";
  await waitFor("the block on the clipboard", async () => {
    clip = await page.evaluate(() => navigator.clipboard.readText());
    return clip.trim() === CODE;
  }, 10_000, 100).catch(() => undefined);
  if (clip.trim() !== CODE) throw new Error(`Copy put ${JSON.stringify(clip.slice(0, 200))} on the clipboard, not the block`);

  // The queue's Edit and Remove, while an answer streams; then Stop from the editor's keybinding.
  await setMock(mockUrl, { text: "long words ".repeat(400), tps: 40, ttft_ms: 0, rules: [] });
  await input.fill("A long answer please");
  await input.press("Enter");
  await frame.locator(".turn.assistant.streaming").first().waitFor({ timeout: 30_000 });
  for (const text of ["QUEUED TO REMOVE", "QUEUED TO EDIT"]) {
    await input.fill(text);
    await input.press("Tab");
    await frame.locator("#queue .queued", { hasText: text }).waitFor({ timeout: 10_000 });
  }
  await frame.locator("#queue .queued", { hasText: "QUEUED TO REMOVE" }).locator("button.queued-remove").click();
  await waitFor("the removed message gone", async () => (await frame.locator("#queue .queued", { hasText: "QUEUED TO REMOVE" }).count()) === 0, 10_000, 50);
  await frame.locator("#queue .queued", { hasText: "QUEUED TO EDIT" }).locator("button.queued-edit").click();
  await waitFor("the edited message back in the input", async () => (await input.inputValue()) === "QUEUED TO EDIT", 10_000, 50);
  if ((await frame.locator("#queue .queued").count()) !== 0) throw new Error("Edit left the message in the queue");
  await sleep(300); // the host's queue update (a round trip later) must not bring it back
  if ((await frame.locator("#queue .queued").count()) !== 0) throw new Error("the host's queue update brought the edited message back");
  await input.fill("");

  await editor.locator(".view-lines").click(); // the keybinding works from the editor, not only in the panel
  await page.keyboard.press("Control+Alt+Backspace");
  await waitFor("the answer stopped by Ctrl+Alt+Backspace", async () => (await frame.locator(".turn.assistant.streaming").count()) === 0, 15_000, 100);
  const stopped = frame.locator(".turn.assistant").last();
  if (!/stopped/.test((await stopped.locator(".notice").allTextContents()).join(" "))) throw new Error("Ctrl+Alt+Backspace did not stop the answer");
  await sleep(1000); // a removed (or edited-away) message would have been sent by now
  const sent = (await chatRequests(mockUrl)).map((r) => r.messages);
  if (sent.some((m) => m.includes("QUEUED TO REMOVE") || m.includes("QUEUED TO EDIT"))) throw new Error("a removed or edited queued message was sent");

  // The view's title bar: its Stop icon (shown only while an answer streams) and its New Chat (+).
  const titleAction = (label) => page.locator(`.part.sidebar .title-actions .action-label[aria-label^="${label}"], .part.sidebar .pane-header .action-label[aria-label^="${label}"]`).first();
  // While it streams, screen readers hear it through #announcer only: whole paragraphs appended, the
  // region never rebuilt (it was the whole transcript, rebuilt on every delta).
  await setMock(mockUrl, { text: "Title words in a paragraph. ".repeat(3).concat("\n\n").repeat(100), tps: 40, ttft_ms: 0, rules: [] });
  await input.evaluate((el) => {
    const doc = el.ownerDocument;
    // Removing old lines is by design (the region keeps the last 20; removals are not announced);
    // removing or changing a line added during this answer would be a rebuild.
    const seen = (doc.defaultView.__live = { added: 0, rebuilt: 0, otherLiveMutations: 0 });
    const region = doc.getElementById("announcer");
    const fresh = new WeakSet();
    new MutationObserver((records) => {
      for (const r of records) {
        const live = r.target.nodeType === 1 ? r.target.closest("[aria-live]") : r.target.parentElement?.closest("[aria-live]");
        if (!live) continue;
        if (live !== region) { seen.otherLiveMutations += 1; continue; }
        if (r.type === "characterData" || r.target !== region) seen.rebuilt += 1;
        for (const n of r.addedNodes) { seen.added += 1; fresh.add(n); }
        for (const n of r.removedNodes) if (fresh.has(n)) seen.rebuilt += 1;
      }
    }).observe(doc.body, { subtree: true, childList: true, characterData: true });
  });
  await input.fill("Another long answer");
  await input.press("Enter");
  await frame.locator(".turn.assistant.streaming").first().waitFor({ timeout: 30_000 });
  await sleep(3000);
  const live = await input.evaluate((el) => el.ownerDocument.defaultView.__live);
  if (live.otherLiveMutations || live.rebuilt || live.added < 2) throw new Error(`screen readers would not hear the stream once, a paragraph at a time: ${JSON.stringify(live)}`);
  results.checks.chatLiveRegion = live;
  await titleAction("Stop Chat Answer").click({ timeout: 10_000 });
  await waitFor("the answer stopped from the title bar", async () => (await frame.locator(".turn.assistant.streaming").count()) === 0, 15_000, 100);
  if (!/stopped/.test((await frame.locator(".turn.assistant").last().locator(".notice").allTextContents()).join(" "))) throw new Error("the title bar's Stop did not stop the answer");
  await waitFor("the Stop icon gone once idle", async () => (await titleAction("Stop Chat Answer").count()) === 0, 10_000, 100);
  await titleAction("New Chat").click();
  await waitFor("a new chat from the title bar", async () => (await frame.locator("#transcript .turn").count()) === 0 && (await frame.locator("#empty").isVisible()), 10_000, 100);

  // Effort: on a model that takes one the picker is enabled, and "high" reaches the request.
  t.writeSettings({ ...t.settings, "kestrel.model": "gpt-oss-20b" });
  const effort = frame.locator("#effort");
  await waitFor("the effort picker enabled for gpt-oss-20b", async () => !(await effort.isDisabled()), 30_000, 100);
  await effort.selectOption("high");
  await sleep(500); // the setting reaches the server (didChangeConfiguration)
  await setMock(mockUrl, { text: "EFFORT OK", tps: 0, ttft_ms: 0, rules: [] });
  await input.fill("Think hard");
  await input.press("Enter");
  await answered(frame, "EFFORT OK");
  const body = (await chatRequests(mockUrl)).at(-1).body;
  if (body.reasoning_effort !== "high") throw new Error(`the request carries reasoning_effort ${JSON.stringify(body.reasoning_effort)}, not "high"`);
  t.writeSettings(t.settings);
  await waitFor("the effort picker disabled again for mock-model", async () => effort.isDisabled(), 30_000, 100);

  results.checks.chatControls = "Copy (the clipboard holds the block), queue Edit/Remove (never sent), Ctrl+Alt+Backspace and title-bar stop, title-bar New Chat, effort high sent as reasoning_effort";
  log("chat controls: copy, queue edit/remove, stop key, effort ok");
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
