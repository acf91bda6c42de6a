// Codebase questions in the chat: with main.py active, a question naming `invoice_total` (defined in
// invoice.py, which no tab holds) makes the server search the workspace. Checked: the request the
// model received holds the definition; the Sources list shows invoice.py above the answer before its
// first token; clicking the source (and Tab + Enter on it, and the answer's citation) opens invoice.py
// with the cursor on the definition's line, and so does its number ([n], the n-th source); a citation
// of a file the workspace lacks, or a number past the sources, is struck out;
// the list and the strike-out come back when the conversation is reopened from the history; axe finds
// nothing serious. Starts and ends in main.py with the mock answering COMPLETION and invoice.py closed.
import * as path from "node:path";
import { axeScan, chatWebviewFrame, severe } from "../lib/axe.mjs";
import { answered, chatFrame, chatRequests, leaveAsFound, openChat } from "../lib/chat.mjs";
import { PROJECT } from "../lib/codeServer.mjs";
import { OUT } from "../lib/config.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, waitFor } from "../lib/util.mjs";

const DEFINING = "invoice.py";
const NAME = "invoice_total";
const LINES = (PROJECT[DEFINING] ?? "").split("\n"); // checked in the scenario (a missing fixture fails it, not the import)
/** The definition's lines, 1-based: `def invoice_total(` to the end of its body. */
const DEF_LINE = LINES.findIndex((l) => l.startsWith(`def ${NAME}(`)) + 1;
const DEF_END = LINES.findIndex((l, i) => i >= DEF_LINE && !l.startsWith(" ")); // the first line after the body (0-based) = its last line (1-based)
const DEF_TEXT = LINES.slice(DEF_LINE - 1, DEF_END);
const SPAN = `${DEFINING}:${DEF_LINE}-${DEF_END}`;
const INVENTED = "billing/currency.py";
const QUESTION = `What does \`${NAME}\` return?`;
const ANSWER =
  `\`${NAME}\` returns the subtotal of quantity times price over the lines, taxed and discounted, rounded to cents [${SPAN}]. ` +
  `Currency rounding is configured in [${INVENTED}:10-12]. Both are in the sources [1][2], not in [9].`;

const squash = (s) => (s ?? "").replace(/\s+/g, " ").trim();

export default async function codebaseChat(t) {
  const { page, results, mockUrl, openFile } = t;
  const checks = (results.checks.codebaseChat = {});
  if (DEF_LINE < 1 || DEF_END < DEF_LINE) throw new Error(`the fixture ${DEFINING} has no ${NAME} definition`);
  const frame = chatFrame(page);
  if ((await frame.locator("#input").count().catch(() => 0)) === 0 || !(await frame.locator("#input").isVisible())) await openChat(page);
  const doc = await chatWebviewFrame(page);
  const input = frame.locator("#input");
  await frame.locator("#new").click();
  await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 100);

  // main.py active; invoice.py in no tab (the model can only get it from the search).
  await openFile("main.py");
  if ((await page.locator(".tab", { hasText: DEFINING }).count()) > 0) throw new Error(`${DEFINING} is open in a tab before the question`);
  const activeFile = async () => squash(await page.locator(".tab.active").first().textContent());
  const cursor = page.locator(".statusbar-item", { hasText: /Ln \d+, Col \d+/ }).first();
  const cursorAt = async () => squash(await cursor.innerText());
  /** Waits until the active editor is the defining file with the cursor on line `line`; returns how long it took. */
  const openedAt = async (what, line, since) => {
    await waitFor(`${what}: ${DEFINING} active with the cursor on line ${line}`, async () =>
      (await activeFile()).includes(DEFINING) && (await cursorAt()).startsWith(`Ln ${line},`), 15_000, 50,
    ).catch(async (e) => { throw new Error(`${e.message} (active tab: ${await activeFile()}, ${await cursorAt()})`); });
    return Date.now() - since;
  };
  const toMain = async () => {
    await page.locator(".tab", { hasText: "main.py" }).first().click();
    await page.locator(".tab.active", { hasText: "main.py" }).waitFor();
  };

  // 1. Ask. The model answers after 1.5 s: the sources must be on screen before its first token.
  await setMock(mockUrl, { text: ANSWER, tps: 60, ttft_ms: 1500, rules: [] });
  await input.fill(QUESTION);
  const asked = Date.now();
  await input.press("Enter");
  const early = await waitFor("the Sources list in the streaming answer", async () => {
    const state = await doc.evaluate(() => {
      const turn = [...document.querySelectorAll(".turn.assistant")].pop();
      const sources = turn?.querySelector(".sources");
      if (!sources || !sources.checkVisibility()) return undefined;
      return {
        streaming: turn.classList.contains("streaming"),
        answerText: [...turn.querySelectorAll(".markdown")].map((m) => m.textContent).join("").trim(),
        items: [...sources.querySelectorAll(".source-link")].map((b) => b.textContent.trim()),
        searchMs: sources.dataset.searchMs,
      };
    });
    return state;
  }, 30_000, 25);
  checks.sourcesShownMs = Date.now() - asked;
  checks.searchMs = early.searchMs === undefined ? undefined : Number(early.searchMs);
  if (!early.streaming || early.answerText) {
    throw new Error(`the Sources list appeared only with or after the answer's text (streaming: ${early.streaming}, text: ${JSON.stringify(early.answerText.slice(0, 80))})`);
  }
  const turn = await answered(frame, "rounded to cents", 60_000);
  checks.answeredMs = Date.now() - asked;

  // 2. What the model received: the definition, as workspace code, in the last user message.
  const sent = (await chatRequests(mockUrl)).filter((r) => r.messages.includes(QUESTION));
  if (sent.length !== 1) throw new Error(`expected one chat request asking about ${NAME}, the model got ${sent.length}`);
  const users = sent[0].body.messages.filter((m) => m.role === "user");
  const lastUser = String(users[users.length - 1]?.content ?? "");
  if (!lastUser.includes("Code from the workspace")) throw new Error(`the request has no workspace code block: ${lastUser.slice(0, 800)}`);
  for (const line of DEF_TEXT) {
    if (!lastUser.includes(line)) throw new Error(`the request lacks the definition's line ${JSON.stringify(line)}: ${lastUser.slice(0, 1200)}`);
  }
  const numbered = new RegExp(`\\[(\\d+)\\] ${SPAN.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n`).exec(lastUser);
  if (!numbered) throw new Error(`the request does not name the source as [n] ${SPAN}: ${lastUser.slice(0, 800)}`);
  const number = Number(numbered[1]); // what the answer cites it by
  checks.requestHasDefinition = `${SPAN} (${DEF_TEXT.length} lines) in the last user message`;

  // 3. The Sources list of the finished answer names the defining file, with the definition's name.
  const source = turn.locator(".sources .source-link", { hasText: SPAN }).first();
  await source.waitFor({ state: "visible", timeout: 5000 }).catch(async () => {
    throw new Error(`the Sources list does not list ${SPAN}: ${JSON.stringify(await turn.locator(".sources .source-link").allTextContents())}`);
  });
  checks.sources = (await turn.locator(".sources .source-link").allTextContents()).map(squash);
  if (!squash(await source.textContent()).includes(NAME)) throw new Error(`the source ${SPAN} does not show the name ${NAME}`);
  const sourcesAboveAnswer = await turn.evaluate((el) => {
    const s = el.querySelector(".sources");
    const m = el.querySelector(".markdown");
    return Boolean(s && m && s.compareDocumentPosition(m) & Node.DOCUMENT_POSITION_FOLLOWING);
  });
  if (!sourcesAboveAnswer) throw new Error("the Sources list is not above the answer");

  // 4. The invented citation is struck out; the real one is a link.
  const struck = turn.locator("del.citation-invented", { hasText: INVENTED });
  await struck.waitFor({ state: "visible", timeout: 5000 }).catch(async () => {
    throw new Error(`the citation of ${INVENTED} is not struck out: ${(await turn.locator(".markdown").innerHTML()).slice(0, 800)}`);
  });
  const struckStyle = await struck.evaluate((el) => ({ title: el.title, decoration: getComputedStyle(el).textDecorationLine }));
  if (!struckStyle.decoration.includes("line-through") || !/not a file/.test(struckStyle.title)) {
    throw new Error(`the invented citation is not shown struck out with its reason: ${JSON.stringify(struckStyle)}`);
  }
  const citation = turn.locator(".markdown button.citation", { hasText: SPAN });
  if ((await citation.count()) !== 1) throw new Error(`the citation [${SPAN}] is not a link in the answer`);
  checks.inventedStruckOut = `${INVENTED} (${struckStyle.title})`;
  // Numbered citations: [n] links the n-th source (the list shows the number), [9] names none of them.
  if (number > 2) throw new Error(`the source ${SPAN} is number ${number}, not one the scripted answer cites ([1][2])`);
  if (!squash(await source.textContent()).startsWith(`[${number}] `)) throw new Error(`the Sources list does not number ${SPAN} as [${number}]`);
  const byNumber = turn.locator(".markdown button.citation", { hasText: `[${number}]` });
  if ((await byNumber.count()) !== 1) throw new Error(`the citation [${number}] is not one link in the answer: ${(await turn.locator(".markdown").innerHTML()).slice(0, 800)}`);
  const pastSources = turn.locator("del.citation-invented", { hasText: "[9]" });
  if ((await pastSources.count()) !== 1) throw new Error("the citation [9] (past the sources) is not struck out");

  // 5. Accessibility of the new parts (and the rest of the panel) as they are now.
  const { violations } = await axeScan(doc);
  checks.axeViolations = violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target).join(", ")}`);
  const bad = severe(violations);
  if (bad.length) throw new Error(`axe: serious or critical violations with a codebase answer: ${checks.axeViolations.join("; ")}`);
  await page.screenshot({ path: path.join(OUT, "codebase-chat.png") });

  // 6. Click the source: invoice.py opens with the cursor on the definition's line.
  let since = Date.now();
  await source.click();
  checks.clickOpensMs = await openedAt("click on the source", DEF_LINE, since);

  // 7. Keyboard: the cursor elsewhere, main.py active; Tab from the conversation to the source, Enter.
  await page.keyboard.press("Control+End");
  await waitFor("the cursor moved off the definition", async () => !(await cursorAt()).startsWith(`Ln ${DEF_LINE},`), 5000, 50);
  await toMain();
  await frame.locator(".turn.user .user-text").last().click(); // focuses the transcript (nothing before the answer)
  let focused;
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press("Tab");
    focused = await doc.evaluate(() => ({ cls: document.activeElement?.className ?? "", text: (document.activeElement?.textContent ?? "").trim() }));
    if (/\bsource-link\b/.test(focused.cls) && focused.text.includes(SPAN)) break;
  }
  if (!/\bsource-link\b/.test(focused.cls) || !focused.text.includes(SPAN)) throw new Error(`Tab did not reach the source ${SPAN} (focus on ${JSON.stringify(focused)})`);
  since = Date.now();
  await page.keyboard.press("Enter");
  checks.keyboardOpensMs = await openedAt("Enter on the focused source", DEF_LINE, since);

  // 8. The citation in the answer opens the cited lines too.
  await toMain();
  since = Date.now();
  await citation.click();
  checks.citationOpensMs = await openedAt("click on the citation", DEF_LINE, since);
  await page.keyboard.press("Control+End");
  await waitFor("the cursor moved off the definition", async () => !(await cursorAt()).startsWith(`Ln ${DEF_LINE},`), 5000, 50);
  await toMain();
  since = Date.now();
  await byNumber.click();
  checks.numberedCitationOpensMs = await openedAt(`click on the citation [${number}]`, DEF_LINE, since);

  // 9. Kept with the conversation: a new chat, then this one again from the history.
  await frame.locator("#new").click();
  await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 100);
  await frame.locator("#history-toggle").click();
  const panel = frame.locator("#history-panel");
  await panel.waitFor({ state: "visible", timeout: 5000 });
  await panel.locator(".history-item", { hasText: QUESTION }).first().locator(".history-title").click();
  const reopened = await answered(frame, "rounded to cents", 15_000);
  await reopened.locator(".sources .source-link", { hasText: SPAN }).waitFor({ timeout: 5000 });
  await reopened.locator("del.citation-invented", { hasText: INVENTED }).waitFor({ timeout: 5000 });
  await toMain();
  since = Date.now();
  await reopened.locator(".sources .source-link", { hasText: SPAN }).click();
  checks.reopenedOpensMs = await openedAt("click on the source of the reopened conversation", DEF_LINE, since);
  checks.keptInHistory = "Sources list, citation link and strike-out rendered again from the saved turn; its source still opens";
  log(`codebase chat: sources shown ${checks.sourcesShownMs} ms after Enter (search ${checks.searchMs} ms), answered in ${checks.answeredMs} ms;`,
    `open by click ${checks.clickOpensMs} ms, by keyboard ${checks.keyboardOpensMs} ms, by citation ${checks.citationOpensMs} ms,`,
    `by [${number}] ${checks.numberedCitationOpensMs} ms; sources: ${checks.sources.join(" | ")}`);

  await leaveAsFound(t, frame, DEFINING);
}
