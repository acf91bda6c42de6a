/**
 * `#terminal`: the last command a terminal ran and its output, as shell integration reports them
 * (fired here as VS Code fires them): offered by the picker only once a command has finished, read
 * at send as the command line, exit code and output (escapes removed, the tail of a long log, keys
 * masked), and a clear notice when no terminal has reported anything.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { fake, type FakeTerminal } from "./fakeVscode";
import type { ToWebview } from "../src/chat/protocol";
import { TERMINAL_URI, parseMarkers, parseMentionUri } from "../src/chat/mentions";
import { MentionPicker } from "../src/chat/mentionPicker";
import { readMentions } from "../src/chat/mentionContext";
import { WorkspaceFiles } from "../src/chat/workspaceFiles";
import { MAX_OUTPUT_CHARS, TerminalHistory, plainOutput } from "../src/chat/terminalOutput";

const settle = () => new Promise((r) => setTimeout(r, 0));
beforeEach(() => fake.reset());

/** A command run in `terminal` as shell integration reports it: start (with its output stream), then end. */
async function ran(terminal: FakeTerminal, command: string, chunks: string[], exitCode?: number): Promise<void> {
  const execution = {
    commandLine: { value: command },
    read: async function* () {
      for (const c of chunks) yield c;
    },
  };
  fake.onDidStartTerminalShellExecution.fire({ terminal, execution });
  await settle();
  fake.onDidEndTerminalShellExecution.fire({ terminal, execution, exitCode });
  for (let i = 0; i < 5; i++) await settle();
}

const terminal = (name = "bash"): FakeTerminal => ({ name, sent: [], exitStatus: undefined, shellIntegration: {}, show: () => undefined, sendText: () => undefined });

describe("#terminal", () => {
  it("is a marker and a URI of its own", () => {
    expect(parseMarkers("why does #terminal fail?").map((m) => m.kind)).toEqual(["terminal"]);
    expect(parseMentionUri(TERMINAL_URI)).toEqual({ scheme: "terminal" });
  });

  it("turns terminal output into text: colours and titles out, a line redrawn with \\r as it ended", () => {
    expect(plainOutput("\u001b]633;C\u0007\u001b[31mFAILED\u001b[0m test_a\r\n10%\r50%\r100%\r\ndone")).toBe("FAILED test_a\n100%\ndone");
  });

  it("attaches the last finished command, its exit code and output, keys masked", async () => {
    const history = new TerminalHistory();
    const files = new WorkspaceFiles();
    const t = terminal();
    await ran(t, "ls", ["a.py\r\n"], 0);
    await ran(t, "pytest -q", ["\u001b[31mF\u001b[0m\r\n", "E   assert 2 == 3\r\n", "OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90\r\n", "1 failed\r\n"], 1);
    const read = await readMentions("why does this fail? #terminal", [], { files, offered: new Set(), terminal: history });
    expect(read.text).toContain('The last command run in the terminal "bash", exit code 1, and its output');
    expect(read.text).toContain("$ pytest -q\nF\nE   assert 2 == 3\n");
    expect(read.text).toContain("1 failed");
    expect(read.text).not.toContain("Ab12Cd34Ef56");
    expect(read.text).not.toContain("\u001b");
    expect(read.text).not.toContain("a.py"); // only the last command
    expect(read.labels).toEqual(["terminal: pytest -q"]);
    history.dispose();
    files.dispose();
  });

  it("keeps the end of a long log", async () => {
    const history = new TerminalHistory();
    const files = new WorkspaceFiles();
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}\r\n`);
    await ran(terminal(), "make", [...lines, "error: the build failed\r\n"], 2);
    const last = history.last()!;
    expect(last.output.length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS);
    expect(last.output.endsWith("error: the build failed")).toBe(true);
    expect(last.cut).toBeGreaterThan(0);
    const read = await readMentions("#terminal", [], { files, offered: new Set(), terminal: history });
    expect(read.text).toContain(`(its last ${last.output.length} characters)`);
    history.dispose();
    files.dispose();
  });

  it("is refused with a reason when no terminal has reported a command", async () => {
    const history = new TerminalHistory();
    const files = new WorkspaceFiles();
    const read = await readMentions("see #terminal", [], { files, offered: new Set(), terminal: history });
    expect(read.text).toBe("");
    expect(read.refused).toEqual([expect.stringMatching(/^terminal: no terminal has reported a command yet/)]);
    history.dispose();
    files.dispose();
  });

  it("is offered by the picker only once a command has finished", async () => {
    const history = new TerminalHistory();
    const files = new WorkspaceFiles();
    const posted: ToWebview[] = [];
    const picker = new MentionPicker(files, (m) => posted.push(m), 80, history);
    const kinds = () => {
      const rows = posted.filter((m): m is Extract<ToWebview, { type: "mentionItems" }> => m.type === "mentionItems");
      return rows[rows.length - 1].items.map((i) => i.kind);
    };
    await picker.query(1, "term");
    expect(kinds()).not.toContain("terminal");
    await ran(terminal(), "npm test", ["ok\r\n"], 0);
    await picker.query(2, "term");
    expect(kinds()).toContain("terminal");
    picker.dispose();
    history.dispose();
    files.dispose();
  });
});
