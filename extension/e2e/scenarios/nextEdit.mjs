// Next edit suggestions (kestrel.nextEdit.enabled): a parameter renamed where it is declared is
// followed by the marker at its next use; Tab jumps there and opens the review, Tab accepts, and the
// uses are renamed on disk. The model's request held the user's own edit as a diff. Ends back in
// main.py with the setting off and the mock answering COMPLETION again.
import * as fs from "node:fs";
import * as path from "node:path";
import { RENAME_PY } from "../lib/codeServer.mjs";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

const AFTER = RENAME_PY.replace(/\bname\b/g, "who");

/** The text of the editor's `after` decorations (VS Code renders them as CSS `::after` content). */
async function markerTexts(page) {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll(".editor-instance .monaco-editor .view-lines span")) {
      const c = getComputedStyle(el, "::after").content;
      if (c && c !== "none" && c !== "normal") out.push(c);
    }
    return out;
  });
}

async function nextEditRequests(mockUrl) {
  const stats = await (await fetch(`${mockUrl.replace(/\/v1\/?$/, "")}/_mock/stats`)).json();
  return stats.request_log.filter((r) => JSON.stringify(r.body).includes("You predict a programmer's next edit"));
}

export default async function nextEdit(t) {
  const { page, editor, results, mockUrl, openFile } = t;
  const file = path.join(t.dirs.ws, "rename.py");
  if (fs.readFileSync(file, "utf8") !== RENAME_PY) throw new Error("rename.py is not as the session wrote it");
  // Ghost text answers nothing here (Tab must reach the next edit, not accept a suggestion); the
  // next-edit request gets the region with the rename carried through.
  await setMock(mockUrl, { text: "", tps: 0, ttft_ms: 0, rules: [{ match: "You predict a programmer's next edit", text: AFTER.trimEnd() }] });
  t.writeSettings({ ...t.settings, "kestrel.nextEdit.enabled": true });
  await sleep(1000); // the settings file is watched: let the client see the setting
  await openFile("rename.py");
  // Rename the parameter where it is declared: `name` → `who` on line 1.
  await page.keyboard.press("Control+Home");
  for (let i = 0; i < "def greet(".length; i++) await page.keyboard.press("ArrowRight");
  for (let i = 0; i < "name".length; i++) await page.keyboard.press("Shift+ArrowRight");
  await page.keyboard.type("who");
  await waitFor("the next-edit marker", async () => (await markerTexts(page)).some((c) => c.includes("next edit (Tab)")), 30_000, 100);
  await page.screenshot({ path: path.join(OUT, "next-edit-marker.png") });
  // rename.py is new to this session: its diff is in no earlier request of the mock's log (its last 50).
  const asked = (await nextEditRequests(mockUrl)).map((r) => JSON.stringify(r.body));
  if (!asked.some((sent) => sent.includes("-def greet(name):") && sent.includes("+def greet(who):"))) {
    throw new Error(`no next-edit request carried the user's edit as a diff: ${(asked.at(-1) ?? "(none)").slice(0, 400)}`);
  }
  await page.keyboard.press("Tab"); // jump to the next edit and open its review
  await page.locator(".monaco-diff-editor").first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: path.join(OUT, "next-edit-review.png") });
  await page.locator(".tab", { hasText: "rename.py" }).first().click();
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Tab"); // accept
  await waitFor("rename.py renamed on disk", async () => {
    if (fs.readFileSync(file, "utf8") === AFTER) return true;
    await page.keyboard.press("Control+S");
    await sleep(300);
    return fs.readFileSync(file, "utf8") === AFTER;
  }, 30_000, 100);
  results.checks.nextEdit = "a rename on its line: marker shown, Tab jumped to the review, Tab accepted (file on disk renamed); the request held the edit as a diff";
  log("next edit: marker, jump, accept; rename.py renamed on disk");
  t.writeSettings(t.settings);
  await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await page.locator(".tab", { hasText: "main.py" }).first().click();
  await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
