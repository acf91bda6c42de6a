/**
 * The input's text and its picked mentions (pure: the tests check it, mentionPicker.ts acts): a pick
 * replaces the typed `#query` with the marker, a chip removed takes its marker out of the text, a
 * marker deleted from the text drops its chip, Backspace right after a marker deletes all of it.
 */
import type { Mention } from "../protocol";
import { hasMarker, type MentionTrigger } from "../mentions";

/** The text after a pick (the trigger's word replaced by the marker and a space) and the caret after them. */
export function insertPick(text: string, trigger: Pick<MentionTrigger, "start" | "end">, marker: string): { text: string; caret: number } {
  const before = text.slice(0, trigger.start);
  const after = text.slice(trigger.end);
  const value = before + marker + (/^\s/.test(after) ? "" : " ") + after;
  return { text: value, caret: before.length + marker.length + 1 };
}

/** `picked` with `m` added (once: the same marker for the same thing). */
export function addPick(picked: readonly Mention[], m: Mention): Mention[] {
  const mention: Mention = { kind: m.kind, marker: m.marker, uri: m.uri, name: m.name };
  return picked.some((p) => p.marker === m.marker && p.uri === m.uri) ? [...picked] : [...picked, mention];
}

/** The picked mentions whose marker the text still holds. */
export const mentionsIn = (text: string, picked: readonly Mention[]) => picked.filter((m) => hasMarker(text, m.marker));

/** The text without `marker` wherever it stands whole, each with the space after it (or else before it). */
export function removeMarker(text: string, marker: string): string {
  let out = text;
  for (let i = out.indexOf(marker); i >= 0; i = out.indexOf(marker, Math.max(0, i - 1))) {
    const end = i + marker.length;
    const whole = (i === 0 || /\s/.test(out[i - 1])) && (end === out.length || /[\s.,;:!?)\]}'"`]/.test(out[end]));
    if (!whole) {
      i = end;
      continue;
    }
    if (out[end] === " ") out = out.slice(0, i) + out.slice(end + 1);
    else if (i > 0 && out[i - 1] === " ") out = out.slice(0, i - 1) + out.slice(end);
    else out = out.slice(0, i) + out.slice(end);
  }
  return out;
}

/** Backspace at `caret`: the whole marker when the caret is right after a picked one. */
export function markerBefore(text: string, caret: number, picked: readonly Mention[]): { start: number; end: number } | undefined {
  for (const m of picked) {
    const start = caret - m.marker.length;
    if (start >= 0 && text.slice(start, caret) === m.marker && (start === 0 || /\s/.test(text[start - 1]))) return { start, end: caret };
  }
  return undefined;
}
