/**
 * Model output as HTML, safely and incrementally. Markdown is rendered by markdown-it with raw HTML
 * off (a model's `<script>` or `<img onerror>` shows as text), images off (no remote fetches),
 * links limited to http(s), and code highlighted by highlight.js (which escapes). Citations of
 * workspace code (`[2]`, the turn's second source; `[models.py:10-12]`) become buttons that open the
 * file when the turn knows it, and are struck out when it names no source or file. No DOM here: the webview inserts the
 * HTML strings, and the tests run this in node.
 */
import markdownit, { type Env, type MarkdownIt, type Token } from "markdown-it";
import hljs from "highlight.js/lib/common";
import { blockTarget, isShellLang } from "../codeBlocks";
import { CITATION, NUMBERED, resolveCitation, resolveNumbered, sourceLabel, type Citation, type SourceRef, type TurnRefs } from "../sources";

/** What fence rendering needs besides the tokens (markdown-it passes `env` to every rule). */
export interface RenderEnv extends Env {
  /** The source lines before `line` of this answer segment (the file a header line names). */
  linesBefore(line: number): string[];
  /** Line of the rendered tokens' first line within the segment (their maps start at 0). */
  lineOffset: number;
  /** A finished block gets its action buttons; the fence still streaming only its header. */
  finished: boolean;
  /** The turn's sources and citations: what its `[2]` and `[path:L-L]` citations link to or strike out. */
  refs?: TurnRefs;
}

/** Rendered Markdown: the HTML and its prose as plain text (what a screen reader is told; no code). */
export interface Rendered {
  html: string;
  text: string;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/** highlight.js markup for `code`, or escaped text when the language is unknown or too costly to guess. */
function highlighted(code: string, lang: string, guess: boolean): string {
  try {
    if (lang && hljs.getLanguage(lang)) return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    // Guessing tries every language: done once for a finished block, never per streamed frame.
    if (guess && code.length < 20_000) return hljs.highlightAuto(code).value;
  } catch {
    // fall through to plain text
  }
  return escapeHtml(code);
}

/** The data a source/citation button carries (main.ts posts it as an `openSource` message). */
function linkAttrs(uri: string, range: SourceRef["range"]): string {
  return `data-uri="${escapeHtml(uri)}" data-start="${range.start.line}" data-end="${range.end.line}"`;
}

/** A citation as the turn knows it: a button that opens the span, struck out when invented, else the text itself. */
function citationHtml(raw: string, cited: Citation | undefined, title: string, missing: string): string {
  if (cited?.kind === "link") {
    return `<button type="button" class="source-link citation" ${linkAttrs(cited.uri, cited.range)} title="${escapeHtml(title + (cited.name ? ` (${cited.name})` : ""))}">${escapeHtml(raw)}</button>`;
  }
  if (cited?.kind === "invented") {
    return `<del class="citation-invented" title="${missing}">${escapeHtml(raw)}<span class="visually-hidden"> (${missing})</span></del>`;
  }
  return escapeHtml(raw);
}

/** One `[path:L-L]`. */
function renderCitation(raw: string, path: string, first: number | undefined, last: number | undefined, refs: TurnRefs | undefined): string {
  const where = first === undefined ? "" : first === last ? ` at line ${first}` : ` at lines ${first}-${last}`;
  return citationHtml(raw, resolveCitation(path, first, last, refs), `Open ${path}${where}`, "not a file in this workspace");
}

/** One `[1]` or `[1][2]` group: a button per number that names one of the turn's sources. */
function renderNumbered(group: string, refs: TurnRefs | undefined): string {
  const numbers = resolveNumbered(group, refs);
  if (numbers.every((x) => !x.cited)) return escapeHtml(group);
  return numbers
    .map(({ n, cited }) => {
      const title = cited?.kind === "link" ? `Open source ${n}: ${sourceLabel(refs!.sources![n - 1])}` : "";
      return citationHtml(`[${n}]`, cited, title, "not one of this answer's sources");
    })
    .join("");
}

/** Prose without `[path:L-L]` citations, its numbered ones rendered. */
function renderNumberedIn(text: string, refs: TurnRefs): string {
  if (!refs.sources?.length && !refs.invented?.length) return escapeHtml(text);
  let out = "";
  let at = 0;
  for (const m of text.matchAll(NUMBERED)) {
    out += escapeHtml(text.slice(at, m.index)) + renderNumbered(m[0], refs);
    at = m.index! + m[0].length;
  }
  return out + escapeHtml(text.slice(at));
}

/** Prose text with its citations rendered (escaped around them). */
export function renderCitations(text: string, refs: TurnRefs | undefined): string {
  if (!refs || !text.includes("[")) return escapeHtml(text);
  let out = "";
  let at = 0;
  for (const m of text.matchAll(CITATION)) {
    const first = m[2] === undefined ? undefined : Number(m[2]);
    const last = first === undefined ? undefined : Math.max(first, m[3] === undefined ? first : Number(m[3]));
    out += renderNumberedIn(text.slice(at, m.index), refs) + renderCitation(m[0], m[1], first, last, refs);
    at = m.index! + m[0].length;
  }
  return out + renderNumberedIn(text.slice(at), refs);
}

const CITATION_WHOLE = new RegExp(`^(?:${CITATION.source})$`, "u");
const CITATION_TAIL = /^(?::\d{1,7}(?:\s*[-–]\s*\d{1,7})?)?\]/;

/**
 * A core rule: a citation with its path in backticks (`` [`app.py`:4] ``) is parsed as text, inline
 * code, text; when the turn knows that path (a link or an invented one) the three become one text
 * token again, which the text rule renders as a citation. Other inline code is left alone.
 */
function joinBacktickedCitations(state: { env: unknown; tokens: Token[] }): void {
  const refs = (state.env as RenderEnv | undefined)?.refs;
  if (!refs) return;
  for (const block of state.tokens) {
    const c = block.type === "inline" ? block.children : null;
    if (!c) continue;
    for (let i = 1; i + 1 < c.length; i++) {
      const [before, code, after] = [c[i - 1], c[i], c[i + 1]];
      if (code.type !== "code_inline" || before.type !== "text" || after.type !== "text" || !before.content.endsWith("[")) continue;
      const tail = CITATION_TAIL.exec(after.content)?.[0];
      const m = tail && CITATION_WHOLE.exec(`[\`${code.content}\`${tail}`);
      if (!m || !tail) continue;
      const first = m[2] === undefined ? undefined : Number(m[2]);
      if (!resolveCitation(m[1], first, m[3] === undefined ? first : Number(m[3]), refs)) continue;
      before.content = `${before.content}\`${code.content}\`${after.content}`;
      c.splice(i, 2);
      i--; // the joined token may open the next one
    }
  }
}

/** Whether text token `idx` sits inside a Markdown link (its citations stay text: no button in a link). */
function insideLink(tokens: Token[], idx: number): boolean {
  let depth = 0;
  for (let i = idx - 1; i >= 0; i--) {
    if (tokens[i].type === "link_close") depth--;
    else if (tokens[i].type === "link_open" && ++depth > 0) return true;
  }
  return false;
}

/** The Sources list above an answer: the workspace code its prompt held, each a button that opens it. */
export function sourcesHtml(sources: SourceRef[], searchMs?: number): string {
  const items = sources.map((s, i) => {
    const label = sourceLabel(s);
    const title = `Open ${label}${s.name ? ` (${s.name})` : ""}`;
    const name = s.name ? ` <span class="source-name">${escapeHtml(s.name)}</span>` : "";
    // The number the answer cites it by ([1]: the prompt numbers its parts in this order).
    return `<li><button type="button" class="source-link" ${linkAttrs(s.uri, s.range)} title="${escapeHtml(title)}"><span class="source-number">[${i + 1}]</span> <span class="source-path">${escapeHtml(label)}</span>${name}</button></li>`;
  });
  const ms = typeof searchMs === "number" && Number.isFinite(searchMs) ? ` data-search-ms="${Math.round(searchMs)}"` : "";
  return (
    `<div class="sources" role="group" aria-label="Sources"${ms}>` +
    `<div class="sources-title" title="The workspace code Kestrel gave the model for this answer">Sources</div>` +
    `<ul class="sources-list">${items.join("")}</ul>` +
    `</div>`
  );
}

/** The header (language, file, actions) and the highlighted code of one fenced block. */
function renderFence(tokens: Token[], idx: number, env: RenderEnv): string {
  const token = tokens[idx];
  const code = token.content;
  const info = token.info.trim();
  const line = env.lineOffset + (token.map?.[0] ?? 0);
  const target = blockTarget(info, env.linesBefore(line), code);
  const lang = target.lang;
  const file = target.file;
  const shell = isShellLang(lang);
  const actions = env.finished
    ? [
        `<button type="button" class="code-copy" title="Copy the code">Copy</button>`,
        `<button type="button" class="code-insert" title="Insert at the cursor (previewed first)">Insert</button>`,
        shell
          ? `<button type="button" class="code-run" title="Run in a terminal (asks first)">Run in terminal</button>`
          : `<button type="button" class="code-apply" title="${escapeHtml(file ? `Apply to ${file} (review first)` : "Apply to the active file (review first)")}">Apply</button>`,
      ].join("")
    : "";
  const attrs = [`class="code-block"`, `data-lang="${escapeHtml(lang)}"`];
  if (file) attrs.push(`data-file="${escapeHtml(file)}"`);
  return (
    `<div ${attrs.join(" ")}>` +
    `<div class="code-header">` +
    `<span class="code-lang">${escapeHtml(lang || "text")}</span>` +
    (file ? `<span class="code-file" title="${escapeHtml(file)}">${escapeHtml(file)}</span>` : "") +
    `<span class="code-actions">${actions}</span>` +
    `</div>` +
    // Focusable: a long line scrolls the block sideways, and keyboard users must reach it.
    `<pre class="hljs" tabindex="0"><code${lang ? ` class="language-${escapeHtml(lang)}"` : ""}>${highlighted(code, lang, env.finished)}</code></pre>` +
    `</div>`
  );
}

export function createMarkdown(): MarkdownIt {
  const md = markdownit({ html: false, linkify: false });
  md.disable("image"); // a model's ![](https://tracker) must not make the webview fetch anything
  const defaultValidate = md.validateLink.bind(md);
  md.validateLink = (url: string) => /^https?:/i.test(url) && defaultValidate(url);
  md.renderer.rules.fence = (tokens, idx, _options, env) => renderFence(tokens, idx, env as RenderEnv);
  md.core.ruler.after("text_join", "kestrel_citations", (state) => joinBacktickedCitations(state));
  const plainTextRule = md.renderer.rules.text!;
  md.renderer.rules.text = (tokens, idx, options, env, self) => {
    const refs = (env as RenderEnv | undefined)?.refs;
    if (!refs || insideLink(tokens, idx)) return plainTextRule(tokens, idx, options, env, self);
    return renderCitations(tokens[idx].content, refs);
  };
  // A path the answer writes as inline code that no workspace file has is marked (not removed: it may be
  // a file the answer proposes to create).
  const plainCodeRule = md.renderer.rules.code_inline!;
  md.renderer.rules.code_inline = (tokens, idx, options, env, self) => {
    const unknown = (env as RenderEnv | undefined)?.refs?.unknownPaths;
    const content = tokens[idx].content;
    if (!unknown?.includes(content) || insideLink(tokens, idx)) return plainCodeRule(tokens, idx, options, env, self);
    return `<code class="path-unknown" title="not a file in this workspace">${escapeHtml(content)}</code>` +
      `<span class="visually-hidden"> (not a file in this workspace)</span>`;
  };
  md.renderer.rules.code_block = (tokens, idx) => `<pre class="hljs" tabindex="0"><code>${escapeHtml(tokens[idx].content)}</code></pre>\n`;
  // A wide table scrolls inside its wrapper: the transcript itself never scrolls sideways.
  md.renderer.rules.table_open = () => `<div class="table-wrap" tabindex="0" role="group" aria-label="Table"><table>\n`;
  md.renderer.rules.table_close = () => `</table></div>\n`;
  return md;
}

/** The prose of block tokens as plain text, one line per block; code blocks are left out. */
export function plainText(tokens: Token[]): string {
  const lines: string[] = [];
  for (const token of tokens) {
    if (token.type !== "inline") continue;
    const text = (token.children ?? [])
      .map((c) => (c.type === "text" || c.type === "code_inline" ? c.content : c.type === "softbreak" || c.type === "hardbreak" ? " " : ""))
      .join("")
      .trim();
    if (text) lines.push(text);
  }
  return lines.join("\n");
}

/** Index of each top-level block's first token (a paragraph, heading, list, fence, table, ...). */
function blockStarts(tokens: Token[]): number[] {
  const starts: number[] = [];
  tokens.forEach((t, i) => {
    if (t.level === 0 && t.nesting !== -1 && t.map) starts.push(i);
  });
  return starts;
}

/** Character offset where line `line` of `text` starts, or -1 when the text has fewer lines. */
function lineOffsetIn(text: string, line: number): number {
  let at = 0;
  for (let i = 0; i < line; i++) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) return -1;
    at = nl + 1;
  }
  return at;
}

function linesOf(source: string): (line: number) => string[] {
  let lines: string[] | undefined;
  return (line) => (lines ??= source.split("\n")).slice(0, line);
}

/** A whole Markdown text rendered at once (a finished answer, or a segment of one between steers). */
export function renderMarkdown(md: MarkdownIt, source: string, refs?: TurnRefs): Rendered {
  const env: RenderEnv = { linesBefore: linesOf(source), lineOffset: 0, finished: true, refs };
  const tokens = md.parse(source, env);
  return { html: md.renderer.render(tokens, md.options, env), text: plainText(tokens) };
}

/**
 * A streaming answer rendered block by block. Every block but the last is finished: its HTML is
 * returned once (`finished`) and never again, so the webview keeps those nodes (a selection or a
 * hovered button survives) and re-renders only the last block (`tail`) per frame. A code fence
 * still open is one block. Only the part after the finished blocks is parsed on each update.
 */
export class IncrementalMarkdown {
  private source = "";
  private committedChars = 0;
  private committedLines = 0;

  /** `refs`: the turn's sources (they arrive before its first token), for its citations. */
  constructor(private readonly md: MarkdownIt, public refs?: TurnRefs) {}

  get text(): string {
    return this.source;
  }

  append(text: string): void {
    this.source += text;
  }

  update(): { finished?: Rendered; tail: Rendered } {
    const rest = this.source.slice(this.committedChars);
    const baseLine = this.committedLines;
    const env = this.env(baseLine, true);
    const tokens = this.md.parse(rest, env);
    const starts = blockStarts(tokens);
    // The last block may still grow. So may the one before it while the last one's first line is
    // incomplete and follows it directly: "para\n#" is a heading after a paragraph, "para\n#x" one
    // paragraph. After a blank line the block before is done whatever the line becomes.
    let cut = starts.length ? starts[starts.length - 1] : 0;
    if (cut > 0) {
      const line = tokens[cut].map![0];
      const firstLineDone = lineOffsetIn(rest, line + 1) >= 0;
      const afterBlank = rest.slice(lineOffsetIn(rest, line - 1), lineOffsetIn(rest, line)).trim() === "";
      if (!firstLineDone && !afterBlank) cut = starts.length > 1 ? starts[starts.length - 2] : 0;
    }
    let finished: Rendered | undefined;
    if (cut > 0) {
      const line = tokens[cut].map![0];
      const done = tokens.slice(0, cut);
      finished = { html: this.md.renderer.render(done, this.md.options, env), text: plainText(done) };
      this.committedChars += lineOffsetIn(rest, line);
      this.committedLines += line;
    }
    const tailTokens = tokens.slice(cut);
    const tailEnv: RenderEnv = { ...env, finished: false }; // keeps the link references parse() collected
    return { finished, tail: { html: this.md.renderer.render(tailTokens, this.md.options, tailEnv), text: plainText(tailTokens) } };
  }

  /** The part not yet returned as finished, rendered as finished (the answer ended). */
  finish(): Rendered {
    const rest = this.source.slice(this.committedChars);
    const env = this.env(this.committedLines, true);
    const tokens = this.md.parse(rest, env);
    this.committedChars = this.source.length;
    return { html: this.md.renderer.render(tokens, this.md.options, env), text: plainText(tokens) };
  }

  private env(lineOffset: number, finished: boolean): RenderEnv {
    return { linesBefore: linesOf(this.source), lineOffset, finished, refs: this.refs };
  }
}
