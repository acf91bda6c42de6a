"""A hostile workspace against the workspace index (SECURITY.md, "The workspace index reads only the
workspace"): a repository whose modules are symlinks to the user's files outside it, a secrets
module and a file the user excluded, each holding a canary and imported by the file being edited.
A real kestrel-lsp process completes in that file with repository context on: the mock model's
requests must contain none of the canaries, and must contain the workspace's own definition (so the
context path was taken)."""

from __future__ import annotations

import os

import pytest

from lsprotocol import types

from conftest import change_doc, complete, kestrel, mock_options, open_doc

CANARIES = ("sk-canary-outside-0001", "canary-secrets-0002", "canary-excluded-0003")


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
async def test_a_hostile_workspace_cannot_send_files_outside_it_secrets_or_excluded_files(mock, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config.py").write_text(f'TOKEN = "{CANARIES[0]}"\n')
    ws = tmp_path / "repo"
    pkg = ws / "app"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "keys.py").symlink_to(home / ".ssh" / "config.py")  # the workspace points at the user's file
    (pkg / "outside").symlink_to(home / ".ssh", target_is_directory=True)
    (pkg / "secrets.py").write_text(f'PASSWORD = "{CANARIES[1]}"\n')
    (pkg / "internal.py").write_text(f'SALT = "{CANARIES[2]}"\n')
    (pkg / "shapes.py").write_text("def area(width: float, height: float) -> float:\n    return width * height\n")
    main = pkg / "main.py"
    text = ("from app.keys import TOKEN\nfrom app.outside.config import TOKEN as T2\nfrom app.secrets import PASSWORD\n"
            "from app.internal import SALT\nfrom app.shapes import area\n\nx = ")
    mock.configure(text="1")
    options = mock_options(mock, "fim", model="qwen2.5-coder-0.5b", completion={"excludeGlobs": ["**/internal.py"]})
    async with kestrel(options, workspace=ws) as client:
        open_doc(client, main.as_uri(), text)
        await complete(client, main.as_uri(), 6, 4)
        sent = mock.stats()["last_request"]["prompt"]  # the only model request of the session
    assert "def area(width: float, height: float) -> float:" in sent
    for canary in CANARIES:
        assert canary not in sent


async def test_a_glob_excluded_while_running_takes_the_file_out_of_the_next_prompt(mock, tmp_path):
    ws = tmp_path / "repo"
    (ws / "app").mkdir(parents=True)
    (ws / "app" / "shapes.py").write_text("def area(width: float, height: float) -> float:\n    return 1.0\n")
    main = ws / "app" / "main.py"
    text = "from app.shapes import area\n\nx = "
    mock.configure(text="1")
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b"), workspace=ws) as client:
        open_doc(client, main.as_uri(), text)
        await complete(client, main.as_uri(), 2, 4)
        assert "def area(" in mock.stats()["last_request"]["prompt"]
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=mock_options(
            mock, "fim", model="qwen2.5-coder-0.5b", completion={"excludeGlobs": ["**/shapes.py"]})))
        n = mock.stats()["requests"].get("/v1/completions", 0)
        for version in range(2, 40):  # until the new settings are in force (applied off the request path)
            change_doc(client, main.as_uri(), text + "1" * version, version)
            await complete(client, main.as_uri(), 2, 4 + version)
            if "def area(" not in mock.stats()["last_request"]["prompt"]:
                break
        assert mock.stats()["requests"].get("/v1/completions", 0) > n
        assert "def area(" not in mock.stats()["last_request"]["prompt"]
