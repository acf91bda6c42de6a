import { describe, expect, it } from "vitest";
import type { Chip, CodeBlock } from "../src/chat/protocol";
import { ChipChoices, attachedKinds, contextLabels } from "../src/chat/webview/chips";
import { applyAllBlocks } from "../src/chat/webview/codeActions";
import { formatWhen, matchesSearch } from "../src/chat/webview/history";
import { pageHtml } from "../src/chat/webview/page";

const chip = (kind: Chip["kind"], enabled: boolean, label: string = kind, available?: boolean): Chip => ({ kind, label, enabled, available });

describe("webview chips", () => {
  it("keeps the user's choice per kind across the host's refreshes, with the new labels", () => {
    const choices = new ChipChoices();
    choices.choose("openFiles", true);
    choices.choose("file", false);
    const refreshed = choices.apply([chip("file", true, "utils.py"), chip("openFiles", false, "2 open files"), chip("selection", false)]);
    expect(refreshed.map((c) => [c.kind, c.label, c.enabled])).toEqual([
      ["file", "utils.py", false],
      ["openFiles", "2 open files", true],
      ["selection", "selection", false],
    ]);
    choices.reset(); // a new chat
    expect(choices.apply([chip("file", true)])[0].enabled).toBe(true);
  });

  it("attaches the chips that are on and have something to attach", () => {
    expect(attachedKinds([chip("file", true), chip("selection", true, "selection", false), chip("openFiles", false), chip("diagnostics", true, "d", true)])).toEqual(["file", "diagnostics"]);
  });
});

describe("webview question context (before the host's list arrives)", () => {
  it("names what the attached chips attach, as the host words it", () => {
    const chips: Chip[] = [
      { kind: "selection", label: "main.py:3-5", enabled: true, available: true },
      { kind: "file", label: "main.py", enabled: true },
      { kind: "openFiles", label: "2 open files", detail: "models.py, utils.py", enabled: true },
      { kind: "diagnostics", label: "2 problems", enabled: false },
    ];
    expect(contextLabels(chips)).toEqual(["selection main.py:3-5", "file main.py", "open files models.py, utils.py"]);
  });
});

describe("webview Apply all", () => {
  const block = (file: string | undefined, lang = "python"): CodeBlock => ({ code: "x = 1\n", lang, file });

  it("is offered when the blocks name two or more files, with the blocks that name one", () => {
    const blocks = [block("models.py"), block(undefined), block("utils.py"), block("models.py")];
    expect(applyAllBlocks(blocks)?.map((b) => b.file)).toEqual(["models.py", "utils.py", "models.py"]);
  });

  it("is not offered for one file, or for shell blocks", () => {
    expect(applyAllBlocks([block("models.py"), block("models.py"), block(undefined)])).toBeUndefined();
    expect(applyAllBlocks([block("models.py"), block("run.sh", "bash")])).toBeUndefined();
  });
});

describe("webview history", () => {
  const at = (y: number, mo: number, d: number, h: number, mi: number) => new Date(y, mo, d, h, mi).getTime();
  const time = (ts: number) => new Date(ts).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const now = at(2026, 2, 18, 15, 0); // Wednesday 18 March 2026

  it("dates today and yesterday by name, with the time", () => {
    expect(formatWhen(at(2026, 2, 18, 14, 2), now)).toBe(`Today ${time(at(2026, 2, 18, 14, 2))}`);
    expect(formatWhen(at(2026, 2, 17, 23, 59), now)).toBe(`Yesterday ${time(at(2026, 2, 17, 23, 59))}`);
  });

  it("names the weekday within a week, the date before, and the year only when it differs", () => {
    const monday = at(2026, 2, 16, 9, 30);
    expect(formatWhen(monday, now)).toBe(`${new Date(monday).toLocaleDateString(undefined, { weekday: "long" })} ${time(monday)}`);
    const older = formatWhen(at(2026, 0, 5, 8, 0), now);
    expect(older).toMatch(/5/);
    expect(older).not.toMatch(/2026/);
    expect(formatWhen(at(2024, 11, 1, 8, 0), now)).toMatch(/2024/);
  });

  it("searches titles by every word, ignoring case", () => {
    const item = { id: "1", title: "Beta: sockets and Timeouts", created: 0 };
    expect(matchesSearch(item, "timeouts SOCK")).toBe(true);
    expect(matchesSearch(item, "sockets caching")).toBe(false);
    expect(matchesSearch(item, "  ")).toBe(true);
  });
});

describe("webview page", () => {
  const html = pageHtml({ csp: "default-src 'none'; script-src 'nonce-abc'", nonce: "abc", scriptUri: "https://x/chat.js", styleUri: "https://x/chat.css" });

  it("has every element the contract names", () => {
    for (const id of ["history-toggle", "new", "effort", "model", "history-panel", "history-search", "transcript", "announcer", "empty", "chips", "queue", "input", "send", "stop", "jump"]) {
      expect(html).toMatch(new RegExp(`id="${id}"`));
    }
  });

  it("loads only the nonce'd script under the CSP", () => {
    expect(html).toContain(`content="default-src 'none'; script-src 'nonce-abc'"`);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="abc" src="https://x/chat.js">');
  });

  it("keeps the transcript out of live regions (the announcer is the only one)", () => {
    expect(html.match(/aria-live/g)).toHaveLength(1);
    expect(html).toMatch(/id="announcer"[^>]*aria-live="polite"/);
    expect(html).not.toContain('role="log"');
  });

  it("starts idle: Send shown, Stop and the history panel hidden", () => {
    expect(html).toMatch(/<button[^>]*id="stop"[^>]*hidden/);
    expect(html).not.toMatch(/<button[^>]*id="send"[^>]*hidden/);
    expect(html).toMatch(/<nav[^>]*id="history-panel"[^>]*hidden/);
  });
});
