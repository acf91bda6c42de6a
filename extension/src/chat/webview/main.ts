/**
 * The chat webview: wires the page (page.ts) to the host's messages (protocol.ts) and the user's
 * keys and clicks. Rendering lives in the modules it imports: markdown.ts (Markdown, safely and
 * block by block), stream.ts (the streaming answer), transcriptView.ts (the turns), scroll*.ts
 * (scroll lock), chips.ts, mentionPicker.ts (`#`/`@` mentions), history.ts, queue.ts, recall.ts, keys.ts,
 * announcer.ts.
 */
import type { Chip, Conversation, Effort, FromWebview, HistoryItem, ModelInfo, QueuedMessage, ToWebview, Turn } from "../protocol";
import { Announcer } from "./announcer";
import { ChipChoices, attachedKinds, contextLabels, renderChips } from "./chips";
import { applyAllBlocks, blocksIn, codeButtonClicked } from "./codeActions";
import { filterHistory, renderHistory } from "./history";
import { inputKeyAction, isNewChatKey } from "./keys";
import { MentionPicker } from "./mentionPicker";
import { mentionLabel } from "../mentions";
import { createMarkdown } from "./markdown";
import { renderQueue } from "./queue";
import { PromptRecall } from "./recall";
import { ScrollView } from "./scrollView";
import { openSourceMessage } from "./sourceLinks";
import { TranscriptView } from "./transcriptView";

declare function acquireVsCodeApi(): { postMessage(msg: FromWebview): void };
const vscode = acquireVsCodeApi();
const post = (msg: FromWebview) => vscode.postMessage(msg);

function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`Kestrel chat page: #${id} is missing (page.ts and main.ts disagree)`);
  return el as T;
}

const ui = {
  title: $("chat-title"),
  historyToggle: $<HTMLButtonElement>("history-toggle"),
  newChat: $<HTMLButtonElement>("new"),
  model: $("model"),
  effort: $<HTMLSelectElement>("effort"),
  effortLabel: $("effort-label"),
  effortNote: $("effort-note"),
  historyPanel: $("history-panel"),
  historySearch: $<HTMLInputElement>("history-search"),
  historyList: $("history-list"),
  historyNone: $("history-none"),
  transcript: $("transcript"),
  empty: $("empty"),
  jump: $<HTMLButtonElement>("jump"),
  announcer: $("announcer"),
  queue: $("queue"),
  chips: $("chips"),
  mentionList: $("mention-list"),
  mentions: $("mentions"),
  input: $<HTMLTextAreaElement>("input"),
  hint: $("hint"),
  send: $<HTMLButtonElement>("send"),
  stop: $<HTMLButtonElement>("stop"),
};

const md = createMarkdown();
const announcer = new Announcer(ui.announcer);
const scroll = new ScrollView(ui.transcript, ui.jump, () => ui.input.focus());
const view = new TranscriptView(ui.transcript, ui.empty, md, {
  announce: (text) => announcer.say(text),
  rendered: () => scroll.contentChanged(),
});
const choices = new ChipChoices();
const picker = new MentionPicker(ui.input, ui.mentionList, ui.mentions, {
  post,
  announce: (text) => announcer.say(text),
  changed: () => fitInput(),
});
const recall = new PromptRecall(() => (conversation?.turns ?? []).filter((t) => t.role === "user").map((t) => t.text));

let conversation: Conversation | undefined;
let history: HistoryItem[] = [];
let hostChips: Chip[] = [];
let chips: Chip[] = [];
let queued: QueuedMessage[] = [];
let busy = false;
/** Enter (or Retry) was acted on here and the host has not answered yet: a state message from
 * before it saw the request must not take the question and the thinking indicator away. */
let requestPending = false;

function setBusy(value: boolean): void {
  busy = value;
  const focusLost = document.activeElement === (value ? ui.send : ui.stop);
  ui.send.hidden = value;
  ui.stop.hidden = !value;
  if (focusLost) ui.input.focus(); // the clicked button disappeared
  ui.hint.textContent = value ? "Enter steers the answer · Tab queues · Esc stops" : "Enter to send · Shift+Enter for a new line";
  ui.input.placeholder = value ? "Steer the answer (Enter) or queue a message (Tab)" : "Ask Kestrel about your code";
  document.body.classList.toggle("busy", value);
}

function showChips(): void {
  chips = choices.apply(hostChips);
  renderChips(ui.chips, chips, (chip) => {
    choices.choose(chip.kind, !chip.enabled);
    showChips();
  });
}

function showModel(model: ModelInfo): void {
  const name = [model.provider, model.model].filter(Boolean).join(" · ");
  ui.model.textContent = name || "model not known yet";
  ui.effort.disabled = !model.effortSupported;
  const why = model.effortSupported ? "Reasoning effort for chat and quick fixes" : model.effortNote || "This model has no reasoning effort setting";
  ui.effort.title = why;
  ui.effortLabel.title = why; // a disabled control shows no tooltip in every browser; its label does
  ui.effortNote.textContent = model.effortSupported ? "" : why;
}

function showQueue(): void {
  renderQueue(ui.queue, queued, busy, {
    post,
    edit: (text) => {
      ui.input.value = text;
      fitInput();
      ui.input.focus();
      picker.update();
    },
    // Gone from the view at once: the host's updated queue comes a round trip later, and a message the
    // user took out must not look queued (or be re-rendered from a stale copy) meanwhile.
    remove: (id) => {
      queued = queued.filter((q) => q.id !== id);
      post({ type: "queueRemove", id });
      showQueue();
    },
  });
}

// ---- History panel ----

const historyOpen = () => !ui.historyPanel.hidden;

function showHistory(): void {
  const shown = renderHistory(ui.historyList, history, conversation?.id, ui.historySearch.value, {
    open: (id) => {
      post({ type: "openChat", id });
      toggleHistory(false);
      ui.input.focus();
    },
    rename: (id) => post({ type: "renameChat", id }),
    remove: (id) => post({ type: "deleteChat", id }),
  });
  ui.historyNone.hidden = shown > 0;
}

function toggleHistory(open = !historyOpen()): void {
  const hadFocus = ui.historyPanel.contains(document.activeElement);
  ui.historyPanel.hidden = !open;
  ui.historyToggle.setAttribute("aria-expanded", String(open));
  if (open) {
    showHistory();
    ui.historySearch.focus();
  } else if (hadFocus) {
    ui.historyToggle.focus();
  }
}

ui.historyToggle.addEventListener("click", () => toggleHistory());
ui.historySearch.addEventListener("input", () => {
  ui.historyNone.hidden = filterHistory(ui.historyList, history, ui.historySearch.value) > 0;
});

// ---- Sending ----

/** Enter (or the Send button): send the input, or steer the running answer with it. */
function submit(startedAt: number): void {
  const text = ui.input.value.trim();
  if (!text) return;
  ui.input.value = "";
  fitInput();
  recall.reset();
  if (busy) {
    picker.reset(); // a steer is text only: what it mentions is not read
    post({ type: "steer", text }); // Codex's convention: Enter steers the running answer now
    announcer.say("Steering the answer");
    return;
  }
  const kinds = attachedKinds(chips);
  const mentions = picker.mentions();
  picker.reset();
  post({ type: "send", text, chips: kinds, mentions });
  // Shown at once, before the host answers: the question, then "thinking" and Stop.
  const labels = [...contextLabels(chips), ...mentions.map(mentionLabel)];
  if (conversation) {
    conversation.turns.push({ role: "user", text, context: labels.length ? labels : undefined, chips: kinds });
    view.show(conversation.id, conversation.turns, true);
  }
  requestPending = true;
  setBusy(true);
  view.startLive(startedAt);
  announcer.say("Kestrel is thinking…");
  showQueue();
  scroll.toBottom();
}

/** The host ends the answer (a `done` marked stopped); until then it shows as streaming. */
const stop = () => post({ type: "stop" });

/** The input grows with its text, up to 40% of the panel, then scrolls. */
function fitInput(): void {
  ui.input.style.height = "auto";
  ui.input.style.height = `${Math.min(ui.input.scrollHeight + 2, Math.round(window.innerHeight * 0.4))}px`;
}

function retry(): void {
  if (busy || !conversation) return;
  const last = conversation.turns[conversation.turns.length - 1];
  if (last?.role === "assistant" && last.error) conversation.turns.pop(); // the answer replaces it
  post({ type: "retry" });
  view.show(conversation.id, conversation.turns, true);
  requestPending = true;
  setBusy(true);
  view.startLive(performance.now());
  scroll.toBottom();
}

ui.send.addEventListener("click", () => {
  submit(performance.now());
  ui.input.focus();
});
ui.stop.addEventListener("click", stop);
ui.newChat.addEventListener("click", () => post({ type: "newChat" }));
ui.effort.addEventListener("change", () => post({ type: "effort", value: ui.effort.value as Effort }));

ui.transcript.addEventListener("click", (e) => {
  if (codeButtonClicked(e.target, post, (text) => announcer.say(text))) return;
  const source = (e.target as HTMLElement).closest<HTMLElement>(".source-link");
  const open = source && openSourceMessage(source.dataset);
  if (open) return post(open); // a source or a citation: the host opens the file there
  const button = (e.target as HTMLElement).closest("button");
  if (button?.classList.contains("retry")) {
    button.disabled = true; // one request per click
    retry();
  } else if (button?.classList.contains("apply-all")) {
    const turn = button.closest<HTMLElement>(".turn");
    const blocks = turn && applyAllBlocks(blocksIn(turn));
    const index = Number(turn?.dataset.turn);
    if (blocks && Number.isInteger(index)) post({ type: "applyAll", blocks, turn: index });
  } else if (button?.classList.contains("restore")) {
    const index = Number(button.closest<HTMLElement>(".turn")?.dataset.turn);
    if (Number.isInteger(index)) post({ type: "restore", turn: index });
  }
});

ui.input.addEventListener("keydown", (e) => {
  const startedAt = performance.now();
  if (picker.key(e)) return; // the open picker takes ↑/↓, Enter, Tab and Esc; Backspace deletes a whole marker
  const action = inputKeyAction(e, { busy, text: ui.input.value });
  switch (action) {
    case "submit":
      e.preventDefault();
      submit(startedAt);
      break;
    case "queue": {
      e.preventDefault();
      const text = ui.input.value.trim();
      const mentions = picker.mentions();
      ui.input.value = "";
      picker.reset();
      fitInput();
      post({ type: "queue", text, chips: attachedKinds(chips), mentions }); // sent after the answer, with these chips
      break;
    }
    case "stop":
      e.preventDefault();
      stop();
      break;
    case "recallUp":
    case "recallDown": {
      const text = action === "recallUp" ? recall.up(ui.input.value) : recall.down(ui.input.value);
      if (text === undefined) break; // the caret moves in the text as usual
      e.preventDefault();
      ui.input.value = text;
      fitInput();
      ui.input.setSelectionRange(text.length, text.length);
      picker.update(); // chips of the text that was there go (a recalled `#file:…` is read again at send)
      break;
    }
  }
});

ui.input.addEventListener("input", () => {
  const typedAt = performance.now();
  fitInput();
  picker.update(typedAt);
});
// The caret moved into or out of a `#word`: the picker follows it.
ui.input.addEventListener("click", () => picker.update());
ui.input.addEventListener("keyup", (e) => {
  if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) picker.update();
});

document.addEventListener("keydown", (e) => {
  if (isNewChatKey(e)) {
    e.preventDefault();
    post({ type: "newChat" });
  } else if (e.key === "Escape" && historyOpen()) {
    e.preventDefault();
    toggleHistory(false);
  } else if (e.key === "Escape" && busy && e.target !== ui.input) {
    stop();
  }
});

// When VS Code gives the panel the focus (its view or the Open Chat shortcut), the caret goes to the input.
window.addEventListener("focus", () => {
  if (document.activeElement === document.body || document.activeElement === null) ui.input.focus();
});

// ---- Host messages ----

function onState(msg: Extract<ToWebview, { type: "state" }>): void {
  const switched = msg.conversation.id !== conversation?.id;
  if (switched && conversation && msg.conversation.turns.length === 0) choices.reset(); // a new chat
  if (switched) recall.reset();
  // A state from before the host saw our request keeps what we show for it (the question, Retry's removal).
  const stale = requestPending && !msg.busy && !switched && conversation !== undefined;
  if (msg.busy || switched) requestPending = false;
  let turns = stale ? conversation!.turns : [...msg.conversation.turns];
  const nowBusy = msg.busy || stale;
  // While an answer runs, the host may hold its text so far as the last turn: that is the live one.
  const streamed = nowBusy && turns[turns.length - 1]?.role === "assistant" ? turns[turns.length - 1] : undefined;
  if (streamed) turns = turns.slice(0, -1);
  conversation = { ...msg.conversation, turns };
  history = msg.history;
  hostChips = msg.chips;
  queued = msg.queued;
  ui.title.textContent = msg.conversation.title || "New chat";
  ui.effort.value = msg.effort;
  showModel(msg.model);
  setBusy(nowBusy);
  showChips();
  showQueue();
  if (historyOpen()) showHistory();
  view.show(conversation.id, turns, nowBusy);
  if (nowBusy && !view.live) {
    const live = view.startLive();
    if (streamed?.sources) live.setSources(streamed.sources);
    if (streamed) live.seed(streamed.text, streamed.steers);
  } else if (!nowBusy && view.live) {
    view.dropLive();
  }
  if (switched) scroll.toBottom();
  else scroll.contentChanged();
}

function onDone(turn: Turn, nextQueue: QueuedMessage[]): void {
  requestPending = false;
  queued = nextQueue;
  setBusy(false);
  if (conversation) {
    conversation.turns.push(turn);
    if (view.live) view.finishLive(conversation.turns, conversation.turns.length - 1);
    else view.show(conversation.id, conversation.turns, false);
  }
  showQueue();
  scroll.contentChanged();
}

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  const msg = event.data;
  switch (msg.type) {
    case "state":
      return onState(msg);
    case "chips":
      hostChips = msg.chips;
      return showChips();
    case "model":
      return showModel(msg.model);
    case "focus":
      return ui.input.focus();
    case "delta":
      requestPending = false;
      if (!busy) setBusy(true);
      return (view.live ?? view.startLive()).push(msg.delta);
    case "steered":
      return view.live?.steer(msg.mark);
    case "agentStep":
      requestPending = false;
      if (!busy) setBusy(true);
      return (view.live ?? view.startLive()).step(msg.lines);
    case "agentReview":
      requestPending = false;
      if (!busy) setBusy(true);
      (view.live ?? view.startLive()).review(msg.files, msg.command, msg.running);
      announcer.say(msg.running ? "Kestrel runs the command" : msg.command ? "Kestrel asks to run a command: answer the dialog"
        : "Kestrel proposes changes: review them in the Refactor Preview");
      return;
    case "sources":
      requestPending = false;
      if (!busy) setBusy(true);
      (view.live ?? view.startLive()).setSources(msg.sources, msg.searchMs);
      announcer.say(`Found ${msg.sources.length} ${msg.sources.length === 1 ? "source" : "sources"} in the workspace`);
      return;
    case "done":
      return onDone(msg.turn, msg.queued);
    case "mentionItems":
      return picker.onItems(msg);
    case "pong":
      document.body.dataset.pingMs = (performance.now() - msg.sent).toFixed(1);
      return;
    case "notice":
      requestPending = false;
      view.addNotice(msg.text);
      announcer.say(msg.text);
      return scroll.contentChanged();
  }
});

// The chat benchmark (e2e chatLatency) measures the floor under Enter → first token in this editor:
// a message to the extension host and straight back, with no server in between.
window.addEventListener("kestrel-ping", () => post({ type: "ping", sent: performance.now() }));

setBusy(false);
if (document.hasFocus()) ui.input.focus(); // opened by the shortcut: its focus request may have come before this script
post({ type: "ready" });
