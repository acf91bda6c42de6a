// Chat Retry: the model fails (HTTP 500 on every attempt, so the server's own retries fail too) →
// the failed turn shows its error and a Retry button; with the model healthy again and another file
// active, Retry sends exactly one request with the failed attempt's messages (same question, same
// attached file), the answer replaces the error, and the question stays one user turn. Starts and
// ends in main.py with the mock answering COMPLETION again.
import * as path from "node:path";
import { answered, chatFrame, chatRequests, openChat } from "../lib/chat.mjs";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

const QUESTION = "Summarise what report() returns (retry check)";
const ANSWER = "RETRIED ANSWER: one line per task.";

export default async function chatRetry(t) {
  const { page, editor, results, mockUrl, openFile } = t;
  const frame = chatFrame(page);
  if (!(await frame.locator("#input").isVisible())) await openChat(page); // run alone
  await frame.locator("#new").click();
  await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 100);
  const asked = async () => (await chatRequests(mockUrl)).filter((r) => r.messages.includes(QUESTION));

  // Every request fails (fault_count -1): the provider's retries cannot hide the error.
  await openFile("tasks.py");
  const fileChip = frame.locator('#chips .chip[data-kind="file"]');
  await waitFor("the file chip to name tasks.py", async () => ((await fileChip.textContent()) || "").includes("tasks.py"), 15_000, 100);
  if ((await fileChip.getAttribute("aria-pressed")) !== "true") await fileChip.click();
  await setMock(mockUrl, { text: ANSWER, tps: 0, ttft_ms: 0, rules: [], fault: "500", fault_count: -1 });
  try {
    await frame.locator("#input").fill(QUESTION);
    await frame.locator("#input").press("Enter");
    const failed = frame.locator(".turn.assistant:not(.streaming)").last();
    await failed.locator(".error").waitFor({ timeout: 60_000 });
    await failed.locator("button.retry").waitFor({ timeout: 5_000 });
  } finally {
    await setMock(mockUrl, { fault: null }); // healthy again, whatever happened above
  }
  results.checks.chatRetryError = ((await frame.locator(".turn.assistant .error").last().textContent()) || "").trim();
  await page.screenshot({ path: path.join(OUT, "chat-error-retry.png") });
  const failedAttempts = await asked();
  if (failedAttempts.length < 1) throw new Error("the failed question never reached the model");
  const failedMessages = failedAttempts[failedAttempts.length - 1].messages;
  if (!failedMessages.includes("File tasks.py")) throw new Error("the failed attempt did not attach tasks.py");
  if ((await frame.locator("button.retry").count()) !== 1) throw new Error("Retry is offered on more than the last turn");

  // Another file active now: Retry still resends exactly what failed.
  await openFile("utils.py");
  await waitFor("the file chip to name utils.py", async () => ((await fileChip.textContent()) || "").includes("utils.py"), 15_000, 100);
  await frame.locator("button.retry").click();
  await answered(frame, ANSWER);
  const attempts = await asked();
  if (attempts.length !== failedAttempts.length + 1) {
    throw new Error(`Retry sent ${attempts.length - failedAttempts.length} requests (expected exactly one)`);
  }
  if (attempts[attempts.length - 1].messages !== failedMessages) {
    throw new Error(`Retry sent other messages than the failed attempt:\nfailed: ${failedMessages}\nretry:  ${attempts[attempts.length - 1].messages}`);
  }
  if ((await frame.locator("#transcript .error").count()) !== 0) throw new Error("the error is still shown after a successful Retry");
  const userTurns = await frame.locator(".turn.user", { hasText: QUESTION }).count();
  const assistantTurns = await frame.locator(".turn.assistant").count();
  if (userTurns !== 1 || assistantTurns !== 1) {
    throw new Error(`after Retry the transcript has ${userTurns} user turns for the question and ${assistantTurns} answers (expected 1 and 1)`);
  }
  results.checks.chatRetry = `error shown with Retry; Retry sent 1 request with the failed attempt's messages (${failedAttempts.length} failed attempts), the answer replaced the error`;
  log("chat retry:", results.checks.chatRetry);

  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await page.locator(".tab", { hasText: "main.py" }).first().click();
  await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
