"""Attacks on codebase chat's workspace index (SECURITY.md, "Codebase chat"): a hostile workspace
whose files are symlinks to the user's files outside it, plus a secrets file, an excluded file and
a `.gitignore`d folder, each holding a canary whose name the question asks about; and another local
user trying to read the index the server keeps of the user's code. A real kestrel-lsp process answers
`#codebase` questions against the mock model: its requests must hold none of the canaries and must
hold the workspace's own definition (so the search ran)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from lsprotocol import types

from conftest import clean_env, kestrel, mock_options
from lsp_wire import ATTACKER_PYTHON, as_other_user, require_other_user

CANARIES = ("sk-canary-outside-0101", "canary-linked-dir-0102", "canary-secrets-0103", "canary-excluded-0104",
            "canary-ignored-0105")


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
async def test_a_hostile_workspace_cannot_send_files_outside_it_secrets_excluded_or_ignored_files(mock, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "tokens.py").write_text(f'def outside_token():\n    return "{CANARIES[0]}"\n')
    (home / "private").mkdir()
    (home / "private" / "notes.py").write_text(f'def linked_notes():\n    return "{CANARIES[1]}"\n')
    ws = tmp_path / "repo"
    (ws / "app").mkdir(parents=True)
    (ws / "app" / "tokens.py").symlink_to(home / ".ssh" / "tokens.py")  # the workspace points at the user's file
    (ws / "app" / "private").symlink_to(home / "private", target_is_directory=True)
    (ws / "app" / "secrets.py").write_text(f'def secret_password():\n    return "{CANARIES[2]}"\n')
    (ws / "app" / "internal.py").write_text(f'def internal_salt():\n    return "{CANARIES[3]}"\n')
    (ws / "build_out").mkdir()
    (ws / "build_out" / "gen.py").write_text(f'def generated_key():\n    return "{CANARIES[4]}"\n')
    (ws / ".gitignore").write_text("build_out/\n")
    (ws / "app" / "shapes.py").write_text("def area(width: float, height: float) -> float:\n    return width * height\n")
    question = ("#codebase what do `outside_token`, `linked_notes`, `secret_password`, `internal_salt`, "
                "`generated_key` and `area` return?")
    mock.configure(text="They return [app/tokens.py:1-2] and [app/shapes.py:1-2].")
    options = mock_options(mock, completion={"excludeGlobs": ["**/internal.py"]})
    async with kestrel(options, env=clean_env(KESTREL_CACHE_DIR=str(tmp_path / "cache")), workspace=ws) as client:
        result = await client.protocol.send_request_async("kestrel/chat", {"prompt": question})
        sent = str(mock.stats()["last_request"]["messages"])
    assert "def area(width: float, height: float) -> float:" in sent
    for canary in CANARIES:
        assert canary not in sent
    assert {s.path for s in result.sources} == {"app/shapes.py"}
    assert result.inventedCitations == ["app/tokens.py"]  # the link is not a file of the workspace either
    database = "\n".join(p.read_bytes().decode("latin-1") for p in (tmp_path / "cache" / "index").glob("codebase-*"))
    assert database and not any(canary in database for canary in CANARIES)  # nor is it kept on disk


def test_another_local_user_cannot_read_the_index(tmp_path):
    require_other_user()
    # Under /tmp with the folders open to everyone, so that only the index's own modes stand between.
    home = Path(tempfile.mkdtemp(prefix="kestrel-index-"))
    home.chmod(0o755)
    ws = home / "repo"
    ws.mkdir()
    ws.chmod(0o755)
    (ws / "billing.py").write_text('def charge():\n    return "canary-index-0201"\n')
    (ws / "billing.py").chmod(0o600)  # the user's own file: private
    cache = home / "cache"
    cache.mkdir()
    cache.chmod(0o755)
    env = {**os.environ, "KESTREL_CACHE_DIR": str(cache)}
    script = ("from pathlib import Path\nfrom kestrel.context.workspace_index import WorkspaceIndex\n"
              "from kestrel.core import private_cache\nfrom kestrel.context.codebase_index import CodebaseIndex\n"
              f"w = WorkspaceIndex(); w.set_roots([{str(ws)!r}]); i = CodebaseIndex(w, private_cache(\"index\")); i.refresh()\n"
              "print(i.search('where is `charge`?')[0].path)\n")
    done = subprocess.run([os.sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "billing.py", done.stderr
    (database,) = (cache / "index").glob("codebase-*.sqlite3")
    assert "canary-index-0201".encode() in database.read_bytes() or any(
        "canary-index-0201".encode() in p.read_bytes() for p in (cache / "index").glob("codebase-*"))
    for target in [database, *(cache / "index").glob("codebase-*-wal")]:
        attempt = subprocess.run(as_other_user(ATTACKER_PYTHON, "-c", f"print(open({str(target)!r}, 'rb').read()[:10])"),
                                 capture_output=True, text=True, timeout=30)
        assert attempt.returncode != 0 and "Permission denied" in attempt.stderr
    listing = subprocess.run(as_other_user(ATTACKER_PYTHON, "-c", f"import os; print(os.listdir({str(cache / 'index')!r}))"),
                             capture_output=True, text=True, timeout=30)
    assert listing.returncode != 0 and "Permission denied" in listing.stderr


def saved(client, path: Path) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri())))


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
async def test_a_save_does_not_bring_in_what_the_scan_leaves_out(mock, tmp_path):
    """A save (or a watched change) re-indexes one file by the scan's own rules: a `.gitignore`d file,
    one under a folder link out of the workspace and one under a hidden folder stay out of the index
    and out of every request, though the editor reports them saved."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.py").write_text("def outside_canary_fn():\n    return 'canary-linked-saved-0201'\n")
    ws = tmp_path / "ws"
    (ws / ".cache").mkdir(parents=True)
    (ws / ".gitignore").write_text("local_settings.py\n")
    (ws / "app.py").write_text("def area(w, h):\n    return w * h\n")
    (ws / "local_settings.py").write_text("def ignored_canary_fn():\n    return 'canary-ignored-saved-0202'\n")
    (ws / ".cache" / "dump.py").write_text("def hidden_canary_fn():\n    return 'canary-hidden-saved-0203'\n")
    (ws / "vendor").symlink_to(home, target_is_directory=True)
    canaries = ("canary-linked-saved-0201", "canary-ignored-saved-0202", "canary-hidden-saved-0203")
    question = "#codebase what do `ignored_canary_fn`, `outside_canary_fn`, `hidden_canary_fn` and `area` return?"
    mock.configure(text="ok")
    async with kestrel(mock_options(mock), env=clean_env(KESTREL_CACHE_DIR=str(tmp_path / "cache")), workspace=ws) as client:
        await client.protocol.send_request_async("kestrel/chat", {"prompt": question})  # waits for the first pass
        for path in (ws / "local_settings.py", ws / "vendor" / "notes.py", ws / ".cache" / "dump.py", ws / "app.py"):
            saved(client, path)
        (ws / "app.py").write_text("def area(w, h):\n    return w * h  # saved\n")
        saved(client, ws / "app.py")
        for _ in range(200):  # the saves are handled in order on the index's worker: app.py's is last
            result = await client.protocol.send_request_async("kestrel/chat", {"prompt": question})
            sent = str(mock.stats()["last_request"]["messages"])
            if "# saved" in sent:
                break
        assert "# saved" in sent  # the last save was indexed, so the ones before it were handled
    for canary in canaries:
        assert canary not in sent
    assert {s.path for s in result.sources} == {"app.py"}
    database = "\n".join(p.read_bytes().decode("latin-1") for p in (tmp_path / "cache" / "index").glob("codebase-*"))
    assert database and not any(canary in database for canary in canaries)


def test_one_file_is_judged_as_the_scan_judges_it(tmp_path):
    """`would_list` (a save) and `files()` (the scan) agree on every file of a workspace with each
    kind of file the scan leaves out."""
    from kestrel.context.codebase_index import CodebaseIndex
    from kestrel.context.workspace_index import WorkspaceIndex

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("x = 1\n")
    ws = tmp_path / "ws"
    for folder in ("src/sub", ".hidden", "node_modules/pkg", "build_out", "private"):
        (ws / folder).mkdir(parents=True)
    for rel in ("src/a.py", "src/sub/b.py", "src/sub/skip.py", ".hidden/c.py", "node_modules/pkg/d.js",
                "build_out/e.py", "private/f.py", "src/.env", "src/notes.bin"):
        (ws / rel).write_text("x = 1\n")
    (ws / ".gitignore").write_text("build_out/\n")
    (ws / "src" / "sub" / ".gitignore").write_text("skip.py\n")
    (ws / "linked").symlink_to(outside, target_is_directory=True)
    (ws / "src" / "out.py").symlink_to(outside / "o.py")
    (ws / "src" / "in.py").symlink_to(ws / "src" / "a.py")
    workspace = WorkspaceIndex()
    workspace.set_roots([str(ws)])
    workspace.set_exclusions(("private/**",))
    index = CodebaseIndex(workspace, None)
    listed = {p.relative_to(ws).as_posix() for _, p in index.files()}
    assert listed == {"src/a.py", "src/sub/b.py", "src/in.py"}
    every = [p for p in ws.rglob("*") if p.is_file()] + [ws / "linked" / "o.py", ws / "src" / ".." / ".." / "outside" / "o.py"]
    assert {p.relative_to(ws).as_posix() for p in every if index.would_list(ws, p)} == listed


async def test_an_exclude_glob_written_relative_to_the_workspace_folder_keeps_its_files_out(mock, tmp_path):
    """`private/**`, as `files.exclude` patterns are written (relative to the folder), excludes
    `<workspace>/private/keys.py` from codebase search, the agent's reads and the prompt."""
    ws = tmp_path / "ws"
    (ws / "private").mkdir(parents=True)
    (ws / "private" / "keys.py").write_text("def vault_key():\n    return 'canary-relative-glob-0301'\n")
    (ws / "config").mkdir()
    (ws / "config" / "local.py").write_text("def local_secret():\n    return 'canary-relative-glob-0302'\n")
    (ws / "app.py").write_text("def area(w, h):\n    return w * h\n")
    mock.configure(text="ok")
    options = mock_options(mock, completion={"excludeGlobs": ["private/**", "./config/local.py"]})
    async with kestrel(options, env=clean_env(KESTREL_CACHE_DIR=str(tmp_path / "cache")), workspace=ws) as client:
        result = await client.protocol.send_request_async(
            "kestrel/chat", {"prompt": "#codebase what do `vault_key`, `local_secret` and `area` return?"})
        sent = str(mock.stats()["last_request"]["messages"])
    assert "def area(w, h):" in sent
    assert "canary-relative-glob" not in sent
    assert {s.path for s in result.sources} == {"app.py"}
