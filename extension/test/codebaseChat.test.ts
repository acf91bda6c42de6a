/**
 * Codebase answers in the chat, without a DOM: the Sources list's HTML, the citations of an answer
 * (links for files the turn knows, struck out when the server found no such file, text otherwise),
 * that model text stays data around them, the message a click posts, and the host's check of that
 * message (only `file:` URIs the server sent for this conversation).
 */
import { describe, expect, it } from "vitest";
import type { SourceRef } from "../src/protocol";
import type { Turn } from "../src/chat/protocol";
import { IncrementalMarkdown, createMarkdown, renderMarkdown, sourcesHtml } from "../src/chat/webview/markdown";
import { openSourceMessage } from "../src/chat/webview/sourceLinks";
import { knownSourceUris, normalizePath, openSourceTarget, resolveCitation, sourceLabel, sourceLines, type TurnRefs } from "../src/chat/sources";

/** A whole-line span as the server sends it: lines first..last (1-based), end at the start of the next line. */
const span = (first: number, last: number) => ({ start: { line: first - 1, character: 0 }, end: { line: last, character: 0 } });
const ref = (path: string, first: number, last: number, name?: string): SourceRef => ({ uri: `file:///ws/${path}`, path, range: span(first, last), ...(name ? { name } : {}) });

const INVOICE = ref("billing/invoice.py", 4, 7, "invoice_total");
const UTILS = ref("utils.py", 1, 1);

/** The attributes of each element with class `cls` in `html` (a tiny reader, enough for these tests). */
function elements(html: string, tag: string, cls: string): { attrs: Record<string, string>; inner: string }[] {
  const out: { attrs: Record<string, string>; inner: string }[] = [];
  const re = new RegExp(`<${tag} ([^>]*class="[^"]*\\b${cls}\\b[^"]*"[^>]*)>(.*?)</${tag}>`, "g");
  for (const m of html.matchAll(re)) {
    const attrs: Record<string, string> = {};
    for (const a of m[1].matchAll(/([\w-]+)="([^"]*)"/g)) attrs[a[1]] = a[2];
    out.push({ attrs, inner: m[2] });
  }
  return out;
}
const shown = (html: string) => html.replace(/<[^>]*>/g, "");

describe("source spans", () => {
  it("reads the server's whole-line ranges as 1-based first and last lines", () => {
    expect(sourceLines(span(4, 7))).toEqual({ first: 4, last: 7 });
    expect(sourceLines(span(1, 1))).toEqual({ first: 1, last: 1 });
    // An end inside a line (another client's span) counts that line.
    expect(sourceLines({ start: { line: 2, character: 0 }, end: { line: 4, character: 10 } })).toEqual({ first: 3, last: 5 });
    expect(sourceLabel(INVOICE)).toBe("billing/invoice.py:4-7");
    expect(sourceLabel(UTILS)).toBe("utils.py:1");
  });

  it("compares cited paths as workspace paths", () => {
    expect(normalizePath("./billing\\invoice.py")).toBe("billing/invoice.py");
    expect(normalizePath("/utils.py")).toBe("utils.py");
  });
});

describe("the Sources list", () => {
  it("lists each source as a button with path:L-L, its name, and where it opens", () => {
    const html = sourcesHtml([INVOICE, UTILS], 12.4);
    expect(html).toMatch(/^<div class="sources" role="group" aria-label="Sources" data-search-ms="12">/);
    expect(html).toContain('<div class="sources-title"');
    const buttons = elements(html, "button", "source-link");
    expect(buttons.map((b) => shown(b.inner))).toEqual(["[1] billing/invoice.py:4-7 invoice_total", "[2] utils.py:1"]);
    expect(buttons[0].attrs).toEqual(expect.objectContaining({ type: "button", "data-uri": "file:///ws/billing/invoice.py", "data-start": "3", "data-end": "7" }));
    expect(buttons[0].attrs.title).toBe("Open billing/invoice.py:4-7 (invoice_total)");
    expect(buttons[1].attrs).toEqual(expect.objectContaining({ "data-start": "0", "data-end": "1" }));
  });

  it("escapes paths, names and URIs (what the server read from the workspace is data)", () => {
    const evil: SourceRef = { uri: 'file:///ws/"><img src=x onerror=alert(1)>.py', path: "<img src=x onerror=alert(1)>.py", range: span(1, 2), name: "<script>alert(2)</script>" };
    const html = sourcesHtml([evil]);
    expect(html).not.toMatch(/<img|<script/);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;.py:1-2");
    expect(elements(html, "button", "source-link")[0].attrs["data-uri"]).toBe("file:///ws/&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.py");
    expect(html).not.toContain("data-search-ms"); // no time: no attribute
  });
});

describe("citations in an answer", () => {
  const md = createMarkdown();
  const html = (src: string, refs?: TurnRefs) => renderMarkdown(md, src, refs).html;
  const ANSWER = "It sums the lines and adds the tax [billing/invoice.py:4-7], rounding at [billing/invoice.py:6]. See also [billing/legacy.py:1-3].";

  it("link the spans of files the turn's sources name, at the cited lines", () => {
    const out = html(ANSWER, { sources: [INVOICE] });
    const links = elements(out, "button", "citation");
    expect(links.map((l) => l.inner)).toEqual(["[billing/invoice.py:4-7]", "[billing/invoice.py:6]"]);
    expect(links[0].attrs).toEqual(expect.objectContaining({ class: "source-link citation", "data-uri": INVOICE.uri, "data-start": "3", "data-end": "7" }));
    expect(links[1].attrs).toEqual(expect.objectContaining({ "data-start": "5", "data-end": "6" }));
    expect(links[0].attrs.title).toBe("Open billing/invoice.py at lines 4-7 (invoice_total)");
    // A path no source names, before the result says anything about it: plain text.
    expect(out).toContain("See also [billing/legacy.py:1-3].");
    expect(out).not.toContain("<del");
  });

  it("strike out, after the result, the paths that name no workspace file", () => {
    const out = html(ANSWER, { sources: [INVOICE], citations: [ref("billing/invoice.py", 4, 7)], invented: ["billing/legacy.py"] });
    const struck = elements(out, "del", "citation-invented");
    expect(struck).toHaveLength(1);
    expect(struck[0].attrs.title).toBe("not a file in this workspace");
    expect(struck[0].inner).toContain("[billing/legacy.py:1-3]");
    expect(elements(out, "button", "citation")).toHaveLength(2); // the real ones still link
  });

  it("mark, after the result, a path written as inline code that names no workspace file", () => {
    const out = html("Dates go in `billing/dates.py`; `billing/invoice.py` holds the total.", { sources: [INVOICE], unknownPaths: ["billing/dates.py"] });
    const marked = elements(out, "code", "path-unknown");
    expect(marked.map((m) => [m.inner, m.attrs.title])).toEqual([["billing/dates.py", "not a file in this workspace"]]);
    expect(out).toContain("<code>billing/invoice.py</code>"); // a real file stays plain inline code
    expect(html("Dates go in `billing/dates.py`.", { sources: [INVOICE] })).not.toContain("path-unknown"); // before the result
  });

  it("link a citation of a file the server resolved although it was not a source", () => {
    const cited = ref("utils.py", 2, 2);
    const out = html("Uses [./utils.py:2].", { sources: [INVOICE], citations: [cited] });
    expect(elements(out, "button", "citation")[0].attrs).toEqual(expect.objectContaining({ "data-uri": cited.uri, "data-start": "1", "data-end": "2" }));
  });

  it("read the forms the server checks: a unique tail of the path, no lines, an en dash, backticks", () => {
    const refs = { sources: [INVOICE], invented: ["legacy.py"] };
    const out = html("[invoice.py:4-7], [billing/invoice.py], [billing/invoice.py:5 – 6], [`billing/invoice.py`:4] and [`legacy.py`]", refs);
    const links = elements(out, "button", "citation");
    expect(links.map((l) => [l.attrs["data-start"], l.attrs["data-end"]])).toEqual([["3", "7"], ["0", "1"], ["4", "6"], ["3", "4"]]);
    expect(links.every((l) => l.attrs["data-uri"] === INVOICE.uri)).toBe(true);
    expect(elements(out, "del", "citation-invented")).toHaveLength(1);
    // Backticks around a path the turn does not know stay inline code.
    expect(html("[`other.py`:3]", refs)).toBe("<p>[<code>other.py</code>:3]</p>\n");
    // A tail two files share is ambiguous: no link.
    const two = { sources: [INVOICE, ref("legacy/invoice.py", 1, 2)] };
    expect(elements(html("[invoice.py:4]", two), "button", "citation")).toHaveLength(0);
  });

  it("leave an answer without sources exactly as before", () => {
    expect(html(ANSWER)).toBe(`<p>${ANSWER}</p>\n`);
    expect(resolveCitation("billing/invoice.py", 4, 7, undefined)).toBeUndefined();
  });

  it("stay code in inline code and fences, and text inside a Markdown link", () => {
    const refs = { sources: [INVOICE] };
    const out = html("`[billing/invoice.py:4-7]` and [see [billing/invoice.py:4-7]](https://example.com)\n\n```text\n[billing/invoice.py:4-7]\n```", refs);
    expect(elements(out, "button", "citation")).toHaveLength(0);
    expect(out).toContain("<code>[billing/invoice.py:4-7]</code>");
  });

  it("keep model text data around them (no HTML from the answer)", () => {
    const refs = { sources: [INVOICE], invented: ["x.py"] };
    const out = html('<img src=x onerror="alert(1)">[billing/invoice.py:4]<script>alert(2)</script> [x.py:1] "q" & \'a\'', refs);
    expect(out).not.toMatch(/<img|<script/);
    expect(out).toContain("&lt;script&gt;");
    expect(elements(out, "button", "citation")).toHaveLength(1);
    expect(elements(out, "del", "citation-invented")).toHaveLength(1);
    // Markup is no path: such a "citation" stays escaped text, even when a source has that path.
    expect(html('[<b>"x.py:1]', { sources: [ref('<b>"x.py', 1, 1)] })).toBe("<p>[&lt;b&gt;&quot;x.py:1]</p>\n");
    // A source's URI is escaped in the button's attributes.
    const odd = html("[x.py:1]", { sources: [{ ...ref("x.py", 1, 1), uri: 'file:///ws/"><img src=x>.py' }] });
    expect(odd).not.toContain("<img");
    expect(elements(odd, "button", "citation")[0].attrs["data-uri"]).toBe("file:///ws/&quot;&gt;&lt;img src=x&gt;.py");
  });

  it("link a numbered citation to the turn's source of that number, each of a group apart", () => {
    const refs = { sources: [INVOICE, UTILS] };
    const out = html("The total is summed [1] and rounded [2][1], see [1, 2]. Not `[1]`, items[0] or [1](https://example.com).", refs);
    const links = elements(out, "button", "citation");
    expect(links.map((l) => [l.inner, l.attrs["data-uri"], l.attrs["data-start"], l.attrs["data-end"]])).toEqual([
      ["[1]", INVOICE.uri, "3", "7"], ["[2]", UTILS.uri, "0", "1"], ["[1]", INVOICE.uri, "3", "7"],
      ["[1]", INVOICE.uri, "3", "7"], ["[2]", UTILS.uri, "0", "1"],
    ]);
    expect(links[0].attrs.title).toBe("Open source 1: billing/invoice.py:4-7 (invoice_total)");
    expect(out).toContain("<code>[1]</code>");
    expect(out).toContain("items[0]");
  });

  it("strike out a number past the turn's sources, and leave numbers as text in a turn without sources", () => {
    const struck = elements(html("As [3] says.", { sources: [INVOICE, UTILS] }), "del", "citation-invented");
    expect(struck.map((d) => [d.inner.replace(/<span.*$/, ""), d.attrs.title])).toEqual([["[3]", "not one of this answer's sources"]]);
    expect(html("As [1] says.", {})).toBe("<p>As [1] says.</p>\n");
    expect(html("As [1] says.")).toBe("<p>As [1] says.</p>\n");
  });

  it("link while the answer streams (the sources come first) exactly as in the finished render", () => {
    const refs = { sources: [INVOICE] };
    const text = `Intro.\n\n${ANSWER}\n\n- item [billing/invoice.py:5] and [1]\n\nDone.`;
    for (const size of [1, 4, 50]) {
      const inc = new IncrementalMarkdown(md, refs);
      let streamed = "";
      for (let i = 0; i < text.length; i += size) {
        inc.append(text.slice(i, i + size));
        streamed += inc.update().finished?.html ?? "";
      }
      expect(streamed + inc.finish().html).toBe(html(text, refs));
    }
    expect(elements(html(text, refs), "button", "citation")).toHaveLength(4);
  });
});

describe("a click on a source or a citation", () => {
  it("posts the button's file and lines", () => {
    expect(openSourceMessage({ uri: "file:///ws/a.py", start: "3", end: "7" })).toEqual({
      type: "openSource",
      uri: "file:///ws/a.py",
      range: { start: { line: 3, character: 0 }, end: { line: 7, character: 0 } },
    });
    expect(openSourceMessage({ uri: "file:///ws/a.py", start: "x" })).toBeUndefined();
    expect(openSourceMessage({ start: "1" })).toBeUndefined();
  });
});

describe("the host opens only what the server named", () => {
  const turns: Turn[] = [
    { role: "user", text: "What does `invoice_total` do?" },
    { role: "assistant", text: "It sums.", sources: [INVOICE], citations: [ref("utils.py", 1, 1)], inventedCitations: ["billing/legacy.py"] },
  ];
  const known = knownSourceUris(turns, [ref("tasks.py", 1, 2)]);
  const open = (uri: unknown, range: unknown = span(4, 7)) => openSourceTarget({ type: "openSource", uri, range }, known);

  it("knows the sources and citations of every turn and of the running answer", () => {
    expect([...known].sort()).toEqual(["file:///ws/billing/invoice.py", "file:///ws/tasks.py", "file:///ws/utils.py"]);
  });

  it("accepts a file the server sent, at the lines asked", () => {
    expect(open(INVOICE.uri)).toEqual({ uri: INVOICE.uri, startLine: 3, endLine: 7 });
    expect(open("file:///ws/utils.py", { start: { line: 0, character: 0 } })).toEqual({ uri: "file:///ws/utils.py", startLine: 0, endLine: 0 });
    expect(open("file:///ws/tasks.py", { start: { line: 5 }, end: { line: 2 } })).toEqual({ uri: "file:///ws/tasks.py", startLine: 5, endLine: 5 });
  });

  it("refuses paths the server never named, other schemes, and malformed messages", () => {
    expect(open("file:///etc/passwd")).toBeUndefined();
    expect(open("file:///ws/billing/legacy.py")).toBeUndefined(); // invented: no such file
    expect(open("FILE:///ws/billing/invoice.py")).toBeUndefined(); // not the very URI sent
    const withOther = knownSourceUris([{ role: "assistant", text: "", sources: [{ ...INVOICE, uri: "vscode-remote://h/ws/a.py" }, { ...INVOICE, uri: "command:workbench.action.terminal.new" }] }]);
    expect(openSourceTarget({ uri: "vscode-remote://h/ws/a.py", range: span(1, 1) }, withOther)).toBeUndefined();
    expect(openSourceTarget({ uri: "command:workbench.action.terminal.new", range: span(1, 1) }, withOther)).toBeUndefined();
    expect(open(INVOICE.uri, { start: { line: -1 } })).toBeUndefined();
    expect(open(INVOICE.uri, { start: { line: 1.5 } })).toBeUndefined();
    expect(open(INVOICE.uri, { start: { line: "3" } })).toBeUndefined();
    expect(openSourceTarget({ uri: INVOICE.uri }, known)).toBeUndefined();
    expect(open(42)).toBeUndefined();
    expect(openSourceTarget(null, known)).toBeUndefined();
    expect(openSourceTarget("file:///ws/utils.py", known)).toBeUndefined();
  });
});
