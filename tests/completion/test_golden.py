"""Golden cases for the completion cuts: one TOML file per case in golden/ (see golden/README.md)."""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

import pytest

from kestrel.completion import guards
from kestrel.completion.cuts import CutOptions, cut
from kestrel.completion.cuts.base import BRACE_LANGUAGES, lexis_of
from kestrel.completion.shape import wants_multiline
from kestrel.context.window import CursorText

CURSOR = "║"
GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.toml"))
_STREAM_KEYS = {"multiline", "max_lines", "done", "model_ended", "expect_end", "asked_mid_line"}
_CASE_KEYS = {"language", "document", "raw", "expected", "final", "stage", "stream"}


def load(path: Path) -> tuple[dict, CursorText, CutOptions]:
    case = tomllib.loads(path.read_text(encoding="utf-8"))
    assert set(case) <= _CASE_KEYS and set(case.get("stream", {})) <= _STREAM_KEYS, f"unknown keys in {path.name}"
    assert case["document"].count(CURSOR) == 1, f"{path.name}: the document needs exactly one {CURSOR}"
    before, after = case["document"].split(CURSOR)
    cur = CursorText(before, after, before.rsplit("\n", 1)[-1], after.split("\n", 1)[0])
    stream = case.get("stream", {})
    opts = CutOptions(
        multiline=stream.get("multiline", wants_multiline(cur.line_before, cur.line_after)),
        max_lines=stream.get("max_lines", 10),
        done=stream.get("done", True),
        model_ended=stream.get("model_ended", False),
        expect_end=stream.get("expect_end", False),
        braces=case["language"] in BRACE_LANGUAGES,
        lexis=lexis_of(case["language"]),
        asked_mid_line=stream.get("asked_mid_line"),
    )
    return case, cur, opts


def shown_for(case: dict, cur: CursorText, opts: CutOptions):
    """What the engine shows for the case: the cuts, then (once final) the language's guard."""
    shown = cut(case["raw"], cur, opts)
    if shown.final or opts.done:
        shown = guards.fit(cur, shown, case["language"], None)
    return shown


def test_there_are_golden_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_golden(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    case, cur, opts = load(path)
    with caplog.at_level(logging.DEBUG, logger="kestrel.completion"):
        shown = shown_for(case, cur, opts)
    assert shown.text == case["expected"]
    if "final" in case:
        assert shown.final == case["final"]
    if "stage" in case:  # the stage that cut is named in the debug log ("why did I get nothing?")
        assert any(r.getMessage().startswith(("cut " + case["stage"] + ":", case["stage"] + ":"))
                   for r in caplog.records), [r.getMessage() for r in caplog.records]
