/**
 * What a message's mentions attach, read when it is sent (not when they were picked): a file's text
 * from its open document or the disk, a symbol's lines where the symbol is now, the workspace's
 * problems now, the working tree's diff now. The mentions are those picked in the input whose
 * marker is still in the text, plus markers typed by hand (`#file:src/app.py`), resolved here.
 *
 * Labels and fences follow context.ts (the server recognises them as attachments, not as the
 * question). A file over MAX_MENTION_FILE_CHARS goes as its outline (the document symbols: names and
 * lines) and its first part. Never attached, whatever the webview sent: a secret file, one under
 * `kestrel.completion.excludeGlobs`, a location outside the workspace the picker did not offer, a
 * workspace file that is a link to a secret or to a file outside the workspace.
 */
import * as vscode from "vscode";
import type { Mention, MentionKind } from "./protocol";
import { isSecretPath } from "../secretFiles";
import { AGENT_URI, CODEBASE_URI, GIT_DIFF_URI, PROBLEMS_URI, TERMINAL_URI, formatLines, hasMarker, parseMarkers, parseMentionUri, withLines, type LineRange } from "./mentions";
import { fence } from "./context";
import { inWorkspaceFolders, resolveLinks } from "./links";
import { symbolLines, within } from "./mentionPicker";
import { workingTreeDiff } from "./gitDiff";
import type { WorkspaceFiles } from "./workspaceFiles";
import { describeLast, type TerminalHistory } from "./terminalOutput";

export const MAX_MENTION_FILE_CHARS = 20_000;
/** All mentions of one message together (a file that does not fit goes as its outline and what fits). */
export const MAX_MENTIONS_CHARS = 60_000;
const MAX_READ_BYTES = 4_000_000;
const MAX_FOLDER_FILES = 200;
const MAX_PROBLEMS = 50;
const MAX_DIFF_CHARS = 30_000;
const MAX_OUTLINE_LINES = 150;
const MIN_PART = 1_000;
const PROVIDER_TIMEOUT_MS = 1_500;

export interface MentionSources {
  files: WorkspaceFiles;
  /** URIs (without lines) the picker offered this session: a symbol outside the workspace may be attached then. */
  offered: ReadonlySet<string>;
  /** What the terminals ran (`#terminal`); none: nothing to attach. */
  terminal?: TerminalHistory;
}

export interface MentionReading {
  /** The context text (fenced, labelled), empty when nothing was attached. */
  text: string;
  /** For the user turn ("file utils.py", "symbol parse_due (due.py:4-9)", "problems (3)"). */
  labels: string[];
  /** The mentions that were read (kept with the turn; Retry reads them again). */
  mentions: Mention[];
  /** What was not attached and why ("config/.env: a secret file"). */
  refused: string[];
}

const KINDS: ReadonlySet<MentionKind> = new Set(["file", "folder", "symbol", "selection", "problems", "diff", "terminal", "codebase", "agent"]);

/** A mention as the webview sent it (plain data from another process: checked, not trusted). */
export function isMention(x: unknown): x is Mention {
  const m = x as Mention;
  return Boolean(m) && KINDS.has(m.kind) && typeof m.marker === "string" && typeof m.uri === "string" && typeof m.name === "string" && m.marker.length < 2_000 && m.uri.length < 4_000;
}

const LANGUAGES: Record<string, string> = {
  py: "python", pyi: "python", ts: "typescript", tsx: "tsx", js: "javascript", jsx: "jsx", mjs: "javascript", cjs: "javascript",
  go: "go", rs: "rust", java: "java", kt: "kotlin", c: "c", h: "c", cc: "cpp", cpp: "cpp", hpp: "cpp", cs: "csharp", rb: "ruby",
  php: "php", swift: "swift", md: "markdown", json: "json", yaml: "yaml", yml: "yaml", toml: "toml", sh: "bash", css: "css", html: "html", sql: "sql",
};
const languageOf = (path: string) => LANGUAGES[path.slice(path.lastIndexOf(".") + 1).toLowerCase()] ?? "";

const relative = (uri: vscode.Uri) => vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * The mentions a message carries, in the order of their markers: the picked ones whose marker is
 * still in the text, then the typed markers no pick stands for, resolved against the workspace.
 */
export async function resolveMentions(text: string, picked: readonly unknown[], sources: MentionSources): Promise<{ mentions: { m: Mention; at: number }[]; refused: string[] }> {
  const found: { m: Mention; at: number }[] = [];
  const refused: string[] = [];
  const keys = new Set<string>();
  const add = (m: Mention, at: number) => {
    const key = `${m.kind} ${m.uri}`;
    if (keys.has(key)) return;
    keys.add(key);
    found.push({ m, at });
  };
  const pickedMarkers = new Set<string>();
  for (const p of picked) {
    if (!isMention(p) || !hasMarker(text, p.marker)) continue;
    pickedMarkers.add(p.marker);
    add({ kind: p.kind, marker: p.marker, uri: p.uri, name: p.name }, text.indexOf(p.marker));
  }
  for (const t of parseMarkers(text)) {
    if (pickedMarkers.has(t.marker)) continue;
    switch (t.kind) {
      case "problems":
        add({ kind: "problems", marker: t.marker, uri: PROBLEMS_URI, name: "problems" }, t.start);
        break;
      case "diff":
        add({ kind: "diff", marker: t.marker, uri: GIT_DIFF_URI, name: "git diff" }, t.start);
        break;
      case "terminal":
        add({ kind: "terminal", marker: t.marker, uri: TERMINAL_URI, name: "terminal" }, t.start);
        break;
      case "codebase":
        add({ kind: "codebase", marker: t.marker, uri: CODEBASE_URI, name: "codebase" }, t.start);
        break;
      case "agent":
        add({ kind: "agent", marker: t.marker, uri: AGENT_URI, name: "agent" }, t.start);
        break;
      case "file": {
        const uri = await fileByRel(t.arg, sources.files);
        if (!uri) refused.push(`${t.marker}: no such file in the workspace`);
        else add({ kind: "file", marker: t.marker, uri: withLines(uri.toString(), t.lines), name: t.lines ? `${t.arg}:${formatLines(t.lines)}` : t.arg }, t.start);
        break;
      }
      case "folder": {
        await sources.files.ready();
        const folder = sources.files.folders().find((f) => f.rel === t.arg);
        if (!folder) refused.push(`${t.marker}: no such folder in the workspace`);
        else add({ kind: "folder", marker: t.marker, uri: folder.uri.toString(), name: `${t.arg}/` }, t.start);
        break;
      }
      case "symbol": {
        const symbol = await symbolByName(t.arg, sources);
        if (!symbol) refused.push(`${t.marker}: no symbol of that name in the workspace`);
        else add({ kind: "symbol", marker: t.marker, uri: withLines(symbol.location.uri.toString(), symbolLines(symbol.location.range)), name: t.arg }, t.start);
        break;
      }
    }
  }
  found.sort((a, b) => a.at - b.at);
  return { mentions: found, refused };
}

/** A typed path: a listed file, else the path under a workspace folder if it is a file there. */
async function fileByRel(rel: string, files: WorkspaceFiles): Promise<vscode.Uri | undefined> {
  const listed = files.byRel(rel);
  if (listed) return listed.uri;
  if (rel.split(/[\\/]/).includes("..")) return undefined;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const uri = vscode.Uri.joinPath(folder.uri, rel);
    try {
      const stat = await vscode.workspace.fs.stat(uri);
      if (stat.type & vscode.FileType.File) return uri;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

async function symbolByName(name: string, sources: MentionSources): Promise<vscode.SymbolInformation | undefined> {
  const found = await within(vscode.commands.executeCommand<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", name), PROVIDER_TIMEOUT_MS);
  const exact = (found ?? []).filter((s) => s?.name === name && s.location?.uri && !sources.files.rules.refuses(s.location.uri));
  return exact.find((s) => vscode.workspace.getWorkspaceFolder(s.location.uri)) ?? exact[0];
}

/** Reads every mention of a message now; `attached`: files the chips attach whole already (not twice). */
export async function readMentions(text: string, picked: readonly unknown[], sources: MentionSources, attached: readonly string[] = []): Promise<MentionReading> {
  const { mentions, refused } = await resolveMentions(text, picked, sources);
  const parts: string[] = [];
  const labels: string[] = [];
  const read: Mention[] = [];
  let room = MAX_MENTIONS_CHARS;
  const already = new Set(attached);
  for (const { m } of mentions) {
    const part = await readOne(m, sources, room, already);
    if ("refused" in part) {
      refused.push(`${m.name}: ${part.refused}`);
      continue;
    }
    read.push(m);
    if (part.label) labels.push(part.label);
    if (part.text) {
      parts.push(part.text);
      room -= part.text.length;
    }
  }
  return { text: parts.join("\n\n"), labels, mentions: read, refused };
}

type Part = { text?: string; label?: string } | { refused: string };

async function readOne(m: Mention, sources: MentionSources, room: number, already: Set<string>): Promise<Part> {
  const parsed = parseMentionUri(m.uri);
  if (!parsed) return { refused: "not a location Kestrel reads" };
  if (parsed.scheme === "codebase") return { label: "codebase search" }; // the server searches: it reads `#codebase` in the text
  if (parsed.scheme === "agent") return { label: "agent" }; // the panel sends the turn to kestrel/agent (agent.ts)
  if (parsed.scheme === "problems") return problems(sources);
  if (parsed.scheme === "diff") return diff(sources);
  if (parsed.scheme === "terminal") return terminalOutput(sources);
  const uri = vscode.Uri.parse(parsed.base, true);
  // `..` is never normalised away here: `/ws/src/../../etc/passwd` would pass a folder prefix check.
  if (uri.path.split("/").includes("..")) return { refused: "a path with `..` in it" };
  const why = sources.files.rules.refuses(uri);
  if (why) return { refused: why };
  const inWorkspace = Boolean(vscode.workspace.getWorkspaceFolder(uri));
  if (!inWorkspace && !sources.offered.has(parsed.base)) return { refused: "outside the workspace" };
  const link = await linkRefusal(uri, inWorkspace, sources);
  if (link) return { refused: link };
  const rel = relative(uri);
  if (m.kind === "folder" || parsed.folder) return folder(uri, rel, sources);
  if (room < MIN_PART) return { refused: "the message's context is full" };
  const file = await readText(uri);
  if ("refused" in file) return file;
  if (m.kind === "symbol") {
    const lines = await currentSymbolLines(uri, m.name, parsed.lines, file.text);
    const body = sliceLines(file.text, lines).slice(0, Math.min(room, MAX_MENTION_FILE_CHARS));
    const where = `${rel}:${formatLines(lines)}`;
    return { text: fence(`File ${rel}, lines ${formatLines(lines)} (${m.name})`, body, file.languageId), label: `symbol ${m.name} (${where})` };
  }
  if (parsed.lines) {
    const lines = clampLines(parsed.lines, file.text);
    const body = sliceLines(file.text, lines).slice(0, Math.min(room, MAX_MENTION_FILE_CHARS));
    const where = `${rel}:${formatLines(lines)}`;
    return m.kind === "selection"
      ? { text: fence(`Selected lines ${formatLines(lines)} of ${rel}`, body, file.languageId), label: `selection ${where}` }
      : { text: fence(`File ${rel}, lines ${formatLines(lines)}`, body, file.languageId), label: `file ${where}` };
  }
  if (already.has(uri.toString())) return { label: `file ${rel}` }; // the file chip sends it already
  already.add(uri.toString());
  const limit = Math.min(room, MAX_MENTION_FILE_CHARS);
  if (file.text.length <= limit) return { text: fence(`File ${rel}`, file.text, file.languageId), label: `file ${rel}` };
  // Too long: what it defines (names and lines), then its beginning, within what is left.
  const outline = await outlineOf(uri);
  const head = outline.length ? `Outline of ${rel} (${plural(file.text.split("\n").length, "line", "lines")}):\n${outline.join("\n")}\n\n` : "";
  const first = Math.max(0, limit - head.length);
  return {
    text: `${head}${fence(`File ${rel} (its first ${first} characters)`, file.text.slice(0, first), file.languageId)}`,
    label: `file ${rel} (${outline.length ? "outline and " : ""}first ${first} characters)`,
  };
}

/**
 * A `file:` path that resolves (through links) elsewhere: refused when the target is a secret or
 * excluded file, or, for a path inside the workspace, a file outside it (a repository's
 * `notes.txt -> ~/.aws/credentials`). The codebase index follows links only inside its folder too.
 */
export async function linkRefusal(uri: vscode.Uri, inWorkspace: boolean, sources: MentionSources): Promise<string | undefined> {
  if (uri.scheme !== "file") return undefined;
  const real = resolveLinks(uri.fsPath);
  if (real === uri.fsPath) return undefined;
  if (isSecretPath(real) || sources.files.rules.refuses(vscode.Uri.file(real))) return "a link to a secret or excluded file";
  if (!inWorkspace) return undefined;
  return (await inWorkspaceFolders(real)) ? undefined : "a link to a file outside the workspace";
}

/** The file's text now: the open document's (unsaved edits included), else the disk's. */
async function readText(uri: vscode.Uri): Promise<{ text: string; languageId: string } | { refused: string }> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return { text: open.getText(), languageId: open.languageId };
  try {
    const stat = await vscode.workspace.fs.stat(uri);
    if (stat.type & vscode.FileType.Directory) return { refused: "a folder, not a file" };
    if (stat.size > MAX_READ_BYTES) return { refused: `too large (${Math.round(stat.size / 1e6)} MB)` };
    const bytes = await vscode.workspace.fs.readFile(uri);
    if (bytes.subarray(0, 8_000).includes(0)) return { refused: "a binary file" };
    return { text: new TextDecoder().decode(bytes), languageId: languageOf(uri.path) };
  } catch {
    return { refused: "it no longer exists" };
  }
}

/** Lines `r` (1-based, inclusive) of `text`. */
export function sliceLines(text: string, r: LineRange): string {
  return text.split("\n").slice(r.start - 1, r.end).join("\n");
}

export function clampLines(r: LineRange, text: string): LineRange {
  const count = text.split("\n").length;
  const start = Math.min(Math.max(1, r.start), count);
  return { start, end: Math.min(Math.max(start, r.end), count) };
}

/**
 * A definition that starts at line `start` (1-based) and was given as that one line (some servers
 * give only the name's range): the lines after it that are indented deeper or inside its braces.
 */
export function blockFrom(text: string, start: number, max = 300): LineRange {
  const lines = text.split("\n");
  const indent = (l: string) => l.length - l.trimStart().length;
  const braces = (l: string) => [...l].reduce((n, c) => n + (c === "{" ? 1 : c === "}" ? -1 : 0), 0);
  const base = indent(lines[start - 1] ?? "");
  let depth = braces(lines[start - 1] ?? "");
  let end = start;
  for (let i = start; i < lines.length && i < start - 1 + max; i++) {
    const line = lines[i];
    if (!line.trim()) continue;
    if (depth > 0) {
      depth += braces(line);
      end = i + 1;
      if (depth <= 0) break;
    } else if (indent(line) > base) end = i + 1;
    else break;
  }
  return { start, end };
}

type AnySymbol = vscode.DocumentSymbol | vscode.SymbolInformation;
const rangeOf = (s: AnySymbol) => ("location" in s ? s.location.range : s.range);

function flatten(symbols: readonly AnySymbol[], depth = 0, out: { s: AnySymbol; depth: number }[] = []) {
  for (const s of symbols) {
    if (!s || !rangeOf(s)) continue;
    out.push({ s, depth });
    if ("children" in s && s.children?.length) flatten(s.children, depth + 1, out);
  }
  return out;
}

async function documentSymbols(uri: vscode.Uri): Promise<{ s: AnySymbol; depth: number }[]> {
  const found = await within(vscode.commands.executeCommand<AnySymbol[]>("vscode.executeDocumentSymbolProvider", uri), PROVIDER_TIMEOUT_MS);
  return Array.isArray(found) ? flatten(found) : [];
}

/**
 * Where symbol `name` is now: the document symbols of its file, else the workspace symbols of that
 * name in that file (the one nearest where it was picked), else the lines it was picked with. A
 * one-line range grows to the definition's block.
 */
async function currentSymbolLines(uri: vscode.Uri, name: string, picked: LineRange | undefined, text: string): Promise<LineRange> {
  const near = picked?.start ?? 1;
  const nearest = (ranges: vscode.Range[]) =>
    ranges.sort((a, b) => Math.abs(a.start.line + 1 - near) - Math.abs(b.start.line + 1 - near))[0];
  let range = nearest((await documentSymbols(uri)).filter((x) => x.s.name === name).map((x) => rangeOf(x.s)));
  if (!range) {
    const found = await within(vscode.commands.executeCommand<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", name), PROVIDER_TIMEOUT_MS);
    range = nearest((found ?? []).filter((s) => s?.name === name && s.location?.uri.toString() === uri.toString()).map((s) => s.location.range));
  }
  const lines = clampLines(range ? symbolLines(range) : picked ?? { start: 1, end: 1 }, text);
  return lines.start === lines.end ? blockFrom(text, lines.start) : lines;
}

/** The file's outline: "- class Task (lines 4-12)", children indented. */
async function outlineOf(uri: vscode.Uri): Promise<string[]> {
  const kinds = ["file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum", "interface", "function", "variable", "constant"];
  return (await documentSymbols(uri)).slice(0, MAX_OUTLINE_LINES).map(({ s, depth }) => {
    const lines = symbolLines(rangeOf(s));
    return `${"  ".repeat(depth)}- ${kinds[s.kind] ?? "symbol"} ${s.name} (lines ${formatLines(lines)})`;
  });
}

async function folder(uri: vscode.Uri, rel: string, sources: MentionSources): Promise<Part> {
  await sources.files.ready();
  const prefix = uri.toString().endsWith("/") ? uri.toString() : `${uri.toString()}/`;
  const inside = sources.files.entries().filter((f) => f.uri.toString().startsWith(prefix)).map((f) => f.rel).sort();
  const shown = inside.slice(0, MAX_FOLDER_FILES);
  const more = inside.length > shown.length ? `\n… and ${inside.length - shown.length} more` : "";
  const name = rel.replace(/\/+$/, "");
  return {
    text: fence(`Files in the folder ${name}/ (${inside.length})`, (shown.join("\n") || "(no files Kestrel may read)") + more),
    label: `folder ${name}/ (${plural(inside.length, "file", "files")})`,
  };
}

const SEVERITY = ["error", "warning", "info", "hint"];

function problems(sources: MentionSources): Part {
  const all: { rel: string; line: number; severity: number; message: string; source?: string }[] = [];
  for (const [uri, diags] of vscode.languages.getDiagnostics()) {
    if (!diags.length || sources.files.rules.refuses(uri)) continue;
    const rel = relative(uri);
    for (const d of diags) all.push({ rel, line: d.range.start.line + 1, severity: d.severity ?? 0, message: d.message, source: d.source });
  }
  all.sort((a, b) => a.severity - b.severity || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0) || a.line - b.line);
  const shown = all.slice(0, MAX_PROBLEMS);
  const more = all.length > shown.length ? `\n… and ${all.length - shown.length} more` : "";
  const list = shown.map((p) => `- ${p.rel}:${p.line}: ${SEVERITY[p.severity] ?? "problem"}: ${p.message.split("\n")[0]}${p.source ? ` (${p.source})` : ""}`).join("\n");
  return {
    text: `Problems in the workspace (${all.length}):\n${list || "none"}${more}`,
    label: `problems (${all.length})`,
  };
}

function terminalOutput(sources: MentionSources): Part {
  const last = sources.terminal?.last();
  if (!last) return { refused: "no terminal has reported a command yet (VS Code's shell integration is off or unsupported there)" };
  const { title, body, label } = describeLast(last);
  return { text: fence(title, body, "console"), label };
}

async function diff(sources: MentionSources): Promise<Part> {
  const found = await workingTreeDiff((uri) => sources.files.rules.refuses(uri));
  if (!found) return { refused: "no Git repository (or the Git extension is off)" };
  const cut = found.text.length > MAX_DIFF_CHARS ? ` (its first ${MAX_DIFF_CHARS} characters)` : "";
  const left = found.dropped.length ? `\n(not shown: ${found.dropped.length} excluded ${found.dropped.length === 1 ? "file" : "files"})` : "";
  return {
    text: fence(`Changes in the working tree (git diff, ${plural(found.files.length, "file", "files")})${cut}`, (found.text.slice(0, MAX_DIFF_CHARS) || "(no changes)") + left, "diff"),
    label: `git diff (${plural(found.files.length, "file", "files")})`,
  };
}

