import { describe, expect, it } from "vitest";
import { applyEdits, previewText } from "../src/edit/applyEdits";

describe("inline edit helpers", () => {
  it("applies several edits computed against the same text", () => {
    const text = "a = 1\nb = 2\nc = 3\n";
    const out = applyEdits(text, [
      { range: { start: { line: 0, character: 4 }, end: { line: 0, character: 5 } }, newText: "10" },
      { range: { start: { line: 2, character: 4 }, end: { line: 2, character: 5 } }, newText: "30" },
    ]);
    expect(out).toBe("a = 10\nb = 2\nc = 30\n");
  });

  it("previews only the code of a fenced answer, even mid-stream", () => {
    expect(previewText("Sure:\n```python\nx = 1\n```\nDone")).toBe("x = 1\n");
    expect(previewText("```python\nx = 1\ny")).toBe("x = 1\ny");
    expect(previewText("x = 2")).toBe("x = 2");
  });
});
