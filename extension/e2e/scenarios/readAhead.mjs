// Reading ahead where the cursor rests (completion.readAhead): with a `fim` provider on this machine
// (the mock), the cursor put at the end of tasks.py and left there makes the client send
// `kestrel/cursor`, and the model receives one-token requests whose last prompt is tasks.py up to the
// cursor with nothing after it; the user then types, the ghost text comes, and its request's prompt
// begins with what was read. Checked in the requests the mock received; the provider is put back to
// chat and tasks.py left as it was on disk.
import * as fs from "node:fs";
import * as path from "node:path";
import { COMPLETION } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { httpGet, log, sleep, waitFor } from "../lib/util.mjs";

const ANSWER = 'new_task("write docs")'; // a name tasks.py binds (the name guard refuses unbound ones)
const TAIL = "<|fim_suffix|><|fim_middle|>";

async function completionRequests(mockUrl) {
  const stats = JSON.parse((await httpGet(`${mockUrl.replace(/\/v1$/, "")}/_mock/stats`)).body);
  return stats.request_log.filter((r) => r.endpoint === "/v1/completions").map((r) => r.body);
}

export default async function readAhead(t) {
  const { page, results, mockUrl, openFile, ghostText, noGhost } = t;
  const file = path.join(t.dirs.ws, "tasks.py");
  const original = fs.readFileSync(file, "utf8");
  await setMock(mockUrl, { text: `${ANSWER}\n`, tps: 0, ttft_ms: 0, rules: [] });
  t.writeSettings({ ...t.settings, "kestrel.provider": "fim" });
  await openFile("tasks.py");
  const reads = async () => (await completionRequests(mockUrl)).filter((b) => b.max_tokens === 1);
  const full = `${original}${TAIL}`;
  const readThere = async () => (await reads()).some((b) => b.prompt.endsWith(full));
  // The cursor comes to rest at the end of tasks.py (again, until the settings change reached the server).
  await waitFor("the read of tasks.py up to the cursor", async () => {
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Control+End");
    await sleep(1000);
    return readThere();
  }, 60_000, 200);
  const read = (await reads()).filter((b) => b.prompt.endsWith(full)).pop().prompt;
  if (!read.includes("<|fim_prefix|>")) throw new Error(`the read is not a fim prompt: ${read.slice(0, 300)}`);
  results.checks.readAhead = { reads: (await reads()).length, readChars: read.length };

  await page.keyboard.type("x = ");
  await waitFor(`ghost text '${ANSWER}' in tasks.py`, async () => (await ghostText()) === ANSWER, 60_000, 50);
  const asked = (await completionRequests(mockUrl)).filter((b) => b.max_tokens > 1).pop();
  // From the file's own text on (the context before it, other tabs' snippets, may follow the cursor).
  const fromPrefix = (p) => p.slice(p.indexOf("<|fim_prefix|>"));
  if (!fromPrefix(asked.prompt).startsWith(fromPrefix(read).slice(0, -TAIL.length))) {
    throw new Error(`the suggestion's prompt does not go on from what was read: ${fromPrefix(asked.prompt).slice(0, 300)}`);
  }
  results.checks.readAhead.suggestionBeganWithTheRead = asked.prompt.startsWith(read.slice(0, -TAIL.length));
  log(`read ahead: ${results.checks.readAhead.reads} one-token reads, the last ${read.length} characters; the suggestion went on from it (its whole prompt began with it: ${results.checks.readAhead.suggestionBeganWithTheRead})`);

  await page.keyboard.press("Escape");
  await noGhost();
  for (let i = 0; i < 4; i++) await page.keyboard.press("Backspace");
  await page.keyboard.press("Control+S");
  await waitFor("tasks.py back as it was on disk", () => fs.readFileSync(file, "utf8") === original, 20_000, 100);
  t.writeSettings(t.settings);
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await openFile("main.py");
}
