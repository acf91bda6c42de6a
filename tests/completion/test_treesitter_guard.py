"""The tree-sitter syntax guard for brace languages (kestrel.completion.guards.treesitter), the window
it parses (guards/brace_window.py) and the bracket cuts (cuts/brackets.py). Golden cases per
language are in golden/ (`<language>_*.toml`)."""

from __future__ import annotations

import asyncio

import pytest

from kestrel.completion import guards
from kestrel.completion.cuts.brackets import missing_by_kind, surplus_closers, without_retyped_end
from kestrel.completion.guards.brace_window import MAX_LINES, window
from kestrel.completion.guards.treesitter import GRAMMARS, TreeSitterGuard
from kestrel.context.window import CursorText

# (languageId, code before the cursor, code after it, a suggestion that parses there, one that does not)
CASES = [
    ("typescript", "function f(xs: number[]): number {\n  let n = 0;\n  ", "\n  return n;\n}\n",
     "for (const x of xs) {\n    n += x;\n  }", "for (const x of xs) {\n    n += x;"),
    ("typescriptreact", "export function A() {\n  return (\n    <div>\n      ", "\n    </div>\n  );\n}\n",
     "<span>{1}</span>", "<span>{1}</span"),
    ("javascript", "function f(xs) {\n  let n = 0;\n  ", "\n  return n;\n}\n", "n = xs.length;", "n = (xs.length;"),
    ("javascriptreact", "function A() {\n  return <ul>\n    ", "\n  </ul>;\n}\n", "<li>one</li>", "<li>one</l"),
    ("go", "func f(xs []int) int {\n\tn := 0\n\t", "\n\treturn n\n}\n", "for _, x := range xs {\n\t\tn += x\n\t}",
     "for _, x := range xs {\n\t\tn += x"),
    ("rust", "fn f(xs: &[i32]) -> i32 {\n    let mut n = 0;\n    ", "\n    n\n}\n",
     "for x in xs {\n        n += x;\n    }", "for x in xs {\n        n += x;"),
    ("java", "class A {\n    int f(int[] xs) {\n        int n = 0;\n        ", "\n        return n;\n    }\n}\n",
     "for (int x : xs) {\n            n += x;\n        }", "for (int x : xs) {\n            n += x;"),
    ("c", "int f(int *xs, int len)\n{\n    int n = 0;\n    ", "\n    return n;\n}\n",
     "for (int i = 0; i < len; i++) {\n        n += xs[i];\n    }", "for (int i = 0; i < len; i++) {\n        n += xs[i];"),
    ("cpp", "int f(const std::vector<int>& xs) {\n    int n = 0;\n    ", "\n    return n;\n}\n",
     "for (int x : xs) {\n        n += x;\n    }", "for (int x : xs) {\n        n += x;"),
    ("csharp", "class A\n{\n    int F(int[] xs)\n    {\n        var n = 0;\n        ", "\n        return n;\n    }\n}\n",
     "foreach (var x in xs)\n        {\n            n += x;\n        }", "foreach (var x in xs)\n        {\n            n += x;"),
]


@pytest.mark.parametrize("language,before,after,good,bad", CASES, ids=[c[0] for c in CASES])
def test_a_suggestion_that_parses_is_taken_and_one_that_breaks_the_code_is_refused(language, before, after, good, bad):
    guard = guards.guard_for(language)
    assert isinstance(guard, TreeSitterGuard)
    assert guard.refuses(before, good, after) is None
    assert "breaks the syntax" in guard.refuses(before, bad, after)


def test_every_vs_code_brace_language_has_a_guard_and_python_keeps_its_own():
    assert set(GRAMMARS) == {"typescript", "typescriptreact", "javascript", "javascriptreact", "go", "rust", "java",
                             "c", "cpp", "csharp"}
    assert not isinstance(guards.guard_for("python"), TreeSitterGuard)


def test_an_unknown_language_has_no_guard():
    assert guards.guard_for("haskell") is None
    cur = CursorText("main = ", "\n", "main = ", "")
    assert guards.refusal(cur, "print (1", "haskell") is None


def test_a_language_whose_grammar_is_missing_takes_every_suggestion(monkeypatch):
    monkeypatch.setitem(GRAMMARS, "typescript", ("tree_sitter_not_installed", "language"))
    guard = TreeSitterGuard("typescript")
    assert guard.refuses("function f() {\n  ", "return (0", "\n}\n") is None


def test_an_error_elsewhere_in_the_file_is_not_held_against_the_suggestion():
    ts = guards.guard_for("typescript")
    broken_above = "function g() {\n  const x = ;\n}\n\nfunction f() {\n  let n = 0;\n  "
    assert ts.refuses(broken_above, "n += 1;", "\n  return n;\n}\n") is None
    assert ts.refuses(broken_above, "n += (1;", "\n  return n;\n}\n") is not None
    # In the same function, below the cursor: still only what the suggestion adds counts.
    broken_below = "\n  return n +;\n}\n"
    assert ts.refuses("function f() {\n  let n = 0;\n  ", "n += 1;", broken_below) is None
    assert ts.refuses("function f() {\n  let n = 0;\n  ", "n += (1;", broken_below) is not None


def test_half_typed_code_at_the_cursor_is_completed_or_left_as_broken_as_it_was():
    ts = guards.guard_for("typescript")
    before, after = "function f() {\n  const total = ", "\n  return total;\n}\n"
    assert ts.refuses(before, "prices.reduce((a, b) => a + b, 0);", after) is None  # finishes it
    assert ts.refuses(before, "prices.reduce((a, b) => a + b, 0", after) is not None  # a new error


def test_code_at_column_0_inside_an_unindented_block_is_judged_by_the_whole_document():
    """A Rust macro body written unindented (as rustfmt leaves macros): the window, cut by
    indentation, starts inside it and would see a struct field as top-level code. At column 0 the
    whole document is the judge, which parses the body as the macro's tokens: the line is taken;
    one that leaves a bracket open is still refused."""
    rust = guards.guard_for("rust")
    before = ("use std::fmt;\n\niterator_wrap! {\nimpl (Iterator) for\n#[derive(Debug, Clone)]\n"
              "struct Outgoing<'a, E, Ix> where { Ix: IndexType }\n")
    after = "\niter: SomeIter<'a, E, Ix>,\n}\n\nfn main() {}\n"
    assert rust.refuses(before, "item: EdgeReference<'a, E, Ix>,", after) is None
    assert rust.refuses(before, "item: EdgeReference<'a, E, (Ix>,", after) is not None


def test_a_window_cut_short_in_a_long_function_still_sees_an_unclosed_brace():
    go = guards.guard_for("go")
    body = "".join(f"\tv{i} := compute({i})\n\tif v{i} > 0 {{\n\t\tn += v{i}\n\t}}\n" for i in range(100))
    before = "func f() int {\n\tn := 0\n" + body[: len(body) // 2] + "\t"
    after = "\n" + body[len(body) // 2 :] + "\treturn n\n}\n"
    assert go.refuses(before, "if n > 9 {\n\t\tn = 9\n\t}", after) is None
    assert go.refuses(before, "if n > 9 {\n\t\tn = 9", after) is not None


def test_the_window_is_the_enclosing_method_with_its_class_header_and_is_bounded():
    methods = "".join(f"    int m{i}() {{\n        return {i};\n    }}\n\n" for i in range(200))
    before = "package a;\n\npublic class A {\n" + methods + "    int f() {\n        int n = 0;\n        "
    after = "\n        return n;\n    }\n\n" + methods + "}\n"
    region = window(before, after)
    assert region.head.startswith("public class A {\n    int f() {\n")
    assert region.tail == "\n        return n;\n    }\n}"
    assert (region.head + region.tail).count("\n") <= 2 * MAX_LINES + 4


def test_minified_code_is_not_checked():
    line = "function f(a){return a+1}" * 60  # 1,500 characters on the cursor's line
    assert guards.guard_for("javascript").refuses(line + ";", "g((", "\n") is None


def test_allman_headers_and_labels():
    before = "namespace N\n{\n    class A\n    {\n        void F()\n        {\n            "
    region = window(before, "\n        }\n    }\n}\n")
    assert region.head == before and region.tail == "\n        }\n    }\n}"
    cpp = "class P {\npublic:\n    int f() const {\n        "
    assert window(cpp, "\n    }\nprivate:\n    int x_;\n};\n").head == cpp  # `public:` is not a start


def test_surplus_closers_skip_strings_and_rust_lifetimes():
    assert surplus_closers('"(%d)", len(s))') == [14]
    assert surplus_closers("fn f<'a>(x: &'a str) -> &'a str { x }") == []
    assert surplus_closers("a)\n  b]") == [1, 6]
    assert missing_by_kind("f(a, ", ")") == (0, 0, 0) and missing_by_kind("if (x) {", "") == (0, 0, 1)
    assert missing_by_kind('s = "{"; {', "}") == (0, 0, 0)


def test_a_retyped_end_is_trimmed_only_when_it_balances_its_own_brackets():
    assert without_retyped_end("64;", ";") == "64"
    assert without_retyped_end("bar(x);", "(x);") == "bar"
    assert without_retyped_end("bar()", ")") == "bar()"  # its `)` closes its own `(`
    assert without_retyped_end("x\n", ";") == "x\n"


def test_through_the_engine_a_typescript_block_that_breaks_the_code_offers_its_first_line():
    doc = "function f(xs: number[]): number {\n  let n = 0;\n  \n  return n;\n}\n"
    cursor = doc.index("  \n  return") + 2
    answer = "n = xs.length;\n  n += (xs[0];"
    assert _complete(doc, cursor, answer, "typescript") == "n = xs.length;"
    assert _complete(doc, cursor, answer, "lua") == answer  # no guard: what the cuts give


def _complete(document: str, cursor: int, answer: str, language: str) -> str:
    from scripted_completion import ScriptedProvider

    from kestrel.completion.engine import CompletionInput, InlineCompletionEngine
    from kestrel.config import CompletionSettings
    from kestrel.context.window import split_at

    class Quiet:
        def generation_started(self): ...
        def generation_finished(self, stats, error): ...

    engine = InlineCompletionEngine(CompletionSettings(), Quiet())
    engine.set_provider(ScriptedProvider(answer))
    before = document[:cursor]
    cur = split_at(document, before.count("\n"), cursor - (before.rfind("\n") + 1))
    return asyncio.run(engine.complete(CompletionInput("file:///w/a", "a", language, cur, lambda q, n: ())))


def test_a_statement_longer_than_the_window_is_checked_on_the_whole_document():
    """A struct literal of more than MAX_LINES lines: the window starts inside it and sees an error
    of its own making; the whole document (its tree kept and re-parsed incrementally) does not.
    Seen on prometheus' go_collector.go: the right `valType: CounterValue,` was refused."""
    fields = "".join(f'\t\t{{\n\t\t\tname: "metric_{i}",\n\t\t\tkind: GaugeValue,\n\t\t}},\n' for i in range(MAX_LINES))
    before = "package p\n\nfunc metrics() []desc {\n\treturn []desc{\n" + fields + "\t\t{\n\t\t\tkind"
    after = "\n\t\t},\n\t}\n}\n"
    cur = CursorText(before, after, "\t\t\tkind", "")
    assert guards.refusal(cur, ": CounterValue,", "go") is None
    assert guards.refusal(cur, ": (CounterValue,", "go") is not None  # one that breaks it still is refused
    # one more character typed: the kept tree is re-parsed from the edit, as a fresh parse would be
    cur2 = CursorText(before + ":", after, "\t\t\tkind:", "")
    assert guards.refusal(cur2, " CounterValue,", "go") is None
    kept = guards.guard_for("go")
    fresh = TreeSitterGuard("go")
    doc = (before + ":" + after).encode()
    assert str(kept._document_tree(kept.parser(), doc).root_node) == str(fresh.parser().parse(doc).root_node)


def test_the_whole_document_check_keeps_the_window_s_refusal_past_its_time_budget_and_the_judge_has_none():
    """The window that cuts a type list (below): with no time for the whole-document parse the
    window's refusal stands (what a keystroke's guard does on a busy CPU); the eval's judge gets all
    the time it needs, so its breaks-syntax verdict does not depend on the load (a TypeScript run
    under load counted one such refusal against Kestrel)."""
    from bench.quality.lang_scoring import JUDGE_MS

    before = "type Fn = () => unknown\n\nexport type ErrorOf<Q extends Fn> ="
    after = "\n  Awaited<ReturnType<Q>>,\n  { error?: undefined }\n>['error']\n\nexport const x = 1\n"
    assert TreeSitterGuard("typescript", whole_document_ms=-1.0).refuses(before, " Exclude<", after) is not None
    assert TreeSitterGuard("typescript", whole_document_ms=JUDGE_MS).refuses(before, " Exclude<", after) is None


def test_the_edit_between_two_documents():
    from kestrel.completion.guards.treesitter import _difference

    assert _difference(b"abcdef", b"abXYef") == (2, 4, 4)
    assert _difference(b"aaaa", b"aaaaa") == (4, 4, 5)  # an insertion at the end of a run
    assert _difference(b"abc", b"abc") == (3, 3, 3)
    assert _difference(b"", b"xy") == (0, 0, 2)


def test_a_window_that_cuts_a_type_list_lets_the_whole_document_judge():
    """The window ends before a `>` at the left margin that closes a type list: its parse has an error
    far from the cursor, so a refusal is checked on the whole document (seen on redux-toolkit's
    `export type BaseQueryError<...> = Exclude<` and msw's class type parameters)."""
    before = "type Fn = () => unknown\n\nexport type ErrorOf<Q extends Fn> ="
    after = "\n  Awaited<ReturnType<Q>>,\n  { error?: undefined }\n>['error']\n\nexport const x = 1\n"
    cur = CursorText(before, after, "export type ErrorOf<Q extends Fn> =", "")
    assert guards.refusal(cur, " Exclude<", "typescript") is None
    assert guards.refusal(cur, " Exclude<(", "typescript") is not None
