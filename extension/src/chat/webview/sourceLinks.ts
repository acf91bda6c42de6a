/** The Sources list's and the citations' buttons (markdown.ts writes them): what a click asks the host. */
import type { FromWebview } from "../protocol";

/** The `openSource` message for a button's data (`data-uri`, `data-start`, `data-end`), or undefined. */
export function openSourceMessage(data: { uri?: string; start?: string; end?: string }): Extract<FromWebview, { type: "openSource" }> | undefined {
  const start = Number(data.start);
  const end = Number(data.end ?? data.start);
  if (!data.uri || !Number.isInteger(start) || start < 0) return undefined;
  return {
    type: "openSource",
    uri: data.uri,
    range: { start: { line: start, character: 0 }, end: { line: Number.isInteger(end) && end >= start ? end : start, character: 0 } },
  };
}
