/**
 * Mentions in the chat input, the parts both sides share (no VS Code, no DOM): where a `#`/`@`
 * opens the picker, what a pick writes into the text (its marker), the URI it is sent as and how
 * that URI is read back, the markers a typed text holds, and how a mention is named on the turn.
 *
 *   marker                    uri                                  re-read at send as
 *   #file:src/app.py          file:///ws/src/app.py                the file's text (open document or disk)
 *   #file:src/app.py:10-20    file:///ws/src/app.py#L10-20         those lines (a selection picks this form)
 *   #folder:src/              file:///ws/src/                      the files under it, by name
 *   #sym:parse_due            file:///ws/src/due.py#L4-9           the symbol's lines (its range then)
 *   #problems                 kestrel-problems:                    the workspace's diagnostics then
 *   #diff                     kestrel-git-diff:                    the working tree's changes then
 *   #terminal                 kestrel-terminal:                    the last command a terminal ran, its output (terminalOutput.ts)
 *   #codebase                 kestrel-codebase:                    nothing: the server searches (it reads `#codebase`)
 *   #agent                    kestrel-agent:                       nothing: the read-only agent answers (agent.ts)
 *
 * `@` opens the same picker; a pick always writes the `#` marker (the server knows `#codebase`).
 */
import type { Mention, MentionKind } from "./protocol";

export const PROBLEMS_URI = "kestrel-problems:";
export const GIT_DIFF_URI = "kestrel-git-diff:";
export const TERMINAL_URI = "kestrel-terminal:";
export const CODEBASE_URI = "kestrel-codebase:";
export const AGENT_URI = "kestrel-agent:";

/** Lines, 1-based and inclusive (as people and `#L10-20` count them). */
export interface LineRange {
  start: number;
  end: number;
}

export const formatLines = (r: LineRange) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`);

/** `10-20` or `10` → lines; anything else (or an end before the start) → undefined. */
export function parseLines(s: string): LineRange | undefined {
  const m = /^(\d{1,7})(?:-(\d{1,7}))?$/.exec(s);
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : Number(m[2]);
  return start >= 1 && end >= start ? { start, end } : undefined;
}

// ---- URIs ----

/** `uri` (a file URI's string, without a fragment) with lines as `#L10-20`. */
export function withLines(uri: string, lines?: LineRange): string {
  const base = uri.split("#", 1)[0];
  return lines ? `${base}#L${formatLines(lines)}` : base;
}

export type ParsedMentionUri =
  | { scheme: "file"; /** the URI without its fragment (what `vscode.Uri.parse` reads) */ base: string; lines?: LineRange; folder: boolean }
  | { scheme: "problems" }
  | { scheme: "diff" }
  | { scheme: "terminal" }
  | { scheme: "codebase" }
  | { scheme: "agent" };

/**
 * A mention's URI read back. `file:` and the other schemes VS Code opens documents of (`vscode-remote:`, …)
 * are locations; `#L10-20` (or `#L10`) adds lines; a trailing `/` marks a folder. Unknown → undefined.
 */
export function parseMentionUri(uri: string): ParsedMentionUri | undefined {
  if (uri === PROBLEMS_URI) return { scheme: "problems" };
  if (uri === GIT_DIFF_URI) return { scheme: "diff" };
  if (uri === TERMINAL_URI) return { scheme: "terminal" };
  if (uri === CODEBASE_URI) return { scheme: "codebase" };
  if (uri === AGENT_URI) return { scheme: "agent" };
  const m = /^([a-z][a-z0-9+.-]*):\/\/[^#]*/i.exec(uri);
  if (!m || m[1].startsWith("kestrel-")) return undefined;
  const base = m[0];
  const fragment = uri.slice(base.length);
  let lines: LineRange | undefined;
  if (fragment) {
    const f = /^#L(\d+)(?:-L?(\d+))?$/.exec(fragment);
    lines = f ? parseLines(f[2] ? `${f[1]}-${f[2]}` : f[1]) : undefined;
    if (!lines) return undefined;
  }
  return { scheme: "file", base, lines, folder: base.endsWith("/") };
}

// ---- Markers ----

export const fileMarker = (rel: string, lines?: LineRange) => `#file:${rel}${lines ? `:${formatLines(lines)}` : ""}`;
export const folderMarker = (rel: string) => `#folder:${rel.replace(/\/+$/, "")}/`;
export const symbolMarker = (name: string) => `#sym:${name}`;
export const SPECIAL_MARKERS = { problems: "#problems", diff: "#diff", terminal: "#terminal", codebase: "#codebase", agent: "#agent" } as const;

export interface TypedMarker {
  kind: "file" | "folder" | "symbol" | "problems" | "diff" | "terminal" | "codebase" | "agent";
  /** The path (file, folder) or the name (symbol), as typed. */
  arg: string;
  lines?: LineRange;
  /** Where it is in the text, and the marker itself. */
  start: number;
  end: number;
  marker: string;
}

// `#file:…` at a word start (not `a#b`, not `##`); the argument runs to the next space.
const MARKER = /(?<![\w#@/])#(file|folder|sym|problems|diff|terminal|codebase|agent)\b(?::(\S+))?/g;
/** Punctuation after a marker ends a sentence, it is not part of the path. */
const TRAILING = /[.,;:!?)\]}'"`]+$/;

/** The markers a text holds, typed or picked, in order. `#file` without a path and the like are not markers. */
export function parseMarkers(text: string): TypedMarker[] {
  const out: TypedMarker[] = [];
  for (const m of text.matchAll(MARKER)) {
    const word = m[1];
    const kind = word === "sym" ? "symbol" : (word as TypedMarker["kind"]);
    let arg = (m[2] ?? "").replace(TRAILING, "");
    const needsArg = kind === "file" || kind === "folder" || kind === "symbol";
    if (needsArg !== Boolean(arg)) continue;
    let lines: LineRange | undefined;
    if (kind === "file") {
      const r = /^(.+):(\d+(?:-\d+)?)$/.exec(arg);
      if (r && parseLines(r[2])) {
        arg = r[1];
        lines = parseLines(r[2]);
      }
    }
    const start = m.index!;
    const marker = `#${word}${m[2] === undefined ? "" : `:${m[2].replace(TRAILING, "")}`}`;
    out.push({ kind, arg: kind === "folder" ? arg.replace(/\/+$/, "") : arg, lines, start, end: start + marker.length, marker });
  }
  return out;
}

const isSpace = (c: string | undefined) => c === undefined || /\s/.test(c);

/** Whether `marker` stands in `text` as a whole (at a word start, followed by a space, the end or punctuation). */
export function hasMarker(text: string, marker: string): boolean {
  for (let i = text.indexOf(marker); i >= 0; i = text.indexOf(marker, i + 1)) {
    const after = text[i + marker.length];
    if (isSpace(text[i - 1]) && (isSpace(after) || /[.,;:!?)\]}'"`]/.test(after))) return true;
  }
  return false;
}

// ---- The trigger ----

export interface MentionTrigger {
  /** `#` or `@` and what follows it up to the caret: replaced by the pick (with the rest of the word). */
  start: number;
  end: number;
  char: "#" | "@";
  /** What was typed after the trigger, up to the caret. */
  query: string;
}

const MAX_QUERY = 120;

/**
 * The picker is open while the caret ends a word that starts with `#` or `@` at a word start:
 * `#`, `#uti`, `@models`, `#file:src/a`. Not in `a@b.c`, `x#1`, `##`, after a space, for a query
 * that starts with a digit (`#28` is an issue number) or once it is longer than a path is.
 */
export function mentionTrigger(text: string, caret: number): MentionTrigger | undefined {
  let start = caret;
  while (start > 0 && !/\s/.test(text[start - 1])) start--;
  const char = text[start];
  if (char !== "#" && char !== "@") return undefined;
  const query = text.slice(start + 1, caret);
  if (query.length > MAX_QUERY || /^[#@\d]/.test(query)) return undefined;
  let end = caret;
  while (end < text.length && !/\s/.test(text[end])) end++;
  return { start, end, char, query };
}

/** A query's kind prefix (`file:`, `folder:`, `sym:`) narrows the picker to that kind. */
export function parseQuery(query: string): { kinds?: MentionKind[]; text: string } {
  const m = /^(file|folder|sym|symbol):(.*)$/i.exec(query);
  if (!m) return { text: query };
  const word = m[1].toLowerCase();
  const kinds: MentionKind[] = word === "file" ? ["file", "selection"] : word === "folder" ? ["folder"] : ["symbol"];
  return { kinds, text: m[2] };
}

// ---- Names ----

/** How the turn lists a mention ("file utils.py", "symbol parse_due"), before the host's own list arrives. */
export function mentionLabel(m: Pick<Mention, "kind" | "name">): string {
  switch (m.kind) {
    case "file":
      return `file ${m.name}`;
    case "folder":
      return `folder ${m.name}`;
    case "symbol":
      return `symbol ${m.name}`;
    case "selection":
      return `selection ${m.name}`;
    case "problems":
      return "problems";
    case "diff":
      return "git diff";
    case "terminal":
      return "terminal output";
    case "codebase":
      return "codebase search";
    case "agent":
      return "agent";
  }
}

/** The picker's word for a kind (its badge). */
export const KIND_NAMES: Record<MentionKind, string> = {
  file: "file",
  folder: "folder",
  symbol: "symbol",
  selection: "selection",
  problems: "problems",
  diff: "git diff",
  terminal: "terminal",
  codebase: "codebase",
  agent: "agent",
};
