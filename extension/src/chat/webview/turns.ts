/** The transcript's turns as elements: the user's question with what it attached, and an answer. */
import type { MarkdownIt } from "markdown-it";
import type { AppliedRecord, CodeBlock, SteerMark, Turn } from "../protocol";
import { segments } from "../transcript";
import { refsOf, type SourceRef } from "../sources";
import { renderMarkdown, sourcesHtml } from "./markdown";
import { applyAllBlocks, blocksIn } from "./codeActions";
import { parseMarkers } from "../mentions";

export const ROLE_NAMES = { user: "You", assistant: "Kestrel" } as const;

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/** An empty turn: the article with its accessible name and its visible role label. */
export function turnShell(role: Turn["role"]): HTMLElement {
  const article = element("article", `turn ${role}`);
  article.setAttribute("aria-label", ROLE_NAMES[role]);
  article.appendChild(element("div", "role", ROLE_NAMES[role]));
  return article;
}

/** The user's text, verbatim (never parsed as Markdown or HTML), its mention markers set off. */
function userText(text: string): HTMLElement {
  const el = element("div", "user-text");
  let at = 0;
  for (const m of parseMarkers(text)) {
    el.append(text.slice(at, m.start), element("span", "mention-ref", m.marker));
    at = m.end;
  }
  el.append(text.slice(at));
  return el;
}

/** The user's text and what it attached. */
export function userTurn(turn: Turn): HTMLElement {
  const article = turnShell("user");
  article.appendChild(userText(turn.text));
  if (turn.context?.length) article.appendChild(element("div", "context", `with ${turn.context.join(", ")}`));
  return article;
}

/** A `.markdown` body holding HTML from markdown.ts (raw HTML in the source is escaped there). */
export function markdownBody(html = ""): HTMLElement {
  const body = element("div", "markdown");
  body.innerHTML = html;
  return body;
}

/** The sources each Sources element shows (an answer that ends keeps the element it streamed with). */
const shownSources = new WeakMap<Element, string>();

/** The Sources list of an answer (markdown.ts's HTML: every path and name escaped there). */
export function sourcesElement(sources: SourceRef[], searchMs?: number): HTMLElement {
  const template = document.createElement("template");
  template.innerHTML = sourcesHtml(sources, searchMs);
  const el = template.content.firstElementChild as HTMLElement;
  shownSources.set(el, JSON.stringify(sources));
  return el;
}

/** Puts `sources` right after the turn's role label (replacing a list shown before, unless the same). */
export function showSources(article: HTMLElement, sources: SourceRef[] | undefined, searchMs?: number): void {
  const old = article.querySelector<HTMLElement>(":scope > .sources");
  if (old && sources && shownSources.get(old) === JSON.stringify(sources)) return; // keeps focus on its buttons
  old?.remove();
  if (!sources?.length) return;
  const el = sourcesElement(sources, searchMs);
  const role = article.querySelector(":scope > .role");
  if (role) role.after(el);
  else article.prepend(el);
}

/** An agent's steps (what it read and searched), between the sources and the answer; folded once it answered. */
export function showSteps(article: HTMLElement, steps: string[] | undefined, open: boolean): void {
  article.querySelector(":scope > .agent-steps")?.remove();
  if (!steps?.length) return;
  const box = element("details", "agent-steps") as HTMLDetailsElement;
  box.open = open;
  box.appendChild(element("summary", "agent-steps-title", `${steps.length} ${steps.length === 1 ? "step" : "steps"}`));
  const list = element("ol", "agent-steps-list");
  for (const line of steps) list.appendChild(element("li", line.startsWith("You said: ") ? "agent-step steered" : "agent-step", line));
  box.appendChild(list);
  const before = article.querySelector(":scope > .sources") ?? article.querySelector(":scope > .role");
  if (before) before.after(box);
  else article.prepend(box);
}

export function steerMarkElement(mark: SteerMark): HTMLElement {
  const el = element("div", "steer-mark");
  el.title = mark.mode === "native" ? "Your message reached the running answer" : "The answer continued with your message added";
  el.appendChild(element("span", "steer-label", "↪ steered:"));
  el.appendChild(document.createTextNode(` ${mark.text}`));
  return el;
}

export interface AnswerOptions {
  /** The last turn of the conversation while nothing streams: a failure offers Retry. */
  retry: boolean;
}

/** Fills an assistant article (after its role label) with the answer, its state and its actions. */
export function fillAssistant(article: HTMLElement, turn: Turn, md: MarkdownIt, opts: AnswerOptions): void {
  article.querySelectorAll(":scope > :not(.role):not(.sources)").forEach((n) => n.remove());
  showSources(article, turn.sources);
  showSteps(article, turn.steps, false);
  const refs = refsOf(turn);
  for (const seg of segments(turn.text, turn.steers)) {
    article.appendChild(seg.steer ? steerMarkElement(seg.steer) : markdownBody(renderMarkdown(md, seg.text, refs).html));
  }
  if (turn.error) {
    const err = element("div", "error");
    err.setAttribute("role", "note");
    const icon = element("span", "error-icon", "⚠");
    icon.setAttribute("aria-hidden", "true");
    err.append(icon, document.createTextNode(` ${turn.error}`));
    article.appendChild(err);
    if (opts.retry) {
      const retry = element("button", "retry", "Retry");
      retry.type = "button";
      retry.title = "Send the same question again, with the same context";
      article.appendChild(retry);
    }
  }
  if (turn.trimmed) {
    article.appendChild(infoNote("trimmed", turn.trimmed, "What the model's prompt left out: a larger model, or less attached, sends it all."));
  }
  if (turn.hitTokenLimit) {
    article.appendChild(infoNote("token-limit", "The answer stopped at its length limit: send “continue” for the rest.",
      "The model wrote as many tokens as it was allowed (kestrel.chat.maxTokens, or what its context window left)."));
  }
  if (turn.stopped || turn.interrupted) {
    const notice = element("div", "notice", turn.stopped ? "stopped" : "interrupted");
    notice.title = turn.stopped ? "You stopped this answer; what had arrived is kept." : "The answer was cut off (the window reloaded); what had arrived is kept.";
    article.appendChild(notice);
  }
  const all = applyAllBlocks(blocksIn(article));
  if (all) article.appendChild(applyAllButton(all));
  if (turn.applied) article.appendChild(appliedRow(turn.applied));
}

/** A note under an answer about how it was made (`ⓘ text`, the detail as its tooltip). */
function infoNote(kind: string, text: string, detail: string): HTMLElement {
  const note = element("div", `notice ${kind}`, `ⓘ ${text}`);
  note.setAttribute("role", "note");
  note.title = detail;
  return note;
}

/** After Apply all or the agent's changes: what was applied and left out, and Restore (the files as they were before). */
function appliedRow(applied: AppliedRecord): HTMLElement {
  const row = element("div", "applied");
  row.setAttribute("role", "note");
  const what = applied.by === "agent" ? "the agent's changes" : "Apply all";
  const left = applied.left.length ? ` · left out ${applied.left.join(", ")}` : "";
  if (applied.restored) {
    row.textContent = `Restored ${applied.files.join(", ")} to before ${what}${left}`;
    return row;
  }
  if (!applied.files.length) {
    row.textContent = `Left out ${applied.left.join(", ")}`;
    return row;
  }
  row.append(element("span", "applied-text", `Applied to ${applied.files.join(", ")}${left}`));
  if (applied.checkpoint) {
    const b = element("button", "restore", "Restore");
    b.type = "button";
    b.title = `Put ${applied.files.join(", ")} back as they were before ${what}`;
    row.append(b);
  }
  return row;
}

function applyAllButton(blocks: CodeBlock[]): HTMLElement {
  const files = [...new Set(blocks.map((b) => b.file))];
  const row = element("div", "turn-actions");
  const b = element("button", "apply-all", "Apply all");
  b.type = "button";
  b.title = `Review the changes to ${files.join(", ")} together (${files.length} files)`;
  row.appendChild(b);
  return row;
}

/** A finished turn as an element. */
export function turnElement(turn: Turn, md: MarkdownIt, opts: AnswerOptions): HTMLElement {
  if (turn.role === "user") return userTurn(turn);
  const article = turnShell("assistant");
  fillAssistant(article, turn, md, opts);
  return article;
}
