// The status bar menu turns completions off; the keybinding turns them back on.
import { COMPLETION } from "../lib/config.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

export default async function toggle(t) {
  const { page, editor, results, status, statusText, ghost, ghostText } = t;
  await status.click();
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Disable inline completions" }).first().click();
  await waitFor("status 'disabled'", async () => /Kestrel disabled/.test(await statusText()), 20_000, 100);
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.keyboard.type("d = ");
  await sleep(1500);
  if ((await ghost.count()) !== 0) throw new Error("ghost text shown while completions are disabled");
  await page.keyboard.press("Control+Alt+Shift+K");
  await waitFor("status 'ready' after Ctrl+Alt+Shift+K", async () => /Kestrel (ready|thinking)/.test(await statusText()), 20_000, 100);
  await page.keyboard.press("Backspace");
  await page.keyboard.type(" ");
  await waitFor("ghost text after re-enabling", async () => (await ghostText()) === COMPLETION, 30_000, 50);
  await page.keyboard.press("Escape");
  results.checks.toggle = "menu disabled completions (no ghost text for 1.5 s); Ctrl+Alt+Shift+K re-enabled them";
  log("toggle: off from the status bar menu, on with Ctrl+Alt+Shift+K");
}
