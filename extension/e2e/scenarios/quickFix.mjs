// Quick fix: a JSON error from VS Code's own JSON service -> Ctrl+. -> "Fix with Kestrel" -> fixed;
// listing the fixes does not call the model, picking one does.
import * as fs from "node:fs";
import * as path from "node:path";
import { codeActionItem } from "../lib/editor.mjs";
import { chatCompletionRequests, setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

export default async function quickFix(t) {
  const { page, results, mockUrl, openFile } = t;
  const jsonPath = path.join(t.dirs.ws, "config.json");
  await setMock(mockUrl, { text: '  "b": 2', tps: 0, ttft_ms: 0, rules: [] });
  await openFile("config.json");
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("End");
  await waitFor("the JSON diagnostic", async () => (await page.locator(".squiggly-error, .squiggly-warning").count()) > 0, 60_000, 200);
  const actionsBefore = await chatCompletionRequests(mockUrl);
  const fixItem = await codeActionItem(page, "Fix with Kestrel");
  const listed = await chatCompletionRequests(mockUrl);
  if (listed !== actionsBefore) throw new Error("listing the quick fixes called the model");
  await fixItem.click();
  const jsonEditor = page.locator(".editor-instance .monaco-editor .view-lines").first();
  await waitFor("the fix in the editor", async () => !((await jsonEditor.textContent()) || "").includes('2,'), 60_000, 100);
  await page.keyboard.press("Control+S");
  await waitFor("config.json fixed on disk", () => fs.readFileSync(jsonPath, "utf8") === '{\n  "a": 1,\n  "b": 2\n}\n', 60_000, 200);
  results.checks.quickFix = "Ctrl+. -> Fix with Kestrel removed the trailing comma (model called only when picked)";
  log("quick fix applied");
}
