/**
 * `#agent` in the chat (src/chat/agent.ts): which messages go to `kestrel/agent` and without the tag,
 * the files a step read as sources, the agent's result recorded as a chat answer; the picker offers
 * `#agent` and a typed `#agent` is a marker like `#codebase`.
 */
import { describe, expect, it } from "vitest";
import { agentMessages, asChatResult, stepLines, stepSources } from "../src/chat/agent";
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
    ] })).toEqual([
      "Proposed a change to a.py: kept", "Proposed a.py: rejected", "Proposed a change to a.py: kept in part",
      "Proposed a change to a.py: failed (old_text is not in a.py: read_file shows its lines as they are now)"]);
  });

  it("records the agent's answer as a chat answer, saying when it hit its step limit", () => {
    const done = asChatResult({ id: "a", text: "It is in utils.", steps: [] }, []);
    expect(done).toEqual({ id: "a", text: "It is in utils.", ttftMs: null, steers: [], lastSegment: "It is in utils." });
    const limited = asChatResult({ id: "a", text: "Still looking", steps: [], stepLimit: true, error: "x" }, []);
    expect(limited.text).toMatch(/^Still looking\n\n.*step limit.*continue #agent/);
    expect(limited.error).toBe("x");
  });

  it("is a marker and a mention the picker can write", () => {
    expect(parseMarkers("find it #agent please").map((m) => m.kind)).toEqual(["agent"]);
    expect(parseMentionUri(AGENT_URI)).toEqual({ scheme: "agent" });
  });
});
