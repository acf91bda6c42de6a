// Chat answers that touch several files: Apply on a block naming models.py reviews and changes
// models.py (not the active main.py), replacing the function it redefines (one undo step); Apply all
// goes through VS Code's Refactor Preview, where unchecking utils.py leaves it alone; the answer then
// says so, its Restore (after a confirmation) puts models.py back, and the next request tells the
// model what was applied, left out and restored; Insert previews
// before it inserts at the cursor (Cancel keeps the file); a bash block offers Run in terminal behind
// a modal confirm (Cancel runs nothing, Run runs it), and never into a program still running in
// the Kestrel terminal (a second Run beside a running `cat` runs in a terminal of its own); Apply on a
// block naming a workspace file that links out of the workspace is refused. Checked on disk. Starts and ends in main.py with
// the mock answering COMPLETION again.
import * as fs from "node:fs";
import * as path from "node:path";
import { answered, chatFrame, chatRequests, openChat } from "../lib/chat.mjs";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { hidePanel } from "../lib/editor.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

const OLD_FORMAT_TASK = 'def format_task(task):\n    mark = "x" if task.done else " "\n    return f"[{mark}] {task.title}"\n';
const NEW_FORMAT_TASK = 'def format_task(task):\n    state = "done" if task.done else "todo"\n    return f"{state}: {task.title.strip()}"\n';
const SHOUT = 'def shout(text):\n    return text.upper() + "!"\n';
// models.py named in the fence's info string, utils.py in the line before its fence.
const TWO_FILES_ANSWER = `Change both files.\n\n\`\`\`python models.py\n${NEW_FORMAT_TASK}\`\`\`\n\nIn \`utils.py\`:\n\n\`\`\`python\n${SHOUT}\`\`\`\n`;
const IS_BLANK = "def is_blank(text):\n    return not text.strip()\n";
const INSERT_ANSWER = `A helper you can use:\n\n\`\`\`python\n${IS_BLANK}\`\`\`\n`;
const COMMAND = "echo ran > ran.txt";
const RUN_ANSWER = `Run this:\n\n\`\`\`bash\n${COMMAND}\n\`\`\`\n`;
const LINKED_ANSWER = "Bump it.\n\n```python vendor.py\nVENDOR = 2\n```\n";
const READER_ANSWER = "Start a reader:\n\n```bash\ncat\n```\n";

export default async function chatFiles(t) {
  const { page, editor, results, mockUrl, openFile, toast } = t;
  const frame = chatFrame(page);
  if (!(await frame.locator("#input").isVisible())) await openChat(page); // run alone
  await frame.locator("#new").click();
  const ws = (name) => path.join(t.dirs.ws, name);
  const read = (name) => fs.readFileSync(ws(name), "utf8");
  const original = { models: read("models.py"), utils: read("utils.py"), main: read("main.py") };
  if (!original.models.includes(OLD_FORMAT_TASK)) throw new Error("models.py does not hold the format_task this scenario replaces");
  const expectedModels = original.models.replace(OLD_FORMAT_TASK, NEW_FORMAT_TASK);
  const editorLines = () => page.locator(".editor-instance .monaco-editor .view-lines").first();
  const editorText = async () => ((await editorLines().textContent()) || "").replace(/\u00a0/g, " ");
  /** Saves the focused editor until `name` on disk is `expected`; on timeout says what is on disk. */
  const saveUntil = async (name, expected, what) => {
    const ok = () => read(name) === expected;
    await waitFor(what, async () => {
      if (ok()) return true;
      await page.keyboard.press("Control+S");
      await sleep(300);
      return ok();
    }, 30_000, 100).catch((e) => { throw new Error(`${e.message}\n${name} on disk:\n${read(name)}`); });
  };
  const toMain = async () => {
    await page.locator(".tab", { hasText: "main.py" }).first().click();
    await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
    await editor.locator(".view-lines").click();
  };
  const tabGone = (title) => waitFor(`the tab "${title}" to close`, async () => (await page.locator(".tab", { hasText: title }).count()) === 0, 10_000, 100);
  const ask = async (question, answer, waitText) => {
    await setMock(mockUrl, { text: answer, tps: 0, ttft_ms: 0, rules: [] });
    await frame.locator("#input").fill(question);
    await frame.locator("#input").press("Enter");
    return answered(frame, waitText);
  };

  // 1. Apply on the models.py block while main.py is the active editor.
  await toMain();
  const mainShown = await editorText();
  const twoFiles = await ask("Make format_task clearer and add a shout helper", TWO_FILES_ANSWER, "Change both files.");
  const header = (file) => twoFiles.locator(".code-header", { has: frame.locator(".code-file", { hasText: file }) });
  for (const file of ["models.py", "utils.py"]) {
    if ((await header(file).count()) !== 1) throw new Error(`the answer's code block for ${file} is not labelled with its file`);
  }
  await header("models.py").locator("button.code-apply").click();
  await page.locator(".tab", { hasText: "Kestrel: review models.py" }).first().waitFor({ timeout: 30_000 });
  if ((await page.locator(".tab", { hasText: "Kestrel: review main.py" }).count()) !== 0) throw new Error("Apply reviewed the active main.py instead of models.py");
  await toast("Apply Kestrel's change to models.py?").getByRole("button", { name: "Apply" }).click();
  await tabGone("Kestrel: review models.py");
  if (read("main.py") !== original.main) throw new Error("Apply on the models.py block changed main.py on disk");
  await toMain();
  if ((await editorText()) !== mainShown) throw new Error("Apply on the models.py block changed the main.py editor");
  await openFile("models.py");
  await saveUntil("models.py", expectedModels, "models.py with the new format_task (replaced in place, once) on disk");
  await page.keyboard.press("Control+Z");
  await saveUntil("models.py", original.models, "one undo to restore models.py");
  log("chat files: Apply on the models.py block replaced format_task in models.py; one undo restored it");

  // 2. Apply all: VS Code's Refactor Preview lists both files; with utils.py unchecked only models.py changes.
  await toMain();
  await twoFiles.locator("button.apply-all").click();
  const preview = page.locator(".bulk-edit-panel");
  const fileRow = (file) => preview.locator(".monaco-list-row", { hasText: file }).first();
  await fileRow("models.py").waitFor({ timeout: 30_000 });
  await fileRow("utils.py").waitFor({ timeout: 10_000 });
  await page.screenshot({ path: path.join(OUT, "chat-multifile-review.png") });
  const utilsBox = fileRow("utils.py").locator(".edit-checkbox");
  await utilsBox.click();
  await waitFor("utils.py unchecked in the Refactor Preview", async () => (await utilsBox.getAttribute("aria-checked")) === "false", 10_000, 100);
  if ((await fileRow("models.py").locator(".edit-checkbox").getAttribute("aria-checked")) !== "true") throw new Error("models.py is not checked in the Refactor Preview");
  await preview.locator(".buttons .monaco-button", { hasText: "Apply" }).first().click();
  await waitFor("the Refactor Preview to finish", async () => !(await fileRow("models.py").isVisible()), 20_000, 100);
  await openFile("utils.py");
  if ((await editorText()).includes("def shout")) throw new Error("Apply all changed the unchecked utils.py in its editor");
  await page.keyboard.press("Control+S");
  await openFile("models.py");
  await saveUntil("models.py", expectedModels, "models.py changed by Apply all on disk");
  if (read("utils.py") !== original.utils) throw new Error(`Apply all changed the unchecked utils.py:\n${read("utils.py")}`);
  await hidePanel(page);
  log("chat files: Apply all -> Refactor Preview; utils.py unchecked stayed, models.py changed");

  // 2b. The answer says what was applied and left out; Restore (confirmed) puts models.py back; the
  // next question tells the model what the user did with that answer.
  const appliedRow = twoFiles.locator(".applied");
  await waitFor("the answer's Apply all record", async () => ((await appliedRow.textContent().catch(() => "")) || "").includes("Applied to models.py · left out utils.py"), 15_000, 100);
  await page.screenshot({ path: path.join(OUT, "chat-applied.png") });
  await appliedRow.locator("button.restore").click();
  const restoreDialog = page.locator(".monaco-dialog-box", { hasText: "Restore models.py to before Apply all?" });
  await restoreDialog.waitFor({ timeout: 20_000 });
  await restoreDialog.getByRole("button", { name: "Restore", exact: true }).click();
  // Quick open while the dialog is still closing finds its input inert: wait until it is gone.
  await restoreDialog.waitFor({ state: "detached", timeout: 20_000 });
  await openFile("models.py");
  await saveUntil("models.py", original.models, "Restore to put models.py back as before Apply all");
  await waitFor("the answer to say it was restored", async () => ((await twoFiles.locator(".applied").textContent().catch(() => "")) || "").startsWith("Restored models.py"), 15_000, 100);
  if (read("utils.py") !== original.utils) throw new Error("Restore changed utils.py, which Apply all left out");
  await toMain();
  await ask("Anything else to change?", "Nothing else.", "Nothing else.");
  const told = (await chatRequests(mockUrl)).filter((r) => r.messages.includes("Anything else to change?")).pop();
  const note = "the user applied the changes to models.py; left out utils.py (do not propose those changes again unless asked); then restored those files to what they were before.";
  if (!told || !told.messages.includes(note)) throw new Error(`the next request does not tell the model what was applied: ${told ? told.messages.slice(-900) : "no request"}`);
  log("chat files: the answer recorded Apply all (models.py applied, utils.py left out); Restore put models.py back; the next request says so");

  // 3. Insert previews first: Cancel keeps utils.py, Insert puts the code at the cursor.
  const insertAnswer = await ask("Give me an is_blank helper", INSERT_ANSWER, "A helper you can use");
  await openFile("utils.py");
  await page.keyboard.press("Control+End");
  const insertPreview = async () => {
    await insertAnswer.locator("button.code-insert").first().click();
    await page.locator(".tab", { hasText: "Kestrel: insert into utils.py" }).first().waitFor({ timeout: 30_000 });
    const t = toast("Insert Kestrel's code at the cursor in utils.py?");
    await t.waitFor({ timeout: 10_000 });
    return t;
  };
  const cancelToast = await insertPreview();
  await sleep(500); // the toast slides in
  await page.screenshot({ path: path.join(OUT, "chat-insert-preview.png") });
  await cancelToast.getByRole("button", { name: "Cancel" }).click();
  await tabGone("Kestrel: insert into utils.py");
  await openFile("utils.py");
  if ((await editorText()).includes("is_blank")) throw new Error("Cancel inserted the code into the utils.py editor");
  await page.keyboard.press("Control+S");
  await sleep(500);
  if (read("utils.py") !== original.utils) throw new Error("Cancel changed utils.py on disk");
  await page.keyboard.press("Control+End"); // the cursor where the code goes
  await (await insertPreview()).getByRole("button", { name: "Insert" }).click();
  await tabGone("Kestrel: insert into utils.py");
  await page.locator(".tab", { hasText: /^utils\.py/ }).first().click();
  await editorLines().click();
  const inserted = () => { const s = read("utils.py"); return s.startsWith(original.utils) && s.slice(original.utils.length).trim() === IS_BLANK.trim(); };
  await waitFor("the code inserted at the end of utils.py (the cursor) on disk", async () => {
    if (inserted()) return true;
    await page.keyboard.press("Control+S");
    await sleep(300);
    return inserted();
  }, 30_000, 100).catch((e) => { throw new Error(`${e.message}\nutils.py on disk:\n${read("utils.py")}`); });
  await page.keyboard.press("Control+Z");
  await saveUntil("utils.py", original.utils, "one undo to restore utils.py after Insert");
  log("chat files: Insert previewed; Cancel kept utils.py, Insert put the code at the cursor");

  // 4. A bash block: Run in terminal (no Apply), behind a modal confirm.
  await toMain();
  const runAnswer = await ask("How do I record that it ran?", RUN_ANSWER, "Run this:");
  const run = runAnswer.locator("button.code-run");
  if ((await run.count()) !== 1 || !/Run in terminal/.test((await run.textContent()) || "")) throw new Error("the bash block has no 'Run in terminal' button");
  if ((await runAnswer.locator("button.code-apply").count()) !== 0) throw new Error("the bash block offers Apply");
  const marker = ws("ran.txt");
  const confirm = async () => {
    await run.click();
    const dialog = page.locator(".monaco-dialog-box", { hasText: "Run this command in a terminal?" });
    await dialog.waitFor({ timeout: 20_000 });
    if (!((await dialog.textContent()) || "").includes(COMMAND)) throw new Error("the confirmation does not show the command");
    return dialog;
  };
  await (await confirm()).getByRole("button", { name: "Cancel", exact: true }).click();
  await sleep(4000); // a terminal that ran it anyway would have written the file by now
  if (fs.existsSync(marker)) throw new Error("Cancel ran the command");
  await (await confirm()).getByRole("button", { name: "Run", exact: true }).click();
  await waitFor("the command to run in a terminal (ran.txt in the workspace)", () => fs.existsSync(marker) && fs.readFileSync(marker, "utf8").trim() === "ran", 60_000, 200);
  fs.rmSync(marker);
  log("chat files: Run in terminal asked first; Cancel ran nothing, Run ran it");

  // 5. A program left running in the Kestrel terminal (ssh to another host, a REPL; here `cat`, which
  // reads what is typed) never gets the next command typed into it: that command gets its own terminal.
  const readerAnswer = await ask("How do I read what I type?", READER_ANSWER, "Start a reader:");
  await readerAnswer.locator("button.code-run").click();
  const readerDialog = page.locator(".monaco-dialog-box", { hasText: "Run this command in a terminal?" });
  await readerDialog.waitFor({ timeout: 20_000 });
  await readerDialog.getByRole("button", { name: "Run", exact: true }).click();
  await sleep(3000); // cat is reading the terminal
  await (await confirm()).getByRole("button", { name: "Run", exact: true }).click();
  await waitFor("the command to run beside the running cat (ran.txt in the workspace), not be typed into cat", () => fs.existsSync(marker) && fs.readFileSync(marker, "utf8").trim() === "ran", 60_000, 200);
  fs.rmSync(marker);
  await hidePanel(page);
  log("chat files: with cat still running in the Kestrel terminal, the next Run ran in a terminal of its own");

  // 6. A block naming a workspace file that is a link out of the workspace (a cloned repository's
  // `vendor.py -> ~/somewhere`): Apply refuses it, says why, and the file it leads to is untouched.
  const outside = path.join(t.tmp, "outside-vendor.py");
  fs.writeFileSync(outside, "VENDOR = 1\n");
  fs.symlinkSync(outside, ws("vendor.py"));
  try {
    const linked = await ask("Bump VENDOR", LINKED_ANSWER, "Bump it.");
    await linked.locator("button.code-apply").click();
    await toast("vendor.py is a link to a file outside the workspace").waitFor({ timeout: 20_000 });
    await sleep(1000);
    if ((await page.locator(".tab", { hasText: "Kestrel: review vendor.py" }).count()) !== 0) throw new Error("Apply opened a review for a link out of the workspace");
    if (fs.readFileSync(outside, "utf8") !== "VENDOR = 1\n") throw new Error("Apply wrote through a link out of the workspace");
  } finally {
    fs.rmSync(ws("vendor.py"));
  }
  log("chat files: Apply on vendor.py (a link out of the workspace) refused with the reason; the file it leads to is untouched");

  results.checks.chatFiles = "Apply on the models.py block (main.py active) replaced format_task in models.py once, one undo; Apply all via Refactor Preview with utils.py unchecked changed only models.py, recorded on the answer, Restore put models.py back and the next request said so; Insert previewed (Cancel kept, Insert at the cursor); Run in terminal confirmed (Cancel nothing, Run ran), and with cat left running in its terminal the next command ran in a terminal of its own; Apply on a block naming a link out of the workspace refused, the file it leads to untouched";
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await toMain();
  await page.keyboard.press("Control+End");
}
