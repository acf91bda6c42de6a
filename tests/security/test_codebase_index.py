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
