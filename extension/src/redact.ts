/** Keeps API keys out of every log line the extension writes (the server redacts its own too). */

const REDACTED = "[redacted]";
// `"apiKey": "..."` in traced JSON (initialize params, kestrel/setApiKey).
const API_KEY_JSON = /("api_?key"\s*:\s*")((?:[^"\\]|\\.)*)(")/gi;
// Bearer tokens and common key shapes, in case a key shows up in an error message.
const BEARER = /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g;
const KEY_SHAPES = /\b(sk|gsk|csk)-[A-Za-z0-9_-]{8,}/g;

export class Redactor {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined): void {
    if (secret && secret.length >= 4) this.secrets.add(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) {
      if (out.includes(s)) out = out.split(s).join(REDACTED);
    }
    return out
      .replace(API_KEY_JSON, (_m, a: string, _v: string, c: string) => `${a}${REDACTED}${c}`)
      .replace(BEARER, (_m, a: string) => `${a}${REDACTED}`)
      .replace(KEY_SHAPES, REDACTED);
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
