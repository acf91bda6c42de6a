/**
 * The extension's redactor runs the same table of cases as the server's
 * (`tests/security/redaction_cases.json`): both cover every supported provider's key format, keys
 * they were given (also echoed truncated), bearer tokens and apiKey fields. And every message from
 * the server passes it before the extension reads or shows anything (languageClient.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";

const captured: { clientOptions?: { connectionOptions?: { messageStrategy?: { handleMessage: (m: unknown, next: (m: unknown) => unknown) => unknown } } } } = {};

vi.mock("vscode", () => ({}));
vi.mock("vscode-languageclient/node", () => ({
  ErrorAction: { Continue: 1 },
  RevealOutputChannelOn: { Never: 4 },
  LanguageClient: class {
    constructor(_id: string, _name: string, _serverOptions: never, clientOptions: never) {
      captured.clientOptions = clientOptions;
    }
  },
}));

import { createLanguageClient } from "../src/languageClient";
import { Redactor, redactText } from "../src/redact";

interface Case {
  name: string;
  text: string;
  secrets: string[];
  absent: string[];
  present: string[];
}

const TABLE = path.resolve(__dirname, "..", "..", "tests", "security", "redaction_cases.json");
const CASES: Case[] = JSON.parse(fs.readFileSync(TABLE, "utf8")).cases;

describe("the shared redaction table", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const out = redactText(c.text, c.secrets);
    expect(c.absent.filter((a) => out.includes(a)), out).toEqual([]);
    expect(c.present.filter((p) => !out.includes(p)), out).toEqual([]);
  });
});

describe("messages from the server", () => {
  const KEY = "stored-canary-key-0a1b2c3d4e5f";
  const GROQ = "gsk_UnknownToTheClient0a1b2c3d4e5f";

  it("are redacted, every string at any depth, before anything reads them", () => {
    const redactor = new Redactor();
    redactor.add(KEY);
    const hooks = { log: {} as never, initializationOptions: () => ({}), middleware: {}, closed: () => ({}) as never,
      redact: <T,>(m: T) => redactor.redactDeep(m) };
    createLanguageClient({ command: "python3", args: ["-m", "kestrel"], source: "python3", python: "python3" }, hooks);
    const strategy = captured.clientOptions?.connectionOptions?.messageStrategy;
    expect(strategy).toBeDefined();
    const hostile = [
      { jsonrpc: "2.0", method: "kestrel/status", params: { state: "error", message: `Incorrect API key provided: ${KEY.slice(0, 10)}...${KEY.slice(-4)}` } },
      { jsonrpc: "2.0", method: "kestrel/chatResumed", params: { id: "t1", at: 0, reason: `the model reported an error: Invalid API Key: ${GROQ}` } },
      { jsonrpc: "2.0", id: 3, result: { id: "t1", text: "", error: `Authorization: Bearer ${KEY}`, steers: [] } },
      { jsonrpc: "2.0", id: 4, error: { code: -32603, message: `failed for ${KEY}` } },
      { jsonrpc: "2.0", id: 5, method: "window/showMessageRequest", params: { type: 1, message: `key ${GROQ}`, actions: [{ title: KEY }] } },
    ];
    const seen: unknown[] = [];
    for (const m of hostile) strategy!.handleMessage(m, (clean) => seen.push(clean));
    const text = JSON.stringify(seen);
    expect(seen).toHaveLength(hostile.length);
    for (const leak of [KEY, KEY.slice(0, 8), KEY.slice(-8), GROQ, GROQ.slice(4, 12)]) expect(text).not.toContain(leak);
    expect(text).toContain('"method":"kestrel/chatResumed"'); // the message itself is intact
    expect((seen[0] as { params: { state: string } }).params.state).toBe("error");
  });

  it("lose a held key used as a property name (other names stay)", () => {
    const redactor = new Redactor();
    redactor.add(KEY);
    const out = redactor.redactDeep({ error: { data: { [KEY]: { remaining: 0 }, apiKey: "x" } } });
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(out.error.data).toEqual({ "[redacted]": { remaining: 0 }, apiKey: "x" });
  });

  it("leave key-shaped literals in code the editor inserts, but never a held key", () => {
    const redactor = new Redactor();
    redactor.add(KEY);
    const fixture = 'FAKE = "sk-test-0123456789abcdef"';
    const out = redactor.redactDeep({ result: { edits: [{ newText: fixture }], items: [{ insertText: `${fixture} # ${KEY}` }], error: fixture } });
    expect(out.result.edits[0].newText).toBe(fixture);
    expect(out.result.items[0].insertText).toBe(`${fixture} # [redacted]`);
    expect(out.result.error).not.toContain("sk-test-0123456789abcdef");
  });
});
