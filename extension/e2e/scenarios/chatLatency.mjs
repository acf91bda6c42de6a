// Chat responsiveness (a benchmark; `make bench` runs it alone): Enter in the chat panel -> the first
// rendered answer text, set beside what the server alone takes for the same request, so the time
// VS Code and the panel add over the server's own time to first token is known (see docs/chat-latency.md).
//
// With the mock at TTFT 0 and a short answer, N samples (KESTREL_CHAT_SAMPLES, default 20) of two
// measurements are interleaved in this one Node process, after one warm-up of each:
//   dom    - in the panel: the keydown of Enter in #input -> the first answer text in
//            `.turn.assistant.streaming`. The webview's own `data-first-token-ms` on that turn is used
//            when it writes one; otherwise a MutationObserver put into the webview times the same span
//            in the page (performance.now() against the keydown event's timeStamp, no polling noise).
//            When both exist both are kept, as a cross-check.
//   server - a second kestrel-lsp over stdio (lib/lspClient.mjs), same provider/baseUrl/model as the
//            editor's, sent the same messages the panel's request just carried (from the mock's log):
//            `kestrel/chat` sent -> the first `kestrel/chatDelta` notification received.
//   floor  - webview -> extension host -> webview with nothing in between (ping/pong), what any
//            panel pays in this editor.
// results.checks.chatLatency gets p50/p95 of both and the panel's extra (dom - server). Nothing here is
// a timed assertion: the scenario fails only if an answer never renders (or renders an error).
import { performance } from "node:perf_hooks";
import { COMPLETION } from "../lib/config.mjs";
import { chatRequests, openChat, pingMs as pingRoundTrip } from "../lib/chat.mjs";
import { startLspClient } from "../lib/lspClient.mjs";
import { setMock } from "../lib/mock.mjs";
import { log, percentile, sleep, waitFor } from "../lib/util.mjs";

const SAMPLES = Math.max(1, Number(process.env.KESTREL_CHAT_SAMPLES || 20));
const ANSWER = "A short answer.";
const PROMPT = "Say something short";
const ANSWER_TIMEOUT_MS = 30_000;

/**
 * Puts a probe into the webview (where `input` lives) that times the next Enter keydown in #input to
 * the first answer text after it, and picks up the webview's own `data-first-token-ms`.
 * "The answer's first text": the last assistant turn is a streaming one with text outside its
 * progress indicator and labels, or a finished assistant turn more than there were at the keydown
 * (an answer fast enough to be replaced by its finished turn in the same task).
 */
function armProbe(input) {
  return input.evaluate((el) => {
    const doc = el.ownerDocument;
    const w = doc.defaultView;
    w.__chatProbe?.stop();
    const state = { key: 0, first: 0, attr: null };
    const finished = () => doc.querySelectorAll(".turn.assistant:not(.streaming)").length;
    const finishedAtArm = finished();
    const answerText = (turn) => {
      let text = turn.textContent || "";
      for (const x of turn.querySelectorAll(".progress, .role, .notice, .sr-only")) text = text.replace(x.textContent || "", "");
      return text.trim();
    };
    const readAttr = (node) => {
      const v = node?.getAttribute?.("data-first-token-ms");
      if (v != null && state.attr === null && Number.isFinite(Number(v))) state.attr = Number(v);
    };
    const observer = new MutationObserver((records) => {
      if (!state.key) return;
      const now = performance.now();
      for (const r of records) {
        // The streaming turn may already be replaced by its finished one: read the record's target.
        if (r.type === "attributes" && r.attributeName === "data-first-token-ms") readAttr(r.target);
      }
      const turns = doc.querySelectorAll(".turn.assistant");
      const last = turns[turns.length - 1];
      const fresh = last && (last.classList.contains("streaming") || finished() > finishedAtArm);
      if (fresh) readAttr(last);
      if (!state.first && fresh && answerText(last)) state.first = now;
    });
    observer.observe(doc.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["data-first-token-ms", "class"] });
    const onKey = (e) => {
      if (e.key === "Enter" && !e.shiftKey && e.target === el && !state.key) state.key = e.timeStamp;
    };
    doc.addEventListener("keydown", onKey, true); // capture: before the webview's own handler runs
    w.__chatProbe = {
      state,
      stop: () => {
        observer.disconnect();
        doc.removeEventListener("keydown", onKey, true);
      },
    };
  });
}

const probeState = (input) => input.evaluate(() => window.__chatProbe.state);

/** One panel sample: Enter -> first rendered text, then waits for the answer to finish. */
async function domSample(frame, input, label) {
  const finished = frame.locator(".turn.assistant:not(.streaming)");
  const before = await finished.count();
  await input.fill(`${PROMPT} (${label})`);
  await armProbe(input);
  await input.press("Enter");
  const first = await waitFor(`the first answer text in the panel (${label})`, async () => {
    const s = await probeState(input);
    return s.first ? s : undefined;
  }, ANSWER_TIMEOUT_MS, 20);
  await waitFor(`the panel's answer to finish (${label})`, async () =>
    (await frame.locator(".turn.assistant.streaming").count()) === 0 && (await finished.count()) > before, ANSWER_TIMEOUT_MS, 20);
  const last = finished.last();
  const text = (await last.textContent()) || "";
  if (!text.includes(ANSWER)) throw new Error(`the panel's answer (${label}) is not the model's: ${JSON.stringify(text.slice(0, 300))}`);
  const s = await input.evaluate(() => {
    window.__chatProbe.stop();
    return window.__chatProbe.state;
  });
  const observerMs = +(first.first - first.key).toFixed(1);
  return { webviewMs: s.attr === null ? null : +s.attr.toFixed(1), observerMs };
}

/** One server sample: `kestrel/chat` -> the first `kestrel/chatDelta` for it, over stdio. */
async function serverSample(lsp, firstDelta, label, messages) {
  const id = `chat-latency-${label}`;
  firstDelta.id = id;
  firstDelta.at = undefined;
  const sent = performance.now();
  const result = await Promise.race([
    lsp.request("kestrel/chat", { id, messages }),
    sleep(ANSWER_TIMEOUT_MS).then(() => ({ error: `no answer in ${ANSWER_TIMEOUT_MS} ms` })),
  ]);
  if (result.error || result.text !== ANSWER) throw new Error(`the server's answer (${label}): ${result.error || JSON.stringify(result.text)}`);
  if (firstDelta.at === undefined) throw new Error(`the server answered (${label}) without a kestrel/chatDelta`);
  return +(firstDelta.at - sent).toFixed(1);
}

function summary(values) {
  const s = values.filter((v) => typeof v === "number").sort((a, b) => a - b);
  if (!s.length) return null;
  const r = (v) => +v.toFixed(1);
  return { n: s.length, p50: r(percentile(s, 50)), p95: r(percentile(s, 95)), min: r(s[0]), max: r(s.at(-1)) };
}

export default async function chatLatency(t) {
  const { page, editor, results, mockUrl, settings } = t;
  await setMock(mockUrl, { text: ANSWER, tps: 0, ttft_ms: 0, rules: [] });
  const lsp = await startLspClient({
    env: t.env,
    kestrel: { provider: settings["kestrel.provider"], baseUrl: settings["kestrel.baseUrl"], model: settings["kestrel.model"], local: { enabled: false } },
  });
  try {
    const firstDelta = { id: undefined, at: undefined };
    lsp.onNotification("kestrel/chatDelta", (p) => {
      if (p.id === firstDelta.id && firstDelta.at === undefined) firstDelta.at = performance.now();
    });
    const frame = await openChat(page);
    const input = frame.locator("#input");
    // A new conversation: what came before (an earlier scenario's long answer) is not re-rendered.
    if (await frame.locator("#new").count()) {
      await frame.locator("#new").click();
      await waitFor("an empty conversation", async () => (await frame.locator("#transcript .turn").count()) === 0, 10_000, 50)
        .catch(() => log("chatLatency: New chat left turns in the transcript; measuring anyway"));
    }
    // The server alone gets the very messages the panel's request carried (the system prompt, the
    // attached file, the conversation so far), as the model received them: the same work on both sides.
    const panelMessages = async () => (await chatRequests(mockUrl)).at(-1).body.messages;
    await domSample(frame, input, "warm-up"); // first request of each path: imports, connections, JIT
    await serverSample(lsp, firstDelta, "warm-up", await panelMessages());
    const samples = [];
    for (let i = 0; i < SAMPLES; i++) {
      const dom = await domSample(frame, input, String(i));
      const serverMs = await serverSample(lsp, firstDelta, String(i), await panelMessages());
      const pingMs = await pingRoundTrip(input);
      samples.push({ domMs: dom.webviewMs ?? dom.observerMs, ...dom, serverMs, pingMs });
      await sleep(100); // let the host finish its after-turn work (saving the conversation, history)
    }
    const fromWebview = samples.filter((s) => s.webviewMs !== null).length;
    const dom = summary(samples.map((s) => s.domMs));
    const server = summary(samples.map((s) => s.serverMs));
    const ping = summary(samples.map((s) => s.pingMs));
    const r = (v) => +v.toFixed(1);
    results.checks.chatLatency = {
      n: samples.length,
      mock: { ttftMs: 0, answer: ANSWER },
      domSource: fromWebview === samples.length ? "data-first-token-ms" : fromWebview ? "mixed" : "observer",
      enterToFirstRenderedMs: dom,
      serverChatToFirstDeltaMs: server,
      panelExtraMs: { p50: r(dom.p50 - server.p50), p95: r(dom.p95 - server.p95) },
      // webview -> extension host -> webview with nothing in between: what any panel pays here.
      webviewHostRoundTripMs: ping,
      panelExtraOverRoundTripMs: { p50: r(dom.p50 - server.p50 - ping.p50), p95: r(dom.p95 - server.p95 - ping.p95) },
      // The same span timed by this scenario's own observer: a cross-check of data-first-token-ms.
      observerMs: summary(samples.map((s) => s.observerMs)),
      samples,
    };
    log(`chat latency over ${samples.length} samples (${results.checks.chatLatency.domSource}): ` +
      `Enter -> first rendered text p50 ${dom.p50} ms, p95 ${dom.p95} ms; ` +
      `server kestrel/chat -> first chatDelta p50 ${server.p50} ms, p95 ${server.p95} ms; ` +
      `panel extra p50 ${results.checks.chatLatency.panelExtraMs.p50} ms, p95 ${results.checks.chatLatency.panelExtraMs.p95} ms; ` +
      `bare webview <-> extension host round trip p50 ${ping.p50} ms, p95 ${ping.p95} ms`);
  } finally {
    await lsp.close();
    await setMock(mockUrl, { text: `${COMPLETION}\n`, tps: 0, ttft_ms: 0, rules: [] });
  }
  await editor.locator(".view-lines").click();
}
