// Chat queue: a message queued with Tab while an answer streams carries the chips it was typed
// with; Stop keeps it (nothing is sent by itself) with Send now / Edit / Remove; Send now sends it
// with its context (checked in the request the model received). Starts and ends in main.py.
import { COMPLETION } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { chatFrame as chatFrameOf, chatRequests } from "../lib/chat.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

export default async function chatQueue(t) {
  const { page, editor, results, mockUrl } = t;
  const chatFrame = chatFrameOf(page);
  const input = chatFrame.locator("#input");
  await setMock(mockUrl, { text: "slow words ".repeat(400), tps: 40, ttft_ms: 0, rules: [] });
  await input.fill("First question");
  await input.press("Enter");
  await chatFrame.locator(".turn.assistant.streaming").first().waitFor({ timeout: 30_000 });

  await input.fill("The queued question");
  await input.press("Tab");
  const row = chatFrame.locator("#queue .queued", { hasText: "The queued question" });
  await row.waitFor({ timeout: 10_000 });
  const shown = (await row.locator(".queued-text").textContent()) || "";
  if (!/with .*file/.test(shown)) throw new Error(`the queued message does not carry its chips: ${shown}`);

  await chatFrame.locator("#stop").click();
  await waitFor("the stopped answer", async () => (await chatFrame.locator(".turn.assistant.streaming").count()) === 0, 30_000, 100);
  await sleep(1000); // an auto-send after Stop would have gone out by now
  if ((await row.count()) !== 1) throw new Error("Stop dropped the queued message");
  if ((await chatRequests(mockUrl)).some((r) => r.messages.includes("The queued question"))) throw new Error("Stop sent the queued message");

  await setMock(mockUrl, { text: "QUEUED ANSWER", tps: 0, ttft_ms: 0, rules: [] });
  await row.locator("button.queued-send-now").click();
  await chatFrame.locator(".turn.assistant:not(.streaming)", { hasText: "QUEUED ANSWER" }).last().waitFor({ timeout: 30_000 });
  const sent = (await chatRequests(mockUrl)).map((r) => r.messages).find((m) => m.includes("The queued question"));
  if (!sent) throw new Error("Send now did not send the queued message");
  if (!sent.includes("File main.py")) throw new Error("the queued message was sent without the file it was typed with");
  if ((await row.count()) !== 0) throw new Error("the sent message is still queued");
  results.checks.chatQueue = "queued with its chips; kept after Stop; Send now sent it with main.py attached";
  log("chat queue: kept after Stop, sent with its chips");

  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
