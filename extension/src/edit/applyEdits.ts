/** Pure helpers for inline edits: apply LSP-style edits to a string (for previews and tests). */
import type { Position, TextEdit } from "../protocol";

function offsets(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  return starts;
}

/** Apply non-overlapping edits computed against `text` (UTF-16 columns, as JS strings are). */
export function applyEdits(text: string, edits: TextEdit[]): string {
  const starts = offsets(text);
  const at = (p: Position) => Math.min((starts[p.line] ?? text.length) + p.character, text.length);
  const sorted = [...edits].sort((a, b) => at(b.range.start) - at(a.range.start));
  let out = text;
  for (const e of sorted) out = out.slice(0, at(e.range.start)) + e.newText + out.slice(at(e.range.end));
  return out;
}

/** The text the model is writing for the region, shown while it streams: code fences dropped. */
export function previewText(streamed: string): string {
  const fence = streamed.indexOf("```");
  if (fence < 0) return streamed;
  const body = streamed.slice(streamed.indexOf("\n", fence) + 1);
  const end = body.indexOf("```");
  return end < 0 ? body : body.slice(0, end);
}
