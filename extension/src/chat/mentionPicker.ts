/**
 * The host side of the mention picker: what the webview lists for a query typed after `#`/`@`.
 * The files and folders come from the cached list (workspaceFiles.ts) at once, ranked here
 * (fileRank.ts), at most ~50 rows; the symbols (`vscode.executeWorkspaceSymbolProvider`: the
 * Kestrel server's codebase index and any other language server) are asked after a short pause in
 * the typing and appended when they arrive. The selection, the problems, the git diff, the terminal's
 * last command and `#codebase` are offered when their name matches (and there is one: a selection, a
 * Git repository, a command a terminal reported).
 */
import * as vscode from "vscode";
import type { MentionItem, MentionKind, ToWebview } from "./protocol";
import { AGENT_URI, CODEBASE_URI, GIT_DIFF_URI, PROBLEMS_URI, SPECIAL_MARKERS, TERMINAL_URI, fileMarker, folderMarker, formatLines, parseQuery, symbolMarker, withLines, type LineRange } from "./mentions";
import { normalizeQuery, rankNames, rankPaths } from "./fileRank";
import { attachables } from "./context";
import { gitAvailable } from "./gitDiff";
import type { TerminalHistory } from "./terminalOutput";
import type { FileEntry, WorkspaceFiles } from "./workspaceFiles";

export const MAX_FILE_ITEMS = 30;
export const MAX_FOLDER_ITEMS = 5;
export const MAX_SYMBOL_ITEMS = 15;
/** The symbols are asked this long after the last keystroke. */
export const SYMBOL_DELAY_MS = 80;
const SYMBOL_TIMEOUT_MS = 2_000;

const SPECIAL_WORDS: Record<"selection" | "problems" | "diff" | "terminal" | "codebase" | "agent", string[]> = {
  selection: ["selection", "sel"],
  problems: ["problems", "diagnostics", "errors", "warnings"],
  diff: ["diff", "git", "changes"],
  terminal: ["terminal", "output", "command", "shell"],
  codebase: ["codebase", "workspace", "search"],
  agent: ["agent", "tools", "read"],
};

/** A symbol's lines from its range (an end at column 0 of a later line does not include that line). */
export function symbolLines(range: vscode.Range): LineRange {
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line - 1 : range.end.line;
  return { start: range.start.line + 1, end: Math.max(range.start.line, last) + 1 };
}

const SYMBOL_KINDS = ["file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"];

/** Races `p` against a timeout (undefined then). */
export function within<T>(p: Thenable<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    Promise.resolve(p).then(
      (v) => (clearTimeout(timer), resolve(v)),
      () => (clearTimeout(timer), resolve(undefined)),
    );
  });
}

export class MentionPicker implements vscode.Disposable {
  private latest = 0;
  private symbolTimer: ReturnType<typeof setTimeout> | undefined;
  /** The URIs (without lines) this picker offered: a symbol outside the workspace may be attached only then. */
  readonly offered = new Set<string>();

  constructor(
    private readonly files: WorkspaceFiles,
    private readonly post: (msg: ToWebview) => void,
    private readonly symbolDelayMs = SYMBOL_DELAY_MS,
    private readonly terminal?: TerminalHistory,
  ) {}

  dispose(): void {
    if (this.symbolTimer) clearTimeout(this.symbolTimer);
    this.latest = Number.MAX_SAFE_INTEGER;
  }

  /** Answers query `id` (a newer one makes it moot): the rows now, the symbols after the pause. */
  async query(id: number, query: string): Promise<void> {
    this.latest = id;
    if (this.symbolTimer) clearTimeout(this.symbolTimer);
    await this.files.ready();
    if (id !== this.latest) return;
    const { kinds, text } = parseQuery(query);
    const wants = (k: MentionKind) => !kinds || kinds.includes(k);
    const items = [...this.specials(text, wants), ...this.fileItems(text, wants)];
    const symbols = wants("symbol") && text.trim().length > 0;
    this.remember(items);
    this.post({ type: "mentionItems", id, items, append: false, done: !symbols });
    if (!symbols) return;
    this.symbolTimer = setTimeout(() => {
      this.symbolTimer = undefined;
      void this.symbols(id, text.trim());
    }, this.symbolDelayMs);
  }

  private remember(items: MentionItem[]): void {
    if (this.offered.size > 20_000) this.offered.clear();
    for (const i of items) if (i.uri.includes("://")) this.offered.add(withLines(i.uri));
  }

  private specials(text: string, wants: (k: MentionKind) => boolean): MentionItem[] {
    const q = text.trim().toLowerCase();
    const named = (k: keyof typeof SPECIAL_WORDS) => wants(k) && (!q || SPECIAL_WORDS[k].some((w) => w.startsWith(q)));
    const out: MentionItem[] = [];
    const a = attachables();
    // The selection: by its name, or by its file's (`#file:uti` offers the lines selected in utils.py).
    if (a.file && !a.file.secret && a.selection && wants("selection") && (named("selection") || (q && a.file.rel.toLowerCase().includes(q)))) {
      if (!this.files.rules.refuses(a.file.doc.uri)) {
        const lines = { start: a.selection.from, end: a.selection.to };
        const name = `${a.file.rel}:${formatLines(lines)}`;
        out.push({ kind: "selection", name, marker: fileMarker(a.file.rel, lines), uri: withLines(a.file.doc.uri.toString(), lines), detail: `the selection (${lines.end - lines.start + 1} lines)` });
      }
    }
    if (named("problems")) {
      const count = this.problemCount();
      out.push({ kind: "problems", name: "problems", marker: SPECIAL_MARKERS.problems, uri: PROBLEMS_URI, detail: count ? `${count} in the workspace now` : "none in the workspace now" });
    }
    if (named("diff") && gitAvailable()) {
      out.push({ kind: "diff", name: "git diff", marker: SPECIAL_MARKERS.diff, uri: GIT_DIFF_URI, detail: "the working tree's changes" });
    }
    const ran = this.terminal?.last();
    if (named("terminal") && ran) {
      out.push({ kind: "terminal", name: "terminal", marker: SPECIAL_MARKERS.terminal, uri: TERMINAL_URI, detail: `the last command's output: ${ran.command.slice(0, 60)}` });
    }
    if (named("codebase")) {
      out.push({ kind: "codebase", name: "codebase", marker: SPECIAL_MARKERS.codebase, uri: CODEBASE_URI, detail: "search the workspace for this question" });
    }
    if (named("agent")) {
      out.push({ kind: "agent", name: "agent", marker: SPECIAL_MARKERS.agent, uri: AGENT_URI, detail: "let the agent read the workspace (read only) to answer" });
    }
    return out;
  }

  private problemCount(): number {
    const rules = this.files.rules;
    let n = 0;
    for (const [uri, diags] of vscode.languages.getDiagnostics()) if (diags.length && !rules.refuses(uri)) n += diags.length;
    return n;
  }

  private fileItems(text: string, wants: (k: MentionKind) => boolean): MentionItem[] {
    const out: MentionItem[] = [];
    if (wants("file")) {
      const files = normalizeQuery(text) ? rankPaths(text, this.files.entries(), MAX_FILE_ITEMS) : this.firstFiles(MAX_FILE_ITEMS);
      for (const f of files) out.push(fileItem(f));
    }
    if (wants("folder") && (normalizeQuery(text) || !wants("file"))) {
      for (const f of rankPaths(text, this.files.folders(), MAX_FOLDER_ITEMS)) {
        const cut = f.rel.lastIndexOf("/");
        out.push({ kind: "folder", name: `${f.rel}/`, marker: folderMarker(f.rel), uri: f.uri.toString(), detail: cut > 0 ? f.rel.slice(0, cut) : "folder" });
      }
    }
    return out;
  }

  /** Before anything is typed: the open tabs, then the files nearest the root. */
  private firstFiles(limit: number): FileEntry[] {
    const out: FileEntry[] = [];
    const seen = new Set<string>();
    const a = attachables();
    const open = [a.file?.doc.uri, ...a.openFiles.map((f) => f.uri)].filter((u): u is vscode.Uri => Boolean(u));
    for (const uri of open) {
      const key = uri.toString();
      const e = this.files.get(uri);
      if (e && !seen.has(key)) {
        seen.add(key);
        out.push(e);
      }
    }
    for (const e of this.files.shallowFirst(limit + out.length)) {
      if (out.length >= limit) break;
      if (!seen.has(e.uri.toString())) out.push(e);
    }
    return out;
  }

  private async symbols(id: number, text: string): Promise<void> {
    const found = await within(vscode.commands.executeCommand<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", text), SYMBOL_TIMEOUT_MS);
    if (id !== this.latest) return;
    const rules = this.files.rules;
    const seen = new Set<string>();
    const usable: vscode.SymbolInformation[] = [];
    for (const s of found ?? []) {
      const uri = s?.location?.uri;
      if (!uri || !s.location.range || rules.refuses(uri)) continue;
      const inWorkspace = vscode.workspace.getWorkspaceFolder(uri);
      if (inWorkspace && rules.picker.excludes(vscode.workspace.asRelativePath(uri, false))) continue;
      const key = `${s.name}@${uri.toString()}#${s.location.range.start.line}`;
      if (seen.has(key)) continue;
      seen.add(key);
      usable.push(s);
    }
    const items = rankNames(text, usable, MAX_SYMBOL_ITEMS).map((s): MentionItem => {
      const lines = symbolLines(s.location.range);
      const rel = vscode.workspace.asRelativePath(s.location.uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
      const kind = SYMBOL_KINDS[s.kind] ?? "symbol";
      const container = s.containerName ? `${s.containerName} · ` : "";
      return { kind: "symbol", name: s.name, marker: symbolMarker(s.name), uri: withLines(s.location.uri.toString(), lines), detail: `${kind} · ${container}${rel}:${formatLines(lines)}` };
    });
    this.remember(items);
    this.post({ type: "mentionItems", id, items, append: true, done: true });
  }
}

function fileItem(f: FileEntry): MentionItem {
  const cut = f.rel.lastIndexOf("/");
  return { kind: "file", name: f.rel.slice(cut + 1), marker: fileMarker(f.rel), uri: f.uri.toString(), detail: cut > 0 ? f.rel.slice(0, cut) : undefined };
}
