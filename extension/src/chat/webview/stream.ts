/**
 * The answer being streamed. It exists from the moment the user presses Enter (with a "thinking"
 * indicator until the first token), shows the first text as soon as it arrives and later text once
 * per animation frame, and re-renders only its last Markdown block: finished blocks are inserted
 * once and left alone (markdown.ts decides which are finished).
 */
import type { MarkdownIt } from "markdown-it";
import type { SteerMark, Turn } from "../protocol";
import type { SourceRef, TurnRefs } from "../sources";
import { segments } from "../transcript";
import { IncrementalMarkdown, renderMarkdown } from "./markdown";
import { type AnswerOptions, element, fillAssistant, markdownBody, showSources, showSteps, steerMarkElement, turnShell } from "./turns";

export interface LiveHooks {
  /** A finished paragraph (plain text) for screen readers. */
  announce(text: string): void;
  /** The turn's content changed (the transcript follows it if the reader is at the bottom). */
  rendered(): void;
}

function progressElement(): HTMLElement {
  const progress = element("div", "progress");
  const dots = element("span", "progress-dots");
  dots.setAttribute("aria-hidden", "true");
  dots.append(element("span"), element("span"), element("span"));
  progress.append(dots, element("span", "progress-text", "Kestrel is thinking…"));
  return progress;
}

/** Nodes parsed from trusted HTML (markdown.ts output): a template runs no script and loads nothing. */
function nodesOf(html: string): Node[] {
  const template = document.createElement("template");
  template.innerHTML = html;
  return Array.from(template.content.childNodes);
}

export class LiveTurn {
  readonly el: HTMLElement;
  private text = "";
  private readonly steers: SteerMark[] = [];
  private readonly steps: string[] = [];
  private pending = "";
  private frame = 0;
  private progress: HTMLElement | undefined;
  private incremental: IncrementalMarkdown;
  /** The `.markdown` of the text after the last steer: the part still growing. */
  private body: HTMLElement;
  /** The last block's nodes in `body`, replaced on every render. */
  private tail: Node[] = [];
  private quiet = false;
  /** The workspace code the prompt holds (a codebase question): what citations link to. */
  private refs: TurnRefs | undefined;

  /** `startedAt`: performance.now() of the Enter (or click) that asked, for data-first-token-ms. */
  constructor(private readonly md: MarkdownIt, private readonly hooks: LiveHooks, private readonly startedAt?: number) {
    this.el = turnShell("assistant");
    this.el.classList.add("streaming");
    this.el.setAttribute("aria-busy", "true");
    this.progress = progressElement();
    this.el.appendChild(this.progress);
    this.incremental = new IncrementalMarkdown(md);
    this.body = markdownBody();
    this.el.appendChild(this.body);
  }

  /** Text that arrived before this view existed (the webview was reloaded mid-answer). */
  seed(text: string, steers: SteerMark[] = []): void {
    this.text = text;
    this.steers.push(...steers);
    this.quiet = true; // already said, or too late to say
    this.rebuild();
    this.quiet = false;
  }

  push(delta: string): void {
    this.pending += delta;
    if (!this.progress) {
      this.frame ||= requestAnimationFrame(() => this.flush());
    } else {
      this.flush(); // nothing shown yet: the first text goes on screen now, not a frame later
    }
  }

  /** The answer's sources arrived (before its first token): the list goes above it, citations link. */
  setSources(sources: SourceRef[], searchMs?: number): void {
    this.refs = { sources };
    showSources(this.el, sources, searchMs);
    this.flush();
    if (this.text) this.rebuild(); // text arrived first (a reload mid-answer): its citations link now
    else this.incremental.refs = this.refs;
    this.hooks.rendered();
  }

  /** An agent step ended: the text streamed for it (its tool calls) goes; what it did is listed above. */
  step(lines: string[]): void {
    this.flush();
    this.steps.push(...this.steers.map((s) => `You said: ${s.text}`), ...lines);
    this.steers.length = 0;
    this.text = "";
    showSteps(this.el, this.steps, true);
    this.rebuild();
  }

  /** The step's changes wait in the Refactor Preview, or its command for the user's answer: its text (the
   * calls) gives way to where to look. */
  review(files: string[], command?: string, running?: boolean): void {
    this.flush();
    const shown = (command ?? "").replace(/`/g, "'");
    this.text = running
      ? `*Running \`${shown}\` in the workspace folder… (Stop ends it.)*`
      : command
      ? `*Asks to run \`${shown}\` in the workspace folder: Run or Don't run in the dialog.*`
      : `*Proposed changes to ${files.map((f) => `\`${f}\``).join(", ")}: review them in the Refactor Preview ` +
        "(tick what to keep, then Apply; Discard keeps nothing).*";
    this.rebuild();
  }

  steer(mark: SteerMark): void {
    this.flush();
    this.steers.push(mark);
    this.rebuild();
  }

  /** The answer ended: render it as the finished turn (the host's text is the final word). */
  finish(turn: Turn, opts: AnswerOptions): void {
    this.flush();
    const unsaid = this.incremental.finish().text;
    if (unsaid) this.hooks.announce(unsaid);
    if (turn.error) this.hooks.announce(`Error: ${turn.error}`);
    else if (turn.stopped) this.hooks.announce("Stopped.");
    fillAssistant(this.el, turn, this.md, opts);
    this.el.classList.remove("streaming");
    this.el.setAttribute("aria-busy", "false");
  }

  dispose(): void {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  private flush(): void {
    this.dispose();
    if (!this.pending) return;
    const chunk = this.pending;
    this.pending = "";
    this.text += chunk;
    this.incremental.append(chunk);
    this.renderTail();
  }

  private renderTail(): void {
    const { finished, tail } = this.incremental.update();
    for (const node of this.tail) node.parentNode?.removeChild(node);
    if (finished) {
      this.body.append(...nodesOf(finished.html));
      if (finished.text && !this.quiet) this.hooks.announce(finished.text);
    }
    this.tail = nodesOf(tail.html);
    this.body.append(...this.tail);
    if (this.progress && this.el.querySelector(".markdown")?.textContent?.trim()) {
      this.progress.remove();
      this.progress = undefined;
      if (this.startedAt !== undefined) this.el.dataset.firstTokenMs = (performance.now() - this.startedAt).toFixed(1);
    }
    this.hooks.rendered();
  }

  /** Redraws everything: the text before the last steer as finished segments, the rest streaming. */
  private rebuild(): void {
    this.el.querySelectorAll(":scope > .markdown, :scope > .steer-mark").forEach((n) => n.remove());
    const cut = Math.max(0, ...this.steers.map((s) => Math.min(Math.max(s.at, 0), this.text.length)));
    for (const seg of segments(this.text.slice(0, cut), this.steers)) {
      this.el.appendChild(seg.steer ? steerMarkElement(seg.steer) : markdownBody(renderMarkdown(this.md, seg.text, this.refs).html));
    }
    this.incremental = new IncrementalMarkdown(this.md, this.refs);
    this.body = markdownBody();
    this.tail = [];
    this.el.appendChild(this.body);
    const rest = this.text.slice(cut);
    if (rest) {
      const quiet = this.quiet;
      this.quiet = true; // said while it streamed before the steer
      this.incremental.append(rest);
      this.renderTail();
      this.quiet = quiet;
    } else {
      this.hooks.rendered();
    }
  }
}
