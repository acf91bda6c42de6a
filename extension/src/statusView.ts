/** Pure rendering of the status bar item from `kestrel/status` and the client's own state. */
import type { Status } from "./protocol";

/**
 * The server's `Status` (`kestrel/status`, `kestrel/getStatus`) as the client reads it: anything
 * but `state` may be missing, from a server older than this extension.
 */
export type KestrelStatus = Pick<Status, "state"> & Partial<Omit<Status, "state">>;

/** What the client knows about the server process. */
export type ClientPhase = "starting" | "running" | "stopped" | "crashed" | "notInstalled";

export interface StatusInput {
  phase: ClientPhase;
  status?: KestrelStatus;
  enabled: boolean;
  /** The active editor's language is switched off by `kestrel.completion.languages`. */
  languageDisabled?: boolean;
}

export interface StatusView {
  /** Word shown to the user: ready | thinking | error | offline | starting | unconfigured | disabled | not installed */
  state: string;
  text: string;
  tooltip: string;
  background?: "error" | "warning";
}

const ICONS: Record<string, string> = {
  ready: "$(check)",
  thinking: "$(loading~spin)",
  error: "$(error)",
  offline: "$(debug-disconnect)",
  starting: "$(sync~spin)",
  unconfigured: "$(warning)",
  disabled: "$(circle-slash)",
  "not installed": "$(cloud-download)",
};

export function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

export function formatRate(tps: number): string {
  return tps >= 100 ? `${Math.round(tps)} tok/s` : `${tps.toFixed(1)} tok/s`;
}

function stateWord(input: StatusInput): string {
  const s = input.status;
  if (input.phase === "notInstalled") return "not installed";
  if (input.phase === "crashed") return "error";
  if (input.phase === "stopped") return "offline";
  if (input.phase === "starting" || !s) return "starting";
  if (s.state === "busy" || (s.busy && s.state === "ready")) return "thinking";
  return s.state;
}

export function viewStatus(input: StatusInput): StatusView {
  const s = input.status;
  let state = stateWord(input);
  if (!input.enabled && (state === "ready" || state === "thinking")) state = "disabled";
  const parts = [`${ICONS[state] ?? "$(circle-outline)"} Kestrel ${state}`];
  const who = s && input.phase === "running" ? [s.provider, s.model].filter(Boolean).join(":") : "";
  if (who) parts.push(who);
  const metrics: string[] = [];
  if (s && input.phase === "running") {
    if (typeof s.ttftMs === "number") metrics.push(`TTFT ${formatMs(s.ttftMs)}`);
    if (typeof s.tokensPerSec === "number" && s.tokensPerSec > 0) metrics.push(formatRate(s.tokensPerSec));
  }
  parts.push(...metrics);

  const tip: string[] = [`Kestrel: ${state}`];
  if (who) tip.push(`Provider and model: ${who}`);
  if (s?.connection && input.phase === "running") tip.push(`Connection: ${s.connection}`);
  if (metrics.length) tip.push(`Last completion: ${metrics.join(", ")}`);
  if (input.languageDisabled) tip.push("Inline completions are off for this language.");
  // While ready, the server's message says what is missing all the same (no API key bound to this endpoint).
  if (s?.message && input.phase === "running") tip.push(s.message);
  if (input.phase === "notInstalled") tip.push("The Kestrel language server is not installed. Click to install.");
  tip.push("Click for Kestrel actions.");

  const background =
    state === "error" || state === "not installed" ? "error" : state === "offline" || state === "unconfigured" ? "warning" : undefined;
  return { state, text: parts.join(" · "), tooltip: tip.join("\n"), background };
}
