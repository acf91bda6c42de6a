/**
 * Which stored API key belongs to which provider and endpoint. No `vscode` import: unit-tested.
 *
 * A key is stored for what it was entered for: the provider (a preset's name, or "custom" for a
 * raw transport) and, when `kestrel.baseUrl` is set, that endpoint's origin (scheme, host, port).
 * The server gets the key together with that binding (`kestrel/setApiKey {apiKey, provider,
 * baseUrl}`) and sends it nowhere else (`pyserver/kestrel/keys.py`), so switching the provider or
 * the endpoint — by the user or by a workspace's settings — never takes a key along.
 */
import { KEYED_PRESETS, PRESETS, TRANSPORTS, type ConfigReader } from "./settings";

/** What a key is bound to; also what `kestrel/setApiKey` carries next to the key. */
export interface KeyBinding {
  provider: string;
  baseUrl?: string;
}

/** A stored key and what it is bound to. */
export interface BoundApiKey extends KeyBinding {
  apiKey: string;
}

/** Where the single key of earlier versions was stored (it was sent to whichever provider was set). */
export const LEGACY_SLOT = "kestrel.apiKey";
const SLOT_PREFIX = "kestrel.apiKey:";
const CUSTOM = "custom";
const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };

/**
 * A URL that parsers read differently is bound to nothing (as in `pyserver/kestrel/keys.py`): Node's
 * URL reads `\` as `/`, Python's urlsplit does not, so `https://gateway:443\@evil/v1` is `gateway`
 * here and `evil` to the server. User info (`user@`), spaces and control characters likewise.
 */
const AMBIGUOUS = /[\\\s\x00-\x1f\x7f]/;

function ambiguous(url: string): boolean {
  const scheme = url.indexOf("://");
  const rest = scheme >= 0 ? url.slice(scheme + 3) : url;
  return AMBIGUOUS.test(url) || rest.split("/", 1)[0].includes("@");
}

/** `scheme://host:port` with the default port spelled out; undefined when `url` is not one (or is ambiguous). */
export function origin(url: string): string | undefined {
  if (ambiguous(url)) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const port = u.port || DEFAULT_PORTS[u.protocol];
  if (!port || !u.hostname) return undefined;
  return `${u.protocol}//${u.hostname.toLowerCase()}:${port}`;
}

/** The preset a provider name selects (the server reads `Groq` as `groq`), or CUSTOM. */
function label(provider: string): string {
  const name = provider.toLowerCase();
  return (PRESETS as readonly string[]).includes(name) ? name : CUSTOM;
}

/**
 * The binding a slot stands for, as the server is to bind the key: the preset (or a raw transport
 * for CUSTOM) and the origin alone. The key goes to the server with this, not with the settings
 * as written, so that whatever the settings name besides (a path, a spelling two URL parsers read
 * differently) the server binds the key to where it was entered for, and sends it nowhere else.
 */
export function canonical(b: KeyBinding): KeyBinding {
  const preset = label(b.provider);
  const provider = preset !== CUSTOM ? preset : (TRANSPORTS as readonly string[]).includes(b.provider) ? b.provider : "chat";
  if (!b.baseUrl) return { provider };
  return { provider, baseUrl: origin(b.baseUrl) ?? b.baseUrl };
}

/** The SecretStorage key a binding's API key lives under. */
export function slotOf(b: KeyBinding): string {
  const where = b.baseUrl ? (origin(b.baseUrl) ?? b.baseUrl) : "default";
  return `${SLOT_PREFIX}${label(b.provider)}@${where}`;
}

export function isKeySlot(secretKey: string): boolean {
  return secretKey === LEGACY_SLOT || secretKey.startsWith(SLOT_PREFIX);
}

/** The binding the current settings would use a key for; undefined when no provider is chosen. */
export function bindingOf(cfg: ConfigReader): KeyBinding | undefined {
  const text = (key: string): string | undefined => {
    const v = cfg.get<unknown>(key);
    return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
  };
  const provider = text("provider");
  if (!provider) return undefined;
  const baseUrl = text("baseUrl");
  return baseUrl ? { provider, baseUrl } : { provider };
}

/** Whether a key stored for `a` is the key for `b` (the same storage slot). */
export function sameBinding(a: KeyBinding | undefined, b: KeyBinding | undefined): boolean {
  return a !== undefined && b !== undefined && slotOf(a) === slotOf(b);
}

/** "groq (https://api.groq.com:443)" or "groq (its default endpoint)", for prompts. */
export function describeBinding(b: KeyBinding): string {
  return `${b.provider} (${b.baseUrl ? (origin(b.baseUrl) ?? b.baseUrl) : "its default endpoint"})`;
}

/**
 * The provider a key of an earlier version was meant for, from its shape: Groq `gsk_`, Cerebras
 * `csk-`, OpenAI `sk-` (not Anthropic's `sk-ant-`). Undefined when the shape does not say.
 */
export function providerOfKeyShape(key: string): string | undefined {
  if (key.startsWith("gsk_")) return "groq";
  if (key.startsWith("csk-")) return "cerebras";
  if (key.startsWith("sk-") && !key.startsWith("sk-ant-")) return "openai";
  return undefined;
}

/** Hosted presets need a key; a raw transport to another machine probably does; a local server does not. */
export function needsKey(b: KeyBinding): boolean {
  if (KEYED_PRESETS.includes(b.provider)) return true;
  if (!(TRANSPORTS as readonly string[]).includes(b.provider)) return false;
  let host = "";
  try {
    host = new URL(b.baseUrl ?? "").hostname;
  } catch {
    return true; // no endpoint yet: the server's default is OpenAI's
  }
  return !["127.0.0.1", "localhost", "[::1]", "::1"].includes(host);
}
