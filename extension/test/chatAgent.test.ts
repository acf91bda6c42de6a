/**
 * `#agent` in the chat (src/chat/agent.ts): which messages go to `kestrel/agent` and without the tag,
 * the files a step read as sources, the agent's result recorded as a chat answer; the picker offers
 * `#agent` and a typed `#agent` is a marker like `#codebase`.
 */
import { describe, expect, it } from "vitest";
import { agentMessages, asChatResult, stepLines, stepSources } from "../src/chat/agent";
import { AGENT_ANNOTATION, isAgentEdit, keptOf, mergeOutcomes, plannedFiles } from "../src/chat/agentApply";
import { AGENT_URI, parseMarkers, parseMentionUri } from "../src/chat/mentions";

describe("#agent", () => {
  it("sends the question without the tag, only when the question holds it", () => {
    const system = { role: "system", content: "Be brief." };
    expect(agentMessages([system, { role: "user", content: "#agent where is parse_due defined?" }])).toEqual([
      system, { role: "user", content: "where is parse_due defined?" }]);
    expect(agentMessages([{ role: "user", content: "Where is it? #agent" }])).toEqual([{ role: "user", content: "Where is it?" }]);
    expect(agentMessages([{ role: "user", content: "the #agentic way, or x#agent" }])).toBeUndefined();
    expect(agentMessages([{ role: "user", content: "#agent earlier" }, { role: "assistant", content: "ok" }])).toBeUndefined();
  });

  it("takes the files a step read as sources, with their lines", () => {
    const step = { id: "a", step: 1, calls: [
      { name: "read_file", arguments: { path: "tasky/utils.py" }, found: "text" as const, ok: true, result: "tasky/utils.py lines 1-4 of 4:\n1: def parse_due" },
      { name: "read_file", arguments: { path: ".env" }, found: "text" as const, ok: false, result: ".env is a file Kestrel never sends" },
      { name: "grep", arguments: { pattern: "x" }, found: "native" as const, ok: true, result: "tasky/a.py:3: x" },
    ] };
    expect(stepSources(step, (p) => `file:///ws/${p}`)).toEqual([
      { uri: "file:///ws/tasky/utils.py", path: "tasky/utils.py", range: { start: { line: 0, character: 0 }, end: { line: 4, character: 0 } } }]);
    expect(stepSources(step, () => undefined)).toEqual([]);
  });

  it("says what a step did, a line per call, failures with their reason", () => {
    const step = { id: "a", step: 2, calls: [
      { name: "search_code", arguments: { query: "parse due" }, found: "text" as const, ok: true, result: "..." },
      { name: "read_file", arguments: { path: "a.py", start_line: 40 }, found: "text" as const, ok: true, result: "..." },
      { name: "read_file", arguments: { path: ".env" }, found: "text" as const, ok: false, result: ".env is a file Kestrel never sends\nmore" },
      { name: "grep", arguments: { pattern: "def \\w+", glob: "*.py" }, found: "repaired" as const, ok: true, result: "" },
      { name: "list_files", arguments: {}, found: "native" as const, ok: true, result: "" },
      { name: "rm_rf", arguments: {}, found: "text" as const, ok: false, result: "no such tool" },
    ] };
    expect(stepLines(step)).toEqual([
      "Searched the code for “parse due”", "Read a.py from line 40", "Read .env: failed (.env is a file Kestrel never sends)",
      "Searched files for /def \\w+/ in *.py", "Listed files", "Called rm_rf: failed (no such tool)"]);
    expect(stepLines({ id: "a", step: 1, calls: [] })).toEqual([]); // an answer set aside: nothing to list
  });

  it("says what the user decided about each change the agent proposed", () => {
    const write = (name: string, ok: boolean, result: string) => ({ name, arguments: { path: "a.py" }, found: "text" as const, ok, result });
    expect(stepLines({ id: "a", step: 2, calls: [
      write("edit_file", true, "The user accepted the change: a.py changed (+1 -1 lines)."),
      write("write_file", false, "The user rejected this change to a.py: it was not made."),
      write("edit_file", true, "The user kept only part of this change to a.py: the parts left out were rejected."),
      write("edit_file", false, "old_text is not in a.py: read_file shows its lines as they are now"),
      { ...write("replace_symbol", true, "The user accepted the change: a.py changed (+2 -1 lines)."), arguments: { path: "a.py", symbol: "parse" } },
      { ...write("rename_symbol", false, "The user kept only part of this change; the rest was not made:\nThe user accepted…"),
        arguments: { path: "a.py", symbol: "parse", new_name: "read" } },
    ] })).toEqual([
      "Proposed a change to a.py: kept", "Proposed a.py: rejected", "Proposed a change to a.py: kept in part",
      "Proposed a change to a.py: failed (old_text is not in a.py: read_file shows its lines as they are now)",
      "Proposed a new parse in a.py: kept", "Proposed renaming parse to read: kept in part"]);
  });

  it("says what came of each command the agent asked to run", () => {
    const run = (command: string, ok: boolean, result: string) => ({ name: "run_command", arguments: { command }, found: "text" as const, ok, result });
    expect(stepLines({ id: "a", step: 1, calls: [
      run("pytest -q", true, "`pytest -q` exited with code 0 after 1.2 s. Output:\n3 passed"),
      run("pytest -q tests/test_" + "x".repeat(100), false, "`pytest ...` exited with code 1 after 0.5 s. Output:\nFAILED"),
      run("touch pwned", false, "The user chose not to run `touch pwned`; it was not run. Do not ask for it again; go on without it or answer."),
      run("sleep 60", false, "`sleep 60` was stopped by the user after 3.0 s. Output:\n(no output)"),
      run("make", false, "`make` ran longer than 120 s and was ended. Output:\n..."),
      run("", false, "run_command needs a `command`: the command line to run"),
    ] })).toEqual([
      "Ran “pytest -q”: exit code 0", `Ran “pytest -q tests/test_${"x".repeat(58)}…”: exit code 1`,
      "Asked to run “touch pwned”: you chose not to", "Ran “sleep 60”: stopped", "Ran “make”: ended at the time limit",
      "Ran “”: failed (run_command needs a `command`: the command line to run)"]);
  });

  it("records the agent's answer as a chat answer, saying when it hit its step limit", () => {
    const done = asChatResult({ id: "a", text: "It is in utils.", steps: [] }, []);
    expect(done).toEqual({ id: "a", text: "It is in utils.", ttftMs: null, steers: [], lastSegment: "It is in utils." });
    const limited = asChatResult({ id: "a", text: "Still looking", steps: [], stepLimit: true, error: "x" }, []);
    expect(limited.text).toMatch(/^Still looking\n\n.*step limit.*continue #agent/);
    expect(limited.error).toBe("x");
    const trimmed = asChatResult({ id: "a", text: "Done", steps: [], trimmed: "2 tool results were shortened" }, []);
    expect(trimmed.trimmed).toBe("2 tool results were shortened");
    expect(done.trimmed).toBeUndefined();
  });

  it("is a marker and a mention the picker can write", () => {
    expect(parseMarkers("find it #agent please").map((m) => m.kind)).toEqual(["agent"]);
    expect(parseMentionUri(AGENT_URI)).toEqual({ scheme: "agent" });
  });
});

describe("the agent's changes as the client applies them", () => {
  const edit = (uri: string, newText: string, line = 0) => ({
    textDocument: { uri, version: null },
    edits: [{ range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } }, newText, annotationId: AGENT_ANNOTATION }],
  });

  it("is the edit that carries the agent's annotation", () => {
    expect(isAgentEdit({ edit: { changeAnnotations: { [AGENT_ANNOTATION]: { label: "x", needsConfirmation: true } } } })).toBe(true);
    expect(isAgentEdit({ label: "Kestrel fix", edit: { changes: {} } })).toBe(false);
  });

  it("knows each file's text before and as proposed, a created file as new", async () => {
    const texts: Record<string, string> = { "file:///w/a.py": "x = 1\ny = 2\n" };
    const planned = await plannedFiles({ documentChanges: [
      edit("file:///w/a.py", "x = 10\n"),
      { kind: "create", uri: "file:///w/n.py", annotationId: AGENT_ANNOTATION },
      { textDocument: { uri: "file:///w/n.py", version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: "n = 1\n" }] },
    ] }, async (uri) => texts[uri]);
    expect(planned).toEqual([
      { uri: "file:///w/a.py", path: "file:///w/a.py", before: "x = 1\ny = 2\n", after: "x = 10\ny = 2\n" },
      { uri: "file:///w/n.py", path: "file:///w/n.py", before: null, after: "n = 1\n" },
    ]);
  });

  it("counts a file as kept when it no longer reads as before, as left out otherwise", () => {
    const planned = [
      { uri: "u:a", path: "u:a", before: "a\n", after: "A\n" },
      { uri: "u:b", path: "u:b", before: "b\n", after: "B\n" },
      { uri: "u:n", path: "u:n", before: null, after: "n\n" },
      { uri: "u:p", path: "u:p", before: "p\nq\n", after: "P\nQ\n" },
    ];
    const now: Record<string, string | undefined> = { "u:a": "A\n", "u:b": "b\n", "u:n": undefined, "u:p": "P\nq\n" };
    const kept = keptOf(planned, (u) => now[u], (u) => u.slice(2) + ".py");
    expect(kept.applied.map((f) => [f.path, f.after])).toEqual([["a.py", "A\n"], ["p.py", "P\nq\n"]]);
    expect(kept.left).toEqual(["b.py", "n.py"]);
  });

  it("merges two batches of one answer: the first text each file had is what a restore puts back", () => {
    const first = { applied: [{ uri: "u:a", path: "a.py", before: "0\n", after: "1\n" }], left: ["b.py"] };
    const second = { applied: [{ uri: "u:a", path: "a.py", before: "1\n", after: "2\n" }, { uri: "u:b", path: "b.py", before: "b\n", after: "B\n" }], left: [] };
    expect(mergeOutcomes(first, second)).toEqual({
      applied: [{ uri: "u:a", path: "a.py", before: "0\n", after: "2\n" }, { uri: "u:b", path: "b.py", before: "b\n", after: "B\n" }], left: [] });
    expect(mergeOutcomes(undefined, first)).toBe(first);
  });
});
