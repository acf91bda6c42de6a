// Repository context: ghost text in tasks.py (which imports from models.py and utils.py, neither
// open) sends the imported definitions to the model; "Kestrel: Show Completion Context" from the
// command palette says which. Checked in the request the model received and in the notification;
// tasks.py is left as it was on disk, and the mock answers COMPLETION again.
const ANSWER = 'new_task("write docs")'; // a name tasks.py binds (the name guard refuses unbound ones)
import * as fs from "node:fs";
import * as path from "node:path";
import { COMPLETION } from "../lib/config.mjs";
import { runCommand } from "../lib/editor.mjs";
import { setMock } from "../lib/mock.mjs";
import { httpGet, log, waitFor } from "../lib/util.mjs";

/** The messages of the last completion request the mock received (the completion system prompt). */
async function lastCompletionRequest(mockUrl) {
  const stats = JSON.parse((await httpGet(`${mockUrl.replace(/\/v1$/, "")}/_mock/stats`)).body);
  const completions = stats.request_log
    .map((r) => JSON.stringify(r.body?.messages ?? []))
    .filter((m) => m.includes("code completion engine"));
  return completions[completions.length - 1] ?? "";
}

export default async function repoContext(t) {
  const { page, results, mockUrl, openFile, ghostText, noGhost, toast } = t;
  const file = path.join(t.dirs.ws, "tasks.py");
  const original = fs.readFileSync(file, "utf8");
  await setMock(mockUrl, { text: `${ANSWER}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await openFile("tasks.py");
  await page.keyboard.press("Control+End");
  await page.keyboard.type("x = ");
  await waitFor(`ghost text '${ANSWER}' in tasks.py`, async () => (await ghostText()) === ANSWER, 60_000, 50);
  const sent = await lastCompletionRequest(mockUrl);
  for (const expected of ["Context from models.py", "def new_task(title):", "class Task:", "Context from utils.py", "def pluralize(word, n):"]) {
    if (!sent.includes(JSON.stringify(expected).slice(1, -1))) throw new Error(`the completion request lacks ${expected}: ${sent.slice(0, 600)}`);
  }
  results.checks.repoContextSent = "models.py (Task, format_task, new_task) and utils.py (pluralize) in the completion request";

  await runCommand(page, "Kestrel: Show Completion Context");
  const note = toast("Last completion in tasks.py was sent");
  await note.waitFor({ timeout: 20_000 });
  const text = (await note.innerText()).replace(/\s+/g, " ");
  // In prompt order: the import order of tasks.py.
  if (!/Task, format_task, new_task from models\.py; pluralize from utils\.py/.test(text)) throw new Error(`notification: ${text}`);
  results.checks.repoContextCommand = text;
  log("Show Completion Context:", text);

  await page.keyboard.press("Escape");
  await noGhost();
  for (let i = 0; i < 4; i++) await page.keyboard.press("Backspace");
  await page.keyboard.press("Control+S");
  await waitFor("tasks.py back as it was on disk", () => fs.readFileSync(file, "utf8") === original, 20_000, 100);
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await openFile("main.py");
}
