/**
 * "Kestrel: Edit Selection" (Ctrl+I): the instruction box stays open while the rewrite streams
 * into a diff view (old text left, the model's version right, changed lines highlighted); typing
 * a new instruction there steers the running edit. Accept (Tab / button) applies the server's
 * minimal edits as ONE WorkspaceEdit (one undo step); Reject (Esc) leaves the file untouched.
 */
import * as vscode from "vscode";
import { applyEdits, previewText } from "./applyEdits";
import type { ChatClient } from "../chat/chatView";
import { onNotification, request, type EditResult } from "../protocol";

const SCHEME = "kestrel-edit";

export class InlineEditController implements vscode.Disposable {
  private readonly docs = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly disposables: vscode.Disposable[] = [];
  private pending: { doc: vscode.TextDocument; result: EditResult; previewUri: vscode.Uri } | undefined;
  private readonly region = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor("diffEditor.removedLineBackground"),
    isWholeLine: true,
  });

  constructor(private readonly client: () => ChatClient | undefined) {
    this.disposables.push(
      this.changed,
      this.region,
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
        onDidChange: this.changed.event,
        provideTextDocumentContent: (uri) => this.docs.get(uri.toString()) ?? "",
      }),
      vscode.commands.registerCommand("kestrel.editSelection", () => this.start()),
      vscode.commands.registerCommand("kestrel.acceptEdit", () => this.accept()),
      vscode.commands.registerCommand("kestrel.rejectEdit", () => this.reject()),
    );
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }

  private async setPending(value: boolean): Promise<void> {
    await vscode.commands.executeCommand("setContext", "kestrel.inlineEditPending", value);
  }

  async start(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const client = this.client();
    if (!editor || editor.document.uri.scheme === SCHEME) return;
    if (!client) return void vscode.window.showWarningMessage("Kestrel: the language server is not running.");
    if (this.pending) await this.reject();
    const doc = editor.document;
    const original = doc.getText();
    const id = `edit-${Date.now().toString(36)}`;
    const previewUri = vscode.Uri.parse(`${SCHEME}:/${encodeURIComponent(doc.fileName.split("/").pop() ?? "file")}?${id}`);
    let streamed = "";
    let regionRange: vscode.Range | undefined;
    let base = "";
    const render = () => {
      if (!regionRange) return;
      const start = doc.offsetAt(regionRange.start);
      const end = doc.offsetAt(regionRange.end);
      this.docs.set(previewUri.toString(), base.slice(0, start) + previewText(streamed) + base.slice(end));
      this.changed.fire(previewUri);
    };
    let frame: NodeJS.Timeout | undefined;
    const subs = [
      onNotification(client, "kestrel/editStarted", (p) => {
        if (p.id !== id) return;
        const r = p.edits[0].range;
        regionRange = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
        editor.setDecorations(this.region, [regionRange]);
        base = original;
        render();
        void vscode.commands.executeCommand("vscode.diff", doc.uri, previewUri, "Kestrel edit (Tab: accept · Esc: reject)", {
          viewColumn: vscode.ViewColumn.Beside, preserveFocus: true, preview: true,
        });
      }),
      onNotification(client, "kestrel/editDelta", (p) => {
        if (p.id !== id) return;
        streamed += p.delta;
        frame ??= setTimeout(() => ((frame = undefined), render()), 16); // one preview update per frame
      }),
    ];

    // The instruction box stays live: the first Enter starts the edit, later ones steer it.
    const box = vscode.window.createInputBox();
    box.title = "Kestrel: Edit";
    box.placeholder = editor.selection.isEmpty ? "Instruction for the enclosing function/block" : "Instruction for the selection";
    box.ignoreFocusOut = true;
    let answer: Promise<EditResult> | undefined;
    box.onDidAccept(async () => {
      const text = box.value.trim();
      if (!text) return;
      box.value = "";
      if (!answer) {
        box.placeholder = "Streaming… type to steer the edit (Enter), Esc to close this box";
        box.busy = true;
        const sel = editor.selection;
        answer = request(client, "kestrel/edit", {
          id, uri: doc.uri.toString(), instruction: text,
          range: { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } },
        });
        answer.then(() => box.hide(), () => box.hide());
      } else {
        const ack = await request(client, "kestrel/steer", { id, text });
        if (!ack.accepted) box.validationMessage = ack.error;
      }
    });
    box.show();
    await new Promise<void>((resolve) => box.onDidHide(() => resolve()));
    box.dispose();
    if (!answer) {
      subs.forEach((s) => s.dispose());
      return;
    }
    let result: EditResult;
    try {
      result = await answer;
    } catch (err) {
      result = { id, error: String((err as Error)?.message ?? err) };
    } finally {
      subs.forEach((s) => s.dispose());
      if (frame) clearTimeout(frame);
    }
    if (result.error || !result.edits) {
      editor.setDecorations(this.region, []);
      this.docs.delete(previewUri.toString());
      await this.closePreview(previewUri);
      return void vscode.window.showErrorMessage(`Kestrel: ${result.error ?? "the edit produced no change"}`);
    }
    await this.review(doc, result, previewUri);
  }

  /** Show `result` as a diff to accept (Tab) or reject (Esc); also used by next-edit suggestions. */
  async review(doc: vscode.TextDocument, result: EditResult, previewUri?: vscode.Uri): Promise<void> {
    if (!previewUri) {
      previewUri = vscode.Uri.parse(`${SCHEME}:/${encodeURIComponent(doc.fileName.split("/").pop() ?? "file")}?${Date.now()}`);
      this.docs.set(previewUri.toString(), applyEdits(doc.getText(), result.edits ?? []));
      await vscode.commands.executeCommand("vscode.diff", doc.uri, previewUri, "Kestrel next edit (Tab: accept · Esc: reject)", {
        viewColumn: vscode.ViewColumn.Beside, preserveFocus: true, preview: true,
      });
    }
    // Final preview: exactly what Accept will produce.
    this.docs.set(previewUri.toString(), applyEdits(doc.getText(), result.edits ?? []));
    this.changed.fire(previewUri);
    this.pending = { doc, result, previewUri };
    await this.setPending(true);
    void vscode.window.showInformationMessage("Kestrel: review the edit", "Accept", "Reject").then((choice) => {
      if (choice === "Accept") void this.accept();
      else if (choice === "Reject") void this.reject();
    });
  }

  private async closePreview(uri: vscode.Uri): Promise<void> {
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input as { modified?: vscode.Uri } | undefined;
        if (input?.modified?.toString() === uri.toString()) await vscode.window.tabGroups.close(tab);
      }
    }
  }

  private async finish(): Promise<void> {
    const p = this.pending;
    this.pending = undefined;
    await this.setPending(false);
    if (!p) return;
    for (const e of vscode.window.visibleTextEditors) if (e.document === p.doc) e.setDecorations(this.region, []);
    this.docs.delete(p.previewUri.toString());
    await this.closePreview(p.previewUri);
    await vscode.window.showTextDocument(p.doc);
  }

  async accept(): Promise<void> {
    const p = this.pending;
    if (!p) return;
    if (p.result.version !== undefined && p.doc.version !== p.result.version) {
      await this.finish();
      return void vscode.window.showWarningMessage("Kestrel: the file changed since the edit was computed; nothing was applied.");
    }
    const edit = new vscode.WorkspaceEdit();
    for (const e of p.result.edits ?? []) {
      edit.replace(p.doc.uri, new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
    }
    await vscode.workspace.applyEdit(edit); // one undo step
    await this.finish();
  }

  async reject(): Promise<void> {
    await this.finish(); // the document was never touched: nothing to restore
  }
}
