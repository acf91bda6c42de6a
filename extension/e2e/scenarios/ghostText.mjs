// Ghost text in main.py: shown, partially accepted (Ctrl+Right), dismissed (Esc), accepted (Tab);
// then the status bar shows the TTFT.
import * as fs from "node:fs";
import * as path from "node:path";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { log, waitFor } from "../lib/util.mjs";

export default async function ghostText(t) {
  const { page, results, ghostText, noGhost, statusText } = t;
  const fileText = () => fs.readFileSync(t.mainPy, "utf8");
  const save = async (expect) => {
    await page.keyboard.press("Control+S");
    return waitFor(`main.py on disk to match ${expect}`, () => expect.test(fileText()), 20_000, 100);
  };

  await page.keyboard.type("x = ");
  await waitFor(`ghost text '${COMPLETION}'`, async () => (await ghostText()) === COMPLETION, 60_000, 50);
  results.checks.ghostText = await ghostText();
  log("ghost text:", JSON.stringify(results.checks.ghostText));
  await page.screenshot({ path: path.join(OUT, "ghost-text.png") });

  await page.keyboard.press("Control+ArrowRight");
  await waitFor("the rest of the ghost text after a partial accept", async () => (await ghostText()) === "(42)", 20_000, 50);
  await page.keyboard.press("Escape");
  await noGhost();
  await save(/\nx = compute\n?$/);
  results.checks.partialAccept = fileText().trimEnd().split("\n").pop();
  log("after Ctrl+Right and Esc:", JSON.stringify(results.checks.partialAccept));

  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  await page.keyboard.type("y = ");
  await waitFor(`ghost text '${COMPLETION}' on the next line`, async () => (await ghostText()) === COMPLETION, 60_000, 50);
  await page.keyboard.press("Tab");
  await save(/\ny = compute\(42\)\n?$/);
  results.checks.document = fileText();
  log("after Tab, main.py ends with:", JSON.stringify(fileText().trimEnd().split("\n").pop()));

  await waitFor("TTFT in the status bar", async () => /TTFT \d/.test(await statusText()), 30_000, 100);
  results.checks.statusBar = await statusText();
  log("status bar:", results.checks.statusBar);
}
