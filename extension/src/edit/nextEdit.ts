/**
 * Next edit suggestions (setting `kestrel.nextEdit.enabled`, off by default): a moment after you
 * edit, the server predicts the related edit nearby (e.g. the uses of a renamed parameter). It is
 * offered at its location with a marker; Tab jumps there and opens it for review (Tab accepts,
 * Esc rejects, as for inline edits).
 */
import * as vscode from "vscode";
import type { ChatClient } from "../chat/chatView";
import { config } from "../config";
import type { InlineEditController } from "./inlineEdit";
import { request, type TextEdit } from "../protocol";

interface Suggestion {
  doc: vscode.TextDocument;
  version: number;
  edits: TextEdit[];
}

export const NEXT_EDIT_DELAY_MS = 400;

export class NextEditController implements vscode.Disposable {
  private timer: NodeJS.Timeout | undefined;
  private suggestion: Suggestion | undefined;
  private readonly marker = vscode.window.createTextEditorDecorationType({
    after: { contentText: "  ⇥ Kestrel: next edit (Tab)", color: new vscode.ThemeColor("editorCodeLens.foreground") },
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
  });
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly client: () => ChatClient | undefined, private readonly edits: InlineEditController) {
    this.disposables.push(
      this.marker,
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
      vscode.commands.registerCommand("kestrel.jumpToNextEdit", () => this.jump()),
    );
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.disposables.forEach((d) => d.dispose());
  }

  private enabled(): boolean {
    // A restricted setting: an untrusted workspace cannot turn it on (config.ts); the request
    // itself waits for consent too (the client is trust.ts's guarded one).
    return config().get<boolean>("nextEdit.enabled", false);
  }

  private async clear(): Promise<void> {
    this.suggestion = undefined;
    for (const e of vscode.window.visibleTextEditors) e.setDecorations(this.marker, []);
    await vscode.commands.executeCommand("setContext", "kestrel.nextEditAvailable", false);
  }

  private changed(e: vscode.TextDocumentChangeEvent): void {
    const editor = vscode.window.activeTextEditor;
    if (!this.enabled() || !editor || e.document !== editor.document || e.contentChanges.length === 0) return;
    if (this.suggestion) void this.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.ask(editor), NEXT_EDIT_DELAY_MS);
  }

  private async ask(editor: vscode.TextEditor): Promise<void> {
    const client = this.client();
    const doc = editor.document;
    if (!client) return;
    const version = doc.version;
    const pos = editor.selection.active;
    const result = await request(client, "kestrel/nextEdit", {
      uri: doc.uri.toString(), position: { line: pos.line, character: pos.character },
    }).catch(() => null);
    if (!result?.edits?.length || doc.version !== version || result.version !== version) return;
    this.suggestion = { doc, version, edits: result.edits };
    const lines = result.edits.map((e) => new vscode.Range(e.range.start.line, 0, e.range.start.line, 0));
    editor.setDecorations(this.marker, lines);
    await vscode.commands.executeCommand("setContext", "kestrel.nextEditAvailable", true);
  }

  private async jump(): Promise<void> {
    const s = this.suggestion;
    await this.clear();
    if (!s || s.doc.version !== s.version) return;
    const editor = await vscode.window.showTextDocument(s.doc);
    const start = s.edits[0].range.start;
    const at = new vscode.Position(start.line, start.character);
    editor.selection = new vscode.Selection(at, at);
    editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    await this.edits.review(s.doc, { id: "next-edit", version: s.version, edits: s.edits });
  }
}
