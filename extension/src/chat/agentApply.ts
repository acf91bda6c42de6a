/**
 * The agent's proposed changes on their way through the client (the language client's
 * `workspace.handleApplyEdit` middleware): an edit that carries the server's `kestrel-agent` change
 * annotation is applied as any other (VS Code's Refactor Preview asks first), and what the user kept
 * is read back so that the answer records it with a checkpoint to restore, as Apply all does. Other
 * edits (quick fixes) pass untouched.
 */
import type { ApplyWorkspaceEditParams, TextEdit as LspTextEdit, WorkspaceEdit } from "vscode-languageclient";
import { applyEdits } from "../edit/applyEdits";
import type { AppliedFile, ApplyOutcome } from "./review";

export const AGENT_ANNOTATION = "kestrel-agent";

export function isAgentEdit(params: ApplyWorkspaceEditParams): boolean {
  return Boolean(params.edit.changeAnnotations?.[AGENT_ANNOTATION]);
}

/** Each file the edit changes: its text before (null: the edit creates it) and as proposed. */
export async function plannedFiles(edit: WorkspaceEdit, read: (uri: string) => Promise<string | undefined>): Promise<AppliedFile[]> {
  const created = new Set<string>();
  const out: AppliedFile[] = [];
  for (const change of edit.documentChanges ?? []) {
    if ("kind" in change) {
      if (change.kind === "create") created.add(change.uri);
      continue;
    }
    const uri = change.textDocument.uri;
    const before = created.has(uri) ? null : (await read(uri)) ?? null;
    out.push({ uri, path: uri, before, after: applyEdits(before ?? "", change.edits as LspTextEdit[]) });
  }
  return out;
}

/** What the user kept: a file whose text is no longer what it was (all or part of the proposal) was
 * applied, as it reads now; one that still reads as before (or a new file that does not exist) was left out. */
export function keptOf(planned: AppliedFile[], now: (uri: string) => string | undefined, rel: (uri: string) => string): ApplyOutcome {
  const outcome: ApplyOutcome = { applied: [], left: [] };
  for (const f of planned) {
    const text = now(f.uri);
    if (text === undefined || text === f.before) outcome.left.push(rel(f.uri));
    else outcome.applied.push({ ...f, path: rel(f.uri), after: text });
  }
  return outcome;
}

/** Two batches of one answer as one record: the first text each file had is what a restore puts back. */
export function mergeOutcomes(a: ApplyOutcome | undefined, b: ApplyOutcome): ApplyOutcome {
  if (!a) return b;
  const applied = [...a.applied];
  for (const f of b.applied) {
    const k = applied.findIndex((g) => g.uri === f.uri);
    if (k >= 0) applied[k] = { ...applied[k], after: f.after };
    else applied.push(f);
  }
  const kept = new Set(applied.map((f) => f.path));
  const left = [...new Set([...a.left, ...b.left])].filter((p) => !kept.has(p));
  return { applied, left };
}
