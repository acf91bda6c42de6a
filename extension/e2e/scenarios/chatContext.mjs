// Chat context chips: the file chip follows the active editor (models.py, then utils.py) and a send
// attaches that file and nothing else; with the "open files" chip on, the other open tabs go along
// by name and content (the active file not twice); a workspace file that links to a secret elsewhere
// is a secret chip and attaches nothing. The sent user turn names every attached item.
// Checked in what the model received (the mock's request log). Starts and ends in main.py with the
// mock answering COMPLETION again.
import * as fs from "node:fs";
import * as path from "node:path";
import { answered, chatFrame, chatRequests, openChat } from "../lib/chat.mjs";
import { PROJECT } from "../lib/codeServer.mjs";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

const LINKED_SECRET = "chatcontext-linked-canary-5b7e";

/** The last user message of the chat request that asked `question` (throws if none did). */
async function sentUserMessage(mockUrl, question) {
  const asked = (await chatRequests(mockUrl)).filter((r) => r.messages.includes(question));
  if (asked.length !== 1) throw new Error(`expected one chat request asking ${JSON.stringify(question)}, the model got ${asked.length}`);
  const users = asked[0].body.messages.filter((m) => m.role === "user");
  return String(users[users.length - 1]?.content ?? "");
}

/** Turns a chip on or off (as a user clicks it) and waits until it shows that state. */
async function setChip(frame, kind, on) {
  const chip = frame.locator(`#chips .chip[data-kind="${kind}"]`);
  await chip.waitFor({ timeout: 10_000 });
  if ((await chip.getAttribute("aria-pressed")) !== String(on)) await chip.click();
  await waitFor(`the ${kind} chip ${on ? "on" : "off"}`, async () => (await chip.getAttribute("aria-pressed")) === String(on), 10_000, 50);
}

export default async function chatContext(t) {
  const { page, editor, results, mockUrl, openFile } = t;
  const frame = chatFrame(page);
  if (!(await frame.locator("#input").isVisible())) await openChat(page); // run alone
  await frame.locator("#new").click(); // a fresh conversation: the request holds only this scenario's turns
  await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 100);
  const input = frame.locator("#input");
  const fileChip = frame.locator('#chips .chip[data-kind="file"]');
  /** Sends `question` with the mock answering `answer`; returns the last user message the model got. */
  const ask = async (question, answer) => {
    await setMock(mockUrl, { text: answer, tps: 0, ttft_ms: 0, rules: [] });
    await input.fill(question);
    await input.press("Enter");
    await answered(frame, answer);
    return sentUserMessage(mockUrl, question);
  };
  const chipNames = (name) => waitFor(`the file chip to name ${name}`, async () => ((await fileChip.textContent()) || "").includes(name), 15_000, 100);

  const elsewhere = path.join(t.tmp, "elsewhere");
  fs.mkdirSync(elsewhere, { recursive: true });
  fs.writeFileSync(path.join(elsewhere, ".env"), `TOKEN=${LINKED_SECRET}\n`);
  fs.symlinkSync(path.join(elsewhere, ".env"), path.join(t.dirs.ws, "notes.py"));

  // The file chip follows the active editor.
  await openFile("tasks.py");
  await openFile("models.py");
  await chipNames("models.py");
  await openFile("utils.py");
  await chipNames("utils.py");
  if (((await fileChip.textContent()) || "").includes("models.py")) throw new Error("the file chip still names models.py after switching to utils.py");

  // Send with the file only: utils.py goes along, models.py (an open tab, not attached) does not.
  await setChip(frame, "file", true);
  await setChip(frame, "openFiles", false);
  const fileQuestion = "What does this file do? (context check 1)";
  const fileOnly = await ask(fileQuestion, "CONTEXT ANSWER ONE");
  if (!fileOnly.includes("File utils.py") || !fileOnly.includes(PROJECT["utils.py"].trim())) {
    throw new Error(`the request does not attach utils.py (the active file): ${fileOnly.slice(0, 600)}`);
  }
  if (fileOnly.includes("models.py") || fileOnly.includes("def format_task")) {
    throw new Error(`the request attaches models.py although it is no longer the active file: ${fileOnly.slice(0, 600)}`);
  }
  const firstContext = (await frame.locator(".turn.user", { hasText: fileQuestion }).locator(".context").textContent()) || "";
  if (!firstContext.includes("file utils.py") || /open files/.test(firstContext)) {
    throw new Error(`the sent turn's context does not say what was attached (file utils.py only): ${firstContext}`);
  }

  // Open files on: the two other tabs go along by name and content; utils.py (active) only as the file.
  await setChip(frame, "openFiles", true);
  const tabsQuestion = "How do these files fit together? (context check 2)";
  const withTabs = await ask(tabsQuestion, "CONTEXT ANSWER TWO");
  for (const name of ["models.py", "tasks.py"]) {
    if (!withTabs.includes(name) || !withTabs.includes(PROJECT[name].trim())) {
      throw new Error(`the request does not attach the open tab ${name} by name and content: ${withTabs.slice(0, 1200)}`);
    }
  }
  if (!withTabs.includes("File utils.py")) throw new Error("the request with open files lost the active file");
  if (withTabs.split(PROJECT["utils.py"].trim()).length !== 2) throw new Error("the active file utils.py was attached twice (as the file and as an open file)");
  const userTurn = frame.locator(".turn.user", { hasText: tabsQuestion });
  const context = ((await userTurn.locator(".context").textContent()) || "").replace(/\s+/g, " ");
  if (!context.includes("file utils.py") || !/open files/.test(context) || !context.includes("models.py") || !context.includes("tasks.py")) {
    throw new Error(`the sent turn's context does not name every attached item: ${context}`);
  }
  results.checks.chatContext = { fileOnlyContext: firstContext.trim(), withOpenFilesContext: context.trim() };
  await page.screenshot({ path: path.join(OUT, "chat-context.png") });
  log("chat context:", context.trim());

  await setChip(frame, "openFiles", false); // later scenarios send with the default chips

  // A workspace file that is a link to a secret elsewhere (`notes.py -> ../elsewhere/.env`) is a secret:
  // its chip says so and a send attaches nothing of it (the server would refuse the message if it did).
  // (The link was made when the scenario began: quick open lists a file some time after it appears.)
  try {
    await openFile("notes.py");
    await chipNames("notes.py (secret)");
    const linked = await ask("What is in this file? (context check 3)", "CONTEXT ANSWER THREE");
    if (linked.includes(LINKED_SECRET) || linked.includes("File notes.py")) throw new Error(`the request attaches notes.py, a link to a secret: ${linked.slice(0, 600)}`);
    await page.keyboard.press("Control+W");
  } finally {
    fs.rmSync(path.join(t.dirs.ws, "notes.py"));
  }
  log("chat context: notes.py (a link to a .env elsewhere) shown as a secret chip; the send attached nothing of it");
  results.checks.chatContext.linkToSecret = "notes.py -> elsewhere/.env: chip 'notes.py (secret)', nothing of it in the request";
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await page.locator(".tab", { hasText: "main.py" }).first().click();
  await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
