"""The agent-task eval (bench/agent_tasks/) checked without a model: a rename is judged token by
token (layout free, anything else changed fails), a QuixBugs fix by the original tests, and one
trial runs kestrel-lsp's agent over stdio against the mock model scripted as a capable agent would
act (it runs the allowed test command unasked, then edits two files): the check passes, and a
command off the allow-list is declined."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from bench.agent_tasks import tasks
from bench.agent_tasks.runner import trial
from bench.edit_quality import quixbugs
from bench.quality.lsp import server_env


def test_a_rename_is_the_old_file_with_the_name_replaced_and_nothing_else():
    before = "from .a import load_items\n\nx = load_items(1)  # load_items here\nNAMES = ['load_items']\n"
    renamed = "from .a import load_items_v2\n\nx = load_items_v2( 1 )  # a comment\nNAMES = ['load_items_v2']\n"
    assert tasks.renamed_as_asked(before, renamed, "load_items", "load_items_v2") == ""
    assert tasks.renamed_as_asked(before, renamed.replace("['load_items_v2']", "['load_items']"), "load_items", "load_items_v2") == ""
    assert "left" in tasks.renamed_as_asked(before, before, "load_items", "load_items_v2")
    assert "became" in tasks.renamed_as_asked(before, renamed.replace("(1", "(2").replace("( 1", "( 2"), "load_items", "load_items_v2")
    assert tasks.renamed_as_asked(before, renamed + "def (", "load_items", "load_items_v2") == "does not parse"


def test_a_fix_task_passes_with_the_correct_program_only():
    [task] = tasks.fix_tasks(1)
    name = task.id.split("/")[1]
    folder = Path(tempfile.mkdtemp())
    task.fill(folder)
    assert (folder / "python_testcases" / f"test_{name}.py").exists() and f"test_{name}.py" in task.request
    assert task.check(folder)[0] is False
    (folder / "python_testcases" / f"test_{name}.py").write_text("def test_nothing():\n    pass\n")  # editing the tests
    assert task.check(folder)[0] is False
    (folder / "python_programs" / f"{name}.py").write_text(quixbugs.correct_source(name))
    assert task.check(folder) == (True, "passed")


def _project(folder: Path) -> None:
    (folder / "pkg").mkdir()
    (folder / "pkg" / "a.py").write_text("def load_items(n):\n    return list(range(n))\n")
    (folder / "pkg" / "b.py").write_text("from .a import load_items\n\nFIRST = load_items(3)\n")


def call(name: str, **arguments) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_one_trial_drives_the_agent_and_checks_the_folder(mock):
    root = Path(tempfile.mkdtemp())
    _project(root)
    task = tasks.AgentTask("rename/demo/load_items", "rename", "Rename load_items to load_items_v2 everywhere.",
                           lambda folder: _project(folder), tasks._rename_check(root, "load_items", "load_items_v2"))
    edits = "\n".join([
        call("edit_file", path="pkg/a.py", old_text="def load_items(n):", new_text="def load_items_v2(n):"),
        call("edit_file", path="pkg/b.py", old_text="from .a import load_items\n\nFIRST = load_items(3)",
             new_text="from .a import load_items_v2\n\nFIRST = load_items_v2(3)"),
    ])
    mock.configure(text=call("run_command", command="python -m pytest -q --collect-only"), rules=[
        {"match": "The user accepted the change", "text": "Renamed."},
        {"match": "chose not to run", "text": edits},
        {"match": "exited with code", "text": call("run_command", command="rm -rf pkg")},
    ])
    env = server_env(mock.base_url, "mock-model")
    env.update(KESTREL_PROVIDER="chat", KESTREL_CACHE_DIR=tempfile.mkdtemp())
    result = asyncio.run(trial(task, env, None, 1))
    assert result["passed"], result
    assert result["calls"] == ["run_command", "run_command", "edit_file", "edit_file"]
    assert [m.split("\n\n")[1] for m in result["declined"]] == ["rm -rf pkg"]  # off the allow-list: asked, declined
    assert result["answer"] == "Renamed." and result["steps"] == 3
    # The failed calls (a command that exited non-zero, the declined one) with what the model was told.
    assert [r[:50] for r in result["refusals"]] == ["run_command: `python -m pytest -q --collect-only` ",
                                                     "run_command: The user chose not to run `rm -rf pkg"]
