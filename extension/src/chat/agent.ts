/**
 * `#agent` in a chat message: the turn goes to the server's agent (`kestrel/agent`), which reads the
 * workspace through tools until it can answer and, in a trusted workspace, proposes changes that VS Code
 * shows in its Refactor Preview (the server's `workspace/applyEdit`, every hunk needing confirmation). Here only what the panel needs: whether a
 * message asks for it (and the message without the tag), the files a step read as the answer's
 * sources, and the agent's result in the shape of a chat answer.
 */
import type { AgentResult, AgentStepParams, AgentToolCall, ChatMessage, ChatResult, SourceRef } from "../protocol";

const TAG = /(^|\s)#agent\b/;

/** The messages without the tag when the last one (the question) holds `#agent`; else undefined. */
export function agentMessages(messages: ChatMessage[]): ChatMessage[] | undefined {
  const last = messages[messages.length - 1];
  if (!last || last.role !== "user" || typeof last.content !== "string" || !TAG.test(last.content)) return undefined;
  const content = last.content.replace(TAG, "$1").replace(/[ \t]{2,}/g, " ").trim();
  return [...messages.slice(0, -1), { role: "user", content }];
}

const READ = /^(.+?) lines (\d+)-(\d+) of \d+:/;

/** The files a step read (`read_file` calls that worked), as sources: `uriOf` makes a workspace path a URI. */
export function stepSources(step: AgentStepParams, uriOf: (path: string) => string | undefined): SourceRef[] {
  const out: SourceRef[] = [];
  for (const call of step.calls ?? []) {
    if (call.name !== "read_file" || !call.ok) continue;
    const m = READ.exec(call.result ?? "");
    if (!m) continue;
    const uri = uriOf(m[1]);
    if (!uri) continue;
    const first = Number(m[2]) - 1;
    const last = Number(m[3]);
    out.push({ uri, path: m[1], range: { start: { line: first, character: 0 }, end: { line: last, character: 0 } } });
  }
  return out;
}

const WHAT: Record<string, (a: Record<string, unknown>) => string> = {
  read_file: (a) => `Read ${a.path}${a.start_line ? ` from line ${a.start_line}` : ""}`,
  list_files: (a) => `Listed files${a.glob ? ` matching ${a.glob}` : ""}`,
  grep: (a) => `Searched files for /${a.pattern}/${a.glob ? ` in ${a.glob}` : ""}`,
  search_code: (a) => `Searched the code for “${a.query}”`,
  edit_file: (a) => `Proposed a change to ${a.path}`,
  write_file: (a) => `Proposed ${a.path}`,
  replace_symbol: (a) => `Proposed a new ${a.symbol} in ${a.path}`,
  rename_symbol: (a) => `Proposed renaming ${a.symbol} to ${a.new_name}`,
  run_command: (a) => `Ran “${clip(String(a.command ?? ""))}”`,
};

const WRITES = new Set(["edit_file", "write_file", "replace_symbol", "rename_symbol"]);

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** A command's outcome (the tool's result says which); "" when the result is not one of those. */
function ran(call: AgentToolCall): string {
  const cmd = clip(String((call.arguments as Record<string, unknown>)?.command ?? ""));
  const head = (call.result ?? "").split("\n", 1)[0];
  if (head.startsWith("The user chose not to run")) return `Asked to run “${cmd}”: you chose not to`;
  const code = /exited with code (-?\d+)/.exec(head);
  if (code) return `Ran “${cmd}”: exit code ${code[1]}`;
  if (/was stopped by the user/.test(head)) return `Ran “${cmd}”: stopped`;
  if (/and was ended/.test(head)) return `Ran “${cmd}”: ended at the time limit`;
  return "";
}

/** A write's outcome as the user decided it in the review (the tool's result says which). */
function reviewed(result: string | undefined): string {
  const text = result ?? "";
  if (text.startsWith("The user accepted")) return "kept";
  if (text.startsWith("The user kept only part")) return "kept in part";
  if (text.startsWith("The user rejected")) return "rejected";
  return "";
}

/** What a step did, one line per tool call, as the panel lists it above the answer ("Read src/a.py"). */
export function stepLines(step: AgentStepParams): string[] {
  return (step.calls ?? []).map((call) => {
    const args = call.arguments && typeof call.arguments === "object" ? call.arguments : {};
    const what = WHAT[call.name]?.(args) ?? `Called ${call.name}`;
    const review = WRITES.has(call.name) ? reviewed(call.result) : "";
    if (review) return `${what}: ${review}`;
    const outcome = call.name === "run_command" ? ran(call) : "";
    if (outcome) return outcome;
    return call.ok ? what : `${what}: failed (${firstLine(call.result)})`;
  });
}

function firstLine(text: string | undefined): string {
  return clip((text ?? "").split("\n", 1)[0].trim());
}

/** The agent's answer as the chat records an answer; a run that hit its step limit says so. */
export function asChatResult(result: AgentResult, sources: SourceRef[]): ChatResult {
  const note = result.stepLimit ? "\n\n*(The agent stopped at its step limit: send “continue #agent” to go on.)*" : "";
  const out: ChatResult = { id: result.id, text: result.text + note, ttftMs: null, steers: [], lastSegment: result.text };
  if (result.error) out.error = result.error;
  if (result.stopped) out.stopped = true;
  if (result.trimmed) out.trimmed = result.trimmed; // shown under the answer, as a chat answer's
  if (sources.length) out.sources = sources;
  return out;
}
