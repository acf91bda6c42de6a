// The chat panel from a scenario: open it, its frame, the requests the model received.
import { COMPLETION } from "./config.mjs";
import { runCommand } from "./editor.mjs";
import { setMock } from "./mock.mjs";
import { httpGet, waitFor } from "./util.mjs";

/** The chat webview's inner frame (the panel must be open). */
export function chatFrame(page) {
  return page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
}

/** Opens the chat panel through the command palette (as a user would) and waits for its input. */
export async function openChat(page) {
  await runCommand(page, "Kestrel: Open Chat");
  const frame = chatFrame(page);
  await frame.locator("#input").waitFor({ timeout: 60_000 });
  return frame;
}

/** Every chat-completion request the mock received for a chat turn or an edit, oldest first (not
 *  inline completions, which may be prepared at any moment after ghost text): { body, messages (JSON text) }. */
export async function chatRequests(mockUrl) {
  const stats = JSON.parse((await httpGet(`${mockUrl.replace(/\/v1$/, "")}/_mock/stats`)).body);
  return stats.request_log
    .filter((r) => r.endpoint.endsWith("/chat/completions"))
    .map((r) => ({ body: r.body, messages: JSON.stringify(r.body?.messages ?? []) }))
    .filter((r) => !r.messages.includes("code completion engine"));
}

/** Waits until the last finished assistant turn contains `text`; returns that turn's locator. */
export async function answered(frame, text, timeout = 60_000) {
  const turn = frame.locator(".turn.assistant:not(.streaming)", { hasText: text }).last();
  await waitFor(`an answer with ${JSON.stringify(text)}`, async () => (await turn.count()) > 0, timeout, 100);
  return turn;
}

/**
 * The floor under the panel's extra time in this editor: one message from the webview to the
 * extension host and straight back (`ping` → `pong`, no server), timed in the webview, ms.
 */
export async function pingMs(input) {
  return input.evaluate((el) => new Promise((resolve, reject) => {
    const body = el.ownerDocument.body;
    delete body.dataset.pingMs;
    const observer = new MutationObserver(() => {
      if (body.dataset.pingMs === undefined) return;
      observer.disconnect();
      resolve(Number(body.dataset.pingMs));
    });
    observer.observe(body, { attributes: true, attributeFilter: ["data-ping-ms"] });
    el.ownerDocument.defaultView.dispatchEvent(new Event("kestrel-ping"));
    setTimeout(() => { observer.disconnect(); reject(new Error("no pong from the extension host in 10 s")); }, 10_000);
  }));
}

/** Leaves things as the chat scenarios found them: `file` closed (null: the scenario opened none), a
 *  fresh chat, main.py with the cursor at its end, the mock answering COMPLETION. */
export async function leaveAsFound(t, frame, file) {
  const { page, mockUrl, openFile } = t;
  if (file) {
    await page.locator(".tab", { hasText: file }).first().click();
    await page.locator(".tab.active", { hasText: file }).waitFor();
    await page.locator(".tab.active .tab-actions .action-label").first().click();
    await waitFor(`the ${file} tab to close`, async () => (await page.locator(".tab", { hasText: file }).count()) === 0, 10_000, 100);
  }
  await frame.locator("#new").click();
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await openFile("main.py");
  await page.keyboard.press("Control+End");
}
