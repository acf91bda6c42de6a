import { describe, expect, it } from "vitest";
import { IncrementalMarkdown, createMarkdown, renderMarkdown } from "../src/chat/webview/markdown";

const ANSWER = [
  "Here is the change and why.",
  "",
  "## Steps",
  "",
  "1. Open `models.py`.",
  "2. Replace **format_task**:",
  "",
  "   it is shorter.",
  "",
  "In `models.py`:",
  "",
  "```python",
  "def format_task(task):",
  '    return f"{task.title}"',
  "```",
  "",
  "| a | b |",
  "| --- | --- |",
  "| 1 | 2 |",
  "",
  "> A quote",
  "> over two lines",
  "",
  "- one",
  "- two",
  "",
  "Run it:",
  "",
  "```bash",
  "python -m pytest",
  "```",
  "",
  "Done.",
].join("\n");

/** The text an HTML fragment shows (tags dropped, entities left alone). */
const shown = (html: string) => html.replace(/<[^>]*>/g, "");

/** Streams `text` in pieces of `size`, as the webview gets it; returns everything it rendered. */
function stream(text: string, size: number) {
  const md = createMarkdown();
  const inc = new IncrementalMarkdown(md);
  const finished: string[] = [];
  const tails: string[] = [];
  for (let i = 0; i < text.length; i += size) {
    inc.append(text.slice(i, i + size));
    const { finished: f, tail } = inc.update();
    if (f) finished.push(f.html);
    tails.push(tail.html);
  }
  return { finished, tails, rest: inc.finish().html, whole: renderMarkdown(md, text).html };
}

describe("webview markdown: incremental streaming render", () => {
  it.each([1, 3, 7, 40, 1000])("finished blocks plus the rest equal the one-shot render (chunks of %i)", (size) => {
    const { finished, rest, whole } = stream(ANSWER, size);
    expect(finished.join("") + rest).toBe(whole);
    if (size < ANSWER.length) expect(finished.length).toBeGreaterThan(3); // blocks were committed along the way
  });

  it("keeps an open code fence as one block in the tail, without actions, and finishes it once closed", () => {
    const md = createMarkdown();
    const inc = new IncrementalMarkdown(md);
    inc.append("Intro.\n\n```python\ndef f():\n");
    const first = inc.update();
    expect(first.finished?.html).toContain("<p>Intro.</p>");
    expect(first.tail.html).toContain('class="code-block"');
    expect(shown(first.tail.html)).toContain("def f():");
    expect(first.tail.html).not.toContain("code-apply"); // no Apply on half a block
    inc.append("    return 1\n");
    const second = inc.update();
    expect(second.finished).toBeUndefined(); // still the same open block: nothing new is finished
    expect(shown(second.tail.html)).toContain("return 1");
    inc.append("```\n\nAfter.");
    const third = inc.update();
    expect(third.finished?.html).toContain("code-apply");
    expect(shown(third.finished?.html ?? "")).toContain("return 1");
    expect(third.tail.html).toBe("<p>After.</p>\n");
  });

  it("does not commit a block the next line may still join ('para\\n#' is a heading until '#x' makes it one paragraph)", () => {
    const md = createMarkdown();
    const inc = new IncrementalMarkdown(md);
    inc.append("para\n#");
    expect(inc.update().finished).toBeUndefined();
    inc.append("x\n\nnext");
    const { finished, tail } = inc.update();
    expect(finished?.html).toBe("<p>para\n#x</p>\n");
    expect(tail.html).toBe("<p>next</p>\n");
  });

  it("parses only the part after the finished blocks on each update", () => {
    const md = createMarkdown();
    const parsed: number[] = [];
    const parse = md.parse.bind(md);
    md.parse = (src, env) => {
      parsed.push(src.length);
      return parse(src, env);
    };
    const inc = new IncrementalMarkdown(md);
    const text = Array.from({ length: 300 }, (_, i) => `Paragraph number ${i}.`).join("\n\n");
    for (let i = 0; i < text.length; i += 5) {
      inc.append(text.slice(i, i + 5));
      inc.update();
    }
    expect(text.length).toBeGreaterThan(6000);
    expect(Math.max(...parsed)).toBeLessThan(60); // the tail, never the whole answer
  });

  it("gives the finished prose as plain text for screen readers, without the code", () => {
    const md = createMarkdown();
    const inc = new IncrementalMarkdown(md);
    inc.append("First **bold** `x` point.\n\n```python\nsecret_code()\n```\n\nLast");
    const { finished } = inc.update();
    expect(finished?.text).toBe("First bold x point.");
    expect(finished?.text).not.toContain("secret_code");
    expect(inc.finish().text).toBe("Last");
  });
});

describe("webview markdown: model output stays data", () => {
  const md = createMarkdown();
  const html = (src: string) => renderMarkdown(md, src).html;

  it("escapes raw HTML", () => {
    const out = html('<img src=x onerror="alert(1)"> and <script>alert(2)</script>');
    expect(out).not.toMatch(/<img|<script/);
    expect(out).toContain("&lt;script&gt;");
  });

  it("renders no images (nothing is fetched) and no javascript: links", () => {
    expect(html("![pixel](https://tracker.example/p.png)")).not.toContain("<img");
    expect(html("[x](javascript:alert(1))")).not.toContain("href");
    expect(html("[x](https://example.com)")).toContain('href="https://example.com"');
  });

  it("wraps tables so they scroll by themselves", () => {
    expect(html("| a | b |\n| - | - |\n| 1 | 2 |")).toMatch(/^<div class="table-wrap"[^>]*><table>/);
  });

  it("escapes code and its language and file names", () => {
    const out = html('```python a"b.py\nx = "<b>"\n```');
    expect(out).not.toContain("<b>");
    expect(out).not.toContain('a"b.py');
  });
});

describe("webview markdown: code block headers", () => {
  const md = createMarkdown();
  const html = (src: string) => renderMarkdown(md, src).html;

  it("shows the language, the file the fence names, and Copy/Insert/Apply", () => {
    const out = html("```python models.py\nx = 1\n```");
    expect(out).toContain('<span class="code-lang">python</span>');
    expect(out).toContain('<span class="code-file" title="models.py">models.py</span>');
    expect(out).toContain('data-file="models.py"');
    for (const b of ["code-copy", "code-insert", "code-apply"]) expect(out).toContain(`class="${b}"`);
    expect(out).not.toContain("code-run");
    expect(out).toMatch(/<\/div><pre class="hljs"/); // the header comes right before the <pre>
  });

  it("finds the file in the line before the fence", () => {
    expect(html("In `utils.py`:\n\n```python\ndef shout(): pass\n```")).toContain('data-file="utils.py"');
  });

  it("offers Run in terminal instead of Apply for shell blocks", () => {
    const out = html("```bash\necho hi\n```");
    expect(out).toContain('class="code-run"');
    expect(out).toContain("Run in terminal");
    expect(out).not.toContain("code-apply");
  });

  it("highlights known languages", () => {
    expect(html("```python\ndef f(): return 1\n```")).toContain('<span class="hljs-keyword">def</span>');
  });
});
