// `#agent` proposing changes to two files (issue 29): the mock model's first answer is one step with
// two `edit_file` calls (invoice.py's tax rate, a helper above utils.py's slugify); the server sends
// them as one workspace/applyEdit whose every edit needs confirmation, so VS Code opens its Refactor
// Preview with both files, each unticked. invoice.py is ticked, utils.py left out, Apply. Checked:
// nothing changed before Apply; after it invoice.py holds the new rate (saved: on disk) and utils.py
// is untouched; while the preview waits the turn points at it (not the calls the model wrote); the
// step lists "kept" and "rejected"; the model's next request says the user accepted
// invoice.py and rejected utils.py (do not make it again); the answer records "Applied to invoice.py ·
// left out utils.py" and its Restore (confirmed) puts invoice.py back, which leaves it as found.
import * as fs from "node:fs";
import * as path from "node:path";
import { answered, chatFrame, chatRequests, leaveAsFound, openChat } from "../lib/chat.mjs";
import { OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

const QUESTION = "#agent Raise the tax rate to 25% and add a shout helper (agent write check)";
const ANSWER = "AGENT WRITE ANSWER: the rate is 25% now.";
const call = (args) => `<tool_call>\n${JSON.stringify({ name: "edit_file", arguments: args })}\n</tool_call>`;
const STEP = [
  call({ path: "invoice.py", old_text: "TAX_RATE = 0.2", new_text: "TAX_RATE = 0.25" }),
  call({ path: "utils.py", old_text: "def slugify(text):", new_text: "def shout(text):\n    return text.upper()\n\n\ndef slugify(text):" }),
].join("\n");
const squash = (s) => (s ?? "").replace(/\s+/g, " ").trim();

export default async function agentWrites(t) {
  const { page, results, mockUrl, openFile } = t;
  const checks = (results.checks.agentWrites = {});
  const read = (name) => fs.readFileSync(path.join(t.dirs.ws, name), "utf8");
  const original = { invoice: read("invoice.py"), utils: read("utils.py") };
  if (!original.invoice.includes("TAX_RATE = 0.2\n")) throw new Error("invoice.py does not hold the tax rate this scenario changes");
  const frame = chatFrame(page);
  if ((await frame.locator("#input").count().catch(() => 0)) === 0 || !(await frame.locator("#input").isVisible())) await openChat(page);
  await frame.locator("#new").click();
  await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 100);
  await openFile("main.py");

  // 1. The question; the step's two edits open the Refactor Preview, nothing is changed yet.
  await setMock(mockUrl, { text: STEP, tps: 0, ttft_ms: 0, rules: [{ match: "<tool_response>", text: ANSWER }] });
  await frame.locator("#input").fill(QUESTION);
  await frame.locator("#input").press("Enter");
  const preview = page.locator(".bulk-edit-panel");
  const fileRow = (file) => preview.locator(".monaco-list-row", { hasText: file }).last();
  await fileRow("invoice.py").waitFor({ timeout: 60_000 });
  await fileRow("utils.py").waitFor({ timeout: 10_000 });
  await page.screenshot({ path: path.join(OUT, "agent-write-review.png") });
  for (const file of ["invoice.py", "utils.py"]) {
    const box = fileRow(file).locator(".edit-checkbox");
    checks[`${file} ticked at first`] = await box.getAttribute("aria-checked");
    if (checks[`${file} ticked at first`] !== "false") throw new Error(`${file} starts ticked: an agent's change must be confirmed`);
  }
  if (read("invoice.py") !== original.invoice || read("utils.py") !== original.utils) throw new Error("a file changed before the user applied anything");
  // The chat turn says where its answer waits, and no longer shows the calls the model wrote.
  const live = frame.locator("#transcript .turn.assistant.streaming").last();
  await waitFor("the turn to point at the Refactor Preview", async () => squash(await live.innerText().catch(() => "")).includes("review them in the Refactor Preview"), 10_000, 100);
  const liveText = squash(await live.innerText());
  if (liveText.includes("tool_call") || liveText.includes('"edit_file"')) throw new Error(`the turn still shows the tool calls: ${liveText.slice(0, 300)}`);
  checks.whileReviewing = liveText.slice(0, 200);

  // 2. Tick invoice.py, leave utils.py out, Apply.
  const invoiceBox = fileRow("invoice.py").locator(".edit-checkbox");
  await invoiceBox.click();
  await waitFor("invoice.py ticked in the Refactor Preview", async () => (await invoiceBox.getAttribute("aria-checked")) === "true", 10_000, 100);
  await preview.locator(".buttons .monaco-button", { hasText: "Apply" }).first().click();
  const turn = await answered(frame, "AGENT WRITE ANSWER", 60_000);

  // 3. What the step says, and what the model was told.
  await turn.locator("details.agent-steps summary").click();
  const lines = (await turn.locator(".agent-steps .agent-step").allTextContents()).map(squash);
  checks.steps = lines;
  if (!lines.includes("Proposed a change to invoice.py: kept") || !lines.includes("Proposed a change to utils.py: rejected")) {
    throw new Error(`the step does not say what the user kept: ${JSON.stringify(lines)}`);
  }
  const calls = (await chatRequests(mockUrl)).filter((r) => r.messages.includes("(agent write check)"));
  const system = String(calls[0]?.body.messages[0]?.content ?? "");
  if (!system.includes("edit_file")) throw new Error(`a trusted workspace's agent was not offered edit_file: ${system.slice(0, 300)}`);
  const told = calls[calls.length - 1]?.messages ?? "";
  if (!told.includes("The user accepted the change: invoice.py changed") || !told.includes("The user rejected this change to utils.py")) {
    throw new Error(`the model was not told what the user kept: ${told.slice(-800)}`);
  }
  checks.modelTold = true;

  // 4. On disk: invoice.py (once saved) has the new rate; utils.py is untouched.
  await openFile("invoice.py");
  const expected = original.invoice.replace("TAX_RATE = 0.2\n", "TAX_RATE = 0.25\n");
  const saveUntil = async (want, what) => waitFor(what, async () => {
    if (read("invoice.py") === want) return true;
    await page.keyboard.press("Control+S");
    await sleep(300);
    return read("invoice.py") === want;
  }, 30_000, 100).catch((e) => { throw new Error(`${e.message}\ninvoice.py on disk:\n${read("invoice.py")}`); });
  await saveUntil(expected, "invoice.py with the kept change, saved");
  if (read("utils.py") !== original.utils) throw new Error(`utils.py, left out, changed:\n${read("utils.py")}`);
  checks.onDisk = "invoice.py changed, utils.py untouched";

  // 5. The answer records what was kept, with a checkpoint: Restore (confirmed) puts invoice.py back.
  const appliedRow = turn.locator(".applied");
  await waitFor("the answer's record of the agent's changes", async () => squash(await appliedRow.textContent().catch(() => "")).includes("Applied to invoice.py · left out utils.py"), 15_000, 100);
  checks.record = squash(await appliedRow.textContent());
  await appliedRow.locator("button.restore").click();
  const dialog = page.locator(".monaco-dialog-box", { hasText: "Restore invoice.py to before the agent's changes?" });
  await dialog.waitFor({ timeout: 20_000 });
  await dialog.getByRole("button", { name: "Restore", exact: true }).click();
  await saveUntil(original.invoice, "Restore to put invoice.py back as before the agent's changes");
  await waitFor("the answer to say it was restored", async () => squash(await appliedRow.textContent().catch(() => "")).startsWith("Restored invoice.py"), 15_000, 100);
  if (read("utils.py") !== original.utils) throw new Error("Restore changed utils.py, which was left out");
  checks.restored = true;
  log(`agent writes: Refactor Preview with both files unticked; invoice.py kept, utils.py left out; the model was told; steps ${lines.join(" | ")}; recorded and restored`);
  if (await page.locator(".part.panel").isVisible()) await page.keyboard.press("Control+J");
  await leaveAsFound(t, frame, "invoice.py");
}
