// The chat panel in the workbench's default theme and VS Code's four "Default" themes (dark, light,
// high contrast dark and light), checked by axe-core inside the webview: a
// transcript with a user turn and its context, an answer with a Python block, a table and a steer
// mark (stopped), a queued message, and chips on and off (also with the history panel open), then
// the empty state of a new chat. No violation of impact serious or critical is allowed (colour
// contrast included); every violation found is written to results.checks.axe[theme][state].
// Restores the default theme; starts and ends in main.py with the mock answering COMPLETION.
import * as path from "node:path";
import { axeScan, chatWebviewFrame, severe } from "../lib/axe.mjs";
import { chatFrame, openChat } from "../lib/chat.mjs";
import { COMPLETION, OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, sleep, waitFor } from "../lib/util.mjs";

// The setting's value, and the label VS Code hands the webview (body[data-vscode-theme-name]) once it is applied.
const THEMES = [
  { setting: "Default Dark Modern", label: "Dark Modern" },
  { setting: "Default Light Modern", label: "Light Modern" },
  { setting: "Default High Contrast", label: "Dark High Contrast" },
  { setting: "Default High Contrast Light", label: "Light High Contrast" },
];
const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-");

const ANSWER = [
  "Here is the function and how the two approaches compare:",
  "",
  "```python",
  "def compute(n: int) -> int:",
  '    """Double n."""',
  "    return n * 2  # fast path",
  "```",
  "",
  "| Approach | Time | Memory |",
  "| --- | --- | --- |",
  "| loop | O(n) | O(1) |",
  "| table | O(1) | O(n) |",
  "",
  "More detail follows: " + "details ".repeat(400),
].join("\n");
const STEER = "THEME-STEER keep it short";

async function ensureChat(page) {
  const frame = chatFrame(page);
  if ((await frame.locator("#input").count().catch(() => 0)) === 0) await openChat(page);
  return frame;
}

/** A transcript with every kind of element the panel draws, left idle with a message queued. */
async function buildTranscript(t, frame) {
  const input = frame.locator("#input");
  // A second tab, so that the "open files" chip has something to attach (main.py stays active).
  await t.openFile("edit.py");
  await t.openFile("main.py");
  await setMock(t.mockUrl, { text: ANSWER, tps: 40, ttft_ms: 0, rules: [{ match: "THEME-STEER", text: "Steered: shorter now. " + "short ".repeat(400) }] });
  await frame.locator("#new").click();
  await waitFor("an empty new chat", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 50);
  await input.fill("Show me compute with a table");
  await input.press("Enter");
  const streaming = frame.locator(".turn.assistant.streaming").last();
  await streaming.locator(".table-wrap").waitFor({ timeout: 30_000 });
  await waitFor("the whole table (the text after it)", async () => /More detail follows/.test(await streaming.textContent({ timeout: 500 })), 30_000, 50);
  await input.fill(STEER);
  await input.press("Enter");
  await frame.locator("#transcript .steer-mark").first().waitFor({ timeout: 30_000 });
  await input.fill("A queued follow-up");
  await input.press("Tab");
  await frame.locator("#queue .queued").first().waitFor({ timeout: 10_000 });
  await frame.locator("#stop").click();
  await waitFor("the stopped answer", async () => (await frame.locator(".turn.assistant.streaming").count()) === 0, 10_000, 50);
  // What the check covers must be there, else 0 violations proves little.
  const need = {
    "user turn context": "#transcript .turn.user .context",
    "python code header": "#transcript .code-header .code-lang",
    "code block": "#transcript pre",
    table: "#transcript .table-wrap table",
    "steer mark": "#transcript .steer-mark",
    "stopped notice": "#transcript .turn.assistant .notice",
    "queued message": "#queue .queued",
    chip: "#chips .chip",
  };
  for (const [what, sel] of Object.entries(need)) {
    if ((await frame.locator(sel).count()) === 0) throw new Error(`the themed transcript lacks a ${what} (${sel})`);
  }
  // Chips on and off: turn one over if they all have the same state.
  const pressed = await frame.locator("#chips .chip:not([disabled])").evaluateAll((els) => els.map((el) => el.getAttribute("aria-pressed")));
  if (!(pressed.includes("true") && pressed.includes("false"))) {
    if (pressed.length < 2) throw new Error(`chips on and off need two usable chips; there are ${pressed.length}`);
    await frame.locator("#chips .chip:not([disabled])").last().click();
    await waitFor("one chip on and one off", async () => {
      const p = await frame.locator("#chips .chip:not([disabled])").evaluateAll((els) => els.map((el) => el.getAttribute("aria-pressed")));
      return p.includes("true") && p.includes("false");
    }, 5000, 50);
  }
}

/**
 * Axe on the panel: the transcript scrolled to the top and to the bottom (axe cannot judge the
 * contrast of what is scrolled out of view), then with the history panel open; merged: the
 * violations, and the undecided elements per rule.
 */
async function scan(doc, frame) {
  const found = new Map();
  const incomplete = {};
  const collect = async () => {
    const result = await axeScan(doc);
    for (const v of result.violations) {
      const seen = found.get(v.id);
      if (!seen) found.set(v.id, v);
      else for (const n of v.nodes) if (!seen.nodes.some((m) => m.target === n.target)) seen.nodes.push(n);
    }
    for (const [id, targets] of Object.entries(result.incomplete)) incomplete[id] = [...new Set([...(incomplete[id] ?? []), ...targets])];
  };
  for (const where of ["top", "bottom"]) {
    await doc.evaluate((w) => {
      const tr = document.getElementById("transcript");
      tr.scrollTop = w === "top" ? 0 : tr.scrollHeight;
    }, where);
    await sleep(200);
    await collect();
  }
  const panel = frame.locator("#history-panel");
  await frame.locator("#history-toggle").click();
  await panel.locator(".history-item").first().waitFor({ state: "visible", timeout: 5000 });
  await collect();
  await frame.locator("#history-toggle").click();
  await panel.waitFor({ state: "hidden", timeout: 5000 });
  return { violations: [...found.values()], incomplete };
}

/**
 * The instrument itself: axe, run where the scenario runs it, must report a planted low-contrast
 * element (#777 on #888, set through the CSSOM, which the webview's CSP allows), else a run with
 * 0 violations would prove nothing. The element is removed again.
 */
async function axeSeesPlantedContrast(doc) {
  await doc.evaluate(() => {
    const p = document.createElement("p");
    p.id = "d2-axe-canary";
    p.textContent = "planted low contrast text";
    p.style.color = "#777777";
    p.style.background = "#888888";
    document.getElementById("transcript").prepend(p);
    document.getElementById("transcript").scrollTop = 0;
  });
  try {
    const { violations } = await axeScan(doc);
    const hit = violations.some((v) => v.id === "color-contrast" && v.nodes.some((n) => n.target.includes("#d2-axe-canary")));
    if (!hit) throw new Error("axe in the chat webview did not report a planted #777-on-#888 paragraph: the scan sees nothing");
  } finally {
    await doc.evaluate(() => document.getElementById("d2-axe-canary")?.remove());
  }
}

export default async function chatThemes(t) {
  const { page, editor, results } = t;
  const frame = await ensureChat(page);
  await buildTranscript(t, frame);
  const doc = await chatWebviewFrame(page);
  const themeNow = () => doc.evaluate(() => document.body.dataset.vscodeThemeName);
  const initialTheme = await themeNow();
  // The workbench's own default theme (code-server 4.139: "Light 2026") too: what most users see.
  const themes = THEMES.some((th) => th.label === initialTheme) ? THEMES : [{ setting: initialTheme, label: initialTheme, initial: true }, ...THEMES];
  const applyTheme = async (theme) => {
    t.writeSettings(theme.initial ? t.settings : { ...t.settings, "workbench.colorTheme": theme.setting });
    await waitFor(`the chat webview in ${theme.setting}`, async () => (await themeNow()) === theme.label, 30_000, 100);
    await sleep(500); // the new theme's CSS variables settle
  };
  const axe = (results.checks.axe = {});
  const failures = [];
  const check = async (theme, state, scanState) => {
    const { violations, incomplete } = await scanState();
    (axe[theme.setting] ??= {})[state] = { violations, incomplete };
    await page.screenshot({ path: path.join(OUT, `chat-theme-${slug(theme.setting)}${state === "transcript" ? "" : `-${state}`}.png`) });
    const bad = severe(violations);
    log(`chat theme ${theme.setting} (${state}): ${violations.length} axe violations, ${bad.length} serious or critical`, bad.map((v) => v.id).join(", "));
    if (bad.length) failures.push(`${theme.setting} (${state}): ${bad.map((v) => `${v.id} (${v.impact}, ${v.nodes.length} elements)`).join(", ")}`);
  };
  await axeSeesPlantedContrast(doc);
  try {
    // The transcript (and the history panel) in each theme, then the empty state of a new chat going back.
    for (const theme of themes) {
      await applyTheme(theme);
      await check(theme, "transcript", () => scan(doc, frame));
    }
    await frame.locator("#new").click();
    await frame.locator("#empty").waitFor({ state: "visible", timeout: 10_000 });
    for (const [i, theme] of [...themes].reverse().entries()) {
      if (i > 0) await applyTheme(theme);
      await check(theme, "empty", () => axeScan(doc));
    }
  } finally {
    t.writeSettings(t.settings);
  }
  await waitFor(`the theme from before (${initialTheme}) back`, async () => (await themeNow()) === initialTheme, 30_000, 100);
  if (failures.length) throw new Error(`axe found serious or critical violations in the chat panel: ${failures.join("; ")} (details in results.checks.axe)`);

  await setMock(t.mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
}
