"""The instructed-edit set of the edit eval (bench/edit_quality/canitedit.py), without a model: the
CanItEdit rows load and are the ones bench/data/canitedit/README.md describes, every kept task fails
its tests before the edit and passes them after it, the selection holds the whole reference edit,
the instruction is the benchmark's own, a raw chat answer that renames or adds definitions is
applied as a user applies it, test runs have a time and a memory limit, and nothing in the server
knows the set. The rows are not in this repository (they live in the steering repo's shared/, see
the README): the tests that need them are skipped, saying why, where they are not."""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path

import pytest

from bench.edit_quality import canitedit, raw, scoring

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ("3_hello_world", "6_locked_box", "7_temperature_converter", "8_vector_lib", "36_strongly_connected",
          "68_prime_numbers_problem", "102_nfa")


@pytest.fixture(scope="module")
def rows():
    missing = canitedit.available()
    if missing:
        pytest.skip(missing)
    return {r["full_name"]: r for r in canitedit.rows()}


@pytest.fixture(scope="module")
def built(rows):
    return canitedit.all_tasks()


@pytest.fixture(scope="module")
def sample(rows):
    out = {}
    for name in SAMPLE:
        key, made = canitedit._build(rows[name], canitedit.VARIANTS)
        assert not isinstance(made, str), (key, made)
        out[name] = made[0]
        out[f"{name}/descriptive"] = made[1]
    return out


def test_the_rows_are_the_ones_the_readme_describes(rows):
    assert len(rows) == 70
    assert {r["taxonomy"]["change_kind"] for r in rows.values()} == {"adaptive", "perfective"}  # no repairs
    assert len({r["id"] for r in rows.values()}) == 70
    for r in rows.values():
        assert r["before"] != r["after"] and r["tests"] and r["instruction_lazy"] and r["instruction_descriptive"]
    assert hashlib.sha256(canitedit.data_path().read_bytes()).hexdigest() == canitedit.SHA256


def test_the_readme_and_licence_say_where_the_rows_come_from_and_what_they_are(monkeypatch, tmp_path):
    folder = ROOT / "bench" / "data" / "canitedit"
    assert "MIT License" in (folder / "LICENSE").read_text() and "Cassano" in (folder / "LICENSE").read_text()
    readme = (folder / "README.md").read_text()
    assert canitedit.SHA256 in readme and "bea1c6cf1921ce40ff6ac36b52a655b6d6e6e3a8" in readme
    # another file, or none, where the rows are looked for: the set says why it cannot run
    wrong = tmp_path / canitedit.FILE
    wrong.write_text("{}\n")
    monkeypatch.setenv("KESTREL_CANITEDIT_DATA", str(wrong))
    assert "is not the expected CanItEdit file" in canitedit.available()
    monkeypatch.setenv("KESTREL_CANITEDIT_DATA", str(tmp_path / "nothing.jsonl"))
    assert "are not at" in canitedit.available() and "README" in canitedit.available()


def test_every_kept_task_fails_before_and_passes_after(built, rows):
    made, skipped = built
    tasks = made["inline-edit"]
    assert not made["quick-fix"] and len(tasks) + len(skipped) == 70 and len(tasks) >= 55
    for name, why in skipped.items():
        libraries = {"scikit-learn": "sklearn"}
        needs = {libraries.get(x, x) for x in rows[name]["taxonomy"]["libraries"]} | {"torch"}  # 30_: torch in its tests
        m = re.fullmatch(r"needs (\w+), not installed here", why)
        assert (m and m.group(1) in needs) or (name, why) == ("60_unique_number", "the tests pass on the before file")
    for t in tasks:  # what _build checked, told by the scorer the eval uses
        assert t.set == "canitedit" and t.family == "inline-edit" and t.kind in ("adaptive", "perfective")
        assert t.original == rows[t.task_id.split("/")[-1]]["after"]
        assert t.broken == rows[t.task_id.split("/")[-1]]["before"]
    scorer = scoring.EditScorer()
    for t in tasks[::6]:
        assert asyncio.run(scorer.verdict(t, t.original)).fixed, t.task_id
        assert not asyncio.run(scorer.verdict(t, t.broken)).fixed, t.task_id


def test_the_selection_holds_the_whole_reference_edit(built, sample, rows):
    for t in built[0]["inline-edit"]:
        assert not scoring.touched_outside(t, t.original), t.task_id  # the reference edits only the selection
        first, last = t.target
        assert 0 <= first <= last < len(t.broken.split("\n"))
    assert sample["6_locked_box"].target == (9, 24)  # a method of one class to the end of the next class
    assert raw.target_names(sample["6_locked_box"]) == ["MyBox", "LockedMyBox"]
    cipher = rows["1_cipher"]
    assert canitedit.changed_region(cipher["before"], cipher["after"]) == (0, 46)  # a new method and two changed: the class
    # a new top-level function after the file's only one: that function is selected
    assert sample["7_temperature_converter"].target == (0, 1)
    # the new import line is not selected (the class the method is added to is)
    graph = sample["36_strongly_connected"]
    assert graph.target == (21, 62) and graph.broken.split("\n")[21].startswith("class Graph")
    assert "also adds an import" in graph.note
    assert canitedit.changed_region("def f():\n    return 1\n", "import os\ndef f():\n    return 1\n") is None


def test_the_instruction_is_the_benchmarks_own(sample, rows):
    hello = sample["3_hello_world"]
    assert hello.instruction == rows["3_hello_world"]["instruction_lazy"] == "Make the name fully uppercase."
    assert sample["3_hello_world/descriptive"].instruction == rows["3_hello_world"]["instruction_descriptive"]
    assert sample["3_hello_world/descriptive"].task_id.endswith("/descriptive")
    system, user = raw.messages(hello)
    assert system["content"] == raw.SYSTEM_INSTRUCTED  # not told to fix a problem
    assert user["content"].endswith("Make the name fully uppercase.\n\nReply with the changed function `hello_world` "
                                     "in a code block.")
    assert raw.messages(sample["36_strongly_connected"])[1]["content"].endswith(
        "Reply with the changed class `Graph` in a code block.")


def test_a_raw_answer_that_renames_or_adds_definitions_is_applied_as_a_user_applies_it(sample):
    scorer = scoring.EditScorer()
    for name in SAMPLE:  # the reference itself as the chat answer
        t = sample[name]
        doc, why = raw.apply_answer(t, t.original)
        assert why is None, name
        v = asyncio.run(scorer.verdict(t, doc))
        assert v.fixed and not v.harm, (name, v.result)
    # a rename: the answer's function takes the old one's place
    primes = sample["68_prime_numbers_problem"]
    doc, _ = raw.apply_answer(primes, primes.original)
    assert "def sum_of_prime_products(" not in doc and "def sum_of_prime_products_in_range(" in doc
    # a new subclass goes after the class it extends (above it, it would not run)
    vec = sample["8_vector_lib"]
    doc, _ = raw.apply_answer(vec, vec.original)
    assert doc.index("class Vector") < doc.index("class MyVector")
    assert "\nimport math\n" in doc[: doc.index("class Vector")]  # its import goes to the import block
    # nothing that looks like a definition: nothing applied
    assert raw.apply_answer(primes, "print(1)\n")[1] == "the answer has no function `sum_of_prime_products`"


def test_a_test_run_has_a_time_and_a_memory_limit():
    assert canitedit.run_sync("x = 1", "assert x == 1").passed
    slow = canitedit.run_sync("while True:\n    pass", "", timeout=1)
    assert not slow.passed and slow.result == "timed out"
    big = canitedit.run_sync("x = bytearray(16 << 30)", "")
    assert not big.passed and "MemoryError" in big.result


def test_no_server_code_knows_the_set():
    """Kestrel must meet these tasks as any user's code: no rule names the set, a task or its instruction."""
    needles = ["canitedit", "can it edit"]
    if canitedit.available() is None:
        for r in canitedit.rows():
            needles += [r["full_name"].lower(), r["instruction_lazy"][:40].lower(), r["instruction_descriptive"][:40].lower()]
    for path in (ROOT / "pyserver").rglob("*"):
        if any(part.endswith(".egg-info") for part in path.parts):
            continue  # pip's build metadata lists the repository's files (tests included), not server code
        if path.is_file() and path.suffix in (".py", ".json", ".toml", ".txt", ".md"):
            text = path.read_text(encoding="utf-8", errors="replace").lower()
            assert not [n for n in needles if n in text], path
