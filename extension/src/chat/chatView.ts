/**
 * The chat view: a webview in the Kestrel activity-bar container. It owns only what must live in
 * VS Code (webview, context gathering, clipboard/insert/apply, persistence); turns, steering and
 * stopping are the server's `kestrel/chat`, `kestrel/steer`, `kestrel/stopChat`.
 */
import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import type { Chip, Conversation, Effort, FromWebview, SteerMark, ToWebview, Turn, QueuedMessage } from "./protocol";
import { ConversationStore, appendTurn, newConversation, toMessages } from "./transcript";
import { contextBlock } from "./context";
import { isSecretPath } from "../secretFiles";

export interface ChatClient {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
  onNotification(method: string, handler: (params: any) => void): vscode.Disposable;
}

interface ChatResult {
  id: string;
  text: string;
  steers?: SteerMark[];
  error?: string;
  stopped?: boolean;
}

const PROPOSED_SCHEME = "kestrel-proposed";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "kestrel.chat";
  private view: vscode.WebviewView | undefined;
  private readonly store: ConversationStore;
  private conversation: Conversation;
  private turnId: string | undefined;
  /** Sent one by one after the running answer ends; kept (not sent) when the user stops it. */
  private queued: QueuedMessage[] = [];
  private readonly proposed = new Map<string, string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: () => ChatClient | undefined,
    /** Workspace trust (trust.ts): in an untrusted workspace nothing is sent before the user allows it. */
    private readonly mayUseCode: (trigger: "explicit") => Promise<boolean>,
  ) {
    this.store = new ConversationStore(context.workspaceState);
    const last = context.workspaceState.get<string>("kestrel.chat.current");
    this.conversation = (last && this.store.get(last)) || newConversation(Date.now(), this.newId());
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, {
        provideTextDocumentContent: (uri) => this.proposed.get(uri.toString()) ?? "",
      }),
    );
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, "extension", "media");
    const dist = vscode.Uri.joinPath(this.context.extensionUri, "extension", "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = this.html(view.webview, media, dist);
    this.disposables.push(view.webview.onDidReceiveMessage((m: FromWebview) => void this.onMessage(m)));
  }

  private newId(): string {
    return `chat-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  }

  private html(webview: vscode.Webview, media: vscode.Uri, dist: vscode.Uri): string {
    const nonce = randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "chat.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css"));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
    ].join("; ");
    return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}"><title>Kestrel Chat</title></head>
<body>
<header><select id="history" title="Conversations"></select><button id="new" title="New chat">+ New</button>
<select id="effort" title="Effort"><option value="low">low</option><option value="medium">medium</option><option value="high">high</option><option value="xhigh">xhigh</option></select></header>
<main id="transcript" aria-live="polite"></main>
<footer><div id="chips"></div><div id="queue"></div>
<textarea id="input" rows="3" placeholder="Ask Kestrel… (Enter to send)"></textarea>
<button id="stop" disabled title="Stop the answer">■ Stop</button></footer>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
  }

  private post(msg: ToWebview): void {
    void this.view?.webview.postMessage(msg);
  }

  private chips(): Chip[] {
    const editor = vscode.window.activeTextEditor;
    const file = editor ? vscode.workspace.asRelativePath(editor.document.uri) : undefined;
    const selection = editor && !editor.selection.isEmpty;
    return [
      { kind: "selection", label: selection ? `selection (${file})` : "selection", enabled: Boolean(selection) },
      { kind: "file", label: file ? `file ${file}` : "current file", enabled: Boolean(file) },
      { kind: "openFiles", label: "open files", enabled: false },
      { kind: "diagnostics", label: "diagnostics", enabled: false },
    ];
  }

  private pushState(): void {
    const effort = (vscode.workspace.getConfiguration("kestrel").get<string>("effort") ?? "low") as Effort;
    const history = this.store.all().map((c) => ({ id: c.id, title: c.title }));
    if (!history.some((h) => h.id === this.conversation.id)) history.unshift({ id: this.conversation.id, title: this.conversation.title });
    this.post({ type: "state", conversation: this.conversation, history, effort, chips: this.chips(), busy: Boolean(this.turnId), queued: this.queued });
  }

  /** "Explain with Kestrel" from a quick fix: ask in the chat panel, with the code attached. */
  async explain(data: { uri?: string; message?: string; startLine?: number; endLine?: number } | undefined): Promise<void> {
    await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    if (!data?.uri) return;
    const uri = vscode.Uri.parse(data.uri);
    if (isSecretPath(uri.path)) {
      void vscode.window.showWarningMessage("Kestrel: this file is excluded (a secret file): nothing was sent.");
      return;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    const first = data.startLine ?? 0;
    const last = data.endLine ?? first;
    const code = doc.getText(new vscode.Range(first, 0, last, doc.lineAt(Math.min(last, doc.lineCount - 1)).text.length));
    const question = `Explain this problem and how to fix it: ${data.message ?? ""}\n\n\`\`\`${doc.languageId}\n${code}\n\`\`\``;
    if (this.turnId) this.queued.push({ id: this.newId(), text: question, chips: [] });
    else await this.send(question, []);
  }

  async newChat(): Promise<void> {
    if (this.turnId) return;
    this.conversation = newConversation(Date.now(), this.newId());
    await this.context.workspaceState.update("kestrel.chat.current", this.conversation.id);
    this.pushState();
  }

  private async onMessage(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case "ready":
        return this.pushState();
      case "send":
        return this.send(msg.text, msg.chips);
      case "steer":
        return this.steer(msg.text);
      case "queue":
        this.queued.push({ id: this.newId(), text: msg.text, chips: msg.chips });
        return this.pushState();
      case "queueSend": {
        const item = this.queued.find((q) => q.id === msg.id);
        if (!item || this.turnId) return this.pushState();
        this.queued = this.queued.filter((q) => q !== item);
        return this.send(item.text, item.chips);
      }
      case "queueRemove":
        this.queued = this.queued.filter((q) => q.id !== msg.id);
        return this.pushState();
      case "stop":
        // The queue stays: the user decides what to send next (Send now / Edit / Remove).
        if (this.turnId) await this.client()?.sendRequest("kestrel/stopChat", { id: this.turnId });
        return;
      case "newChat":
        return this.newChat();
      case "openChat": {
        const found = this.store.get(msg.id);
        if (found && !this.turnId) {
          this.conversation = found;
          await this.context.workspaceState.update("kestrel.chat.current", found.id);
        }
        return this.pushState();
      }
      case "effort":
        await vscode.workspace.getConfiguration("kestrel").update("effort", msg.value, vscode.ConfigurationTarget.Global);
        return;
      case "copy":
        await vscode.env.clipboard.writeText(msg.code);
        return;
      case "insert":
        return this.insert(msg.code);
      case "apply":
        return this.apply(msg.code);
    }
  }

  private async send(text: string, kinds: Chip["kind"][]): Promise<void> {
    const client = this.client();
    if (!client) {
      this.post({ type: "notice", text: "The Kestrel server is not running (see the Kestrel output)." });
      return this.pushState();
    }
    // Asked before anything is recorded: a declined message is neither sent nor kept.
    if (!(await this.mayUseCode("explicit"))) {
      this.post({ type: "notice", text: "Nothing was sent: this workspace is not trusted." });
      return this.pushState();
    }
    const ctx = kinds.length > 0 ? contextBlock(kinds) : { text: "", labels: [] as string[] };
    const messages = toMessages(this.conversation, text, ctx.text);
    this.conversation = appendTurn(this.conversation, { role: "user", text, context: ctx.labels });
    await this.store.save(this.conversation);
    await this.context.workspaceState.update("kestrel.chat.current", this.conversation.id);
    const id = this.newId();
    this.turnId = id;
    // Deltas are batched per animation frame (16 ms) before crossing into the webview.
    let batch = "";
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      if (batch) this.post({ type: "delta", delta: batch });
      batch = "";
    };
    const subs = [
      client.onNotification("kestrel/chatDelta", (p: { id: string; delta: string }) => {
        if (p.id !== id) return;
        batch += p.delta;
        timer ??= setTimeout(flush, 16);
      }),
      client.onNotification("kestrel/chatSteered", (p: SteerMark & { id: string }) => {
        if (p.id !== id) return;
        flush();
        this.post({ type: "steered", mark: { at: p.at, text: p.text, mode: p.mode } });
      }),
      { dispose: () => { if (timer) clearTimeout(timer); flush(); } },
    ];
    let turn: Turn;
    try {
      const result = await client.sendRequest<ChatResult>("kestrel/chat", { id, messages });
      turn = { role: "assistant", text: result.text, steers: result.steers ?? [], error: result.error, stopped: result.stopped };
    } catch (err) {
      turn = { role: "assistant", text: "", error: String((err as Error)?.message ?? err) };
    } finally {
      subs.forEach((s) => s.dispose());
      this.turnId = undefined;
    }
    this.conversation = appendTurn(this.conversation, turn);
    await this.store.save(this.conversation);
    this.post({ type: "done", turn, queued: this.queued });
    this.pushState(); // refreshes the history list (the new conversation's title)
    // A stopped answer keeps the queue waiting; otherwise the next queued message goes, with its chips.
    const next = turn.stopped ? undefined : this.queued.shift();
    if (next !== undefined) {
      this.conversation = { ...this.conversation };
      this.pushState();
      await this.send(next.text, next.chips);
    }
  }

  private async steer(text: string): Promise<void> {
    const id = this.turnId;
    if (!id) return this.send(text, []);
    const ack = await this.client()?.sendRequest<{ accepted: boolean; mode?: string; error?: string }>("kestrel/steer", { id, text });
    if (ack && !ack.accepted) this.post({ type: "notice", text: ack.error ?? "the steer was not accepted" });
  }

  private async insert(code: string): Promise<void> {
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!editor) return void vscode.window.showInformationMessage("Kestrel: open a file to insert into.");
    await editor.edit((b) => b.replace(editor.selection, code));
  }

  /** Show the change as a diff first; only an explicit "Apply" touches the file (one undo step). */
  private async apply(code: string): Promise<void> {
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!editor) return void vscode.window.showInformationMessage("Kestrel: open a file to apply the code to.");
    const doc = editor.document;
    const range = editor.selection.isEmpty ? new vscode.Range(editor.selection.active, editor.selection.active) : editor.selection;
    const proposedText = doc.getText(new vscode.Range(doc.positionAt(0), range.start)) + code + doc.getText(new vscode.Range(range.end, doc.positionAt(doc.getText().length)));
    // Built from parts, never parsed from a string: a percent-encoded absolute path decodes to
    // `//home/...`, which VS Code rejects as a URI (Apply then did nothing on Linux and macOS).
    const proposedUri = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: doc.uri.path, query: String(Date.now()) });
    this.proposed.set(proposedUri.toString(), proposedText);
    const version = doc.version;
    await vscode.commands.executeCommand("vscode.diff", doc.uri, proposedUri, `Kestrel: review ${vscode.workspace.asRelativePath(doc.uri)}`);
    const choice = await vscode.window.showInformationMessage("Apply Kestrel's change to this file?", "Apply", "Reject");
    this.proposed.delete(proposedUri.toString());
    await closeReview(proposedUri);
    if (choice !== "Apply") return;
    if (doc.version !== version) return void vscode.window.showWarningMessage("Kestrel: the file changed meanwhile; nothing was applied.");
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, range, code);
    await vscode.workspace.applyEdit(edit);
  }
}

/** Close the review once it is decided: its proposed side no longer exists. */
async function closeReview(proposed: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter(
    (tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === proposed.toString(),
  );
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}
