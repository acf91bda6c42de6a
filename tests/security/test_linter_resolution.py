"""A workspace cannot choose the linter Kestrel runs.

Kestrel lints a proposed fix with ruff. Looking the linter up by name lets a hostile repository
run code: on Windows `shutil.which` and CreateProcess search the current directory first, and
PATH may hold folders a project chose. The attack plants an executable `ruff` that writes a
marker file, in the server's working directory and in a PATH folder ahead of everything, then
asks for a quick fix (which lints its result). Simulated on Linux: an empty PATH entry is the
current directory, as on Windows.
"""

from __future__ import annotations

import os
import stat
import sys
import sysconfig
import venv
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from conftest import clean_env, mock_options, open_doc

URI = "file:///work/fixme.py"
SOURCE = "import os\n\n\ndef greet(name):\n    pritn('hello', name)\n    return name\n"


def plant_ruff(folder: Path, marker: Path) -> None:
    """An executable `ruff` (and the names Windows would run) that records being run."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("ruff", "ruff.exe", "ruff.bat", "ruff.cmd"):
        script = folder / name
        script.write_text(f"#!/bin/sh\necho \"$0\" >> '{marker}'\necho '[]'\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture(scope="module")
def env_without_ruff(tmp_path_factory) -> Path:
    """Kestrel installed in an environment that has no ruff of its own (ruff is only a test
    extra): a fresh venv whose site-packages reach this one's, minus its `bin/`."""
    root = tmp_path_factory.mktemp("kestrel-env")
    venv.create(root, with_pip=False, symlinks=True)
    python = root / "bin" / "python"
    site = Path(sysconfig.get_path("purelib"))
    (next((root / "lib").glob("python3*")) / "site-packages" / "main-env.pth").write_text(
        f"import site; site.addsitedir({str(site)!r})\n")
    assert not (root / "bin" / "ruff").exists()
    return python


@asynccontextmanager
async def kestrel_in(python: Path, cwd: Path, env: dict[str, str], init_options: dict):
    """kestrel-lsp run by `python`, in `cwd` (a workspace), with `env`."""
    command = ["/bin/sh", "-c", 'cd "$1" && exec "$2" -m kestrel --log-level INFO', "sh", str(cwd), str(python)]
    client = await ClientServerConfig(server_command=command, server_env=env).start()
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), initialization_options=init_options,
        process_id=os.getpid()))
    try:
        yield client
    finally:
        await client.shutdown_session()


@pytest.mark.parametrize("planted_in", ["the workspace (cwd)", "a PATH folder"])
async def test_a_planted_ruff_in_the_workspace_or_on_path_is_never_run(mock, tmp_path, env_without_ruff, planted_in):
    marker = tmp_path / "planted-ruff-ran"
    workspace, hostile_bin = tmp_path / "workspace", tmp_path / "hostile-bin"
    workspace.mkdir()
    plant_ruff(workspace if planted_in.startswith("the workspace") else hostile_bin, marker)
    env = clean_env(PYTHONSAFEPATH="1")
    env["PATH"] = os.pathsep.join([str(hostile_bin), "", env.get("PATH", "")])  # "": the cwd, as on Windows
    mock.configure(text="```python\n    print('hello', name)\n```\n")
    async with kestrel_in(env_without_ruff, workspace, env, mock_options(mock)) as client:
        open_doc(client, URI, SOURCE)
        diag = types.Diagnostic(range=types.Range(start=types.Position(line=4, character=4),
                                                  end=types.Position(line=4, character=9)),
                                message="undefined name 'pritn'", source="pyflakes")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI), range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag])))
        resolved = await client.code_action_resolve_async(actions[0])
        assert resolved.edit is not None  # the fix was computed and checked (by parsing only: no own ruff)
    assert not marker.exists(), f"a planted ruff ran: {marker.read_text()}"


def test_the_linter_is_an_absolute_path_inside_kestrels_environment():
    from kestrel.edits import linter

    linter.ruff_path.cache_clear()
    path = linter.ruff_path()
    assert path is not None, "this test environment installs ruff (the test extra)"
    own = {os.path.realpath(sysconfig.get_path("scripts")), os.path.realpath(os.path.dirname(sys.executable))}
    assert os.path.isabs(path) and os.path.realpath(os.path.dirname(path)) in own


def test_own_ruff_still_runs_with_a_planted_one_in_cwd_and_path(tmp_path, monkeypatch):
    from kestrel.edits import linter, validate

    marker = tmp_path / "planted-ruff-ran"
    plant_ruff(tmp_path / "cwd", marker)
    plant_ruff(tmp_path / "bin", marker)
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "bin"), "", os.environ.get("PATH", "")]))
    linter.ruff_path.cache_clear()
    validate.lint.cache_clear()
    findings = validate.lint("import os\n", "planted.py", "python")
    assert findings and findings[0][0] == "F401"  # the real ruff answered
    assert not marker.exists()


def test_without_an_own_ruff_there_is_no_linter_rather_than_a_planted_one(tmp_path, monkeypatch):
    from kestrel.edits import linter

    marker = tmp_path / "planted-ruff-ran"
    plant_ruff(tmp_path / "cwd", marker)
    plant_ruff(tmp_path / "bin", marker)
    empty_env = tmp_path / "env" / "bin"
    empty_env.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "bin"), ""]))
    monkeypatch.setattr(sys, "executable", str(empty_env / "python"))
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(empty_env))
    linter.ruff_path.cache_clear()
    try:
        assert linter.ruff_path() is None
    finally:
        linter.ruff_path.cache_clear()
