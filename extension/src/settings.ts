/**
 * Pure mapping from the `kestrel.*` VS Code settings to what the language server reads
 * (`initializationOptions.kestrel` / `didChangeConfiguration.settings.kestrel`), plus the
 * client-side gates (enabled, per-language, debounce). No `vscode` import: unit-tested.
 *
 * The server rejects unknown keys inside `completion` / `local`, so client-only settings
 * (languages map, debounce, server.*) are never forwarded as-is.
 */

export type Effort = "low" | "medium" | "high" | "xhigh";
export const EFFORTS: readonly Effort[] = ["low", "medium", "high", "xhigh"];

export const PRESETS = ["openai", "cerebras", "groq", "ollama", "vllm", "llamacpp"] as const;
export const TRANSPORTS = ["responses-ws", "responses", "chat", "fim"] as const;
/** Presets that need an API key (the local ones do not). */
export const KEYED_PRESETS: readonly string[] = ["openai", "cerebras", "groq"];

/** The subset of `vscode.WorkspaceConfiguration` we use (section `kestrel`). */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

export interface ServerSettings {
  provider?: string;
  model?: string;
  baseUrl?: string;
  effort: Effort;
  http2: "auto" | "on" | "off";
  nextEdit: boolean;
  completion: {
    enabled: boolean;
    maxLines: number;
    maxTokens: number;
    disabledLanguages: string[];
    excludeGlobs: string[];
  };
  local: {
    enabled: boolean;
    model?: string;
    modelPath?: string;
  };
}

export interface ClientGates {
  enabled: boolean;
  languages: Record<string, boolean>;
  debounceMs: number;
}

export const DEFAULT_LANGUAGES: Record<string, boolean> = {
  "*": true,
  plaintext: false,
  markdown: false,
  scminput: false,
};

function str(cfg: ConfigReader, key: string): string | undefined {
  const v = cfg.get<unknown>(key);
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

function int(cfg: ConfigReader, key: string, fallback: number, min: number, max: number): number {
  const v = cfg.get<unknown>(key);
  if (typeof v !== "number" || !Number.isFinite(v)) return fallback;
  return Math.min(max, Math.max(min, Math.round(v)));
}

function bool(cfg: ConfigReader, key: string, fallback: boolean): boolean {
  const v = cfg.get<unknown>(key);
  return typeof v === "boolean" ? v : fallback;
}

function strings(cfg: ConfigReader, key: string): string[] {
  const v = cfg.get<unknown>(key);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x.trim() !== "") : [];
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T): T {
  return value !== undefined && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

export function languageMap(cfg: ConfigReader): Record<string, boolean> {
  const v = cfg.get<unknown>("completion.languages");
  if (!v || typeof v !== "object" || Array.isArray(v)) return { ...DEFAULT_LANGUAGES };
  const out: Record<string, boolean> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (typeof val === "boolean") out[k] = val;
  }
  return out;
}

/** `languages[id]`, else `languages["*"]`, else enabled. */
export function isLanguageEnabled(languages: Record<string, boolean>, languageId: string): boolean {
  if (Object.prototype.hasOwnProperty.call(languages, languageId)) return languages[languageId];
  if (Object.prototype.hasOwnProperty.call(languages, "*")) return languages["*"];
  return true;
}

export function readGates(cfg: ConfigReader): ClientGates {
  return {
    enabled: bool(cfg, "completion.enabled", true),
    languages: languageMap(cfg),
    debounceMs: int(cfg, "completion.debounceMs", 0, 0, 2000),
  };
}

/** Whether to ask the server at all for this document (saves a round trip when not). */
export function shouldComplete(gates: ClientGates, languageId: string): boolean {
  return gates.enabled && isLanguageEnabled(gates.languages, languageId);
}

export function buildServerSettings(cfg: ConfigReader): ServerSettings {
  const languages = languageMap(cfg);
  const modelPath = str(cfg, "local.modelPath");
  const localModel = str(cfg, "local.model"); // sent only when set: the server owns the default
  const settings: ServerSettings = {
    effort: oneOf(str(cfg, "effort"), EFFORTS, "low"),
    http2: oneOf(str(cfg, "http2"), ["auto", "on", "off"] as const, "auto"),
    nextEdit: bool(cfg, "nextEdit.enabled", false),
    completion: {
      enabled: bool(cfg, "completion.enabled", true),
      maxLines: int(cfg, "completion.maxLines", 12, 1, 200),
      maxTokens: int(cfg, "completion.maxTokens", 160, 1, 4096),
      disabledLanguages: Object.keys(languages)
        .filter((k) => k !== "*" && languages[k] === false)
        .sort(),
      excludeGlobs: strings(cfg, "completion.excludeGlobs"),
    },
    local: {
      enabled: bool(cfg, "local.enabled", true),
      ...(localModel ? { model: localModel } : {}),
      ...(modelPath ? { modelPath } : {}),
    },
  };
  const provider = str(cfg, "provider");
  const model = str(cfg, "model");
  const baseUrl = str(cfg, "baseUrl");
  if (provider) settings.provider = provider;
  if (model) settings.model = model;
  if (baseUrl) settings.baseUrl = baseUrl;
  return settings;
}

/** `initializationOptions` for the server; the key only when there is one. */
export function initializationOptions(settings: ServerSettings, apiKey: string | undefined): { kestrel: Record<string, unknown> } {
  return { kestrel: apiKey ? { ...settings, apiKey } : { ...settings } };
}

/**
 * The server layers `didChangeConfiguration` on top of `initializationOptions`, and an absent
 * value does not clear one given at start-up. When a top-level value the server started with
 * is cleared, the client restarts the server instead of sending a change.
 */
export function needsRestart(started: ServerSettings, next: ServerSettings): boolean {
  for (const key of ["provider", "model", "baseUrl"] as const) {
    if (started[key] !== undefined && next[key] === undefined) return true;
  }
  return started.local.modelPath !== undefined && next.local.modelPath === undefined;
}

/** Settings changes (`kestrel.server.*`) that only take effect with a new server process. */
export const RESTART_SECTIONS = ["kestrel.server"];
