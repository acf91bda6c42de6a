// Quick fix outside Python: a type error from VS Code's own TypeScript service -> Ctrl+. -> "Fix with
// Kestrel" -> fixed on disk. The model must be asked about the statement that holds the error (two
// lines here, in a class method) with TypeScript's message, and its answer, written at column 0 as
// small models often write it, must land at the statement's indentation.
import * as fs from "node:fs";
import * as path from "node:path";
import { COUNTER_TS as SOURCE } from "../lib/codeServer.mjs";
import { chatRequests } from "../lib/chat.mjs";
import { codeActionItem } from "../lib/editor.mjs";
import { chatCompletionRequests, setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

const FILE = "counter.ts"; // written with the workspace (quick open does not list a file made later)
const ASKED = 'The problem is in lines 3-4:\n```typescript\n    const count: number = items\n      .join(",");\n```';
const FIXED = SOURCE.replace('      .join(",");', '      .join(",").length;');

export default async function quickFixTypeScript(t) {
  const { page, results, mockUrl, openFile } = t;
  const file = path.join(t.dirs.ws, FILE);
  // Only a request that holds the statement as asked gets the fix; any other prompt gets the same
  // code back, which Kestrel offers as "nothing to change", and the file would stay broken.
  await setMock(mockUrl, {
    text: '```typescript\n    const count: number = items\n      .join(",");\n```\n', tps: 0, ttft_ms: 0,
    rules: [{ match: ASKED, text: '```typescript\nconst count: number = items\n  .join(",").length;\n```\n' }],
  });
  await openFile(FILE);
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Home");
  for (let i = 0; i < 8; i++) await page.keyboard.press("ArrowRight"); // on `count`, where tsserver marks it
  // tsserver starts on the first .ts file: its diagnostic can take a while on 2 cores.
  await waitFor("TypeScript's diagnostic", async () => (await page.locator(".squiggly-error").count()) > 0, 120_000, 250);
  const before = await chatCompletionRequests(mockUrl);
  const fixItem = await codeActionItem(page, "Fix with Kestrel");
  const title = ((await fixItem.textContent()) || "").trim();
  if ((await chatCompletionRequests(mockUrl)) !== before) throw new Error("listing the quick fixes called the model");
  await fixItem.click();
  await waitFor("the fix in the editor", async () =>
    ((await page.locator(".editor-instance .monaco-editor .view-lines").first().textContent()) || "").includes(".length;"), 60_000, 100);
  await page.keyboard.press("Control+S");
  await waitFor(`${FILE} fixed on disk`, () => fs.readFileSync(file, "utf8") === FIXED, 60_000, 200);
  const prompt = (await chatRequests(mockUrl)).at(-1)?.messages ?? "";
  if (!prompt.includes("not assignable to type 'number'")) throw new Error(`the model was not given TypeScript's message: ${prompt.slice(0, 400)}`);
  await page.keyboard.press("Control+W"); // leave the editor as the JSON quick fix left it
  results.checks.quickFixTypeScript =
    `Ctrl+. -> ${JSON.stringify(title)} on tsserver's type error: the model was asked for the 2-line statement with ` +
    "TypeScript's message, its column-0 answer landed at the statement's indentation, saved to disk";
  log("TypeScript quick fix applied");
}
