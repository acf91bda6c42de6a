"""The ESLint quick-fix set (bench/edit_quality/eslint_set.py) checked without a model or Node:
ESLint's message becomes the editor's diagnostic and its fix the truth, the verdict compares
programs (layout aside) and sees new findings and harm, the raw answer goes over the lines it was
asked for, and the sample spreads over files and packages."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from bench.edit_quality import eslint_set, raw, scoring

BROKEN = "\n".join([
    "import { parse } from './parse'",
    "",
    "export function label(name: string): string {",
    "  let prefix = 'item-'",
    "  return prefix + name",
    "}",
    "",
    "export const other = 1",
    "",
])
# ESLint's prefer-const message for `prefix` and its fix, as lint.mjs answers them.
START = BROKEN.index("let prefix")
MESSAGE = {"ruleId": "prefer-const", "message": "'prefix' is never reassigned. Use 'const' instead.", "line": 4,
           "column": 7, "endLine": 4, "endColumn": 13,
           "fix": {"range": [START, START + len("let prefix = 'item-'")], "text": "const prefix = 'item-'"}}


class FakeESLint:
    """Answers as ESLint would for these files: prefer-const while `let prefix` is there, and a
    no-unused-vars finding when an `unused` binding appears."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def lint_async(self, path: str, text: str) -> list[dict]:
        self.calls.append(path)
        out = []
        if "let prefix" in text:
            out.append({"ruleId": "prefer-const", "message": MESSAGE["message"]})
        if "unused" in text:
            out.append({"ruleId": "@typescript-eslint/no-unused-vars", "message": "'unused' is assigned a value but never used."})
        return out


@pytest.fixture
def fake(monkeypatch):
    f = FakeESLint()
    monkeypatch.setattr(eslint_set, "_LINTER", f)
    return f


def _task():
    return eslint_set._task("pkg-1.0.0", "src/label.ts", BROKEN, MESSAGE)


def test_the_message_becomes_the_editors_diagnostic_and_eslints_fix_the_truth():
    t = _task()
    assert t.set == "eslint" and t.family == "quick-fix" and t.kind == "prefer-const"
    assert t.language == "typescript" and t.filename == "label.ts" and t.lint_path == "pkg-1.0.0/src/label.ts"
    assert t.diagnostic == {"range": {"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 12}},
                            "message": MESSAGE["message"], "code": "prefer-const", "source": "eslint"}
    assert t.original == BROKEN.replace("let prefix", "const prefix")
    assert t.target == (3, 3)


def test_a_fix_spanning_more_lines_than_the_message_widens_the_target():
    text = "if (a)\n  go()\nrest()\n"
    m = {"ruleId": "curly", "message": "Expected { after 'if' condition.", "line": 2, "column": 3, "endLine": 2,
         "endColumn": 7, "fix": {"range": [0, len("if (a)\n  go()")], "text": "if (a)\n  {go()}"}}
    t = eslint_set._task("p", "a.ts", text, m)
    assert t.target == (0, 1) and t.original == "if (a)\n  {go()}\nrest()\n"


def test_tokens_ignore_layout_and_comments_but_not_strings():
    a = eslint_set.tokens("const s = `${  a}-x`\n")
    assert a == eslint_set.tokens("const s = `${a}-x` // why\n")
    assert a != eslint_set.tokens("const s = `${a}-y`\n")
    assert eslint_set.tokens("const = \n") is None
    # a statement's semicolon is optional; one that changes how the code parses is not
    assert eslint_set.tokens("go();\nstop()\n") == eslint_set.tokens("go()\nstop();\n")
    assert eslint_set.tokens("a;\n(b)\n") != eslint_set.tokens("a\n(b)\n")


def test_the_verdict_fixed_resolved_otherwise_new_findings_and_harm(fake):
    t = _task()
    scorer = scoring.EditScorer()
    v = asyncio.run(scorer.verdict(t, t.original))
    assert v.fixed and not v.harm and v.result == "passed"
    # the same program, another layout: still ESLint's fix
    v = asyncio.run(scorer.verdict(t, t.original.replace("const prefix = 'item-'", "const prefix  =  'item-';")))
    assert v.fixed, v.result
    # the finding is gone but the program changed (the variable inlined): resolved, not fixed
    inlined = BROKEN.replace("  let prefix = 'item-'\n", "").replace("prefix + name", "'item-' + name")
    v = asyncio.run(scorer.verdict(t, inlined))
    assert not v.fixed and "not as ESLint fixes it" in v.result
    # a new finding
    v = asyncio.run(scorer.verdict(t, t.original.replace("return", "const unused = 1\n  return")))
    assert not v.fixed and v.new_findings == ["@typescript-eslint/no-unused-vars: 'unused' is assigned a value but never used."]
    # untouched finding
    v = asyncio.run(scorer.verdict(t, BROKEN.replace("return prefix", "return  prefix")))
    assert not v.fixed and v.result == "the finding is still there"
    # a change outside the finding's lines is harm, even when the fix itself is right
    v = asyncio.run(scorer.verdict(t, t.original.replace("other = 1", "other = 2")))
    assert v.harm and v.outside
    # nothing changed
    v = asyncio.run(scorer.verdict(t, BROKEN))
    assert not v.fixed and not v.harm and v.lines_changed == 0
    assert set(fake.calls) == {"pkg-1.0.0/src/label.ts"}


def test_raw_sees_the_lines_around_the_finding_and_its_answer_goes_over_the_lines_asked_for():
    t = _task()
    msgs = raw.messages(t)
    assert "TypeScript" in msgs[0]["content"] and "Python" not in msgs[0]["content"]
    user = msgs[1]["content"]
    assert user.startswith("```typescript\n") and "let prefix = 'item-'" in user
    assert "tasks/label.ts, line 4: eslint prefer-const: 'prefix' is never reassigned" in user
    # the asked-for line again, last, as Kestrel's prompt shows its statement
    assert user.endswith("The problem is in line 4:\n```typescript\n  let prefix = 'item-'\n```\n"
                         "Fix it. Reply with only these lines, corrected, in a code block.")
    assert raw.apply_lines(t, "  const prefix = 'item-'") == t.original


def test_the_sample_takes_one_finding_per_file_and_turns_through_the_packages():
    def task(pkg, path, line):
        m = {**MESSAGE, "line": line}
        return eslint_set._task(pkg, path, BROKEN, m)

    by_kind = {"prefer-const": [task("a", "x.ts", 1), task("a", "x.ts", 4), task("a", "y.ts", 4), task("a", "z.ts", 4),
                                task("b", "x.ts", 4)], "curly": []}
    picked = eslint_set.sample(by_kind, 3)
    assert len(picked) == 3
    assert len({t.lint_path for t in picked}) == 3  # one per file
    assert Counter(t.lint_path.split("/")[0] for t in picked) == Counter({"a": 2, "b": 1})
    assert picked == eslint_set.sample(by_kind, 3)  # seeded
    assert len(eslint_set.sample(by_kind, None)) == 4  # all: still one per file
