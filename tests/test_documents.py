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


def test_where_a_file_links_is_remembered_only_while_it_is_open(tmp_path):
    """The link check is cached per opening; a URI that is not open (a client may name any) is judged
    each time, so the cache stays as small as the open documents and a file replaced by a link later
    is seen as one."""
    from types import SimpleNamespace

    from kestrel.core.documents import Documents

    open_docs: dict = {}
    server = SimpleNamespace(workspace=SimpleNamespace(folders={}, root_path=str(tmp_path), text_documents=open_docs))
    docs = Documents(server)
    secret = tmp_path / ".env"
    secret.write_text("TOKEN=x\n")
    notes = tmp_path / "notes.py"
    notes.write_text("x = 1\n")
    for i in range(200):
        assert not docs.excluded(f"file://{tmp_path}/unopened_{i}.py", ())
    assert not docs.excluded(notes.as_uri(), ())
    assert docs._links == {}
    notes.unlink()
    notes.symlink_to(secret)  # the same path, now a link to a secret
    assert docs.excluded(notes.as_uri(), ())
    open_docs[notes.as_uri()] = SimpleNamespace(_source="TOKEN=x\n")
    assert docs.excluded(notes.as_uri(), ())
    assert list(docs._links) == [notes.as_uri()]
    docs.closed(notes.as_uri())
    assert docs._links == {}
