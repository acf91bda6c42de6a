// A chat about a file longer than the model's context window (kestrel.chat.contextTokens, as a user of a
// small local server sets it): the question names the function at the end of fit_big.py (in the
// workspace from the start), the file chip attaches fit_big.py. Checked in the request the model
// received (the function is there, the file's head is not, the cut is said in the block) and on the
// answer (its note names what was sent); then with kestrel.chat.maxTokens 3 an answer cut at its limit
// says so. Leaves the settings as they were, fit_big.py closed, a fresh chat and main.py.
import { answered, chatFrame, chatRequests, leaveAsFound, openChat } from "../lib/chat.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

const QUESTION = "What does fit_check_target return? (fit check)";
const ANSWER = "FIT ANSWER: the first ten characters.";

export default async function chatFit(t) {
  const { page, results, mockUrl, openFile } = t;
  t.writeSettings({ ...t.settings, "kestrel.chat.contextTokens": 1200 });
  const frame = chatFrame(page);
  if (!(await frame.locator("#input").isVisible())) await openChat(page);
  await frame.locator("#new").click();
  await openFile("fit_big.py");
  const fileChip = frame.locator('#chips .chip[data-kind="file"]');
  await waitFor("the file chip to name fit_big.py", async () => ((await fileChip.textContent()) || "").includes("fit_big.py"), 15_000, 100);
  if ((await fileChip.getAttribute("aria-pressed")) !== "true") await fileChip.click();
  await setMock(mockUrl, { text: ANSWER, tps: 0, ttft_ms: 0, rules: [] });
  // Until the setting reached the server, a question goes whole: ask until the request is fitted.
  let sent = "";
  await waitFor("a request fitted to 1,200 tokens", async () => {
    await frame.locator("#input").fill(QUESTION);
    await frame.locator("#input").press("Enter");
    await answered(frame, ANSWER);
    const asked = (await chatRequests(mockUrl)).filter((r) => r.messages.includes(QUESTION)).pop();
    sent = String(asked.body.messages.filter((m) => m.role === "user").pop().content);
    return !sent.includes("def fit_helper_0(value)");
  }, 60_000, 500);
  if (!sent.includes("def fit_check_target(text):\n    return text.strip()[:10]")) throw new Error(`the fitted request lost fit_check_target: ${sent.slice(-800)}`);
  if (!/… \(lines 1-\d+ not shown: the model's context window is full\)/.test(sent)) throw new Error(`the cut is not said in the block: ${sent.slice(0, 400)}`);
  if (!sent.endsWith(QUESTION)) throw new Error("the question was cut");
  const note = (await (await answered(frame, ANSWER)).locator(".notice.trimmed").textContent()) || "";
  if (!/The model reads 1,200 tokens at most: File fit_big\.py \(lines \d+-1203 of 1203\) sent\./.test(note)) throw new Error(`the answer's note: ${note}`);
  results.checks.chatFit = { note, sentChars: sent.length };
  log("chat fit:", note);

  // An answer cut at its token limit (kestrel.chat.maxTokens 3) says so, and one that ended does not.
  t.writeSettings({ ...t.settings, "kestrel.chat.maxTokens": 3 });
  const LIMIT_Q = "Say it in full. (limit check)";
  await setMock(mockUrl, { text: "one two three four five six seven", tps: 0, ttft_ms: 0, rules: [] });
  let limited;
  await waitFor("an answer cut at 3 tokens", async () => {
    await frame.locator("#input").fill(LIMIT_Q);
    await frame.locator("#input").press("Enter");
    limited = await answered(frame, "one two");
    return !((await limited.textContent()) || "").includes("seven");
  }, 60_000, 500);
  const limitNote = (await limited.locator(".notice.token-limit").textContent()) || "";
  if (!limitNote.includes("stopped at its length limit")) throw new Error(`no length-limit notice on the cut answer: ${await limited.textContent()}`);
  if ((await (await answered(frame, ANSWER)).locator(".notice.token-limit").count()) !== 0) throw new Error("a whole answer shows the length-limit notice");
  results.checks.chatFit.tokenLimitNote = limitNote;

  t.writeSettings(t.settings);
  await leaveAsFound(t, frame, "fit_big.py");
}
