/**
 * Codebase answers: the workspace code a turn's prompt held (its sources, from `kestrel/chatSources`
 * and the result) and the citations of its answer (`[2]`, `[path:L-L]`). Plain logic, no DOM and no `vscode`:
 * the webview labels and links them with it, the host checks with it what the webview asks to open.
 */
import type { Range, SourceRef } from "../protocol";
import type { Turn } from "./protocol";

export type { SourceRef };

/** What a turn knows for linking its citations: its sources, then (once it ended) the server's verdict. */
export interface TurnRefs {
  sources?: SourceRef[];
  /** Cited spans that name workspace files (the result). */
  citations?: SourceRef[];
  /** Cited paths that name no workspace file (the result): shown struck out. */
  invented?: string[];
  /** Paths written as inline code that name no workspace file (the result): marked. */
  unknownPaths?: string[];
}

export const refsOf = (turn: Turn): TurnRefs => ({ sources: turn.sources, citations: turn.citations, invented: turn.inventedCitations, unknownPaths: turn.inventedPaths });

/** 1-based first and last line of an LSP span whose end is the start of the line after it. */
export function sourceLines(range: Range): { first: number; last: number } {
  const first = range.start.line + 1;
  const endLine = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return { first, last: Math.max(first, endLine) };
}

/** `models.py:10-12` (or `models.py:10` for one line): what the model was shown and cites. */
export function sourceLabel(ref: { path: string; range: Range }): string {
  const { first, last } = sourceLines(ref.range);
  return `${ref.path}:${first === last ? first : `${first}-${last}`}`;
}

/** A cited path as a workspace path: forward slashes, no leading `./` or `/`. */
export function normalizePath(path: string): string {
  return path.replace(/\\/g, "/").replace(/^(\.\/)+/, "").replace(/^\/+/, "");
}

/**
 * `[path:L-L]`, `[path:L]` or `[path]` in an answer's prose: the server's grammar (chat/codebase.py
 * CITATION), so that what it checked is what links here: a path with a suffix, optionally in
 * backticks, lines 1-based with `-` or `–` between them.
 */
export const CITATION = /\[`?([\p{L}\p{M}\p{N}_./\\-]+\.[A-Za-z0-9]{1,8})`?(?::(\d{1,7})(?:\s*[-–]\s*(\d{1,7}))?)?\]/gu;

/**
 * `[2]`, `[1, 3]`, `[1][2]`: the turn's numbered sources (the prompt numbers them in the order of its
 * Sources list). The server's grammar (chat/codebase.py NUMBERED): not an index (`items[0]`) nor a link.
 */
export const NUMBERED = /(?<![\p{L}\p{N}_\])\[`'"])((?:\[\d{1,2}(?:\s*,\s*\d{1,2})*\])+)(?![(:])/gu;

/** What each number of a `[1][2]` group is in this turn: its source's span, an invented number, or text. */
export function resolveNumbered(group: string, refs: TurnRefs | undefined): { n: number; cited: Citation | undefined }[] {
  return [...group.matchAll(/\d+/g)].map((m) => {
    const n = Number(m[0]);
    const ref = refs?.sources?.[n - 1];
    if (ref) return { n, cited: { kind: "link", uri: ref.uri, range: ref.range, name: ref.name } };
    const past = refs?.sources?.length && n > refs.sources.length;
    return { n, cited: past || refs?.invented?.includes(`[${n}]`) ? { kind: "invented" } : undefined };
  });
}

export type Citation =
  /** A span of a file the turn knows: opens `uri` at `range` (the cited lines). */
  | { kind: "link"; uri: string; range: Range; name?: string }
  /** A path the server found in no workspace folder. */
  | { kind: "invented" };

/** The ref a cited path names: the same path, else the one file whose path ends with it (the server
 * resolves a unique tail too: `[invoice.py:4]` for billing/invoice.py). */
function refFor(wanted: string, refs: SourceRef[]): SourceRef | undefined {
  const same = refs.find((r) => normalizePath(r.path) === wanted);
  if (same) return same;
  const tails = refs.filter((r) => normalizePath(r.path).endsWith(`/${wanted}`));
  return new Set(tails.map((r) => r.uri)).size === 1 ? tails[0] : undefined;
}

/**
 * What the citation `[path:first-last]` is in this turn: a link, an invented path, or (undefined)
 * plain text. Lines are 1-based; a citation without lines opens the file at its top.
 */
export function resolveCitation(path: string, first: number | undefined, last: number | undefined, refs: TurnRefs | undefined): Citation | undefined {
  if (!refs) return undefined;
  const wanted = normalizePath(path);
  if (!wanted) return undefined;
  const ref = refFor(wanted, [...(refs.citations ?? []), ...(refs.sources ?? [])]);
  if (ref) {
    const start = Math.max(0, (first ?? 1) - 1);
    const end = Math.max(start + 1, last ?? first ?? 1);
    return { kind: "link", uri: ref.uri, range: { start: { line: start, character: 0 }, end: { line: end, character: 0 } }, name: ref.name };
  }
  if (refs.invented?.some((p) => normalizePath(p) === wanted)) return { kind: "invented" };
  return undefined;
}

/** Every file URI the server named as a source or a citation in these turns (and the answer running now). */
export function knownSourceUris(turns: Turn[], running: SourceRef[] = []): Set<string> {
  const uris = new Set<string>();
  for (const ref of [...turns.flatMap((t) => [...(t.sources ?? []), ...(t.citations ?? [])]), ...running]) {
    if (typeof ref?.uri === "string") uris.add(ref.uri);
  }
  return uris;
}

/** The lines a file is opened at: 0-based, the start and the line after the span. */
export interface OpenTarget {
  uri: string;
  startLine: number;
  endLine: number;
}

const MAX_LINE = 10_000_000;
const isLine = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= MAX_LINE;

/**
 * The webview's "open this source" checked: a `file:` URI the server sent for this conversation, and
 * whole line numbers. Anything else (another scheme, a path the server never named, a malformed
 * message) is undefined: the webview cannot make the editor open what it likes.
 */
export function openSourceTarget(msg: unknown, known: ReadonlySet<string>): OpenTarget | undefined {
  if (!msg || typeof msg !== "object") return undefined;
  const { uri, range } = msg as { uri?: unknown; range?: { start?: { line?: unknown }; end?: { line?: unknown } } };
  if (typeof uri !== "string" || !/^file:/i.test(uri) || !known.has(uri)) return undefined;
  const startLine = range?.start?.line;
  if (!isLine(startLine)) return undefined;
  const end = range?.end?.line;
  const endLine = isLine(end) && end >= startLine ? end : startLine;
  return { uri, startLine, endLine };
}
