"""Codebase questions in chat (`kestrel/chat` with the workspace index): the code a question names
reaches the model without the user opening it, the sources are announced before the first token,
citations are checked against the workspace, and secret files, excludeGlobs and `.gitignore` keep
files out. The server runs as a process over stdio against the mock model."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import asyncio

import pytest
from lsprotocol import types

from conftest import clean_env, kestrel, mock_options, wait_for
from kestrel.chat import codebase
from kestrel.context.codebase_index import CodebaseIndex, code_names
from kestrel.context.workspace_index import WorkspaceIndex

UTILS = '''"""Helpers."""
from datetime import date, timedelta


def parse_due(text: str) -> date:
    """`tomorrow`, `today` or an ISO date."""
    if text == "tomorrow":
        return date.today() + timedelta(days=1)
    return date.fromisoformat(text)
'''
MODELS = '''from dataclasses import dataclass

from .utils import parse_due


@dataclass
class Task:
    title: str
    due: str

    def due_date(self):
        return parse_due(self.due)
'''


async def wait_for_async(check, what: str, timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def project(root: Path) -> Path:
    (root / "tasky").mkdir(parents=True)
    (root / "tasky" / "__init__.py").write_text("")
    (root / "tasky" / "utils.py").write_text(UTILS)
    (root / "tasky" / "models.py").write_text(MODELS)
    (root / ".env").write_text("API_TOKEN=parse_due_secret_value\n")
    (root / "vendor").mkdir()
    (root / "vendor" / "copy.py").write_text("def parse_due(x):\n    return 'vendored parse_due'\n")
    (root / ".gitignore").write_text("vendor/\n")
    return root


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("KESTREL_CACHE_DIR", str(folder))
    return folder


def indexed(root: Path) -> CodebaseIndex:
    """The workspace index of `root` alone, in memory, read once."""
    workspace = WorkspaceIndex()
    workspace.set_roots([str(root)])
    index = CodebaseIndex(workspace, None)
    index.refresh()
    return index


def env_with_cache(cache: Path) -> dict[str, str]:
    return clean_env(KESTREL_CACHE_DIR=str(cache))


def ask(question: str, models_attached: bool = True) -> list[dict]:
    content = question
    if models_attached:
        content = f"File tasky/models.py:\n```python\n{MODELS}```\n\n{question}"
    return [{"role": "user", "content": content}]


async def test_a_question_about_unopened_code_sends_its_definition_and_sources_first(mock, tmp_path, cache):
    root = project(tmp_path / "ws")
    mock.configure(text="It is defined in [tasky/utils.py:5-10] and also [tasky/nowhere.py:1-3], as [1] shows "
                        "(not [9]); see `tasky/dates.py`.")
    async with kestrel(mock_options(mock), env=env_with_cache(cache), workspace=root) as client:
        order: list[str] = []
        sources: list = []
        client.feature("kestrel/chatSources")(lambda p: (order.append("sources"), sources.append(p)))
        client.feature("kestrel/chatDelta")(lambda p: order.append("delta"))
        result = await client.protocol.send_request_async(
            "kestrel/chat", {"id": "c1", "messages": ask("Where is `parse_due` defined?")})
        sent = mock.stats()["last_request"]["messages"][-1]["content"]
        assert 'def parse_due(text: str) -> date:' in sent and "tasky/utils.py:" in sent
        assert "[1] tasky/utils.py:" in sent and "cite its number" in sent  # numbered parts, cited by number
        assert "parse_due_secret_value" not in sent and "vendored parse_due" not in sent  # .env, .gitignore
        await wait_for(lambda: "delta" in order, what="the answer's deltas")
        assert order[0] == "sources"  # announced before the first token
        paths = [s.path for s in sources[0].sources]
        assert paths[0] == "tasky/utils.py" and "vendor/copy.py" not in paths and ".env" not in paths
        first = sources[0].sources[0]
        assert first.uri == (root / "tasky" / "utils.py").as_uri() and first.range.start.line == 4
        assert first.name == "parse_due"
        assert [s.path for s in result.sources] == paths
        source_one = (first.path, first.range.start.line, first.range.end.line)
        assert [(c.path, c.range.start.line, c.range.end.line) for c in result.citations] == [
            ("tasky/utils.py", 4, 10), source_one]  # in the order written; [1] is the first source's span
        assert result.inventedCitations == ["tasky/nowhere.py", "[9]"]  # a path no file has, a number past the sources
        assert result.inventedPaths == ["tasky/dates.py"]  # a bare path no workspace file has


async def test_a_question_whose_code_is_attached_or_names_no_code_is_not_searched(mock, tmp_path, cache):
    root = project(tmp_path / "ws")
    mock.configure(text="ok")
    async with kestrel(mock_options(mock), env=env_with_cache(cache), workspace=root) as client:
        sources: list = []
        client.feature("kestrel/chatSources")(lambda p: sources.append(p))
        held = [{"role": "user", "content": f"```python\n{UTILS}```\nWhat does `parse_due` return?"}]
        result = await client.protocol.send_request_async("kestrel/chat", {"messages": held})
        plain = await client.protocol.send_request_async("kestrel/chat", {"prompt": "how do I invert a dict?"})
        off = await client.protocol.send_request_async(
            "kestrel/chat", {"messages": ask("Where is `parse_due` defined?"), "codebase": False})
        assert not sources and not any(getattr(r, "sources", None) for r in (result, plain, off))
        assert mock.stats()["last_request"]["messages"][-1]["content"] == ask("Where is `parse_due` defined?")[0]["content"]
        # `#codebase` asks for a search whatever the question says, and is not sent on as text.
        tagged = await client.protocol.send_request_async("kestrel/chat", {"prompt": "#codebase how are due dates read?"})
        assert tagged.sources and "#codebase" not in mock.stats()["last_request"]["messages"][-1]["content"]


async def test_the_setting_turns_automatic_search_off(mock, tmp_path, cache):
    root = project(tmp_path / "ws")
    mock.configure(text="ok")
    async with kestrel(mock_options(mock, chat={"codebase": False}), env=env_with_cache(cache), workspace=root) as client:
        result = await client.protocol.send_request_async("kestrel/chat", {"messages": ask("Where is `parse_due` defined?")})
        assert getattr(result, "sources", None) is None and "def parse_due" not in mock.stats()["last_request"]["messages"][-1]["content"]


async def test_excluded_globs_keep_files_out_of_the_answer(mock, tmp_path, cache):
    root = project(tmp_path / "ws")
    mock.configure(text="ok")
    options = mock_options(mock, completion={"excludeGlobs": ["**/utils.py"]})
    async with kestrel(options, env=env_with_cache(cache), workspace=root) as client:
        result = await client.protocol.send_request_async("kestrel/chat", {"messages": ask("Where is `parse_due` defined?")})
        assert "def parse_due(text" not in mock.stats()["last_request"]["messages"][-1]["content"]
        assert all(s.path != "tasky/utils.py" for s in getattr(result, "sources", None) or [])


def indexed_project(tmp_path: Path) -> tuple[Path, WorkspaceIndex, Path]:
    """The project, its workspace, and a private folder for its index."""
    root = project(tmp_path / "ws")
    workspace = WorkspaceIndex()
    workspace.set_roots([str(root)])
    folder = tmp_path / "index"
    folder.mkdir(mode=0o700)
    return root, workspace, folder


def test_the_index_is_private_and_survives_a_restart(tmp_path):
    root, workspace, folder = indexed_project(tmp_path)
    first = CodebaseIndex(workspace, folder)
    cost = first.refresh()
    assert cost["indexed"] == 3 and cost["files"] == 3  # .env and vendor/ are not indexed
    first.close()
    (database,) = folder.glob("codebase-*.sqlite3")
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    again = CodebaseIndex(workspace, folder)
    assert again.refresh()["indexed"] == 0  # nothing changed: nothing re-read
    (root / "tasky" / "utils.py").write_text(UTILS.replace("parse_due", "read_due"))
    again.file_changed(root / "tasky" / "utils.py")
    assert [h.name for h in again.search("where is `read_due`?")][:1] == ["read_due"]
    (root / "tasky" / "utils.py").unlink()
    assert again.refresh()["files"] == 2


def test_a_planted_index_file_of_another_owner_or_a_link_is_not_used(tmp_path):
    root, workspace, folder = indexed_project(tmp_path)
    index = CodebaseIndex(workspace, folder)
    target = index._database_path(workspace.roots)
    elsewhere = tmp_path / "elsewhere.sqlite3"
    elsewhere.write_text("")
    os.symlink(elsewhere, target)
    index.refresh()
    assert elsewhere.read_text() == ""  # never written through the link: the index stayed in memory
    assert [h.name for h in index.search("where is `parse_due`?")][:1] == ["parse_due"]


def test_code_names_are_what_a_question_spells_as_code():
    assert code_names("Where is `parse_due` defined and what calls Task.due_date()?") == ["parse_due", "Task", "due_date"]
    assert code_names("how does the cache work here?") == []
    assert code_names("what does getEnvironProxies return") == ["getEnvironProxies"]


def test_citations_name_files_of_the_workspace_only(tmp_path):
    root = project(tmp_path / "ws")
    index = indexed(root)
    found, invented = codebase.citations(index, "see [tasky/utils.py:5-10], [utils.py:7], [./.env:1] and [src/app.py:1-2]")
    assert [(c["path"], c["range"]["start"]["line"]) for c in found] == [("tasky/utils.py", 4), ("tasky/utils.py", 6)]
    assert invented == ["./.env", "src/app.py"]  # a secret file is not a citable workspace file either


def test_numbered_citations_name_the_turns_sources_and_code_indexes_are_not_citations(tmp_path):
    root = project(tmp_path / "ws")
    index = indexed(root)
    utils, models = root / "tasky" / "utils.py", root / "tasky" / "models.py"
    sources = [codebase.Source("tasky/utils.py", utils, 4, 9, "parse_due", "def parse_due..."),
               codebase.Source("tasky/models.py", models, 0, 3, "Task", "class Task...")]
    answer = ("It parses the date [2], as [1][2] and [1, 2] show; not [3]. `items[0]`, `[1]`, a[1],\n"
              "[1](https://example.com) and\n```python\nx = [1]\n```\nare code or links. [3]")
    found, invented = codebase.citations(index, answer, sources)
    assert [(c["path"], c["range"]["start"]["line"], c["range"]["end"]["line"]) for c in found] == [
        ("tasky/models.py", 0, 4), ("tasky/utils.py", 4, 10)]  # each span once, in the order first cited
    assert invented == ["[3]"]  # a number past the sources
    assert codebase.citations(index, "see [1]")[1] == ["[1]"]  # no sources: a number names nothing
    assert "[1] tasky/utils.py:5-10\n```python" in codebase.prompt_block(sources)


def test_paths_written_as_inline_code_that_name_no_workspace_file_are_listed(tmp_path):
    root = project(tmp_path / "ws")
    index = indexed(root)
    answer = ("`parse_due` is in `tasky/utils.py` (and `utils.py`); dates live in `tasky/dates.py`, settings in "
              "`.env` and `config.toml`; `os.path` and `self.items` are no paths; [tasky/nowhere.py:3] is a citation.\n"
              "```python\n# `tasky/fenced.py` inside a code block\n```\nAlso `tasky/dates.py` again.")
    # (`.env`, a dotfile with no extension, is not read as a path: it is also a secret file, which the
    # index does not hold, so it would be marked wrongly.)
    assert codebase.unknown_paths(index, answer) == ["tasky/dates.py", "config.toml"]


@pytest.mark.parametrize("suffix,source,expected", [
    (".ts", "import x from './x';\n\n/** Reads a due date. */\nexport function parseDue(text: string): Date {\n  return new Date(text);\n}\n\n"
            "export const later = (d: Date) => d;\n\nclass Task {\n  due(): Date { return parseDue(''); }\n}\n",
     [("parseDue", 2), ("later", 7), ("Task", 9)]),
    (".go", "package tasks\n\n// ParseDue reads a due date.\nfunc ParseDue(s string) time.Time {\n\treturn time.Now()\n}\n\n"
            "type Task struct {\n\tDue string\n}\n",
     [("ParseDue", 2), ("Task", 7)]),
    (".rs", "use std::fmt;\n\n/// A task.\npub struct Task { due: String }\n\nimpl Task {\n    pub fn due(&self) -> &str { &self.due }\n}\n",
     [("Task", 2), ("Task", 5)]),
])
def test_brace_languages_are_cut_at_their_definitions_with_the_comment_above(suffix, source, expected):
    from kestrel.context.code_chunks import chunk_file

    chunks, symbols = chunk_file(source, suffix)
    named = [(c.name, c.start) for c in chunks if c.name]
    assert named == expected
    covered = {n for c in chunks for n in range(c.start, c.end + 1)}
    assert all(n in covered for n, line in enumerate(source.splitlines()) if line.strip())  # no code left out
    summaries = {s.name: s.summary for s in reversed(symbols)}  # the first of a name
    first = expected[0][0]
    assert summaries[first].startswith(("export function parseDue", "func ParseDue", "pub struct Task"))
    assert any(word in summaries[first] for word in ("Reads a due date", "ParseDue reads", "A task"))


def test_a_python_class_longer_than_the_split_is_cut_into_its_methods():
    from kestrel.context.code_chunks import SPLIT_LINES, chunk_file

    methods = "".join(f"    def m{n}(self):\n        '''Method {n}.'''\n        return {n}\n\n" for n in range(SPLIT_LINES // 3))
    chunks, symbols = chunk_file(f"class Big:\n    '''A big class.'''\n\n{methods}", ".py")
    assert chunks[0].name == "Big" and chunks[0].end < 5
    assert [c.name for c in chunks[1:4]] == ["Big.m0", "Big.m1", "Big.m2"]
    assert next(s for s in symbols if s.qualified == "Big.m3").summary == "def m3(self): Method 3."


def test_the_clients_attachment_labels_are_not_the_question_and_held_code_is_not_sent_again(tmp_path):
    root = project(tmp_path / "ws")
    index = indexed(root)
    labelled = [{"role": "user", "content": f"File tasky/utils.py:\n```python\n{UTILS}```\n\nWhat does this file do?"}]
    assert codebase.question_for(None, labelled, True) is None  # `tasky/utils.py` is a file name, not code
    outlined = [{"role": "user", "content": "Outline of tasky/utils.py (10 lines):\ndef parse_due 5-10\n\n"
                 "Problems in the workspace (1):\n- tasky/models.py:3: error: undefined name `due_date`\n\nWhat is this?"}]
    assert codebase.question_for(None, outlined, True) is None  # an attached outline or problem list is not asked
    question = ask("Where is `parse_due` defined?")
    held = question[0]["content"]
    paths = [s.path for s in codebase.gather(index, held, 1200, held)]
    assert paths[0] == "tasky/utils.py" and "tasky/models.py" not in paths  # models.py is attached already
    assert all(s.path != "tasky/__init__.py" for s in codebase.gather(index, "#codebase what does tasky import?", 1200))


async def test_workspace_symbol_finds_definitions_from_the_index(mock, tmp_path, cache):
    root = project(tmp_path / "ws")
    async with kestrel(mock_options(mock), env=env_with_cache(cache), workspace=root) as client:
        assert client.server_capabilities.workspace_symbol_provider
        found: list = []

        async def ask() -> bool:
            found[:] = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="due")) or []
            return bool(found)

        await wait_for_async(ask, what="the index's first pass")
        names = [(s.name, s.container_name) for s in found]
        assert names[:2] == [("due", "Task"), ("parse_due", None)] or ("parse_due", None) in names
        parse = next(s for s in found if s.name == "parse_due")
        assert parse.location.uri == (root / "tasky" / "utils.py").as_uri() and parse.location.range.start.line == 4
        assert parse.kind == types.SymbolKind.Function
        assert all("vendor" not in s.location.uri for s in found)  # .gitignore'd
        due_date = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="DUE_DATE"))
        assert [(s.name, s.container_name, s.kind) for s in due_date] == [("due_date", "Task", types.SymbolKind.Method)]


async def test_files_changed_outside_the_editor_are_indexed_and_dropped(mock, tmp_path, cache):
    root = project(tmp_path / "ws")
    async with kestrel(mock_options(mock), env=env_with_cache(cache), workspace=root) as client:
        async def symbols(query: str) -> list[str]:
            return [s.name for s in await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)) or []]

        async def indexed() -> bool:
            return "parse_due" in await symbols("parse")

        await wait_for_async(indexed, what="the index's first pass")
        assert [r.method for r in client.registrations] == ["workspace/didChangeWatchedFiles"]
        made = root / "tasky" / "reports.py"
        made.write_text("def weekly_report(tasks):\n    return len(tasks)\n")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=made.as_uri(), type=types.FileChangeType.Created)]))

        async def created() -> bool:
            return await symbols("weekly") == ["weekly_report"]

        await wait_for_async(created, what="the created file's definition")
        made.unlink()
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=made.as_uri(), type=types.FileChangeType.Deleted)]))

        async def deleted() -> bool:
            return await symbols("weekly") == []

        await wait_for_async(deleted, what="the deleted file dropped")


async def test_a_codebase_question_with_automatic_search_off_builds_the_index_it_needs(mock, tmp_path, cache):
    root = project(tmp_path / "ws")
    mock.configure(text="ok")
    options = mock_options(mock, chat={"codebase": False}, completion={"repositoryContext": False})
    async with kestrel(options, env=env_with_cache(cache), workspace=root) as client:
        result = await client.protocol.send_request_async("kestrel/chat", {"prompt": "#codebase where is `parse_due`?"})
        assert [s.path for s in result.sources][:1] == ["tasky/utils.py"]
        assert "def parse_due(text: str)" in mock.stats()["last_request"]["messages"][-1]["content"]


def test_the_files_the_user_works_in_rank_first_among_equal_hits(tmp_path):
    root = tmp_path / "ws"
    for name in ("billing", "shipping"):
        (root / name).mkdir(parents=True)
        (root / name / "rates.py").write_text(f"def rate_table():\n    '''The {name} rate table.'''\n    return {{}}\n")
    index = indexed(root)
    question = "how is the rate table built?"
    assert {h.path for h in index.search(question)[:2]} == {"billing/rates.py", "shipping/rates.py"}
    for worked_in in ("billing/rates.py", "shipping/rates.py"):
        near = codebase.near_files(index, [], f"File {worked_in}:\n```python\n```\n")
        assert near == frozenset({str(root / worked_in)})
        assert index.search(question, near=near)[0].path == worked_in
