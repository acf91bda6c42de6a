// `#agent` in the chat: typed `#age`, the mention picker offers the agent and Enter picks it; the
// question goes to the read-only agent (kestrel/agent). The mock model answers the first call with a
// tool call (Qwen's `<tool_call>` text) asking for invoice.py and, once the tool's result is in its
// request, with the answer (after 2.5 s). Checked: while the answer waits, the live turn lists the
// step ("Read invoice.py") and no longer shows the tool call the model wrote; a steer sent then
// (Enter) reaches the model's next request; two model calls, the second holding the file's definition in a
// `<tool_response>` block and the first the agent's tool list; the finished answer shows the text
// and, as its source, invoice.py, which a click opens. Starts and ends in main.py with the mock
// answering COMPLETION and invoice.py closed.
import * as path from "node:path";
import { answered, chatFrame, chatRequests, leaveAsFound, openChat } from "../lib/chat.mjs";
import { PROJECT } from "../lib/codeServer.mjs";
import { OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

const DEFINING = "invoice.py";
const QUESTION = "Where is invoice_total defined? (agent check)";
const ANSWER = "AGENT ANSWER: invoice_total is defined in invoice.py.";
const STEER = "answer in one sentence (agent steer)";
const CALL = `<tool_call>\n{"name": "read_file", "arguments": {"path": "${DEFINING}"}}\n</tool_call>`;
const squash = (s) => (s ?? "").replace(/\s+/g, " ").trim();

export default async function agentChat(t) {
  const { page, results, mockUrl, openFile } = t;
  const checks = (results.checks.agentChat = {});
  const definition = (PROJECT[DEFINING] ?? "").split("\n").find((l) => l.startsWith("def invoice_total("));
  if (!definition) throw new Error(`the fixture ${DEFINING} has no invoice_total definition`);
  const frame = chatFrame(page);
  if ((await frame.locator("#input").count().catch(() => 0)) === 0 || !(await frame.locator("#input").isVisible())) await openChat(page);
  const input = frame.locator("#input");
  await frame.locator("#new").click();
  await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 100);
  await openFile("main.py");

  // 1. `#age` → the picker's agent row → Enter writes `#agent `; then the question and Enter.
  await setMock(mockUrl, { text: CALL, tps: 0, ttft_ms: 0, rules: [{ match: "<tool_response>", text: ANSWER, ttft_ms: 2500 }] });
  await input.fill("");
  await input.focus();
  await page.keyboard.type("#age", { delay: 30 });
  const row = frame.locator('#mention-list [role=option][data-kind="agent"]').first();
  await row.waitFor({ state: "visible", timeout: 15_000 });
  checks.pickerRow = squash(await row.innerText());
  await page.keyboard.press("Enter");
  await waitFor("the agent marker in the input", async () => (await input.inputValue()) === "#agent ", 5000, 25);
  await page.keyboard.type(QUESTION);
  const asked = Date.now();
  await page.keyboard.press("Enter");
  const live = frame.locator("#transcript .turn.assistant.streaming").last();
  const liveStep = live.locator(".agent-steps .agent-step", { hasText: `Read ${DEFINING}` });
  await liveStep.waitFor({ state: "visible", timeout: 30_000 }).catch(async () => {
    throw new Error(`the running answer lists no step: ${JSON.stringify(squash(await live.innerText().catch(() => "")).slice(0, 300))}`);
  });
  const liveText = squash(await live.locator(".markdown").allTextContents().then((a) => a.join(" ")));
  if (liveText.includes("tool_call") || liveText.includes('"read_file"')) throw new Error(`the running answer still shows the tool call: ${liveText.slice(0, 300)}`);
  checks.liveStep = squash(await liveStep.innerText());
  // Mid-step (the answer after the tool is still coming): Enter steers the running agent.
  await input.fill(STEER);
  await input.press("Enter");
  const turn = await answered(frame, "AGENT ANSWER", 60_000);
  checks.answeredMs = Date.now() - asked;
  // The finished answer keeps its steps, folded under their count.
  const steps = turn.locator("details.agent-steps");
  if ((await steps.count()) !== 1 || (await steps.getAttribute("open")) !== null) throw new Error("the finished answer has no folded list of its steps");
  checks.steps = squash(await steps.locator("summary").innerText());
  if (checks.steps !== "1 step") throw new Error(`the steps' summary reads ${JSON.stringify(checks.steps)}`);

  // 2. What the model received: the tools first; then the file, read by the tool, in the second call.
  const calls = (await chatRequests(mockUrl)).filter((r) => r.messages.includes("(agent check)"));
  // Two calls (the tool step, then the answer), the answer asked again with the steer in it.
  if (calls.length < 2 || calls.length > 3) throw new Error(`expected two or three model calls for the agent's question, the model got ${calls.length}`);
  if (!calls[calls.length - 1].messages.includes(STEER)) throw new Error(`the steer did not reach the model: ${calls[calls.length - 1].messages.slice(-600)}`);
  checks.steered = true;
  const system = String(calls[0].body.messages[0]?.content ?? "");
  if (!system.includes("read_file") || !system.includes("<tool_call>")) throw new Error(`the first call has no tool list: ${system.slice(0, 400)}`);
  if (calls[0].messages.includes("#agent")) throw new Error("the `#agent` tag was sent to the model");
  const last = calls[1].body.messages[calls[1].body.messages.length - 1];
  const toolMessage = String(last?.content ?? "");
  if (!toolMessage.includes("<tool_response>") || !toolMessage.includes(definition)) {
    throw new Error(`the second call does not hold ${DEFINING}'s definition in a tool response: ${toolMessage.slice(0, 600)}`);
  }
  checks.modelCalls = calls.length;
  checks.toolResultHasDefinition = true;

  // 3. The answer names invoice.py as its source; a click opens it.
  const answerText = squash(await turn.locator(".markdown").allTextContents().then((a) => a.join(" ")));
  if (!answerText.includes(ANSWER) || answerText.includes("<tool_call>")) throw new Error(`the shown answer is ${JSON.stringify(answerText.slice(0, 300))}`);
  const source = turn.locator(".sources .source-link", { hasText: DEFINING }).first();
  await source.waitFor({ state: "visible", timeout: 5000 }).catch(async () => {
    throw new Error(`the answer does not list ${DEFINING} as a source: ${JSON.stringify(await turn.locator(".sources .source-link").allTextContents())}`);
  });
  checks.sources = (await turn.locator(".sources .source-link").allTextContents()).map(squash);
  await page.screenshot({ path: path.join(OUT, "chat-agent.png") });
  await source.click();
  await page.locator(".tab.active", { hasText: DEFINING }).waitFor({ timeout: 15_000 });
  checks.sourceOpens = true;
  const userTurn = frame.locator(".turn.user", { hasText: QUESTION });
  checks.turnContext = squash(await userTurn.locator(".context").textContent().catch(() => ""));
  log(`agent chat: answered in ${checks.answeredMs} ms after ${checks.modelCalls} model calls (the last with the steer); sources ${checks.sources.join(" | ")}`);

  await leaveAsFound(t, frame, DEFINING);
}
