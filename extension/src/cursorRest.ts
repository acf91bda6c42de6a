/**
 * Where the cursor came to rest (`kestrel/cursor`): a model on this machine then reads the code there
 * before the first keystroke, and the first suggestion comes that much sooner (the server decides
 * whether to, `completion.readAhead`; it never asks a remote model, nor reads again where it was just
 * asked for a suggestion). Sent once the cursor has stayed put for REST_MS in the active editor with
 * nothing selected (an edit restarts the wait), for languages completions are on for, and only where
 * code may be sent without asking (a trusted workspace, or one allowed this session): a cursor move
 * never asks.
 */
import * as vscode from "vscode";
import type { CursorParams } from "./protocol";
import { shouldComplete, type ClientGates } from "./settings";

export const REST_MS = 250;

export interface CursorRestDeps {
  send: (params: CursorParams) => void;
  gates: () => ClientGates;
  /** Code may go to the model without a question now. */
  allowed: () => boolean;
  readAhead: () => boolean;
}

export class CursorRest implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly deps: CursorRestDeps) {
    this.disposables = [
      vscode.window.onDidChangeTextEditorSelection((e) => this.moved(e.textEditor)),
      vscode.window.onDidChangeActiveTextEditor((editor) => editor && this.moved(editor)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && e.document === vscode.window.activeTextEditor?.document) this.stop();
      }),
    ];
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private moved(editor: vscode.TextEditor): void {
    this.stop();
    const { document, selection } = editor;
    if (!selection.isEmpty || editor !== vscode.window.activeTextEditor) return;
    const version = document.version;
    const position = selection.active;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (vscode.window.activeTextEditor !== editor || document.version !== version || !editor.selection.isEmpty) return;
      const now = editor.selection.active;
      if (now.line !== position.line || now.character !== position.character) return;
      if (!this.deps.readAhead() || !shouldComplete(this.deps.gates(), document.languageId) || !this.deps.allowed()) return;
      this.deps.send({ uri: document.uri.toString(), position: { line: position.line, character: position.character } });
    }, REST_MS);
  }

  dispose(): void {
    this.stop();
    this.disposables.forEach((d) => d.dispose());
  }
}
