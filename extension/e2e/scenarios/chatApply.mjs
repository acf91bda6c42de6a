// Chat "Apply" on a code block that names no file: opens the diff review for the active file, Reject
// leaves it byte for byte, Apply merges the block into it (a block that redefines nothing is appended
// after one blank line) on disk after saving, as one undo step. Ends back in main.py with the mock
// answering COMPLETION again.
import * as fs from "node:fs";
import * as path from "node:path";
import { chatFrame as chatFrameOf, openChat } from "../lib/chat.mjs";
import { COMPLETION } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

export default async function chatApply(t) {
  const { page, editor, results, mockUrl, openFile, toast } = t;
  const target = path.join(t.dirs.ws, "apply_target.py");
  const original = fs.readFileSync(target, "utf8");
  await setMock(mockUrl, { text: "Add this line:\n\n```python\nB = 2\n```\n", tps: 0, ttft_ms: 0, rules: [] });
  const chatFrame = chatFrameOf(page);
  if (!(await chatFrame.locator("#input").isVisible())) await openChat(page); // run alone
  await openFile("apply_target.py");
  await page.keyboard.press("Control+Home");
  const input = chatFrame.locator("#input");
  await input.fill("Give me B");
  await input.press("Enter");
  const answer = chatFrame.locator(".turn.assistant:not(.streaming)", { hasText: "B = 2" }).last();
  await answer.locator("button.code-apply").waitFor({ timeout: 60_000 });

  const review = async () => {
    await answer.locator("button.code-apply").click();
    await page.locator(".tab", { hasText: "Kestrel: review apply_target.py" }).first().waitFor({ timeout: 30_000 });
    await page.locator(".monaco-diff-editor").first().waitFor();
    return toast("Apply Kestrel's change to apply_target.py?");
  };
  const lines = () => page.locator(".editor-instance .monaco-editor .view-lines").first();
  const backToTarget = async () => {
    await page.locator(".tab", { hasText: /^apply_target\.py/ }).first().click();
    await lines().click();
  };
  const saveUntil = (what, pred) => waitFor(what, async () => {
    if (pred()) return true;
    await page.keyboard.press("Control+S");
    await sleep(300);
    return pred();
  }, 30_000, 100);

  const reviewClosed = () => waitFor("the review tab to close", async () =>
    (await page.locator(".tab", { hasText: "Kestrel: review apply_target.py" }).count()) === 0, 10_000, 100);

  // Reject: the file stays byte for byte.
  await (await review()).getByRole("button", { name: "Reject" }).click();
  await reviewClosed();
  await backToTarget();
  await page.keyboard.press("Control+S");
  await sleep(500);
  if (fs.readFileSync(target, "utf8") !== original) throw new Error("Reject changed apply_target.py");

  // Apply: the block (it redefines nothing in the file) is appended after one blank line; one undo
  // step restores the file.
  await (await review()).getByRole("button", { name: "Apply" }).click();
  await reviewClosed();
  await backToTarget();
  const applied = () => fs.readFileSync(target, "utf8") === `${original}\nB = 2\n`;
  await saveUntil("apply_target.py applied on disk", applied);
  await page.keyboard.press("Control+Z");
  await saveUntil("one undo restores apply_target.py", () => fs.readFileSync(target, "utf8") === original);
  results.checks.chatApply = "Apply opened the review; Reject kept the file byte for byte; Apply appended the block as one undo step";
  log("chat apply: review, reject, apply, undo ok");

  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await page.locator(".tab", { hasText: "main.py" }).first().click();
  await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
