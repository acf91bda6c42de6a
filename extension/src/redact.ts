/**
 * Keeps API keys out of every log line and every string the extension shows. The server redacts
 * what it sends too (`pyserver/kestrel/redact.py`); both run the same table of cases
 * (`tests/security/redaction_cases.json`, here in `extension/test/redact.test.ts`).
 *
 * Three nets:
 * - the keys the extension knows (the stored ones), in any case, and any token carrying 8 or more of a
 *   key's first or last characters (endpoints echo keys truncated: "sk-abc1***wxyz");
 * - anything shaped like a supported provider's key: OpenAI `sk-…`/`sk-proj-…`, Anthropic
 *   `sk-ant-…`, Groq `gsk_…`, Cerebras `csk-…`, xAI `xai-…`, also masked with `*` or `...` (exactly
 *   these prefixes: `sk_X509_free` in OpenSSL code is not a key);
 * - bearer and basic credentials (16+ characters or with a digit: "Bearer Authentication" in prose
 *   stays), `"apiKey": "…"` fields in traced JSON, and fields named as API keys in any other syntax
 *   (`x-api-key: …`, `OPENAI_API_KEY=…`) whose value looks like a key.
 */

const REDACTED = "[redacted]";
const FRAGMENT = 8;

/** Kept in step with `_KEY_SHAPE`, `_BEARER`, `_JSON_KEY_FIELD`, `_NAMED_KEY_FIELD` in pyserver/kestrel/redact.py. */
export const KEY_PATTERNS = {
  keyShape: /\b(?:sk-|gsk_|csk-|xai-)[A-Za-z0-9_\-*.\u2026]{8,}/g,
  bearer: /\b((?:[Bb][Ee][Aa][Rr][Ee][Rr]|[Bb][Aa][Ss][Ii][Cc])\s+)[A-Za-z0-9._~+/=\-*\u2026]{8,}/g,
  jsonKeyField: /("api_?key"\s*:\s*")((?:[^"\\]|\\.){8,})(")/gi,
  // A credential by its field's name in any other syntax (`x-api-key:`, `OPENAI_API_KEY=`, `'api_key': '`);
  // the value must look like a key (16+ characters, letters and digits), so code that reads one stays.
  namedKeyField: /(api[_-]?key['"]?\s*[:=]\s*['"]?)([A-Za-z0-9_~+/=\-*\u2026]{16,})/gi,
} as const;
const TOKEN_CHAR = /[A-Za-z0-9_\-*.\u2026~+/=]/;

/** Widen [start, end) to the whole key-like token around it (a truncated echo goes with it). */
function tokenBounds(text: string, start: number, end: number): [number, number] {
  while (start > 0 && TOKEN_CHAR.test(text[start - 1])) start--;
  while (end < text.length && TOKEN_CHAR.test(text[end])) end++;
  while (end > start && text[end - 1] === ".") end--; // a full stop ends a sentence, not a key
  return [start, end];
}

function maskFragments(text: string, secret: string): string {
  if (secret.length < FRAGMENT) return text;
  for (const probe of new Set([secret.slice(0, FRAGMENT), secret.slice(-FRAGMENT)])) {
    let at = text.indexOf(probe);
    while (at !== -1) {
      const [start, end] = tokenBounds(text, at, at + FRAGMENT);
      text = text.slice(0, start) + REDACTED + text.slice(end);
      at = text.indexOf(probe, start + REDACTED.length);
    }
  }
  return text;
}

/** `text` without the given keys and without anything key-shaped. */
export function redactText(text: string, secrets: Iterable<string>): string {
  let out = text;
  const low = text.toLowerCase(); // masking only removes text: what `low` lacks, `out` lacks too
  for (const s of secrets) {
    // In any case (a log that upper-cases a header's value).
    if (low.includes(s.toLowerCase())) out = out.replace(new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi"), REDACTED);
    out = maskFragments(out, s);
  }
  return out
    .replace(KEY_PATTERNS.keyShape, REDACTED)
    // Tokens are long or have digits; the word after "Bearer" in prose ("Bearer Authentication") is not.
    .replace(KEY_PATTERNS.bearer, (m: string, a: string) => (m.length - a.length >= 16 || /\d/.test(m.slice(a.length)) ? `${a}${REDACTED}` : m))
    .replace(KEY_PATTERNS.namedKeyField, (m: string, a: string, v: string) => (/\d/.test(v) && /[A-Za-z]/.test(v) ? `${a}${REDACTED}` : m))
    .replace(KEY_PATTERNS.jsonKeyField, (_m, a: string, _v: string, c: string) => `${a}${REDACTED}${c}`);
}

/**
 * Fields that carry code the editor inserts into the user's file (a completion, a text edit): only
 * the keys the extension holds are removed there, verbatim. A key-shaped literal the user's code
 * already has (a test fixture) must reach the file unchanged. Same as CODE_FIELDS in redact.py.
 */
export const CODE_FIELDS: ReadonlySet<string> = new Set(["newText", "insertText"]);

export class Redactor {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined): void {
    if (secret && secret.length >= 4) this.secrets.add(secret);
  }

  redact(text: string): string {
    return redactText(text, this.secrets);
  }

  private removeHeld(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /** `value` with every string in it redacted (objects and arrays are copied; property names lose only the held keys). */
  redactDeep<T>(value: T): T {
    if (typeof value === "string") return this.redact(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.redactDeep(v)) as T;
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        out[this.removeHeld(k)] = CODE_FIELDS.has(k) && typeof v === "string" ? this.removeHeld(v) : this.redactDeep(v);
      }
      return out as T;
    }
    return value;
  }
}

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

/**
 * The server logs `2026-11-23 10:00:00,123 INFO kestrel.session: message` on stderr.
 * Map it to an output-channel level and drop the server's own timestamp (the channel adds one).
 */
export function parseServerLogLine(line: string): { level: LogLevel; text: string } {
  const m = /^\d{4}-\d\d-\d\d[ T][\d:,.]+\s+(DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+(.*)$/.exec(line);
  if (!m) return { level: "info", text: line };
  const level: LogLevel =
    m[1] === "DEBUG" ? "debug" : m[1] === "INFO" ? "info" : m[1] === "WARNING" ? "warn" : "error";
  return { level, text: m[2] };
}
