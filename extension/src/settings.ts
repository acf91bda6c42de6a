/**
 * Pure mapping from the `kestrel.*` VS Code settings to what the language server reads
 * (`initializationOptions.kestrel` / `didChangeConfiguration.settings.kestrel`), plus the
 * client-side gates (enabled, per-language, debounce). No `vscode` import: unit-tested.
 *
 * The server rejects unknown keys inside `completion` / `local`, so client-only settings
 * (languages map, debounce, server.*) are never forwarded as-is.
 */
import * as os from "node:os";
import * as path from "node:path";

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

/**
 * Settings that pick an executable, a file that native code loads, an endpoint or a CA, or that
 * start sending code by themselves. A workspace the user has not trusted must not choose them:
 * package.json lists them in `restrictedConfigurations` (VS Code then drops the workspace's
 * values) and `config()` drops them again itself (extension/test/settingsPolicy.test.ts keeps
 * the two lists equal).
 */
export const RESTRICTED_SETTINGS: readonly string[] = [
  "server.python", // an executable
  "server.command", // an executable
  "server.installSource", // what pip installs (and runs) into Kestrel's environment
  "provider", // where code (and the key) goes
  "baseUrl", // where code (and the key) goes
  "caBundle", // which certificates vouch for that endpoint
  "local.enabled", // starts llama.cpp (and may download a model)
  "local.model", // which model llama.cpp loads
  "local.modelPath", // the file llama.cpp loads
  "nextEdit.enabled", // sends code after every edit
  "agent.allowedCommands", // commands the agent runs without asking
];

/**
 * Files that native code or TLS reads, and the commands the agent runs unasked: only the user's (or
 * the remote machine's) settings choose them, never a workspace, trusted or not (`"scope": "machine"`).
 */
export const MACHINE_SETTINGS: readonly string[] = ["local.modelPath", "caBundle", "agent.allowedCommands"];

/** The commands the user lets the agent run without asking (strings only; read through `config()`, so never a workspace's). */
export function agentAllowedCommands(cfg: ConfigReader): string[] {
  const v = cfg.get<unknown>("agent.allowedCommands");
  return Array.isArray(v) ? v.filter((c): c is string => typeof c === "string" && c.trim() !== "").map((c) => c.trim()) : [];
}

/** What `WorkspaceConfiguration.inspect` reports for one key (the part we use). */
export interface SettingLayers<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * Whether the value `get` returns for `key` may be used as is. A workspace's value of a
 * restricted setting counts only in a trusted workspace, and of a machine setting never.
 */
export function workspaceMayChoose(key: string, trusted: boolean): boolean {
  if (MACHINE_SETTINGS.includes(key)) return false;
  return trusted || !RESTRICTED_SETTINGS.includes(key);
}

/**
 * The user's own value of a setting, ignoring whatever the workspace (`.vscode/settings.json`,
 * the `.code-workspace` file) says: user or remote-machine settings, else the default.
 * `undefined` when the workspace sets nothing (then `get` already is the user's value).
 */
export function userValue<T>(layers: SettingLayers<T> | undefined): { value: T | undefined } | undefined {
  if (!layers || (layers.workspaceValue === undefined && layers.workspaceFolderValue === undefined)) return undefined;
  return { value: layers.globalValue !== undefined ? layers.globalValue : layers.defaultValue };
}

export interface ServerSettings {
  provider?: string;
  model?: string;
  baseUrl?: string;
  effort: Effort;
  http2: "auto" | "on" | "off";
  nextEdit: boolean;
  caBundle?: string;
  completion: {
    enabled: boolean;
    maxLines: number;
    maxTokens: number;
    disabledLanguages: string[];
    excludeGlobs: string[];
    repositoryContext: boolean;
    prepareNext: boolean;
    /** A model on this machine reads the prompt where the cursor rests, before the first keystroke. */
    readAhead: boolean;
    /** With a fill-in-the-middle model, what was typed since the last prompt goes after it (the model reads only that). */
    continueTyped: boolean;
    /** Keep what was learned about each model (block endings, prompt pace) between starts. */
    rememberEndpoints: boolean;
    latencyBudgetMs: number;
    /** A one-line suggestion the model gives less than this joint probability is not shown (0: off). */
    minLineProbability: number;
  };
  chat: {
    codebase: boolean;
    /** An answer's output cap in tokens; 0: the model's own (the embedded model's is the server's). */
    maxTokens: number;
    /** The model's context window when it is small (a server of your own); 0: not known. */
    contextTokens: number;
  };
  local: {
    enabled: boolean;
    model?: string;
    modelPath?: string;
    speculative?: false; // sent only when turned off: the server's default is on
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

/** A number in [0, 1): anything else is the default (the server refuses 1 and above). */
function fraction(cfg: ConfigReader, key: string, fallback: number): number {
  const v = cfg.get<unknown>(key);
  return typeof v === "number" && Number.isFinite(v) && v >= 0 && v < 1 ? v : fallback;
}

function bool(cfg: ConfigReader, key: string, fallback: boolean): boolean {
  const v = cfg.get<unknown>(key);
  return typeof v === "boolean" ? v : fallback;
}

/**
 * Paths a native library or TLS reads: absolute only. A relative path would resolve against the
 * server's working directory, so it is never forwarded (the server refuses one too).
 */
export const PATH_SETTINGS: readonly string[] = ["local.modelPath", "caBundle"];

/** `~/…` under the user's home directory (the extension host and the server run on the same machine). */
export function expandHome(p: string, home: string = os.homedir()): string {
  return /^~(?:[/\\]|$)/.test(p) ? path.join(home, p.slice(1)) : p;
}

/** Absolute on this platform (the server runs here too), after `~/` is expanded. */
export function isAbsolutePath(p: string): boolean {
  return path.isAbsolute(expandHome(p));
}

function absolutePath(cfg: ConfigReader, key: string): string | undefined {
  const v = str(cfg, key);
  return v !== undefined && isAbsolutePath(v) ? expandHome(v) : undefined;
}

/** The path settings that are set but not absolute (so not forwarded): for a warning in the log. */
export function relativePathSettings(cfg: ConfigReader): string[] {
  return PATH_SETTINGS.filter((key) => {
    const v = str(cfg, key);
    return v !== undefined && !isAbsolutePath(v);
  });
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
  const modelPath = absolutePath(cfg, "local.modelPath");
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
      repositoryContext: bool(cfg, "completion.repositoryContext", true),
      prepareNext: bool(cfg, "completion.prepareNext", true),
      readAhead: bool(cfg, "completion.readAhead", true),
      continueTyped: bool(cfg, "completion.continueTyped", true),
      rememberEndpoints: bool(cfg, "completion.rememberEndpoints", true),
      latencyBudgetMs: int(cfg, "completion.latencyBudgetMs", 0, 0, 60000),
      minLineProbability: fraction(cfg, "completion.minLineProbability", 0.05),
    },
    chat: {
      codebase: bool(cfg, "chat.codebase", true),
      maxTokens: int(cfg, "chat.maxTokens", 0, 0, 32768),
      contextTokens: int(cfg, "chat.contextTokens", 0, 0, 10_000_000),
    },
    local: {
      enabled: bool(cfg, "local.enabled", true),
      ...(localModel ? { model: localModel } : {}),
      ...(modelPath ? { modelPath } : {}),
      ...(bool(cfg, "local.speculative", true) ? {} : { speculative: false as const }),
    },
  };
  const provider = str(cfg, "provider");
  const model = str(cfg, "model");
  const baseUrl = str(cfg, "baseUrl");
  const caBundle = absolutePath(cfg, "caBundle");
  if (provider) settings.provider = provider;
  if (model) settings.model = model;
  if (baseUrl) settings.baseUrl = baseUrl;
  if (caBundle) settings.caBundle = caBundle;
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
  for (const key of ["provider", "model", "baseUrl", "caBundle"] as const) {
    if (started[key] !== undefined && next[key] === undefined) return true;
  }
  return started.local.modelPath !== undefined && next.local.modelPath === undefined;
}

/** Settings changes (`kestrel.server.*`) that only take effect with a new server process. */
export const RESTART_SECTIONS = ["kestrel.server"];
