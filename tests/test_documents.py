"""Open documents (kestrel.core.documents): the paths a model is shown. The size limit every feature
enforces is in tests/security/test_document_limits.py."""

from __future__ import annotations


def test_paths_are_relative_to_the_workspace_and_never_absolute():
    from types import SimpleNamespace

    from kestrel.core.documents import Documents

    folder = SimpleNamespace(uri="file:///home/ana/project")
    server = SimpleNamespace(workspace=SimpleNamespace(folders={"p": folder}, root_path="/home/ana/project"))
    docs = Documents(server)
    assert docs.path("file:///home/ana/project/src/app.py") == "src/app.py"
    assert docs.path("file:///tmp/elsewhere/notes.py") == "notes.py"
