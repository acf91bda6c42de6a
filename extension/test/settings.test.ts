import { describe, expect, it } from "vitest";
import {
  buildServerSettings,
  initializationOptions,
  isLanguageEnabled,
  needsRestart,
  readGates,
  shouldComplete,
  type ConfigReader,
} from "../src/settings";

function cfg(values: Record<string, unknown>): ConfigReader {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

describe("buildServerSettings", () => {
  it("maps VS Code settings to the server's camelCase options", () => {
    const s = buildServerSettings(
      cfg({
        provider: "chat",
        model: "mock-model",
        baseUrl: "http://127.0.0.1:9/v1",
        effort: "high",
        http2: "off",
        "completion.enabled": true,
        "completion.maxLines": 4,
        "completion.maxTokens": 64,
        "completion.languages": { "*": true, markdown: false, python: true, plaintext: false },
        "completion.excludeGlobs": ["**/secret/**", "", 3],
        "completion.debounceMs": 40,
        "completion.repositoryContext": false,
        "completion.prepareNext": false,
        "completion.readAhead": false,
        "completion.continueTyped": false,
        "completion.rememberEndpoints": false,
        "completion.latencyBudgetMs": 400,
        "completion.minLineProbability": 0.1,
        "chat.codebase": false,
        "chat.maxTokens": 900,
        "chat.contextTokens": 4096,
        "local.enabled": false,
        "server.python": "/usr/bin/python3",
      }),
    );
    expect(s).toEqual({
      provider: "chat",
      model: "mock-model",
      baseUrl: "http://127.0.0.1:9/v1",
      effort: "high",
      http2: "off",
      nextEdit: false,
      completion: {
        enabled: true,
        maxLines: 4,
        maxTokens: 64,
        disabledLanguages: ["markdown", "plaintext"],
        excludeGlobs: ["**/secret/**"],
        repositoryContext: false,
        prepareNext: false,
        readAhead: false,
        continueTyped: false,
        rememberEndpoints: false,
        latencyBudgetMs: 400,
        minLineProbability: 0.1,
      },
      chat: { codebase: false, maxTokens: 900, contextTokens: 4096 },
      local: { enabled: false },
    });
  });

  it("keeps minLineProbability in [0, 1): anything else is the default", () => {
    for (const bad of [1, 1.5, -0.1, "0.2", Number.NaN, true]) {
      expect(buildServerSettings(cfg({ "completion.minLineProbability": bad })).completion.minLineProbability).toBe(0.05);
    }
    expect(buildServerSettings(cfg({ "completion.minLineProbability": 0 })).completion.minLineProbability).toBe(0);
  });

  it("never forwards client-only settings (the server rejects unknown completion keys)", () => {
    const s = buildServerSettings(cfg({ "completion.debounceMs": 100, "server.command": ["x"] }));
    expect(Object.keys(s.completion).sort()).toEqual(["continueTyped", "disabledLanguages", "enabled", "excludeGlobs", "latencyBudgetMs", "maxLines", "maxTokens", "minLineProbability", "prepareNext", "readAhead", "rememberEndpoints", "repositoryContext"]);
    expect(JSON.stringify(s)).not.toMatch(/debounce|server/);
  });

  it("omits empty provider/model/baseUrl so the environment or presets decide", () => {
    const s = buildServerSettings(cfg({ provider: "", model: "  ", baseUrl: undefined }));
    expect(s).not.toHaveProperty("provider");
    expect(s).not.toHaveProperty("model");
    expect(s).not.toHaveProperty("baseUrl");
  });

  it("falls back to defaults for invalid values and clamps numbers", () => {
    const s = buildServerSettings(cfg({ effort: "extreme", http2: "maybe", "completion.maxLines": -3, "completion.maxTokens": 1e9 }));
    expect(s.effort).toBe("low");
    expect(s.http2).toBe("auto");
    expect(s.completion.maxLines).toBe(1);
    expect(s.completion.maxTokens).toBe(4096);
  });

  it("uses the default language map when the setting is missing or malformed", () => {
    expect(buildServerSettings(cfg({})).completion.disabledLanguages).toEqual(["markdown", "plaintext", "scminput"]);
    expect(buildServerSettings(cfg({ "completion.languages": ["x"] })).completion.disabledLanguages).toEqual([
      "markdown",
      "plaintext",
      "scminput",
    ]);
  });
});

describe("initializationOptions", () => {
  it("adds the API key only when there is one", () => {
    const s = buildServerSettings(cfg({ provider: "groq" }));
    expect(initializationOptions(s, undefined).kestrel).not.toHaveProperty("apiKey");
    expect(initializationOptions(s, "gsk_123456").kestrel.apiKey).toBe("gsk_123456");
    expect(initializationOptions(s, "").kestrel).not.toHaveProperty("apiKey");
  });
});

describe("gates", () => {
  it("per-language enable: explicit id, then '*', then on", () => {
    expect(isLanguageEnabled({ "*": false, python: true }, "python")).toBe(true);
    expect(isLanguageEnabled({ "*": false, python: true }, "go")).toBe(false);
    expect(isLanguageEnabled({ markdown: false }, "go")).toBe(true);
    expect(isLanguageEnabled({}, "anything")).toBe(true);
    expect(isLanguageEnabled({ "*": true, toString: false }, "toString")).toBe(false);
  });

  it("shouldComplete combines the global toggle and the language map", () => {
    const on = readGates(cfg({ "completion.enabled": true, "completion.languages": { "*": true, markdown: false } }));
    expect(shouldComplete(on, "python")).toBe(true);
    expect(shouldComplete(on, "markdown")).toBe(false);
    const off = readGates(cfg({ "completion.enabled": false }));
    expect(shouldComplete(off, "python")).toBe(false);
  });

  it("debounce is an integer within bounds, default 0", () => {
    expect(readGates(cfg({})).debounceMs).toBe(0);
    expect(readGates(cfg({ "completion.debounceMs": 37.6 })).debounceMs).toBe(38);
    expect(readGates(cfg({ "completion.debounceMs": -5 })).debounceMs).toBe(0);
    expect(readGates(cfg({ "completion.debounceMs": 99999 })).debounceMs).toBe(2000);
  });
});

describe("the embedded model choice", () => {
  it("forwards kestrel.local.model only when set (the server owns the default)", () => {
    expect(buildServerSettings(cfg({ "local.model": "qwen2.5-coder-1.5b" })).local).toEqual({
      enabled: true,
      model: "qwen2.5-coder-1.5b",
    });
    expect(buildServerSettings(cfg({})).local).toEqual({ enabled: true });
  });

  it("forwards kestrel.local.speculative only when it is turned off", () => {
    expect(buildServerSettings(cfg({ "local.speculative": false })).local).toEqual({ enabled: true, speculative: false });
    expect(buildServerSettings(cfg({ "local.speculative": true })).local).toEqual({ enabled: true });
    expect(buildServerSettings(cfg({ "local.speculative": "no" })).local).toEqual({ enabled: true }); // not a boolean: the default
  });
});

describe("needsRestart", () => {
  const base = buildServerSettings(cfg({ provider: "groq", model: "m", "local.modelPath": "/m.gguf" }));
  it("restarts when a value given at start-up is cleared", () => {
    expect(needsRestart(base, buildServerSettings(cfg({ model: "m", "local.modelPath": "/m.gguf" })))).toBe(true);
    expect(needsRestart(base, buildServerSettings(cfg({ provider: "groq", model: "m" })))).toBe(true);
  });
  it("does not restart for changes the server applies live", () => {
    expect(needsRestart(base, buildServerSettings(cfg({ provider: "cerebras", model: "x", effort: "high", "local.modelPath": "/m.gguf" })))).toBe(
      false,
    );
    const empty = buildServerSettings(cfg({}));
    expect(needsRestart(empty, base)).toBe(false);
  });
});
