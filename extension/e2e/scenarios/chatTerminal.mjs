// `#terminal` in the chat: a command typed into a VS Code terminal (bash, with VS Code's shell
// integration) is offered by the picker and attached with its output when a message mentions #terminal. The command computes
// its output (`$((6*7))`), so the request can only hold "42" if the output itself was read. Checked
// in what the model received (the mock's request log). Ends in main.py with the mock answering
// COMPLETION again and the panel hidden.
import * as path from "node:path";
import { answered, chatFrame, chatRequests, leaveAsFound, openChat } from "../lib/chat.mjs";
import { OUT } from "../lib/config.mjs";
import { hidePanel, runCommand } from "../lib/editor.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

// `sleep 1` first: shell integration's output stream starts when the extension hears the command began,
// and a command as fast as a bare `echo` can print before that (seen in a full run: the line, no output).
const COMMAND = "sleep 1; echo kestrel-terminal-$((6*7))-canary";
const PRINTED = "kestrel-terminal-42-canary";

export default async function chatTerminal(t) {
  const { page, results, mockUrl } = t;
  const frame = chatFrame(page);
  if (!(await frame.locator("#input").isVisible())) await openChat(page);
  await frame.locator("#new").click();
  const input = frame.locator("#input");
  /** Whether the picker offers `#terminal` with this command (what shell integration reported). */
  const offered = async () => {
    await input.fill("");
    await input.focus();
    await page.keyboard.type("#termin", { delay: 30 });
    const row = frame.locator("#mention-list [role=option]", { hasText: "kestrel-terminal" });
    const seen = await row.first().waitFor({ timeout: 5000 }).then(() => true, () => false);
    await page.keyboard.press("Escape");
    await input.fill("");
    return seen;
  };
  for (let attempt = 1; ; attempt++) {
    await runCommand(page, "Terminal: Create New Terminal"); // it takes the focus
    await sleep(3000); // the shell starts and shell integration's script runs with the first prompt
    await page.keyboard.type(COMMAND);
    await page.keyboard.press("Enter");
    await sleep(2500); // the command runs (xterm draws on a canvas: its text is not in the page to wait for)
    if (await offered()) break;
    if (attempt === 2) throw new Error("the picker never offered #terminal with the command: shell integration reported nothing");
    log(`chat terminal: the picker does not offer the command (attempt ${attempt}); again in a new terminal`);
  }
  const question = "#terminal what did my command print? (terminal check)";
  await setMock(mockUrl, { text: "TERMINAL ANSWER", tps: 0, ttft_ms: 0, rules: [] });
  await input.fill(question);
  await input.press("Enter");
  const answer = await answered(frame, "TERMINAL ANSWER");
  const asked = (await chatRequests(mockUrl)).filter((r) => r.messages.includes("what did my command print?"));
  if (asked.length !== 1) throw new Error(`expected one chat request with the #terminal question, the model got ${asked.length}`);
  const sent = asked[0].messages;
  if (!sent.includes(PRINTED)) throw new Error(`the request does not hold the terminal's output: ${sent.slice(0, 1500)}`);
  if (!sent.includes("echo kestrel-terminal-$((6*7))-canary")) throw new Error("the request does not hold the command line");
  const context = ((await frame.locator(".turn.user", { hasText: "what did my command print?" }).locator(".context").textContent()) || "").replace(/\s+/g, " ");
  if (!context.includes("terminal: sleep 1; echo")) throw new Error(`the sent turn does not name the terminal attachment: ${context}`);
  void answer;
  await page.screenshot({ path: path.join(OUT, "chat-terminal.png") });
  results.checks.chatTerminal = `#terminal attached the last command (${COMMAND}) and its output (${PRINTED}); the turn lists "${context.trim()}"`;
  log("chat terminal: #terminal sent the command line and its computed output");

  await page.keyboard.press("Escape");
  await hidePanel(page); // the terminal stays open, as chatFiles leaves its own
  await leaveAsFound(t, frame, null);
}
