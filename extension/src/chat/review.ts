/**
 * What the code-block buttons of a chat answer do to the workspace. Nothing is written without the
 * user seeing it first: Apply and Insert open a diff review and ask; Apply all goes through VS Code's
 * Refactor Preview (one checkbox per file); Run asks with the command shown. Every accepted change
 * is one WorkspaceEdit, so one undo step reverts it. A block goes to the file it names (inside the
 * workspace, never a secret file), else to the active editor.
 */
import * as vscode from "vscode";
import type { CodeBlock } from "./protocol";
import { isShellLang, langFromPath, mergeBlock } from "./codeBlocks";
import { CommandTerminals } from "./commandTerminal";
import { inWorkspaceFolders, resolveLinks } from "./links";
import { activeFileEditor } from "./context";
import { isSecretPath } from "../secretFiles";

export const PROPOSED_SCHEME = "kestrel-proposed";

/** A file Apply all changed: what it was (null: Apply all created it) and what it became. */
export interface AppliedFile {
  uri: string;
  path: string;
  before: string | null;
  after: string;
}

/** What Apply all did: the files applied (the checkpoint to restore) and those the user left out. */
export interface ApplyOutcome {
  applied: AppliedFile[];
  left: string[];
}

/** A file's text as the editor has it (an open document, saved or not), else on disk; undefined: no file. */
export async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}

/** A file a block goes to. */
interface Target {
  uri: vscode.Uri;
  rel: string;
  /** Its document when the file exists (new files have none). */
  doc?: vscode.TextDocument;
  lang: string;
}

type Resolved = Target | { problem: string };

/** `path` cleaned, or undefined when it leaves the workspace (absolute, `..`). */
function workspaceRelative(path: string): string | undefined {
  const p = path.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
  if (!p || /^([A-Za-z]:)?\//.test(p) || p.startsWith("~")) return undefined;
  if (p.split("/").some((part) => part === "..")) return undefined;
  return p;
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why writing `uri` would land outside the workspace folders or in a secret file through a link (the
 * file itself, or a folder on its way: a cloned repository's `ext -> ~/.vscode/extensions/x`), or
 * undefined. A new file is judged by its nearest existing folder.
 */
export async function linkedAway(uri: vscode.Uri, rel: string): Promise<string | undefined> {
  if (uri.scheme !== "file") return undefined;
  const target = resolveLinks(uri.fsPath);
  if (target === uri.fsPath) return undefined;
  if (isSecretPath(target)) return `${rel} is a link to a secret file; Kestrel does not write to it.`;
  return (await inWorkspaceFolders(target)) ? undefined : `${rel} is a link to a file outside the workspace; Kestrel only writes inside it.`;
}

/** The named file in the workspace: an existing one in any folder, else a new one in the active file's folder (or the first). */
export async function resolveNamed(path: string): Promise<Resolved> {
  const found = await findNamed(path);
  if ("problem" in found) return found;
  const away = await linkedAway(found.uri, found.rel);
  return away ? { problem: away } : found;
}

async function findNamed(path: string): Promise<Resolved> {
  const rel = workspaceRelative(path);
  if (!rel) return { problem: `${path} is outside the workspace; Kestrel only writes inside it.` };
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (!folders.length) return { problem: `open a folder to apply a block to ${rel}.` };
  if (isSecretPath(rel)) return { problem: `${rel} is a secret file; Kestrel does not write to it.` };
  for (const folder of folders) {
    const uri = vscode.Uri.joinPath(folder.uri, rel);
    if (await exists(uri)) {
      try {
        const doc = await vscode.workspace.openTextDocument(uri);
        return { uri, rel, doc, lang: doc.languageId };
      } catch (err) {
        return { problem: `${rel} could not be opened as text (${String((err as Error)?.message ?? err)}).` };
      }
    }
  }
  const active = activeFileEditor()?.document.uri;
  const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? folders[0];
  return { uri: vscode.Uri.joinPath(folder.uri, rel), rel, lang: langFromPath(rel) };
}

/** The active editor's file as a target. */
async function activeTarget(editor: vscode.TextEditor | undefined, what: string): Promise<Resolved> {
  if (!editor) return { problem: `open a file to ${what} (or ask for a block that names its file).` };
  const doc = editor.document;
  const rel = vscode.workspace.asRelativePath(doc.uri, false);
  if (isSecretPath(doc.uri.path)) return { problem: `${rel} is a secret file; Kestrel does not write to it.` };
  const away = vscode.workspace.getWorkspaceFolder(doc.uri) ? await linkedAway(doc.uri, rel) : undefined;
  return away ? { problem: away } : { uri: doc.uri, rel, doc, lang: doc.languageId };
}

/** The change from `before` to `after` as one replacement of the lines that differ (cursor and markers elsewhere stay). */
function changedSpan(before: string, after: string): { start: number; end: number; text: string } {
  let p = 0;
  const max = Math.min(before.length, after.length);
  while (p < max && before[p] === after[p]) p++;
  let q = 0;
  while (q < max - p && before[before.length - 1 - q] === after[after.length - 1 - q]) q++;
  return { start: p, end: before.length - q, text: after.slice(p, after.length - q) };
}

/** Adds "make `target` read `text`" to `edit` (creating the file when it is new). */
function writeInto(edit: vscode.WorkspaceEdit, target: Target, text: string, metadata?: vscode.WorkspaceEditEntryMetadata): void {
  if (!target.doc) {
    edit.createFile(target.uri, { overwrite: false, ignoreIfExists: false }, metadata);
    edit.insert(target.uri, new vscode.Position(0, 0), text, metadata);
    return;
  }
  const span = changedSpan(target.doc.getText(), text);
  edit.replace(target.uri, new vscode.Range(target.doc.positionAt(span.start), target.doc.positionAt(span.end)), span.text, metadata);
}

/** Control characters but tab and newline, DEL, C1, and bidirectional marks and overrides (as `agent/run_tool.py`). */
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** The commands of a shell block: for a console transcript only the prompted lines, without their prompt. */
export function shellCommand(block: CodeBlock): string {
  const lines = block.code.replace(/\r\n/g, "\n").trimEnd().split("\n");
  const prompt = /^\s*(?:\$|PS [^>]*>)\s/; // "$ cmd", "PS C:\repo> cmd" ("> …" lines are output, e.g. npm's)
  const prompted = lines.filter((l) => prompt.test(l));
  return (prompted.length ? prompted.map((l) => l.replace(prompt, "")) : lines).join("\n");
}

/** Code inserted at a cursor inside indentation takes that indentation on its following lines. */
function indentLike(code: string, linePrefix: string): string {
  if (!/^[ \t]+$/.test(linePrefix)) return code;
  return code
    .split("\n")
    .map((l, i) => (i === 0 || !l.trim() ? l : linePrefix + l))
    .join("\n");
}

export class BlockActions implements vscode.Disposable {
  /** The proposed side of open reviews, by URI. */
  private readonly contents = new Map<string, string>();
  private reviews = 0;
  private readonly provider: vscode.Disposable;
  private readonly terminals = new CommandTerminals();

  constructor() {
    this.provider = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, {
      provideTextDocumentContent: (uri) => this.contents.get(uri.toString()) ?? "",
    });
  }

  dispose(): void {
    this.provider.dispose();
    this.terminals.dispose();
  }

  private warn(problem: string): void {
    void vscode.window.showWarningMessage(`Kestrel: ${problem}`);
  }

  /**
   * Shows `proposed` against the target in a diff titled `title`, asks `question`, closes the review
   * either way. True when the user chose `yes`.
   */
  private async review(target: Target, proposed: string, title: string, question: string, yes: string, no: string): Promise<boolean> {
    const n = ++this.reviews;
    // Built from parts, never parsed from a string: a percent-encoded absolute path decodes to
    // `//home/...`, which VS Code rejects as a URI (Apply then did nothing on Linux and macOS).
    const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: target.uri.path, query: `proposed-${n}` });
    const left = target.doc ? target.uri : vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: target.uri.path, query: `new-${n}` });
    this.contents.set(right.toString(), proposed);
    if (!target.doc) this.contents.set(left.toString(), "");
    try {
      await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true });
      return (await vscode.window.showInformationMessage(question, yes, no)) === yes;
    } finally {
      this.contents.delete(right.toString());
      this.contents.delete(left.toString());
      await closeReview(right);
    }
  }

  /** Apply: merge the block into its file (replacing what it redefines), after a review. */
  async apply(block: CodeBlock): Promise<void> {
    const editor = activeFileEditor();
    const target = block.file ? await resolveNamed(block.file) : await activeTarget(editor, "apply the code to");
    if ("problem" in target) return this.warn(target.problem);
    const before = target.doc?.getText() ?? "";
    const version = target.doc?.version;
    const merged = mergeBlock(before, block.code, block.lang || target.lang || langFromPath(target.rel));
    let proposed = merged.text;
    // A fragment that redefines nothing, applied to a selection: it replaces the selection.
    const selection = !block.file && editor && !editor.selection.isEmpty ? editor.selection : undefined;
    if (selection && merged.how === "appended" && target.doc) {
      proposed = before.slice(0, target.doc.offsetAt(selection.start)) + block.code + before.slice(target.doc.offsetAt(selection.end));
    }
    if (!(await this.review(target, proposed, `Kestrel: review ${target.rel}`, `Apply Kestrel's change to ${target.rel}?`, "Apply", "Reject"))) return;
    if (target.doc && target.doc.version !== version) return this.warn(`${target.rel} changed during the review; nothing was applied.`);
    const edit = new vscode.WorkspaceEdit();
    writeInto(edit, target, proposed);
    if (!(await vscode.workspace.applyEdit(edit))) return this.warn(`the change to ${target.rel} could not be applied.`);
    if (!target.doc) await vscode.window.showTextDocument(target.uri, { preview: false });
  }

  /** Insert: the block at the cursor (replacing the selection) of the active editor, after a review. */
  async insert(block: CodeBlock): Promise<void> {
    const editor = activeFileEditor();
    const target = await activeTarget(editor, "insert into");
    if ("problem" in target) return this.warn(target.problem);
    const doc = target.doc!;
    const selection = editor!.selection;
    const version = doc.version;
    const before = doc.getText();
    const start = doc.offsetAt(selection.start);
    const lineStart = doc.offsetAt(new vscode.Position(selection.start.line, 0));
    const code = indentLike(block.code.replace(/\n$/, ""), before.slice(lineStart, start));
    const proposed = before.slice(0, start) + code + before.slice(doc.offsetAt(selection.end));
    const question = `Insert Kestrel's code at the cursor in ${target.rel}?`;
    if (!(await this.review(target, proposed, `Kestrel: insert into ${target.rel}`, question, "Insert", "Cancel"))) return;
    if (doc.version !== version) return this.warn(`${target.rel} changed during the review; nothing was inserted.`);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(selection.start, selection.end), code);
    await vscode.workspace.applyEdit(edit);
  }

  /**
   * Apply all: every block merged into the file it names, as one WorkspaceEdit shown in VS Code's
   * Refactor Preview, which lists each file with its own checkbox; the user applies or discards there.
   */
  async applyAll(blocks: CodeBlock[]): Promise<ApplyOutcome | undefined> {
    const byFile = new Map<string, CodeBlock[]>();
    for (const b of blocks) if (b.file) byFile.set(b.file, [...(byFile.get(b.file) ?? []), b]);
    const problems: string[] = [];
    const unnamed = blocks.length - [...byFile.values()].flat().length;
    if (unnamed) problems.push(`${unnamed} block${unnamed === 1 ? " names" : "s name"} no file and ${unnamed === 1 ? "was" : "were"} left out`);
    const edit = new vscode.WorkspaceEdit();
    const planned: AppliedFile[] = [];
    let existing: vscode.Uri | undefined;
    for (const [file, list] of byFile) {
      const target = await resolveNamed(file);
      if ("problem" in target) {
        problems.push(target.problem);
        continue;
      }
      const before = target.doc?.getText() ?? "";
      let text = before;
      const how = new Set<string>();
      for (const b of list) {
        const merged = mergeBlock(text, b.code, b.lang || target.lang || langFromPath(target.rel));
        text = merged.text;
        how.add(merged.how === "replaced" ? `replaces ${merged.replaced?.join(", ")}` : merged.how === "whole" ? "whole file" : "appended");
      }
      if (target.doc && text === before) continue; // already says this: nothing to list
      existing ??= target.doc ? target.uri : undefined;
      const description = target.doc ? [...how].join("; ") : "new file";
      writeInto(edit, target, text, { needsConfirmation: false, label: "Kestrel: Apply all", description });
      planned.push({ uri: target.uri.toString(), path: target.rel, before: target.doc ? before : null, after: text });
    }
    if (problems.length) this.warn(`${problems.join("; ")}.`);
    if (edit.size === 0) {
      if (!problems.length) void vscode.window.showInformationMessage("Kestrel: the files already contain these blocks.");
      return undefined;
    }
    // VS Code opens the Refactor Preview only when an entry needs confirmation, and shows such entries
    // unchecked. So the files' entries do not need it (they start checked: uncheck what to leave out),
    // and one that does but changes nothing opens the preview: creating a file that exists with
    // ignoreIfExists, which the preview does not list and the apply leaves out.
    const anchor = existing ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    if (anchor) edit.createFile(anchor, { ignoreIfExists: true }, { needsConfirmation: true, label: "Kestrel: Apply all" });
    if (!(await vscode.workspace.applyEdit(edit, { isRefactoring: true }))) return undefined; // discarded
    // What the user kept: a file the preview applied now reads as proposed; an unticked one does not.
    const applied: AppliedFile[] = [];
    const left: string[] = [];
    for (const f of planned) {
      if ((await currentText(vscode.Uri.parse(f.uri))) === f.after) applied.push(f);
      else left.push(f.path);
    }
    return applied.length ? { applied, left } : undefined;
  }

  /**
   * Restore a checkpoint: every file Apply all changed goes back to what it was (a file it created is
   * deleted), as one WorkspaceEdit, after a confirmation that names the files and says which changed
   * since. False when the user cancels.
   */
  async restore(files: AppliedFile[], what = "Apply all"): Promise<boolean> {
    const changed: string[] = [];
    const edit = new vscode.WorkspaceEdit();
    for (const f of files) {
      const uri = vscode.Uri.parse(f.uri);
      const now = await currentText(uri);
      if (now !== f.after) changed.push(f.path);
      if (f.before === null) {
        if (now !== undefined) edit.deleteFile(uri, { ignoreIfNotExists: true });
        continue;
      }
      if (now === undefined) {
        edit.createFile(uri, { ignoreIfExists: true });
        edit.insert(uri, new vscode.Position(0, 0), f.before);
        continue;
      }
      const doc = await vscode.workspace.openTextDocument(uri);
      edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(now.length)), f.before);
    }
    const names = files.map((f) => f.path).join(", ");
    const detail = changed.length ? `${changed.join(", ")} changed since ${what}: those changes are undone too.` : undefined;
    const choice = await vscode.window.showWarningMessage(`Restore ${names} to before ${what}?`, { modal: true, detail }, "Restore");
    if (choice !== "Restore") return false;
    return vscode.workspace.applyEdit(edit);
  }

  /** Run in terminal: after a modal confirmation showing the command, in an idle Kestrel terminal (commandTerminal.ts). */
  async run(block: CodeBlock): Promise<void> {
    if (!isShellLang(block.lang)) return this.warn(`a ${block.lang || "plain"} block is not a shell command.`);
    const command = shellCommand(block);
    if (!command.trim()) return;
    const hidden = HIDDEN.exec(command);
    if (hidden) {
      // What the dialog shows must be what runs: a terminal's line editor acts on control characters
      // (a backspace, Ctrl+A) that the dialog shows as nothing, and bidi overrides reorder the text.
      const code = hidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      return this.warn(`this command holds an invisible control character (U+${code}); Kestrel does not run it.`);
    }
    const choice = await vscode.window.showWarningMessage("Run this command in a terminal?", { modal: true, detail: command }, "Run");
    if (choice !== "Run") return;
    this.terminals.run(command);
  }
}

/** Close the review once it is decided: its proposed side no longer exists. */
export async function closeReview(proposed: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter(
    (tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === proposed.toString(),
  );
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}
