import { describe, expect, it } from "vitest";
import { formatMs, formatRate, viewStatus, type KestrelStatus } from "../src/statusView";

const ready: KestrelStatus = {
  state: "ready",
  busy: false,
  provider: "chat",
  model: "mock-model",
  connection: "connected",
  ttftMs: 3.84,
  tokensPerSec: 1234.5,
  message: null,
};

describe("viewStatus", () => {
  it("shows state, provider:model, TTFT and tokens/s when ready", () => {
    const v = viewStatus({ phase: "running", status: ready, enabled: true });
    expect(v.state).toBe("ready");
    expect(v.text).toBe("$(check) Kestrel ready · chat:mock-model · TTFT 3.8 ms · 1235 tok/s");
    expect(v.tooltip).toContain("Connection: connected");
    expect(v.background).toBeUndefined();
  });

  it("busy is shown as thinking", () => {
    expect(viewStatus({ phase: "running", status: { ...ready, state: "busy", busy: true }, enabled: true }).state).toBe("thinking");
    expect(viewStatus({ phase: "running", status: { ...ready, busy: true }, enabled: true }).state).toBe("thinking");
  });

  it("error and offline carry the server's message and a background", () => {
    const e = viewStatus({ phase: "running", status: { ...ready, state: "error", message: "HTTP 401" }, enabled: true });
    expect(e.state).toBe("error");
    expect(e.tooltip).toContain("HTTP 401");
    expect(e.background).toBe("error");
    const o = viewStatus({ phase: "running", status: { ...ready, state: "offline", message: "refused" }, enabled: true });
    expect(o.text.startsWith("$(debug-disconnect) Kestrel offline")).toBe(true);
    expect(o.background).toBe("warning");
  });

  it("reflects the client's own phase before any server status", () => {
    expect(viewStatus({ phase: "starting", enabled: true }).state).toBe("starting");
    expect(viewStatus({ phase: "crashed", status: ready, enabled: true }).state).toBe("error");
    expect(viewStatus({ phase: "stopped", status: ready, enabled: true }).state).toBe("offline");
    expect(viewStatus({ phase: "notInstalled", enabled: true }).state).toBe("not installed");
    // a stale status from a stopped server is not shown as metrics
    expect(viewStatus({ phase: "stopped", status: ready, enabled: true }).text).not.toContain("TTFT");
  });

  it("disabled completions show as disabled", () => {
    const v = viewStatus({ phase: "running", status: ready, enabled: false });
    expect(v.state).toBe("disabled");
    expect(v.text).toContain("$(circle-slash)");
  });

  it("omits metrics that are not known yet", () => {
    const v = viewStatus({ phase: "running", status: { ...ready, ttftMs: null, tokensPerSec: null }, enabled: true });
    expect(v.text).toBe("$(check) Kestrel ready · chat:mock-model");
  });

  it("notes a language that is switched off", () => {
    expect(viewStatus({ phase: "running", status: ready, enabled: true, languageDisabled: true }).tooltip).toContain("off for this language");
  });
});

describe("formatting", () => {
  it("formats ms and rates", () => {
    expect(formatMs(0.42)).toBe("0.4 ms");
    expect(formatMs(12.6)).toBe("13 ms");
    expect(formatRate(42.25)).toBe("42.3 tok/s");
    expect(formatRate(999.6)).toBe("1000 tok/s");
  });
});
