// Chat panel: stream an answer, steer it mid-stream (Enter), and model HTML stays inert.
import * as path from "node:path";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { runCommand } from "../lib/editor.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

export default async function chat(t) {
  const { page, editor, results, mockUrl } = t;
  const XSS = '<img src=x onerror="document.title=\'pwned\'"> and <script>document.title="pwned"</script>';
  const answer = `Here is the answer. ${XSS}\n\n` + "streaming words ".repeat(150);
  await setMock(mockUrl, { text: answer, tps: 40, ttft_ms: 0, rules: [{ match: "be brief", text: " STEERED: brief now." }] });
  let dialogs = 0;
  page.on("dialog", (d) => { dialogs += 1; void d.dismiss(); });
  await runCommand(page, "Kestrel: Open Chat");
  const chatFrame = page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
  const input = chatFrame.locator("#input");
  await input.waitFor({ timeout: 60_000 });
  await input.fill("Explain this project");
  const enterAt = Date.now();
  await input.press("Enter");
  const streaming = chatFrame.locator(".turn.assistant.streaming .markdown");
  await waitFor("the first rendered token", async () => ((await streaming.first().textContent({ timeout: 500 }).catch(() => "")) || "").length > 0, 60_000, 10);
  results.checks.chatEnterToFirstTokenMs = Date.now() - enterAt;
  log("chat: Enter -> first rendered token", results.checks.chatEnterToFirstTokenMs, "ms");
  await waitFor("some streamed words", async () => ((await streaming.first().textContent({ timeout: 500 }).catch(() => "")) || "").includes("streaming words streaming"), 60_000, 50);
  await input.fill("be brief");
  await input.press("Enter"); // Enter while streaming steers the running answer
  const done = chatFrame.locator(".turn.assistant:not(.streaming)").last();
  await waitFor("the steered continuation", async () => ((await done.textContent({ timeout: 500 }).catch(() => "")) || "").includes("STEERED: brief now."), 60_000, 100);
  // The turn starts with its role label ("Kestrel"); the answer is in its .markdown parts.
  const finalText = (await done.locator(".markdown").allTextContents()).join("");
  if (!finalText.startsWith("Here is the answer.")) throw new Error("the text streamed before the steer was lost");
  if ((await chatFrame.locator("#transcript .steer-mark").count()) < 1) throw new Error("the transcript does not show where the steer landed");
  results.checks.chatSteerMark = (await chatFrame.locator("#transcript .steer-mark").first().textContent()).trim();
  // Model output is data: the <img onerror> and <script> render as text, never as elements.
  if (!finalText.includes('<script>document.title="pwned"</script>')) throw new Error("model HTML was not shown as text");
  const injected = await chatFrame.locator("#transcript img, #transcript script").count();
  if (injected !== 0 || dialogs !== 0 || /pwned/.test(await page.title())) throw new Error("model HTML was rendered as markup");
  results.checks.chatXssInert = true;
  await page.screenshot({ path: path.join(OUT, "chat-steered.png") });
  log("chat: steered ->", results.checks.chatSteerMark);
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await editor.locator(".view-lines").click();
}
