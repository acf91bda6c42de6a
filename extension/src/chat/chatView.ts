/**
 * The chat view: a webview in the Kestrel activity-bar container. It owns only what must live in
 * VS Code; turns, steering and stopping are the server's `kestrel/chat`, `kestrel/steer`,
 * `kestrel/stopChat`. Its parts:
 *   html.ts        the page skeleton and its CSP
 *   context.ts     the chips and the context they attach (one reading of the editor for both)
 *   transcript.ts  model messages, titles, the conversation store, the recorder of a streaming answer
 *   stream.ts      deltas to the webview (the first at once, the rest per frame)
 *   review.ts      what the code-block buttons do (apply, insert, apply all, run), with links.ts
 *                  (where a path leads through links) and commandTerminal.ts (an idle terminal for Run)
 *   sources.ts     codebase answers: which files the webview may open (the sources the server named)
 *   modelInfo.ts   the header's provider/model and whether effort applies
 *   mentions.ts    `#file:…`/`#sym:…` mentions: markers, URIs, the trigger (shared with the webview);
 *                  workspaceFiles.ts (the cached file list), mentionPicker.ts (the picker's rows),
 *                  mentionContext.ts (what they attach, read at send), gitDiff.ts (`#diff`),
 *                  terminalOutput.ts (`#terminal`)
 */
import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import type { AppliedRecord, Chip, CodeBlock, Conversation, Effort, FromWebview, Mention, ModelInfo, QueuedMessage, SteerMark, ToWebview, Turn } from "./protocol";
import { AnswerRecorder, ConversationStore, appendTurn, newConversation, toMessages } from "./transcript";
import { contextFor, currentChips, watchAttachables } from "./context";
import { chatPage } from "./html";
import { BlockActions } from "./review";
import { DeltaBatcher } from "./stream";
import { modelInfo, sameModelInfo, type StatusWithEffort } from "./modelInfo";
import { knownSourceUris, openSourceTarget, type OpenTarget } from "./sources";
import { WorkspaceFiles } from "./workspaceFiles";
import { MentionPicker } from "./mentionPicker";
import { TerminalHistory } from "./terminalOutput";
import { readMentions } from "./mentionContext";
import { parseMarkers } from "./mentions";
import { isSecretPath } from "../secretFiles";
import { onNotification, request, type ChatMessage, type SourceRef } from "../protocol";
import { CheckpointStore, appliedRecord, withApplied } from "./checkpoints";
import { isAgentEdit, keptOf, mergeOutcomes, plannedFiles } from "./agentApply";
import { currentText, type ApplyOutcome } from "./review";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditRequest, ApplyWorkspaceEditResult } from "vscode-languageclient";
import { agentMessages, asChatResult, stepLines, stepSources } from "./agent";
import { config } from "../config";
import { agentAllowedCommands } from "../settings";

/** A workspace-relative path as a `file:` URI in the first workspace folder that has it (as the agent read it). */
function workspaceUri(rel: string): string | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const folder = folders.length === 1 ? folders[0] : folders.find((f) => rel.startsWith(`${f.name}/`));
  if (!folder) return undefined;
  const inside = folders.length === 1 ? rel : rel.slice(folder.name.length + 1);
  return vscode.Uri.joinPath(folder.uri, ...inside.split("/")).toString();
}

export interface ChatClient {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
  onNotification(method: string, handler: (params: any) => void): vscode.Disposable;
}

/** Where the server's `kestrel/status` arrives (the status bar). */
export interface ServerStatus {
  readonly status: StatusWithEffort | undefined;
  readonly onDidChangeStatus: vscode.Event<StatusWithEffort | undefined>;
}

/** The answer streaming now, and the workspace code its prompt holds once the server said. */
interface RunningAnswer {
  id: string;
  recorder: AnswerRecorder;
  sources?: SourceRef[];
  searchMs?: number;
  /** The agent's changes the user kept (and left out) so far in this answer (agentApply.ts). */
  agentApplied?: ApplyOutcome;
}

const CURRENT_KEY = "kestrel.chat.current";
const NO_CONTEXT = { text: "", labels: [] as string[], mentions: [] as Mention[] };
/** Context key: an answer is streaming (the Stop Chat Answer keybinding applies). */
const BUSY_CONTEXT = "kestrel.chatBusy";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "kestrel.chat";
  private view: vscode.WebviewView | undefined;
  /** The webview said "ready": it handles messages (a focus request waits for this). */
  private ready = false;
  private focusWanted = false;
  private readonly store: ConversationStore;
  private readonly checkpoints: CheckpointStore;
  private conversation: Conversation;
  /** The answer streaming now. */
  private running: RunningAnswer | undefined;
  /** A send is between Enter and its request (trust question, reading the context). */
  private starting = false;
  /** Sent one by one after the running answer ends; kept (not sent) when the user stops it. */
  private queued: QueuedMessage[] = [];
  /** The messages of the last request, so Retry resends exactly them. */
  private lastRequest: { conversationId: string; userTurn: number; messages: ChatMessage[] } | undefined;
  private model: ModelInfo;
  private readonly actions = new BlockActions();
  /** The workspace's files for the mention picker (listed when the panel is first ready). */
  private readonly files = new WorkspaceFiles();
  /** What the terminals ran, for `#terminal` (from activation: a command run before the first `#` counts). */
  private readonly terminal = new TerminalHistory();
  private readonly picker = new MentionPicker(this.files, (msg) => this.post(msg), undefined, this.terminal);
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: () => ChatClient | undefined,
    /** Workspace trust (trust.ts): in an untrusted workspace nothing is sent before the user allows it. */
    private readonly mayUseCode: (trigger: "explicit") => Promise<boolean>,
    serverStatus?: ServerStatus,
  ) {
    this.store = new ConversationStore(context.workspaceState);
    this.checkpoints = new CheckpointStore(context.workspaceState);
    const last = context.workspaceState.get<string>(CURRENT_KEY);
    this.conversation = (last && this.store.get(last)) || newConversation(Date.now(), this.newId());
    this.model = modelInfo(serverStatus?.status);
    this.disposables.push(
      this.actions,
      this.files,
      this.terminal,
      this.picker,
      watchAttachables(() => this.post({ type: "chips", chips: currentChips() })),
    );
    if (serverStatus) {
      this.disposables.push(
        serverStatus.onDidChangeStatus((status) => {
          const next = modelInfo(status);
          if (sameModelInfo(next, this.model)) return;
          this.model = next;
          this.post({ type: "model", model: next });
        }),
      );
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }

  get busy(): boolean {
    return Boolean(this.running) || this.starting;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.context.extensionUri, "extension", "media");
    const dist = vscode.Uri.joinPath(this.context.extensionUri, "extension", "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = chatPage({
      cspSource: view.webview.cspSource,
      script: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, "chat.js")).toString(),
      style: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
      nonce: randomBytes(16).toString("base64"),
    });
    this.disposables.push(view.webview.onDidReceiveMessage((m: FromWebview) => void this.onMessage(m)));
  }

  private newId(): string {
    return `chat-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  }

  private post(msg: ToWebview): void {
    try {
      void this.view?.webview.postMessage(msg)?.then(undefined, () => undefined);
    } catch {
      // The view was closed (disposed): it gets the whole state when it is resolved again.
    }
  }

  private pushState(): void {
    const effort = (vscode.workspace.getConfiguration("kestrel").get<string>("effort") ?? "low") as Effort;
    this.post({
      type: "state",
      conversation: this.conversation,
      history: this.store.history(this.conversation),
      effort,
      chips: currentChips(),
      busy: this.busy,
      queued: this.queued,
      model: this.model,
    });
  }

  private setStarting(value: boolean): void {
    this.starting = value;
    this.busyChanged();
  }

  /** The last busy state told to VS Code (the context key is set only when it changes). */
  private busyShown = false;

  private busyChanged(): void {
    if (this.busy === this.busyShown) return;
    this.busyShown = this.busy;
    void vscode.commands.executeCommand("setContext", BUSY_CONTEXT, this.busy);
  }

  /** "Open Chat" (Ctrl+Alt+I): show the view and put the caret in its input (once the webview is up). */
  async focus(): Promise<void> {
    this.focusWanted = true;
    await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    if (this.ready) {
      this.focusWanted = false;
      this.post({ type: "focus" });
    }
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
    if (this.busy) {
      this.queued.push({ id: this.newId(), text: question, chips: [] });
      this.pushState();
    } else await this.send(question, [], true);
  }

  async newChat(): Promise<void> {
    if (this.busy) return;
    this.conversation = newConversation(Date.now(), this.newId());
    this.pushState();
    await this.context.workspaceState.update(CURRENT_KEY, this.conversation.id);
  }

  /** Stop the streaming answer; what arrived is saved at once (marked stopped), before the server answers. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    void running.recorder.stop();
    // The queue stays: the user decides what to send next (Send now / Edit / Remove).
    const client = this.client();
    if (client) await request(client, "kestrel/stopChat", { id: running.id }).catch(() => undefined);
  }

  private async onMessage(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case "ready":
        return this.onReady();
      case "send":
        if (this.busy) {
          this.queued.push({ id: this.newId(), text: msg.text, chips: msg.chips, mentions: msg.mentions });
          return this.pushState();
        }
        return this.send(msg.text, msg.chips, false, msg.mentions);
      case "steer":
        return this.steer(msg.text);
      case "queue":
        this.queued.push({ id: this.newId(), text: msg.text, chips: msg.chips, mentions: msg.mentions });
        return this.pushState();
      case "queueSend": {
        const item = this.queued.find((q) => q.id === msg.id);
        if (!item || this.busy) return this.pushState();
        this.queued = this.queued.filter((q) => q !== item);
        return this.send(item.text, item.chips, true, item.mentions);
      }
      case "mentionQuery":
        return this.picker.query(msg.id, String(msg.query ?? ""));
      case "queueRemove":
        this.queued = this.queued.filter((q) => q.id !== msg.id);
        return this.pushState();
      case "stop":
        return this.stop();
      case "retry":
        return this.retry();
      case "newChat":
        return this.newChat();
      case "openChat":
        return this.openChat(msg.id);
      case "renameChat":
        return this.renameChat(msg.id);
      case "deleteChat":
        return this.deleteChat(msg.id);
      case "effort":
        await vscode.workspace.getConfiguration("kestrel").update("effort", msg.value, vscode.ConfigurationTarget.Global);
        return;
      case "copy":
        await vscode.env.clipboard.writeText(msg.code);
        return;
      case "insert":
        return this.actions.insert(msg.block);
      case "apply":
        return this.actions.apply(msg.block);
      case "applyAll":
        return this.applyAll(msg.blocks as CodeBlock[], msg.turn);
      case "restore":
        return this.restore(msg.turn);
      case "run":
        return this.actions.run(msg.block);
      case "openSource":
        return this.openSource(msg);
      case "ping":
        return this.post({ type: "pong", sent: msg.sent });
    }
  }

  /** Apply all, then the answer records what was applied and left out, with a checkpoint to restore. */
  private async applyAll(blocks: CodeBlock[], index: number): Promise<void> {
    const outcome = await this.actions.applyAll(blocks);
    if (!outcome) return;
    const updated = withApplied(this.conversation, index, await this.recordApplied(outcome));
    if (!updated) return;
    this.conversation = updated;
    await this.store.save(updated);
    this.pushState();
  }

  private async recordApplied(outcome: ApplyOutcome, by?: "agent"): Promise<AppliedRecord> {
    const record = appliedRecord(outcome, outcome.applied.length ? await this.checkpoints.save(outcome.applied) : undefined);
    return by ? { ...record, by } : record;
  }

  /**
   * The language client's `workspace.handleApplyEdit` middleware: the agent's proposals (annotated
   * `kestrel-agent`) go through as any edit does (the Refactor Preview asks), then what the user kept
   * is read back and kept for the running answer's record; any other edit passes untouched.
   */
  readonly handleApplyEdit = async (params: ApplyWorkspaceEditParams, next: ApplyWorkspaceEditRequest.HandlerSignature): Promise<ApplyWorkspaceEditResult> => {
    const token = new vscode.CancellationTokenSource().token;
    if (!isAgentEdit(params)) return (await next(params, token)) as ApplyWorkspaceEditResult;
    const planned = await plannedFiles(params.edit, (uri) => currentText(vscode.Uri.parse(uri)));
    const result = (await next(params, token)) as ApplyWorkspaceEditResult;
    const running = this.running;
    if (!result.applied || !running) return result;
    const now = new Map<string, string | undefined>();
    for (const f of planned) now.set(f.uri, await currentText(vscode.Uri.parse(f.uri)));
    const kept = keptOf(planned, (uri) => now.get(uri), (uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri), false));
    running.agentApplied = mergeOutcomes(running.agentApplied, kept);
    return result;
  };

  /** Restore: the files of the answer's Apply all back as they were before it (after a confirmation). */
  private async restore(index: number): Promise<void> {
    const applied = this.conversation.turns[index]?.applied;
    const files = applied?.checkpoint ? this.checkpoints.get(applied.checkpoint) : undefined;
    if (!applied || applied.restored) return;
    if (!files) {
      void vscode.window.showWarningMessage("Kestrel: this Apply all has no checkpoint to restore (it was too large to keep); use Undo in each file.");
      return;
    }
    if (!(await this.actions.restore(files, applied.by === "agent" ? "the agent's changes" : "Apply all"))) return;
    await this.checkpoints.drop(applied.checkpoint!);
    const updated = withApplied(this.conversation, index, { ...applied, checkpoint: undefined, restored: true });
    if (!updated) return;
    this.conversation = updated;
    await this.store.save(updated);
    this.pushState();
  }

  private onReady(): void {
    this.ready = true;
    this.pushState();
    void this.files.ready(); // the mention picker's file list, before the first `#`
    // The webview was (re)loaded mid-answer: it gets what arrived so far.
    if (this.running?.sources) this.post({ type: "sources", sources: this.running.sources, searchMs: this.running.searchMs });
    if (this.running?.recorder.steps.length) this.post({ type: "agentStep", lines: this.running.recorder.steps });
    if (this.running?.recorder.received) this.post({ type: "delta", delta: this.running.recorder.received });
    if (this.focusWanted) {
      this.focusWanted = false;
      this.post({ type: "focus" });
    }
  }

  /**
   * Ask: trust check, context, then the request at once. Saving the question runs alongside the
   * request (never before it): the panel adds as little as possible to the time to first token.
   * `fromHost`: the webview did not show the question itself (queue, explain): it gets the new state.
   * `mentions`: what was picked in the input; they and any typed `#file:…` are read now (mentionContext.ts).
   */
  private async send(text: string, kinds: Chip["kind"][], fromHost: boolean, mentions: readonly Mention[] = []): Promise<void> {
    const client = this.client();
    if (!client) {
      this.post({ type: "notice", text: "The Kestrel server is not running (see the Kestrel output)." });
      return this.pushState();
    }
    this.setStarting(true);
    try {
      // Asked before anything is recorded: a declined message is neither sent nor kept.
      if (!(await this.mayUseCode("explicit"))) {
        this.post({ type: "notice", text: "Nothing was sent: this workspace is not trusted." });
        return this.pushState();
      }
      // Nothing to read: no await, the request goes at once.
      const ctx = kinds.length || mentions.length || parseMarkers(text).length ? await this.contextWith(text, kinds, mentions) : NO_CONTEXT;
      const messages = toMessages(this.conversation, text, ctx.text);
      const turn: Turn = { role: "user", text, context: ctx.labels, chips: kinds, at: Date.now() };
      if (ctx.mentions.length) turn.mentions = ctx.mentions;
      this.conversation = appendTurn(this.conversation, turn);
      await this.ask(client, messages, fromHost);
    } finally {
      if (this.starting) this.setStarting(false);
    }
  }

  /**
   * Retry a failed (or stopped, or interrupted) answer: the last question again with the same
   * context — the very same messages when they are still in memory, else rebuilt from its chips —
   * in place of that answer. One request per click; nothing while an answer runs.
   */
  private async retry(): Promise<void> {
    if (this.busy) return;
    const turns = this.conversation.turns;
    const userTurn = turns[turns.length - 1]?.role === "assistant" ? turns.length - 2 : turns.length - 1;
    const question = turns[userTurn];
    if (!question || question.role !== "user") return;
    const client = this.client();
    if (!client) {
      this.post({ type: "notice", text: "The Kestrel server is not running (see the Kestrel output)." });
      return;
    }
    this.setStarting(true);
    try {
      if (!(await this.mayUseCode("explicit"))) {
        this.post({ type: "notice", text: "Nothing was sent: this workspace is not trusted." });
        return;
      }
      const earlier = { ...this.conversation, turns: turns.slice(0, userTurn) };
      const last = this.lastRequest;
      let messages: ChatMessage[];
      let asked = question;
      if (last && last.conversationId === this.conversation.id && last.userTurn === userTurn) {
        messages = last.messages;
      } else {
        const ctx = await this.contextWith(question.text, question.chips ?? [], question.mentions ?? []);
        messages = toMessages(earlier, question.text, ctx.text);
        asked = { ...question, context: ctx.labels };
        if (ctx.mentions.length) asked.mentions = ctx.mentions;
        else delete asked.mentions;
      }
      this.conversation = { ...this.conversation, turns: [...earlier.turns, asked] };
      await this.ask(client, messages, true);
    } finally {
      if (this.starting) this.setStarting(false);
    }
  }

  /**
   * The context of a message: the chips' (context.ts), then its mentions, read now (after the trust
   * check: the callers ask first). What a mention could not attach is said in a notice.
   */
  private async contextWith(text: string, kinds: readonly Chip["kind"][], mentions: readonly Mention[]): Promise<{ text: string; labels: string[]; mentions: Mention[] }> {
    const chips = kinds.length ? await contextFor(kinds) : { ...NO_CONTEXT, files: [] as string[] };
    if (!mentions.length && !parseMarkers(text).length) return { ...chips, mentions: [] };
    const read = await readMentions(text, Array.isArray(mentions) ? mentions : [], { files: this.files, offered: this.picker.offered, terminal: this.terminal }, chips.files);
    if (read.refused.length) this.post({ type: "notice", text: `Not attached: ${read.refused.join("; ")}.` });
    return { text: [chips.text, read.text].filter(Boolean).join("\n\n"), labels: [...chips.labels, ...read.labels], mentions: read.mentions };
  }

  /** One `kestrel/chat` request for the conversation's last (user) turn, streamed, recorded, then the queue. */
  private async ask(client: ChatClient, messages: ChatMessage[], showQuestion: boolean): Promise<void> {
    const id = this.newId();
    const recorder = new AnswerRecorder(this.store, () => this.conversation);
    const deltas = new DeltaBatcher((delta) => this.post({ type: "delta", delta }));
    const running: RunningAnswer = { id, recorder };
    this.running = running;
    this.starting = false;
    this.busyChanged();
    this.lastRequest = { conversationId: this.conversation.id, userTurn: this.conversation.turns.length - 1, messages };
    const subs: vscode.Disposable[] = [
      onNotification(client, "kestrel/chatDelta", (p) => {
        if (p.id !== id) return;
        recorder.delta(p.delta);
        deltas.push(p.delta);
      }),
      onNotification(client, "kestrel/chatSteered", (p) => {
        if (p.id !== id) return;
        const mark: SteerMark = { at: p.at, text: p.text, mode: p.mode };
        deltas.flush();
        recorder.steered(mark);
        this.post({ type: "steered", mark });
      }),
      // Codebase questions: the code the server found, shown above the answer before its first token.
      onNotification(client, "kestrel/chatSources", (p) => {
        if (p.id !== id || !Array.isArray(p.sources)) return;
        running.sources = p.sources;
        running.searchMs = p.searchMs;
        recorder.sources(p.sources);
        deltas.flush();
        this.post({ type: "sources", sources: p.sources, searchMs: p.searchMs });
      }),
    ];
    // `#agent` in the question: the agent answers (agent.ts); the files it reads are the sources.
    const forAgent = agentMessages(messages);
    const read: SourceRef[] = [];
    if (forAgent) {
      subs.push(onNotification(client, "kestrel/agentStep", (p) => {
        if (p.id !== id) return;
        // The step's streamed text held its tool calls: it goes, and a line per call says what was done.
        deltas.flush();
        const lines = stepLines(p);
        recorder.step(lines);
        this.post({ type: "agentStep", lines });
        const found = stepSources(p, (rel) => workspaceUri(rel));
        if (!found.length) return;
        read.push(...found.filter((f) => !read.some((r) => r.uri === f.uri && r.range.start.line === f.range.start.line)));
        running.sources = [...read];
        recorder.sources(running.sources);
        this.post({ type: "sources", sources: running.sources, searchMs: 0 });
      }));
      // Changes proposed: VS Code's Refactor Preview waits for the user; the turn says so.
      subs.push(onNotification(client, "kestrel/agentReview", (p) => {
        if (p.id !== id || !Array.isArray(p.files)) return;
        deltas.flush();
        const command = typeof p.command === "string" ? p.command : undefined;
        this.post({ type: "agentReview", files: p.files, command, running: command !== undefined && p.running === true });
      }));
    }
    const answer = forAgent
      // Writes (each proposed in VS Code's Refactor Preview) and commands (each asked in a modal, unless the
      // user's own settings allow it) only in a workspace the user trusts.
      ? request(client, "kestrel/agent", {
          id,
          messages: forAgent,
          allowWrites: vscode.workspace.isTrusted,
          allowCommands: vscode.workspace.isTrusted,
          allowedCommands: vscode.workspace.isTrusted ? agentAllowedCommands(config()) : [],
        }).then((r) => asChatResult(r, read))
      : request(client, "kestrel/chat", { id, messages });
    // Saved right after the request is on its way (a timer runs after the promise jobs that write it).
    setTimeout(() => {
      void recorder.begin();
      void this.context.workspaceState.update(CURRENT_KEY, this.conversation.id);
    }, 0);
    if (showQuestion) this.pushState();
    let turn: Turn;
    try {
      const result = await answer;
      turn = { role: "assistant", text: result.text, steers: result.steers ?? [] };
      if (result.error) turn.error = result.error;
      if (result.stopped) turn.stopped = true;
      const sources = result.sources?.length ? result.sources : running.sources;
      if (sources?.length) turn.sources = sources;
      if (result.citations?.length) turn.citations = result.citations;
      if (result.inventedCitations?.length) turn.inventedCitations = result.inventedCitations;
      if (result.inventedPaths?.length) turn.inventedPaths = result.inventedPaths;
      if (result.trimmed) turn.trimmed = result.trimmed;
      if (result.hitTokenLimit) turn.hitTokenLimit = true;
      if (recorder.steps.length) turn.steps = recorder.steps;
    } catch (err) {
      turn = { role: "assistant", text: recorder.received, error: String((err as Error)?.message ?? err) };
      if (running.sources?.length) turn.sources = running.sources;
      if (recorder.steps.length) turn.steps = recorder.steps;
    } finally {
      subs.forEach((s) => s.dispose());
      deltas.flush();
      recorder.finish();
    }
    if (running.agentApplied) turn.applied = await this.recordApplied(running.agentApplied, "agent");
    turn.at = Date.now();
    if (recorder.wasStopped && !turn.error) turn.stopped = true;
    this.conversation = appendTurn(this.conversation, turn);
    this.running = undefined;
    this.busyChanged();
    await this.store.save(this.conversation);
    this.post({ type: "done", turn, queued: this.queued });
    this.pushState(); // refreshes the history list (the new conversation's title)
    // A stopped answer keeps the queue waiting; otherwise the next queued message goes, with its chips.
    const next = turn.stopped ? undefined : this.queued.shift();
    if (next) await this.send(next.text, next.chips, true, next.mentions);
  }

  /**
   * A source or citation clicked in the webview: the file opens with the caret at the span's first
   * line and the span in view. Only `file:` URIs the server sent as a source or citation of this
   * conversation (or of the answer running now) are opened; anything else is ignored.
   */
  private async openSource(msg: unknown): Promise<void> {
    const target = openSourceTarget(msg, knownSourceUris(this.conversation.turns, this.running?.sources));
    if (!target) return;
    const uri = vscode.Uri.parse(target.uri, true);
    if (uri.scheme !== "file") return;
    try {
      await showSource(uri, target);
    } catch (err) {
      void vscode.window.showWarningMessage(`Kestrel: could not open ${uri.fsPath}: ${String((err as Error)?.message ?? err)}`);
    }
  }

  private async steer(text: string): Promise<void> {
    const id = this.running?.id;
    if (!id) return this.send(text, [], true);
    const client = this.client();
    const ack = client && (await request(client, "kestrel/steer", { id, text }));
    if (ack && !ack.accepted) this.post({ type: "notice", text: ack.error ?? "the steer was not accepted" });
  }

  private async openChat(id: string): Promise<void> {
    const found = this.store.get(id);
    if (found && !this.busy) {
      this.conversation = found;
      await this.context.workspaceState.update(CURRENT_KEY, found.id);
    }
    this.pushState();
  }

  private find(id: string): Conversation | undefined {
    return id === this.conversation.id ? this.conversation : this.store.get(id);
  }

  /** Rename from the history list: an input box prefilled with the title; Escape keeps it. */
  private async renameChat(id: string): Promise<void> {
    const conv = this.find(id);
    if (!conv) return;
    const title = await vscode.window.showInputBox({
      title: "Rename the conversation",
      value: conv.title,
      valueSelection: [0, conv.title.length],
      validateInput: (v) => (v.trim() ? undefined : "A title cannot be empty."),
    });
    if (title === undefined || !title.trim()) return;
    if (id === this.conversation.id) {
      this.conversation = { ...this.conversation, title: title.trim() };
      // A new chat without turns is saved once it has a question (with this title).
      if (this.store.get(id)) await this.store.rename(id, title.trim());
    } else await this.store.rename(id, title.trim());
    this.pushState();
  }

  /** Delete from the history list, after a modal confirmation; deleting the open one opens a new chat. */
  private async deleteChat(id: string): Promise<void> {
    const conv = this.find(id);
    if (!conv) return;
    const current = id === this.conversation.id;
    if (current && this.busy) {
      this.post({ type: "notice", text: "Stop the answer before deleting this conversation." });
      return;
    }
    const choice = await vscode.window.showWarningMessage(`Delete the conversation “${conv.title}”?`, { modal: true }, "Delete");
    if (choice !== "Delete") return;
    await this.store.remove(id);
    if (current && !this.busy) await this.newChat();
    else this.pushState();
  }
}

/** Opens `uri` with the caret at the start of line `startLine` and lines startLine..endLine revealed. */
async function showSource(uri: vscode.Uri, target: OpenTarget): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const last = Math.max(0, doc.lineCount - 1);
  const start = new vscode.Position(Math.min(target.startLine, last), 0);
  const end = new vscode.Position(Math.min(Math.max(target.endLine, target.startLine), last), 0);
  const editor = await vscode.window.showTextDocument(doc, { selection: new vscode.Range(start, start) });
  editor?.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}
