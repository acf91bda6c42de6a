/**
 * The chat webview. Model output is data: Markdown is rendered with markdown-it with raw HTML
 * disabled (so `<script>` or `<img onerror>` from a model shows as text), links limited to
 * http(s), and code highlighted by highlight.js (which escapes). The page's CSP allows only
 * this nonce'd script. Deltas are applied once per animation frame.
 */
import MarkdownIt from "markdown-it";
import hljs from "highlight.js/lib/common";
import type { Chip, Conversation, Effort, FromWebview, QueuedMessage, SteerMark, ToWebview, Turn } from "../protocol";
import { segments } from "../transcript";

declare function acquireVsCodeApi(): { postMessage(msg: FromWebview): void };
const vscode = acquireVsCodeApi();

const md = new MarkdownIt({
  html: false,
  linkify: false,
  highlight(code: string, lang: string): string {
    try {
      const html = lang && hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang }).value : hljs.highlightAuto(code).value;
      return `<pre class="hljs"><code>${html}</code></pre>`;
    } catch {
      return "";
    }
  },
});
const defaultValidate = md.validateLink.bind(md);
md.validateLink = (url: string) => /^https?:/i.test(url) && defaultValidate(url);

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const transcript = $("transcript");
const input = $<HTMLTextAreaElement>("input");
const stopButton = $<HTMLButtonElement>("stop");
const effortSelect = $<HTMLSelectElement>("effort");
const chipsBar = $("chips");
const historySelect = $<HTMLSelectElement>("history");
const queueBar = $("queue");

let conversation: Conversation | undefined;
let chips: Chip[] = [];
let busy = false;
let live: { turn: Turn; el: HTMLElement } | undefined;
let pending = "";
let frame = 0;

function post(msg: FromWebview): void {
  vscode.postMessage(msg);
}

function renderAssistant(el: HTMLElement, turn: Turn): void {
  el.replaceChildren();
  for (const seg of segments(turn.text, turn.steers)) {
    if (seg.steer) {
      const mark = document.createElement("div");
      mark.className = "steer-mark";
      mark.textContent = `↪ steered (${seg.steer.mode}): ${seg.steer.text}`;
      el.appendChild(mark);
    } else {
      const body = document.createElement("div");
      body.className = "markdown";
      body.innerHTML = md.render(seg.text); // markdown-it escapes all raw HTML (html: false)
      decorateCode(body);
      el.appendChild(body);
    }
  }
  if (turn.error) {
    const err = document.createElement("div");
    err.className = "error";
    err.textContent = `⚠ ${turn.error} — you can send your message again.`;
    el.appendChild(err);
  }
  if (turn.stopped) {
    const s = document.createElement("div");
    s.className = "notice";
    s.textContent = "stopped";
    el.appendChild(s);
  }
}

function decorateCode(root: HTMLElement): void {
  root.querySelectorAll("pre").forEach((pre) => {
    const code = pre.textContent ?? "";
    const bar = document.createElement("div");
    bar.className = "code-actions";
    for (const [label, type] of [["Copy", "copy"], ["Insert", "insert"], ["Apply", "apply"]] as const) {
      const b = document.createElement("button");
      b.textContent = label;
      b.className = `code-${type}`;
      b.addEventListener("click", () => post({ type, code }));
      bar.appendChild(b);
    }
    pre.parentElement?.insertBefore(bar, pre);
  });
}

function turnElement(turn: Turn): HTMLElement {
  const el = document.createElement("div");
  el.className = `turn ${turn.role}`;
  if (turn.role === "user") {
    el.textContent = turn.text; // user text is shown verbatim, never as HTML
    if (turn.context?.length) {
      const ctx = document.createElement("div");
      ctx.className = "context";
      ctx.textContent = `with ${turn.context.join(", ")}`;
      el.appendChild(ctx);
    }
  } else {
    renderAssistant(el, turn);
  }
  return el;
}

function renderAll(): void {
  transcript.replaceChildren(...(conversation?.turns ?? []).map(turnElement));
  live = undefined;
  if (busy) startLive();
  transcript.scrollTop = transcript.scrollHeight;
}

function startLive(): void {
  const turn: Turn = { role: "assistant", text: "", steers: [] };
  const el = turnElement(turn);
  el.classList.add("streaming");
  transcript.appendChild(el);
  live = { turn, el };
}

function flush(): void {
  frame = 0;
  if (!live || !pending) return;
  live.turn.text += pending;
  pending = "";
  renderAssistant(live.el, live.turn);
  transcript.scrollTop = transcript.scrollHeight;
}

function renderChips(): void {
  chipsBar.replaceChildren(
    ...chips.map((chip) => {
      const b = document.createElement("button");
      b.className = `chip ${chip.enabled ? "on" : "off"}`;
      b.textContent = `${chip.enabled ? "✓" : "+"} ${chip.label}`;
      b.title = chip.enabled ? "Remove from context" : "Add to context";
      b.addEventListener("click", () => {
        chip.enabled = !chip.enabled;
        renderChips();
      });
      return b;
    }),
  );
}

/** Each queued message with its chips and what the user can do with it (sent by itself after an
 * answer that ends; kept after Stop). */
function renderQueue(queued: QueuedMessage[]): void {
  queueBar.replaceChildren(
    ...queued.map((q) => {
      const row = document.createElement("div");
      row.className = "queued";
      const text = document.createElement("span");
      text.className = "queued-text";
      text.textContent = q.chips.length ? `${q.text} (with ${q.chips.join(", ")})` : q.text;
      row.appendChild(text);
      const actions: [string, () => void][] = [
        ["Send now", () => post({ type: "queueSend", id: q.id })],
        ["Edit", () => {
          input.value = q.text;
          input.focus();
          post({ type: "queueRemove", id: q.id });
        }],
        ["Remove", () => post({ type: "queueRemove", id: q.id })],
      ];
      for (const [label, run] of actions) {
        const b = document.createElement("button");
        b.textContent = label;
        b.className = `queued-${label.toLowerCase().replace(" ", "-")}`;
        if (label === "Send now") b.disabled = busy;
        b.addEventListener("click", run);
        row.appendChild(b);
      }
      return row;
    }),
  );
}

function setBusy(value: boolean): void {
  busy = value;
  stopButton.disabled = !value;
  input.placeholder = value ? "Enter: steer the answer now · Tab: queue for after it" : "Ask Kestrel… (Enter to send)";
  document.body.classList.toggle("busy", value);
}

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  const msg = event.data;
  switch (msg.type) {
    case "state":
      conversation = msg.conversation;
      chips = msg.chips;
      effortSelect.value = msg.effort;
      historySelect.replaceChildren(
        ...msg.history.map((h) => {
          const o = document.createElement("option");
          o.value = h.id;
          o.textContent = h.title;
          o.selected = h.id === msg.conversation.id;
          return o;
        }),
      );
      setBusy(msg.busy);
      renderChips();
      renderQueue(msg.queued);
      renderAll();
      break;
    case "delta":
      if (!live) startLive();
      pending += msg.delta;
      if (!frame) frame = requestAnimationFrame(flush); // one DOM update per frame, however fast tokens come
      break;
    case "steered":
      flush();
      if (live) {
        live.turn.steers = [...(live.turn.steers ?? []), msg.mark as SteerMark];
        renderAssistant(live.el, live.turn);
      }
      break;
    case "done":
      flush();
      if (conversation) conversation.turns.push(msg.turn);
      setBusy(false);
      renderQueue(msg.queued);
      renderAll();
      break;
    case "notice": {
      const n = document.createElement("div");
      n.className = "notice";
      n.textContent = msg.text;
      transcript.appendChild(n);
      break;
    }
  }
});

input.addEventListener("keydown", (e: KeyboardEvent) => {
  const text = input.value.trim();
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    if (!text) return;
    input.value = "";
    if (busy) {
      post({ type: "steer", text }); // Codex's convention: Enter steers the running answer now
    } else {
      if (conversation) conversation.turns.push({ role: "user", text, context: chips.filter((c) => c.enabled).map((c) => c.label) });
      setBusy(true);
      renderAll();
      post({ type: "send", text, chips: chips.filter((c) => c.enabled).map((c) => c.kind) });
    }
  } else if (e.key === "Tab" && busy && text) {
    e.preventDefault();
    input.value = "";
    post({ type: "queue", text, chips: chips.filter((c) => c.enabled).map((c) => c.kind) }); // Tab: queue it for after the answer, with its chips
  }
});
stopButton.addEventListener("click", () => post({ type: "stop" }));
$("new").addEventListener("click", () => post({ type: "newChat" }));
historySelect.addEventListener("change", () => post({ type: "openChat", id: historySelect.value }));
effortSelect.addEventListener("change", () => post({ type: "effort", value: effortSelect.value as Effort }));
post({ type: "ready" });
