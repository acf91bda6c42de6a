/**
 * What the chat attaches to a question: the selection, the current file, the other open files and
 * the current file's problems. The chips the user sees and the context that is sent come from the
 * same reading of the editor (`attachables`), so a chip always says exactly what a send attaches.
 * Secret files and `kestrel.completion.excludeGlobs` (secretFiles.ts, globs.ts: the server's rules),
 * and links to them, are never attached.
 */
import * as vscode from "vscode";
import type { Chip } from "./protocol";
import { UserGlobs } from "./globs";
import { resolveLinks } from "./links";
import { isSecretPath } from "../secretFiles";

const MAX_FILE_CHARS = 20_000;
export const MAX_OPEN_FILES = 5;
const MAX_OPEN_FILE_CHARS = 4_000;
const MAX_DIAGNOSTICS = 20;
/** Only documents of these schemes are files the user works on (not output panes, diffs, settings). */
const FILE_SCHEMES = new Set(["file", "untitled", "vscode-remote", "vscode-vfs"]);

export interface Attachables {
  /** The active editor's document (secret, excluded or a link to one: shown, never attached). */
  file?: { doc: vscode.TextDocument; rel: string; secret: boolean };
  selection?: { range: vscode.Selection; from: number; to: number };
  /** Every other text tab (all groups), without secrets, in tab order; only the first MAX_OPEN_FILES are attached. */
  openFiles: { uri: vscode.Uri; rel: string }[];
  diagnostics: vscode.Diagnostic[];
}

const relative = (uri: vscode.Uri) => vscode.workspace.asRelativePath(uri, false);

function userGlobs(): UserGlobs {
  const globs = vscode.workspace.getConfiguration("kestrel").get<unknown>("completion.excludeGlobs");
  return new UserGlobs(Array.isArray(globs) ? globs.filter((g): g is string => typeof g === "string") : []);
}

/**
 * A file the chat never attaches: a secret or excluded file by its path, or a link to one, judged
 * where it leads (`notes.py -> ~/.aws/credentials`), as the server judges it.
 */
export function neverAttached(uri: vscode.Uri, globs: UserGlobs = userGlobs()): boolean {
  if (isSecretPath(uri.path) || globs.excludes(uri.path)) return true;
  if (uri.scheme !== "file") return false;
  const real = resolveLinks(uri.fsPath);
  return real !== uri.fsPath && (isSecretPath(real) || globs.excludes(real));
}

/** The active text editor when it shows a file (not the output pane, not a review diff). */
export function activeFileEditor(): vscode.TextEditor | undefined {
  const editors = [vscode.window.activeTextEditor, ...vscode.window.visibleTextEditors];
  return editors.find((e) => e && FILE_SCHEMES.has(e.document.uri.scheme));
}

/** The editor's state now: what each chip would attach. */
export function attachables(): Attachables {
  const editor = activeFileEditor();
  const doc = editor?.document;
  const globs = userGlobs();
  const file = doc && { doc, rel: relative(doc.uri), secret: neverAttached(doc.uri, globs) };
  let selection: Attachables["selection"];
  if (editor && !editor.selection.isEmpty) {
    const s = editor.selection;
    // A selection ending at the start of a line does not include that line.
    const last = s.end.character === 0 && s.end.line > s.start.line ? s.end.line - 1 : s.end.line;
    selection = { range: s, from: s.start.line + 1, to: last + 1 };
  }
  const seen = new Set(doc ? [doc.uri.toString()] : []);
  const openFiles: Attachables["openFiles"] = [];
  for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
    if (!(tab.input instanceof vscode.TabInputText)) continue;
    const uri = tab.input.uri;
    if (!FILE_SCHEMES.has(uri.scheme) || seen.has(uri.toString()) || neverAttached(uri, globs)) continue;
    seen.add(uri.toString());
    openFiles.push({ uri, rel: relative(uri) });
  }
  const diagnostics = doc && !file?.secret ? vscode.languages.getDiagnostics(doc.uri) : [];
  return { file, selection, openFiles, diagnostics };
}

const lines = (from: number, to: number) => (from === to ? `${from}` : `${from}-${to}`);
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * The chips for this state. `enabled` is the default (the webview keeps what the user toggled):
 * the file and a selection on, open files and problems off.
 */
export function chipsFor(a: Attachables): Chip[] {
  const file = a.file;
  const usable = file && !file.secret;
  const secretNote = file?.secret ? `${file.rel} is a secret or excluded file: never attached` : undefined;
  const chips: Chip[] = [];
  chips.push(
    usable && a.selection
      ? { kind: "selection", label: `${file.rel}:${lines(a.selection.from, a.selection.to)}`, detail: `Selected lines ${lines(a.selection.from, a.selection.to)} of ${file.rel}`, enabled: true, available: true }
      : { kind: "selection", label: "no selection", detail: secretNote ?? "Select code in the editor to attach it", enabled: false, available: false },
  );
  chips.push(
    usable
      ? { kind: "file", label: file.rel, detail: file.rel, enabled: true, available: true }
      : { kind: "file", label: file ? `${file.rel} (secret)` : "no file", detail: secretNote ?? "Open a file to attach it", enabled: false, available: false },
  );
  const attached = a.openFiles.slice(0, MAX_OPEN_FILES);
  const more = a.openFiles.length > attached.length ? ` (of ${a.openFiles.length})` : "";
  chips.push(
    attached.length
      ? { kind: "openFiles", label: `${plural(attached.length, "open file", "open files")}${more}`, detail: attached.map((f) => f.rel).join(", "), enabled: false, available: true }
      : { kind: "openFiles", label: "no other open files", detail: "Open files in tabs to attach them", enabled: false, available: false },
  );
  const n = Math.min(a.diagnostics.length, MAX_DIAGNOSTICS);
  chips.push(
    usable && n
      ? { kind: "diagnostics", label: plural(n, "problem", "problems"), detail: `${plural(n, "problem", "problems")} in ${file.rel}`, enabled: false, available: true }
      : { kind: "diagnostics", label: "no problems", detail: "The current file has no problems", enabled: false, available: false },
  );
  return chips;
}

export function currentChips(): Chip[] {
  return chipsFor(attachables());
}

export function fence(label: string, body: string, lang = ""): string {
  return `${label}:\n\`\`\`${lang}\n${body}\n\`\`\``;
}

/** An open document's text: the loaded one if any (no disk read), else opened. */
async function documentText(uri: vscode.Uri): Promise<vscode.TextDocument | undefined> {
  const loaded = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (loaded) return loaded;
  try {
    return await vscode.workspace.openTextDocument(uri);
  } catch {
    return undefined; // closed or deleted since: nothing to attach
  }
}

/**
 * The context text for the model and the user turn's list of what was attached, by name:
 * ["selection main.py:3-5", "file main.py", "open files models.py, utils.py", "diagnostics main.py (2)"],
 * and the URIs of the files attached whole (a mention of one of them does not attach it again).
 */
export async function contextFor(kinds: readonly Chip["kind"][], a: Attachables = attachables()): Promise<{ text: string; labels: string[]; files: string[] }> {
  const parts: string[] = [];
  const labels: string[] = [];
  const files: string[] = [];
  const file = a.file && !a.file.secret ? a.file : undefined;
  if (kinds.includes("selection") && file && a.selection) {
    const where = `${file.rel}:${lines(a.selection.from, a.selection.to)}`;
    parts.push(fence(`Selected lines ${lines(a.selection.from, a.selection.to)} of ${file.rel}`, file.doc.getText(a.selection.range), file.doc.languageId));
    labels.push(`selection ${where}`);
  }
  if (kinds.includes("file") && file) {
    const text = file.doc.getText();
    const cut = text.length > MAX_FILE_CHARS ? ` (its first ${MAX_FILE_CHARS} characters)` : "";
    parts.push(fence(`File ${file.rel}${cut}`, text.slice(0, MAX_FILE_CHARS), file.doc.languageId));
    labels.push(`file ${file.rel}`);
    if (!cut) files.push(file.doc.uri.toString());
  }
  if (kinds.includes("openFiles")) {
    const attached: string[] = [];
    for (const f of a.openFiles.slice(0, MAX_OPEN_FILES)) {
      const doc = await documentText(f.uri);
      if (!doc) continue;
      parts.push(fence(`Open file ${f.rel}`, doc.getText().slice(0, MAX_OPEN_FILE_CHARS), doc.languageId));
      attached.push(f.rel);
      if (doc.getText().length <= MAX_OPEN_FILE_CHARS) files.push(f.uri.toString());
    }
    if (attached.length) labels.push(`open files ${attached.join(", ")}`);
  }
  if (kinds.includes("diagnostics") && file && a.diagnostics.length) {
    const diags = a.diagnostics.slice(0, MAX_DIAGNOSTICS);
    parts.push(`Problems in ${file.rel}:\n` + diags.map((d) => `- line ${d.range.start.line + 1}: ${d.message}`).join("\n"));
    labels.push(`diagnostics ${file.rel} (${diags.length})`);
  }
  return { text: parts.join("\n\n"), labels, files };
}

/** Calls `changed` (at most every `ms`) when what the chips attach may have changed. */
export function watchAttachables(changed: () => void, ms = 100): vscode.Disposable {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      changed();
    }, ms);
  };
  const subs = [
    vscode.window.onDidChangeActiveTextEditor(soon),
    vscode.window.onDidChangeTextEditorSelection(soon),
    vscode.window.tabGroups.onDidChangeTabs(soon),
    // Problems change on every keystroke somewhere: only the current file's count the chip shows.
    vscode.languages.onDidChangeDiagnostics((e) => {
      const active = activeFileEditor()?.document.uri.toString();
      if (e.uris.some((u) => u.toString() === active)) soon();
    }),
  ];
  return {
    dispose: () => {
      if (timer) clearTimeout(timer);
      subs.forEach((s) => s.dispose());
    },
  };
}
