// Helpers on the workbench page: the Kestrel status bar item, ghost text, notifications, quick open.
import { COMPLETION } from "./config.mjs";
import { log, sleep, waitFor } from "./util.mjs";

/** Runs a command from the command palette by its title. */
export async function runCommand(page, title) {
  await page.keyboard.press("Control+Shift+P");
  await page.locator(".quick-input-widget input").waitFor({ state: "visible" });
  await page.locator(".quick-input-widget input").fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
  await page.keyboard.press("Enter");
}

/** Types a new line `prefix` at the end of the editor until `seen()` holds: each keystroke burst asks for a completion. */
export async function typeUntil(t, what, seen, prefix = "z = ") {
  const { page, editor } = t;
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await waitFor(what, async () => {
    await page.keyboard.press("Enter");
    await page.keyboard.type(prefix);
    await sleep(300);
    return seen();
  }, 60_000, 500);
}

export function workbenchHelpers(page) {
  const status = page.locator(".statusbar-item", { hasText: "Kestrel" }).first();
  const statusText = async () => (await status.innerText()).replace(/\s+/g, " ").trim();
  const ghost = page.locator(".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text-decoration-preview");
  const ghostText = async () => (await ghost.allTextContents()).join("").replace(/\u00a0/g, " ");
  const noGhost = () => waitFor("ghost text to disappear", async () => (await ghost.count()) === 0, 20_000, 50);
  const toast = (text) => page.locator(".notifications-toasts .notification-toast", { hasText: text }).first();
  /** Quick open (Ctrl+P) `name`, wait for its tab, click into it; returns its editor. */
  const openFile = async (name) => {
    const input = page.locator(".quick-input-widget input");
    // Quick open can close under us: after a modal dialog it opened, was inert, then hid when the
    // dialog's focus restore landed (CI, stop 43). A user would press Ctrl+P again; so do we.
    for (let attempt = 1; ; attempt++) {
      try {
        await page.keyboard.press("Control+P");
        await input.waitFor({ state: "visible", timeout: 10_000 });
        await input.fill(name, { timeout: 10_000 });
        // The *focused* row, not just any row: until quick open has re-filtered, the focused row is
        // still the most recently opened file and Enter would reopen that one.
        await page.locator(".quick-input-list .monaco-list-row.focused", { hasText: name }).first().waitFor({ timeout: 15_000 });
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
        log(`quick open for ${name} closed before it was used (attempt ${attempt}), pressing Ctrl+P again`);
      }
    }
    await page.keyboard.press("Enter");
    await page.locator(".tab.active", { hasText: name }).waitFor();
    const ed = page.locator(".editor-instance .monaco-editor").first();
    await ed.locator(".view-lines").click();
    return ed;
  };
  return { status, statusText, ghost, ghostText, noGhost, toast, openFile };
}

/**
 * Opens the Ctrl+. menu at the cursor until it lists an item with `text`; returns that item (not
 * clicked). The code-action request can race the diagnostics' arrival: the menu is reopened until
 * it lists ours, as a user would press Ctrl+. again.
 */
export async function codeActionItem(page, text) {
  const item = page.locator(".action-widget .monaco-list-row", { hasText: text }).first();
  await waitFor(`'${text}' in the Ctrl+. menu`, async () => {
    await page.keyboard.press("Control+.");
    const shown = await item.waitFor({ timeout: 3000 }).then(() => true, () => false);
    if (!shown) await page.keyboard.press("Escape");
    return shown;
  }, 60_000, 200);
  return item;
}

/** Waits for the status bar to say the server is ready. */
export async function waitForReady(t) {
  await waitFor("Kestrel status bar 'ready'", async () => /Kestrel (ready|thinking)/.test(await t.status.innerText({ timeout: 1000 })), 180_000, 300);
  log("status bar:", (await t.status.innerText()).trim());
}

/** Opens main.py (typed into quick open) with the cursor at its end; returns its editor. */
export async function openMainPy(page) {
  await page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } }).catch(() => undefined);
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").waitFor({ state: "visible" });
  await page.keyboard.type("main.py");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "main.py" }).first().waitFor();
  await page.keyboard.press("Enter");
  const editor = page.locator(".editor-instance .monaco-editor").first();
  await editor.waitFor();
  await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  log("main.py open");
  return editor;
}

/**
 * A new line in main.py starting with `prefix` gets COMPLETION as ghost text (then Esc). If none has
 * shown after 15 s, the last character is typed again, as a user would (each keystroke asks anew);
 * how many keystrokes it took is recorded in results.checks.retypes (seen once in four runs after
 * a crash restart: the first request after the restart got no ghost text).
 */
export async function completesAgain(t, what, prefix) {
  const { page, editor } = t;
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.keyboard.type(prefix);
  let retypes = 0;
  let last = Date.now();
  await waitFor(`ghost text ${what}`, async () => {
    if ((await t.ghostText()) === COMPLETION) return true;
    if (Date.now() - last > 15_000) {
      retypes += 1;
      last = Date.now();
      log(`no ghost text ${what} after 15 s: typing the last character again`);
      await page.keyboard.press("Backspace");
      await page.keyboard.type(prefix.slice(-1));
    }
    return false;
  }, 120_000, 100);
  (t.results.checks.retypes ??= {})[what] = retypes;
  await page.keyboard.press("Escape");
}

/** Hides the bottom panel (Refactor Preview, terminal) if it is shown, so later scenarios see the editor. */
export async function hidePanel(page) {
  if (!(await page.locator(".part.panel").isVisible())) return;
  await runCommand(page, "View: Hide Panel");
  await waitFor("the panel to hide", async () => !(await page.locator(".part.panel").isVisible()), 10_000, 100);
}
