/**
 * Mentions in the chat input: where `#`/`@` opens the picker, the ranking of workspace paths (and
 * its cost on 10k paths), the globs that hide files, the URI and marker round trip, the input's
 * text after a pick or a removed chip, the host's rows for a query (no secret or excluded file, the
 * symbols appended after the pause), and a send: every mention read at that moment (file text,
 * the symbol's lines, the problems, the diff), a big file as its outline, secret files refused
 * whatever the webview sent, nothing read before the trust question is answered, the mentions kept
 * with the turn and read again by Retry.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

vi.mock("vscode", async () => (await import("./fakeVscode")).vscode);

import { EventEmitter, fake, Range, Uri, textDocument, openEditor, Selection } from "./fakeVscode";
import { ChatViewProvider, type ChatClient } from "../src/chat/chatView";
import type { Conversation, FromWebview, Mention, MentionItem, ToWebview } from "../src/chat/protocol";
import {
  CODEBASE_URI, GIT_DIFF_URI, PROBLEMS_URI, fileMarker, folderMarker, hasMarker, mentionLabel, mentionTrigger,
  parseLines, parseMarkers, parseMentionUri, parseQuery, symbolMarker, withLines,
} from "../src/chat/mentions";
import { matchScore, pathEntry, rankNames, rankPaths } from "../src/chat/fileRank";
import { PathExcluder, UserGlobs, enabledPatterns, expandBraces, findFilesExclude, gitignoreGlobs } from "../src/chat/globs";
import { addPick, insertPick, markerBefore, mentionsIn, removeMarker } from "../src/chat/webview/mentionText";
import { WorkspaceFiles } from "../src/chat/workspaceFiles";
import { MentionPicker } from "../src/chat/mentionPicker";
import { blockFrom, readMentions } from "../src/chat/mentionContext";
import { keepSections, splitDiff } from "../src/chat/gitDiff";
import { ConversationStore } from "../src/chat/transcript";

const settle = () => new Promise((r) => setTimeout(r, 0));
const ws = (p: string) => Uri.file(`/ws/${p}`);

beforeEach(() => fake.reset());
afterEach(() => vi.useRealTimers());

describe("the trigger", () => {
  it("opens at a word start: `#`, `@`, a partial name, a kind prefix; the pick replaces the whole word", () => {
    expect(mentionTrigger("#", 1)).toEqual({ start: 0, end: 1, char: "#", query: "" });
    expect(mentionTrigger("look at @uti", 12)).toEqual({ start: 8, end: 12, char: "@", query: "uti" });
    expect(mentionTrigger("see #file:src/a and", 15)).toEqual({ start: 4, end: 15, char: "#", query: "file:src/a" });
    // The caret inside the word: the query is what precedes it, the pick replaces the rest too.
    expect(mentionTrigger("x #models y", 6)).toEqual({ start: 2, end: 9, char: "#", query: "mod" });
    expect(mentionTrigger("line one\n#ta", 12)?.query).toBe("ta");
  });

  it("stays shut mid-word, after a space, for `##`, an issue number or an e-mail address", () => {
    expect(mentionTrigger("a#b", 3)).toBeUndefined();
    expect(mentionTrigger("me@example.com", 14)).toBeUndefined();
    expect(mentionTrigger("# heading", 9)).toBeUndefined();
    expect(mentionTrigger("#uti ", 5)).toBeUndefined();
    expect(mentionTrigger("##", 2)).toBeUndefined();
    expect(mentionTrigger("fixes #28", 9)).toBeUndefined();
    expect(mentionTrigger("plain text", 10)).toBeUndefined();
  });

  it("reads a kind prefix as a narrower picker", () => {
    expect(parseQuery("uti")).toEqual({ text: "uti" });
    expect(parseQuery("file:src/a")).toEqual({ kinds: ["file", "selection"], text: "src/a" });
    expect(parseQuery("sym:parse")).toEqual({ kinds: ["symbol"], text: "parse" });
    expect(parseQuery("folder:")).toEqual({ kinds: ["folder"], text: "" });
  });
});

describe("ranking paths", () => {
  const paths = ["src/utils.py", "src/app/util_helpers.py", "tests/test_utils.py", "docs/usage.md", "src/models.py", "lib/u/t/i/l.py", "utils.py"].map(pathEntry);

  it("puts the exact name first, then names that start with the query, then word starts, path hits and fuzzy ones", () => {
    expect(rankPaths("utils.py", paths, 3).map((e) => e.rel)).toEqual(["utils.py", "src/utils.py", "tests/test_utils.py"]);
    expect(rankPaths("uti", paths, 10).map((e) => e.rel)).toEqual(["utils.py", "src/utils.py", "src/app/util_helpers.py", "tests/test_utils.py", "lib/u/t/i/l.py"]);
    expect(rankPaths("app/", paths, 10).map((e) => e.rel)).toEqual(["src/app/util_helpers.py"]);
    expect(rankPaths("srcmod", paths, 10).map((e) => e.rel)).toEqual(["src/models.py"]); // fuzzy: in order
    expect(rankPaths("zzz", paths, 10)).toEqual([]);
    expect(rankPaths("UTILS", paths, 1)[0].rel).toBe("utils.py"); // case does not matter
    expect(rankPaths("./src/utils", paths, 1)[0].rel).toBe("src/utils.py");
  });

  it("keeps the caller's order for an empty query, and the limit", () => {
    expect(rankPaths("", paths, 2).map((e) => e.rel)).toEqual(["src/utils.py", "src/app/util_helpers.py"]);
    expect(rankPaths("py", paths, 3)).toHaveLength(3);
  });

  it("scores a word-start hit in the name above a hit mid-word", () => {
    expect(matchScore("helpers", pathEntry("a/util_helpers.py"))).toBeGreaterThan(matchScore("elpers", pathEntry("a/util_helpers.py")));
  });

  it("ranks symbol names: exact, prefix, substring, then the provider's own matches", () => {
    const names = ["parse_due_date", "reparse", "parse", "xp_a_r_s_e", "parse_due"].map((name) => ({ name }));
    expect(rankNames("parse", names, 10).map((n) => n.name)).toEqual(["parse", "parse_due", "parse_due_date", "reparse", "xp_a_r_s_e"]);
  });

  it("filters 10,000 paths per keystroke well under the 50 ms budget", () => {
    const dirs = ["src", "src/app", "src/core/models", "tests", "docs", "lib/vendor/pkg", "scripts", "web/components/forms"];
    const entries = Array.from({ length: 10_000 }, (_, i) => pathEntry(`${dirs[i % dirs.length]}/module_${i}_${["parser", "views", "utils", "models", "index"][i % 5]}.${["py", "ts", "md"][i % 3]}`));
    const queries = ["m", "mo", "mod", "modu", "modul", "module_9", "pars", "src/core", "vw", "idx", "z", "utils.py", "forms/mod", "module_9999"];
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (const q of queries) {
        const t = performance.now();
        const top = rankPaths(q, entries, 30);
        times.push(performance.now() - t);
        expect(top.length).toBeLessThanOrEqual(30);
      }
    }
    times.sort((a, b) => a - b);
    const p95 = times[Math.floor(times.length * 0.95)];
    console.log(`rankPaths over 10k paths: p50 ${times[Math.floor(times.length / 2)].toFixed(2)} ms, p95 ${p95.toFixed(2)} ms`);
    expect(p95).toBeLessThan(40); // the host's share of 50 ms (~1-8 ms here); the rest is the round trip to the webview
    expect(rankPaths("module_9999", entries, 1)[0].rel).toMatch(/module_9999_/);
  });
});

describe("globs", () => {
  it("expands braces, nested too", () => {
    expect(expandBraces("**/*.{js,ts}")).toEqual(["**/*.js", "**/*.ts"]);
    expect(expandBraces("{a,b/{c,d}}/x")).toEqual(["a/x", "b/c/x", "b/d/x"]);
    expect(expandBraces("plain")).toEqual(["plain"]);
  });

  it("hides what files.exclude / search.exclude match, and everything under a matched folder", () => {
    const ex = new PathExcluder(enabledPatterns({ "**/node_modules": true, "**/.git": true, "**/*.code-search": true, "build/": true, "**/*.{log,tmp}": true, "**/off": false, "**/when": { when: "$(basename).ts" } }));
    expect(ex.excludes("node_modules/a/index.js")).toBe(true);
    expect(ex.excludes("web/node_modules/x.js")).toBe(true);
    expect(ex.excludes("a.code-search")).toBe(true);
    expect(ex.excludes("build/out.js")).toBe(true);
    expect(ex.excludes("src/build/out.js")).toBe(false); // `build/` is the top-level folder only
    expect(ex.excludes("logs/app.log")).toBe(true);
    expect(ex.excludes("x/off/a.py")).toBe(false);
    expect(ex.excludes("x/when/a.py")).toBe(false);
    expect(ex.excludes("src/app.py")).toBe(false);
    expect(new PathExcluder([]).excludes("anything")).toBe(false);
  });

  it("reads a .gitignore as such globs (negations left out: hide more, never less)", () => {
    const globs = gitignoreGlobs("# build output\n/dist\nbuild/\n*.pyc\n.venv\ndocs/_build/\n!keep.pyc\n\\#literal\n\n");
    expect(globs).toEqual(["dist", "**/build", "**/*.pyc", "**/.venv", "docs/_build", "**/#literal"]);
    const ex = new PathExcluder(globs);
    expect(ex.excludes(".venv/lib/site.py")).toBe(true);
    expect(ex.excludes("pkg/build/x.js")).toBe(true);
    expect(ex.excludes("src/dist/x.js")).toBe(false);
    expect(ex.excludes("docs/_build/index.html")).toBe(true);
    expect(ex.excludes("src/app.py")).toBe(false);
  });

  it("reads a nested .gitignore for what is below it only", () => {
    const globs = gitignoreGlobs("out/\n/local.cfg\n*.tmp\n", "web/");
    expect(globs).toEqual(["web/**/out", "web/local.cfg", "web/**/*.tmp"]);
    const ex = new PathExcluder(globs);
    expect(ex.excludes("web/out/bundle.js")).toBe(true);
    expect(ex.excludes("web/src/out/x.js")).toBe(true);
    expect(ex.excludes("web/src/a.tmp")).toBe(true);
    expect(ex.excludes("web/local.cfg")).toBe(true);
    expect(ex.excludes("out/bundle.js")).toBe(false);
    expect(ex.excludes("api/a.tmp")).toBe(false);
    expect(ex.excludes("web/src/local.cfg")).toBe(false);
  });

  it("gives findFiles one pattern for them all", () => {
    expect(findFilesExclude(["**/node_modules", "**/*.{log,tmp}"])).toBe("{**/node_modules,**/*.log,**/*.tmp}");
    expect(findFilesExclude(["**/.git"])).toBe("**/.git");
    expect(findFilesExclude([])).toBeUndefined();
  });

  it("reads kestrel.completion.excludeGlobs as the server does: fnmatch on the whole path or the name, any case", () => {
    const g = new UserGlobs(["**/secrets/**", "*.generated.ts", "/abs/private/*", "**/Fixtures/*.json"]);
    expect(g.excludes("/ws/config/secrets/db.yaml")).toBe(true);
    expect(g.excludes("/ws/src/api.generated.ts")).toBe(true);
    expect(g.excludes("/ws/src/API.GENERATED.TS")).toBe(true);
    expect(g.excludes("/abs/private/x/y.py")).toBe(true); // fnmatch's `*` crosses `/`
    expect(g.excludes("/ws/tests/fixtures/a.json")).toBe(true);
    expect(g.excludes("/ws/src/api.ts")).toBe(false);
  });

  it("reads a pattern relative to the workspace folder, as files.exclude is written (private/**)", () => {
    const g = new UserGlobs(["private/**", "./config/local.py", "docs/*.md"]);
    expect(g.excludes("/home/u/ws/private/keys.py")).toBe(true);
    expect(g.excludes("/home/u/ws/private/deep/er.py")).toBe(true);
    expect(g.excludes("/home/u/ws/config/local.py")).toBe(true);
    expect(g.excludes("/home/u/ws/docs/notes.md")).toBe(true);
    expect(g.excludes("/home/u/ws/privateer/keys.py")).toBe(false); // a folder's name, not its prefix
    expect(g.excludes("/home/u/ws/src/app.py")).toBe(false);
  });
});

describe("URIs and markers", () => {
  it("serialises a file, a range, a folder, a symbol and the special mentions, and reads them back", () => {
    const file = "file:///ws/src/app.py";
    expect(parseMentionUri(file)).toEqual({ scheme: "file", base: file, lines: undefined, folder: false });
    const range = withLines(file, { start: 10, end: 20 });
    expect(range).toBe("file:///ws/src/app.py#L10-20");
    expect(parseMentionUri(range)).toEqual({ scheme: "file", base: file, lines: { start: 10, end: 20 }, folder: false });
    expect(parseMentionUri(withLines(file, { start: 7, end: 7 }))).toEqual(expect.objectContaining({ lines: { start: 7, end: 7 } }));
    expect(withLines(range, { start: 1, end: 2 })).toBe("file:///ws/src/app.py#L1-2"); // replaces the old lines
    expect(withLines(range)).toBe(file);
    expect(parseMentionUri("file:///ws/src/")).toEqual(expect.objectContaining({ folder: true }));
    expect(parseMentionUri("file:///ws/my%20dir/a%23b.py#L3")).toEqual({ scheme: "file", base: "file:///ws/my%20dir/a%23b.py", lines: { start: 3, end: 3 }, folder: false });
    expect(parseMentionUri("vscode-remote://ssh-remote+box/home/a.py#L1-2")).toEqual(expect.objectContaining({ scheme: "file", lines: { start: 1, end: 2 } }));
    expect(parseMentionUri(PROBLEMS_URI)).toEqual({ scheme: "problems" });
    expect(parseMentionUri(GIT_DIFF_URI)).toEqual({ scheme: "diff" });
    expect(parseMentionUri(CODEBASE_URI)).toEqual({ scheme: "codebase" });
    for (const bad of ["file:///a.py#L0", "file:///a.py#L5-2", "file:///a.py#top", "kestrel-other:", "untitled:Untitled-1", "not a uri"]) {
      expect(parseMentionUri(bad)).toBeUndefined();
    }
    expect(parseLines("3-4")).toEqual({ start: 3, end: 4 });
    expect(parseLines("4-3")).toBeUndefined();
  });

  it("finds picked and typed markers in a message, without the punctuation after them", () => {
    const text = `Compare ${fileMarker("src/a.py")} with ${fileMarker("b.py", { start: 3, end: 5 })}, ${symbolMarker("Task.format")}; see ${folderMarker("docs")} #problems #diff and #codebase. Not a#file:x.py, ##diff or #file alone.`;
    expect(parseMarkers(text).map(({ kind, arg, lines, marker }) => ({ kind, arg, lines, marker }))).toEqual([
      { kind: "file", arg: "src/a.py", lines: undefined, marker: "#file:src/a.py" },
      { kind: "file", arg: "b.py", lines: { start: 3, end: 5 }, marker: "#file:b.py:3-5" },
      { kind: "symbol", arg: "Task.format", lines: undefined, marker: "#sym:Task.format" },
      { kind: "folder", arg: "docs", lines: undefined, marker: "#folder:docs/" },
      { kind: "problems", arg: "", lines: undefined, marker: "#problems" },
      { kind: "diff", arg: "", lines: undefined, marker: "#diff" },
      { kind: "codebase", arg: "", lines: undefined, marker: "#codebase" },
    ]);
    const first = parseMarkers(text)[0];
    expect(text.slice(first.start, first.end)).toBe("#file:src/a.py");
    expect(hasMarker("see #file:a.py.", "#file:a.py")).toBe(true);
    expect(hasMarker("see #file:a.pyc", "#file:a.py")).toBe(false);
    expect(hasMarker("x#file:a.py", "#file:a.py")).toBe(false);
  });

  it("names mentions on the turn as the chips name what they attach", () => {
    expect(mentionLabel({ kind: "file", name: "utils.py" })).toBe("file utils.py");
    expect(mentionLabel({ kind: "symbol", name: "parse_due" })).toBe("symbol parse_due");
    expect(mentionLabel({ kind: "selection", name: "a.py:3-5" })).toBe("selection a.py:3-5");
    expect(mentionLabel({ kind: "diff", name: "git diff" })).toBe("git diff");
  });
});

describe("the input's text", () => {
  const utils: Mention = { kind: "file", marker: "#file:src/utils.py", uri: "file:///ws/src/utils.py", name: "utils.py" };

  it("a pick replaces the typed word with the marker and a space, the caret after it", () => {
    const t = mentionTrigger("explain #uti please", 12)!;
    expect(insertPick("explain #uti please", t, utils.marker)).toEqual({ text: "explain #file:src/utils.py please", caret: 27 });
    expect(insertPick("#ut", mentionTrigger("#ut", 3)!, utils.marker)).toEqual({ text: "#file:src/utils.py ", caret: 19 });
  });

  it("a removed chip takes its marker out; a marker deleted by hand drops its chip; Backspace takes a whole marker", () => {
    expect(removeMarker("explain #file:src/utils.py please", utils.marker)).toBe("explain please");
    expect(removeMarker("explain #file:src/utils.py", utils.marker)).toBe("explain");
    expect(removeMarker("#file:src/utils.pyc stays", utils.marker)).toBe("#file:src/utils.pyc stays");
    expect(mentionsIn("explain #file:src/utils.py", [utils])).toEqual([utils]);
    expect(mentionsIn("explain #file:src/util", [utils])).toEqual([]);
    expect(markerBefore("explain #file:src/utils.py", 26, [utils])).toEqual({ start: 8, end: 26 });
    expect(markerBefore("explain #file:src/utils.py ", 27, [utils])).toBeUndefined();
    expect(addPick(addPick([], utils), { ...utils, detail: "src" } as MentionItem)).toEqual([utils]); // once, without the row's detail
  });
});

// ---- The host ----

/** A workspace at /ws: its files on disk (and listed), settings, a folder. */
function workspace(files: Record<string, string>, settings: Record<string, unknown> = {}) {
  fake.workspaceFolders = [{ uri: Uri.file("/ws"), name: "ws", index: 0 }];
  for (const [p, text] of Object.entries(files)) {
    fake.disk.set(`/ws/${p}`, text);
    fake.files.push(ws(p));
  }
  for (const [k, v] of Object.entries(settings)) fake.settings[k] = { globalValue: v };
}

describe("the picker's rows", () => {
  function picker(delay = 80) {
    const posted: ToWebview[] = [];
    const files = new WorkspaceFiles();
    const p = new MentionPicker(files, (m) => posted.push(m), delay);
    const rows = () => posted.filter((m): m is Extract<ToWebview, { type: "mentionItems" }> => m.type === "mentionItems");
    return { p, files, posted, rows };
  }

  it("lists matching files (never a secret or an excluded one), folders, and the special rows by name", async () => {
    workspace(
      { "src/utils.py": "", "src/user.py": "", ".env": "K=1", "src/.env.local": "", "keys/server.pem": "", "gen/api.generated.ts": "", "node_modules/u/index.js": "", "docs/usage.md": "" },
      { "completion.excludeGlobs": ["*.generated.ts"] },
    );
    // search.exclude comes from the `search` section: the fake serves every section from one table.
    fake.settings["exclude"] = { globalValue: { "**/node_modules": true } };
    const { p, rows } = picker();
    await p.query(1, "u");
    const names = rows()[0].items.map((i) => `${i.kind}:${i.name}`);
    expect(names).toContain("file:utils.py");
    expect(names).toContain("file:user.py");
    expect(names).toContain("file:usage.md");
    expect(names.join(" ")).not.toMatch(/\.env|server\.pem|api\.generated|index\.js/);
    await p.query(2, "");
    const all = rows()[1].items;
    expect(all.map((i) => i.kind).slice(0, 2)).toEqual(["problems", "codebase"]); // no selection, no Git: not offered
    expect(all.map((i) => i.name).join(" ")).not.toMatch(/\.env|\.pem/);
    await p.query(3, "pro");
    expect(rows()[2].items[0]).toEqual(expect.objectContaining({ kind: "problems", marker: "#problems", uri: PROBLEMS_URI }));
    await p.query(4, "folder:sr");
    expect(rows()[3].items).toEqual([expect.objectContaining({ kind: "folder", name: "src/", marker: "#folder:src/", uri: "file:///ws/src/" })]);
    await p.query(5, "env");
    expect(rows()[4].items.filter((i) => i.kind === "file")).toEqual([]);
  });

  it("hides what the workspace's .gitignore ignores (unless search.useIgnoreFiles is off)", async () => {
    workspace({ ".gitignore": ".venv/\n*.log\n", ".venv/lib/site.py": "", "app.log": "", "app.py": "" });
    const { p, rows } = picker();
    await p.query(1, "site");
    await p.query(2, "app");
    expect(rows().map((r) => r.items.filter((i) => i.kind === "file").map((i) => i.name))).toEqual([[], ["app.py"]]);
    workspace({ ".gitignore": "*.log\n", "web/.gitignore": "dist/\n", "web/dist/bundle.js": "", "web/app.js": "",
                "dist/keep.js": "" });
    const nested = picker();
    await nested.p.query(1, "bundle");
    await nested.p.query(2, "keep");
    expect(nested.rows().map((r) => r.items.filter((i) => i.kind === "file").map((i) => i.name))).toEqual([[], ["keep.js"]]);
    fake.settings["useIgnoreFiles"] = { globalValue: false };
    const other = picker();
    await other.p.query(1, "site");
    expect(other.rows()[0].items.map((i) => i.name)).toContain("site.py");
  });

  it("offers the selection as lines of its file, and the git diff only with a repository", async () => {
    workspace({ "main.py": "a = 1\nb = 2\nc = 3\n" });
    openEditor(textDocument("/ws/main.py", "a = 1\nb = 2\nc = 3\n"), new Selection(1, 0, 2, 3));
    fake.git = { enabled: true, getAPI: () => ({ repositories: [{ rootUri: Uri.file("/ws"), diff: async () => "" }] }) };
    const { p, rows } = picker();
    await p.query(1, "");
    expect(rows()[0].items[0]).toEqual(expect.objectContaining({ kind: "selection", name: "main.py:2-3", marker: "#file:main.py:2-3", uri: "file:///ws/main.py#L2-3" }));
    expect(rows()[0].items.map((i) => i.kind)).toContain("diff");
  });

  it("appends the workspace symbols after a pause in the typing (only for the latest query), without secret files", async () => {
    vi.useFakeTimers();
    workspace({ "due.py": "def parse_due(s):\n    return s\n", "ok.py": "" });
    fake.workspaceSymbols = [
      { name: "parse_due", kind: 11, location: { uri: ws("due.py"), range: new Range(0, 0, 2, 0) } },
      { name: "parse_secret", kind: 11, location: { uri: ws(".env.py"), range: new Range(0, 0, 1, 0) } },
    ];
    const { p, rows } = picker(80);
    await p.query(1, "pars");
    await p.query(2, "parse");
    expect(rows().map((r) => [r.id, r.append, r.done])).toEqual([[1, false, false], [2, false, false]]);
    await vi.advanceTimersByTimeAsync(100);
    expect(rows().map((r) => [r.id, r.append, r.done])).toEqual([[1, false, false], [2, false, false], [2, true, true]]);
    expect(rows()[2].items).toEqual([
      expect.objectContaining({ kind: "symbol", name: "parse_due", marker: "#sym:parse_due", uri: "file:///ws/due.py#L1-2", detail: "function · due.py:1-2" }),
    ]);
    expect(fake.executed.filter((e) => e.command === "vscode.executeWorkspaceSymbolProvider").map((e) => e.args[0])).toEqual(["parse"]);
    expect(p.offered.has("file:///ws/due.py")).toBe(true);
  });

  it("keeps its file list current from the watcher", async () => {
    vi.useFakeTimers();
    workspace({ "a.py": "" });
    const { files } = picker();
    await files.ready();
    expect(files.entries().map((e) => e.rel)).toEqual(["a.py"]);
    fake.disk.set("/ws/new_module.py", "");
    fake.disk.set("/ws/.env.prod", "");
    fake.watchers[0].create.fire(ws("new_module.py"));
    fake.watchers[0].create.fire(ws(".env.prod"));
    await vi.advanceTimersByTimeAsync(200);
    expect(files.entries().map((e) => e.rel).sort()).toEqual(["a.py", "new_module.py"]);
    fake.watchers[0].remove.fire(ws("a.py"));
    await vi.advanceTimersByTimeAsync(200);
    expect(files.entries().map((e) => e.rel)).toEqual(["new_module.py"]);
    // A folder deleted: what was under it goes (the watcher may name only the folder).
    fake.disk.set("/ws/pkg/one.py", "");
    fake.disk.set("/ws/pkg/two.py", "");
    fake.watchers[0].create.fire(ws("pkg/one.py"));
    fake.watchers[0].create.fire(ws("pkg/two.py"));
    await vi.advanceTimersByTimeAsync(200);
    expect(files.entries().map((e) => e.rel).sort()).toEqual(["new_module.py", "pkg/one.py", "pkg/two.py"]);
    fake.watchers[0].remove.fire(ws("pkg"));
    await vi.advanceTimersByTimeAsync(200);
    expect(files.entries().map((e) => e.rel)).toEqual(["new_module.py"]);
  });
});

// ---- A send ----

function server() {
  const requests: { method: string; params: any }[] = [];
  const pending: ((r: unknown) => void)[] = [];
  const client: ChatClient = {
    sendRequest: async <R>(method: string, params: unknown): Promise<R> => {
      requests.push({ method, params });
      if (method === "kestrel/chat") return new Promise<R>((resolve) => pending.push(resolve as (r: unknown) => void));
      return null as R;
    },
    onNotification: () => ({ dispose: () => undefined }),
  };
  const chats = () => requests.filter((r) => r.method === "kestrel/chat");
  return { client, chats, answer: (text: string) => pending.shift()!({ id: chats().at(-1)!.params.id, text, steers: [] }) };
}

function harness(options: { trusted?: () => Promise<boolean>; stored?: Conversation[]; current?: string } = {}) {
  const state = new Map<string, unknown>([["kestrel.chat.conversations", options.stored ?? []], ["kestrel.chat.current", options.current]]);
  const context = { workspaceState: { get: (k: string) => state.get(k), update: async (k: string, v: unknown) => void state.set(k, v) }, extensionUri: Uri.file("/ext") };
  const srv = server();
  const chat = new ChatViewProvider(context as never, () => srv.client, options.trusted ?? (async () => true), { status: undefined, onDidChangeStatus: new EventEmitter<never>().event });
  let toHost: ((m: FromWebview) => unknown) | undefined;
  const posted: ToWebview[] = [];
  chat.resolveWebviewView({
    webview: {
      options: {}, html: "", cspSource: "self", asWebviewUri: (u: unknown) => u,
      onDidReceiveMessage: (l: (m: FromWebview) => unknown) => ((toHost = l), { dispose: () => undefined }),
      postMessage: async (m: ToWebview) => (posted.push(m), true),
    },
  } as never);
  const saved = () => new ConversationStore({ get: <T>(k: string) => state.get(k) as T, update: async () => undefined }).all();
  const question = (i = -1) => String(srv.chats().at(i)!.params.messages.at(-1).content);
  const notices = () => posted.filter((m): m is Extract<ToWebview, { type: "notice" }> => m.type === "notice").map((n) => n.text);
  return { chat, srv, saved, posted, question, notices, send: (m: FromWebview) => toHost!(m) };
}

/** Waits until the host sent its chat request (reading mentions takes a few turns of the loop). */
async function asked(h: ReturnType<typeof harness>, n = 1) {
  for (let i = 0; i < 50 && h.srv.chats().length < n; i++) await settle();
  expect(h.srv.chats()).toHaveLength(n);
}

const fileMention = (p: string, lines?: { start: number; end: number }): Mention => ({
  kind: "file", marker: fileMarker(p, lines), uri: withLines(ws(p).toString(), lines), name: p.split("/").pop()!,
});

describe("a send reads every mention at that moment", () => {
  it("attaches the file's text as it is when the message is sent (disk, or the open document's unsaved text)", async () => {
    workspace({ "tasks.py": "def summary():\n    return 'old'\n", "utils.py": "X = 1\n" });
    const h = harness();
    const tasks = fileMention("tasks.py");
    fake.disk.set("/ws/tasks.py", "def summary():\n    return 'new'\n"); // changed after the pick
    await h.send({ type: "send", text: `What does ${tasks.marker} do?`, chips: [], mentions: [tasks] });
    await asked(h);
    expect(h.question()).toContain("File tasks.py:\n```python\ndef summary():\n    return 'new'\n");
    expect(h.question()).not.toContain("'old'");
    expect(h.question().endsWith(`What does ${tasks.marker} do?`)).toBe(true);
    // An open document wins over the disk (its unsaved edits are what the user sees).
    fake.documents.set(ws("utils.py").toString(), textDocument("/ws/utils.py", "X = 2  # unsaved\n"));
    h.srv.answer("ok");
    await settle();
    await h.send({ type: "send", text: "and #file:utils.py", chips: [] }); // typed by hand: resolved the same way
    await asked(h, 2);
    expect(h.question()).toContain("X = 2  # unsaved");
  });

  it("attaches a symbol's lines where it is now, a range's lines, the problems and the diff of that moment", async () => {
    workspace({ "due.py": "import re\n\ndef parse_due(s):\n    return s.strip()\n\nOTHER = 1\n", "b.py": "one\ntwo\nthree\nfour\n" });
    const symbol: Mention = { kind: "symbol", marker: "#sym:parse_due", uri: "file:///ws/due.py#L3-4", name: "parse_due" };
    // The file gained lines above the function after the pick: its provider knows where it is now.
    fake.disk.set("/ws/due.py", "import re\nimport os\n\n\ndef parse_due(s):\n    return s.strip()\n\nOTHER = 1\n");
    fake.workspaceSymbols = [{ name: "parse_due", kind: 11, location: { uri: ws("due.py"), range: new Range(4, 0, 6, 0) } }];
    fake.allDiagnostics = [
      [ws("b.py"), [{ range: new Range(1, 0, 1, 3), message: "undefined name 'two'", severity: 0, source: "pyflakes" }]],
      [ws(".env"), [{ range: new Range(0, 0, 0, 3), message: "API_KEY=sk-live-123 looks odd", severity: 1 }]],
    ];
    const diff = [
      "diff --git a/b.py b/b.py", "--- a/b.py", "+++ b/b.py", "@@ -1 +1 @@", "-zero", "+one",
      "diff --git a/.env b/.env", "--- a/.env", "+++ b/.env", "@@ -1 +1 @@", "-K=1", "+K=sk-live-456",
    ].join("\n");
    fake.git = { enabled: true, getAPI: () => ({ repositories: [{ rootUri: Uri.file("/ws"), diff: async (cached: boolean) => (cached ? "" : diff) }] }) };
    const h = harness();
    const range = fileMention("b.py", { start: 2, end: 3 });
    const problems: Mention = { kind: "problems", marker: "#problems", uri: PROBLEMS_URI, name: "problems" };
    const gitDiff: Mention = { kind: "diff", marker: "#diff", uri: GIT_DIFF_URI, name: "git diff" };
    const text = `Is ${symbol.marker} right? Look at ${range.marker}, #problems and #diff`;
    await h.send({ type: "send", text, chips: [], mentions: [symbol, range, problems, gitDiff] });
    await asked(h);
    const q = h.question();
    expect(q).toContain("File due.py, lines 5-6 (parse_due):\n```python\ndef parse_due(s):\n    return s.strip()\n```");
    expect(q).toContain("File b.py, lines 2-3:\n```python\ntwo\nthree\n```");
    expect(q).toContain("Problems in the workspace (1):\n- b.py:2: error: undefined name 'two' (pyflakes)");
    expect(q).toContain("+one");
    expect(q).not.toContain("sk-live"); // the secret file's problem and its diff section stay out
    h.srv.answer("ok");
    await settle();
    const turn = h.saved()[0].turns[0];
    expect(turn.context).toEqual(["symbol parse_due (due.py:5-6)", "file b.py:2-3", "problems (1)", "git diff (1 file)"]);
    expect(turn.mentions?.map((m) => m.marker)).toEqual(["#sym:parse_due", "#file:b.py:2-3", "#problems", "#diff"]);
  });

  it("sends a file over the size limit as its outline and its first part", async () => {
    const big = Array.from({ length: 3000 }, (_, i) => `line_${i} = ${i}`).join("\n");
    workspace({ "big.py": big });
    fake.documentSymbols.set(ws("big.py").toString(), [
      { name: "Config", kind: 4, range: new Range(0, 0, 99, 0), children: [{ name: "load", kind: 5, range: new Range(10, 0, 20, 0), children: [] }] },
    ]);
    const h = harness();
    const m = fileMention("big.py");
    await h.send({ type: "send", text: `Summarise ${m.marker}`, chips: [], mentions: [m] });
    await asked(h);
    const q = h.question();
    expect(q).toContain("Outline of big.py (3000 lines):\n- class Config (lines 1-99)\n  - method load (lines 11-20)");
    expect(q).toMatch(/File big\.py \(its first \d+ characters\):\n```python\nline_0 = 0/);
    expect(q).not.toContain("line_2999");
    expect(q.length).toBeLessThan(21_000);
  });

  it("never attaches a secret file, an excluded one or a location outside the workspace, whatever the webview sent", async () => {
    workspace({ ".env": "API_KEY=sk-live-789\n", "config/secrets.yaml": "token: sk-live-000\n", "ok.py": "fine = True\n", "vendor/lib.py": "V = 1\n" }, { "completion.excludeGlobs": ["**/vendor/**"] });
    fake.disk.set("/etc/passwd", "root:x:0:0\n");
    const h = harness();
    const forged: Mention[] = [
      { kind: "file", marker: "#file:.env", uri: "file:///ws/.env", name: ".env" },
      { kind: "symbol", marker: "#sym:TOKEN", uri: "file:///ws/config/secrets.yaml#L1", name: "TOKEN" },
      { kind: "file", marker: "#file:lib.py", uri: "file:///ws/vendor/lib.py", name: "lib.py" },
      { kind: "file", marker: "#file:passwd", uri: "file:///etc/passwd", name: "passwd" },
      { kind: "file", marker: "#file:up", uri: "file:///ws/src/../../etc/passwd", name: "up" },
      fileMention("ok.py"),
    ];
    await h.send({ type: "send", text: `Read ${forged.map((m) => m.marker).join(" ")} and #file:config/secrets.yaml`, chips: [], mentions: forged });
    await asked(h);
    const q = h.question();
    expect(q).not.toMatch(/sk-live|root:x|V = 1/);
    expect(q).toContain("fine = True");
    expect(h.notices()[0]).toMatch(/^Not attached: \.env: a secret file; TOKEN: a secret file; lib\.py: excluded by kestrel\.completion\.excludeGlobs; passwd: outside the workspace; up: a path with `\.\.` in it; config\/secrets\.yaml: a secret file\.$/);
  });

  it("refuses a workspace file that links to a secret or out of the workspace (a link inside it is fine)", async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "kestrel-mentions-")));
    try {
      const wsDir = path.join(root, "ws");
      fs.mkdirSync(wsDir);
      fs.mkdirSync(path.join(root, "outside"));
      fs.writeFileSync(path.join(root, "outside", "id_rsa"), "PRIVATE KEY\n");
      fs.writeFileSync(path.join(root, "outside", "plain.txt"), "outside text\n");
      fs.writeFileSync(path.join(wsDir, "real.py"), "inside = 1\n");
      fs.symlinkSync(path.join(root, "outside", "id_rsa"), path.join(wsDir, "notes.txt"));
      fs.symlinkSync(path.join(root, "outside", "plain.txt"), path.join(wsDir, "readme.txt"));
      fs.symlinkSync(path.join(wsDir, "real.py"), path.join(wsDir, "alias.py"));
      fake.workspaceFolders = [{ uri: Uri.file(wsDir), name: "ws", index: 0 }];
      const mention = (name: string): Mention => ({ kind: "file", marker: `#file:${name}`, uri: Uri.file(path.join(wsDir, name)).toString(), name });
      for (const [name, text] of [["notes.txt", "PRIVATE KEY\n"], ["readme.txt", "outside text\n"], ["alias.py", "inside = 1\n"]]) fake.disk.set(path.join(wsDir, name), text);
      const files = new WorkspaceFiles();
      const picked = ["notes.txt", "readme.txt", "alias.py"].map(mention);
      const read = await readMentions(picked.map((m) => m.marker).join(" "), picked, { files, offered: new Set() });
      expect(read.refused).toEqual(["notes.txt: a link to a secret or excluded file", "readme.txt: a link to a file outside the workspace"]);
      expect(read.text).toContain("inside = 1");
      expect(read.text).not.toMatch(/PRIVATE KEY|outside text/);
      files.dispose();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("reads nothing before an untrusted workspace is allowed, and sends nothing when it is not", async () => {
    workspace({ "ok.py": "fine = True\n" });
    let reads = 0;
    const readFile = (await import("./fakeVscode")).vscode.workspace.fs.readFile;
    (await import("./fakeVscode")).vscode.workspace.fs.readFile = async (u: Uri) => (reads++, readFile(u));
    try {
      const h = harness({ trusted: async () => false });
      const m = fileMention("ok.py");
      await h.send({ type: "send", text: `Explain ${m.marker}`, chips: [], mentions: [m] });
      for (let i = 0; i < 10; i++) await settle();
      expect(h.srv.chats()).toHaveLength(0);
      expect(reads).toBe(0);
      expect(h.notices()).toEqual(["Nothing was sent: this workspace is not trusted."]);
    } finally {
      (await import("./fakeVscode")).vscode.workspace.fs.readFile = readFile;
    }
  });

  it("does not attach twice a file the file chip sends already", async () => {
    workspace({ "main.py": "a = 1\n" });
    fake.documents.set(ws("main.py").toString(), textDocument("/ws/main.py", "a = 1\n"));
    openEditor(fake.documents.get(ws("main.py").toString())!);
    const h = harness();
    const m = fileMention("main.py");
    await h.send({ type: "send", text: `Explain ${m.marker}`, chips: ["file"], mentions: [m] });
    await asked(h);
    expect(h.question().split("a = 1").length).toBe(2);
  });

  it("keeps the mentions with the turn: Retry after a reload reads them again", async () => {
    workspace({ "tasks.py": "V = 'now'\n" });
    const m = fileMention("tasks.py");
    const stored: Conversation = {
      id: "c1", title: "t", created: 1,
      turns: [{ role: "user", text: `Explain ${m.marker}`, context: ["file tasks.py"], chips: [], mentions: [m] }, { role: "assistant", text: "", error: "boom" }],
    };
    const h = harness({ stored: [stored], current: "c1" });
    await h.send({ type: "retry" });
    await asked(h);
    expect(h.question()).toContain("File tasks.py:\n```python\nV = 'now'");
  });
});

describe("helpers", () => {
  it("grows a one-line symbol range to its block (indentation or braces)", () => {
    const py = "def f(x):\n    if x:\n        return 1\n\n    return 2\n\ndef g():\n    pass\n";
    expect(blockFrom(py, 1)).toEqual({ start: 1, end: 5 });
    const ts = "export function f() {\n  return {\n    a: 1,\n  };\n}\nconst g = 1;\n";
    expect(blockFrom(ts, 1)).toEqual({ start: 1, end: 5 });
  });

  it("splits a diff by file and drops the sections of files that may not be sent (both names of a rename)", () => {
    const diff = "diff --git a/x.py b/x.py\n+1\ndiff --git a/old.py b/.env\nrename\ndiff --git a/y.py b/y.py\n+2\n";
    const sections = splitDiff(diff);
    expect(sections.map((s) => s.path)).toEqual(["x.py", ".env", "y.py"]);
    const { kept, dropped } = keepSections(sections, (p) => !p.startsWith(".env"));
    expect(kept.map((s) => s.path)).toEqual(["x.py", "y.py"]);
    expect(dropped).toEqual([".env"]);
  });

  it("reads typed markers it cannot resolve as a notice, not as context", async () => {
    workspace({ "a.py": "" });
    const files = new WorkspaceFiles();
    const read = await readMentions("see #file:missing.py and #sym:nothing_here", [], { files, offered: new Set() });
    expect(read.text).toBe("");
    expect(read.refused).toEqual(["#file:missing.py: no such file in the workspace", "#sym:nothing_here: no symbol of that name in the workspace"]);
    files.dispose();
  });
});
