// Inline edit (Ctrl+I): accepted with Tab (one undo step), then one rejected with Esc (byte for byte);
// ends back in main.py with the mock answering COMPLETION again.
import * as fs from "node:fs";
import * as path from "node:path";
import { COMPLETION } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

export default async function inlineEdit(t) {
  const { page, editor, results, mockUrl, openFile } = t;
  const editPath = path.join(t.dirs.ws, "edit.py");
  const original = "import math\n\n\ndef area(r):\n    return 3.14 * r * r\n";
  await setMock(mockUrl, { text: "def area(r):\n    return math.pi * r * r", tps: 0, ttft_ms: 0, rules: [] });
  await openFile("edit.py");
  await page.keyboard.press("Control+End");
  await page.keyboard.press("ArrowUp");
  const instruct = async (text) => {
    const started = Date.now();
    await page.keyboard.press("Control+I");
    const box = page.locator(".quick-input-widget", { hasText: "Kestrel: Edit" }).locator("input");
    await box.waitFor({ state: "visible" });
    await box.fill(text); // into the box itself: never into the editor behind it
    await box.press("Enter");
    await page.locator(".monaco-diff-editor").first().waitFor({ timeout: 60_000 });
    return Date.now() - started;
  };
  results.checks.inlineEditToPreviewMs = await instruct("use math.pi");
  await waitFor("the final preview", async () => ((await page.locator(".monaco-diff-editor .modified-side, .monaco-diff-editor .editor.modified").first().textContent().catch(() => "")) || "").includes("math.pi"), 30_000, 100);
  await page.locator(".tab", { hasText: "edit.py" }).first().click();
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
  const editLines = page.locator(".editor-instance .monaco-editor .view-lines").first();
  const shows = (needle) => waitFor(`the editor to show ${needle}`, async () => ((await editLines.textContent()) || "").replace(/\u00a0/g, " ").includes(needle), 30_000, 100);
  const saveUntil = (what, pred) => waitFor(what, async () => { if (pred()) return true; await page.keyboard.press("Control+S"); await sleep(300); return pred(); }, 30_000, 100);
  await page.keyboard.press("Tab"); // accept
  await shows("math.pi");
  await saveUntil("edit.py accepted on disk", () => fs.readFileSync(editPath, "utf8") === original.replace("3.14", "math.pi"));
  await page.keyboard.press("Control+Z"); // one undo step restores the original
  await shows("3.14");
  await saveUntil("undo restores edit.py", () => fs.readFileSync(editPath, "utf8") === original);
  await instruct("use math.pi again");
  await page.locator(".tab", { hasText: "edit.py" }).first().click();
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Escape"); // reject
  await waitFor("the review to close", async () => (await page.locator(".monaco-diff-editor").count()) === 0, 30_000, 100);
  await page.keyboard.press("Control+S");
  await sleep(500);
  if (fs.readFileSync(editPath, "utf8") !== original) throw new Error("reject did not keep the original byte for byte");
  if (((await editLines.textContent()) || "").includes("math.pi")) throw new Error("reject left the edit in the editor");
  results.checks.inlineEdit = "accepted with Tab (one undo step), rejected with Esc (original byte for byte)";
  log("inline edit: preview in", results.checks.inlineEditToPreviewMs, "ms; accept + reject ok");
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await page.locator(".tab", { hasText: "main.py" }).first().click();
  await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
