"""Hypothesis over the LSP surface: random incremental edits (unicode, out-of-range positions),
then inline completion, code actions and chat at random places. The server must always answer."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from conftest import inline_params, kestrel, mock_options, open_doc

URI = "file:///work/fuzz_edits.py"
_versions = itertools.count(2)

chars = st.characters(codec="utf-8", exclude_categories=("Cs",))
positions = st.builds(types.Position, line=st.integers(0, 30), character=st.integers(0, 120))
edits = st.builds(
    lambda a, b, text: types.TextDocumentContentChangePartial(
        range=types.Range(start=min(a, b, key=lambda p: (p.line, p.character)),
                          end=max(a, b, key=lambda p: (p.line, p.character))),
        text=text,
    ),
    positions, positions, st.text(chars, max_size=40) | st.sampled_from(["\n", "\r\n", "😀", "def f(:\n", "    "]),
)


@pytest.fixture
async def client(mock):
    mock.configure(text="fuzzed()\n")
    async with kestrel(mock_options(mock)) as c:
        open_doc(c, URI, "import os\n\n\ndef main():\n    pass\n")
        yield c


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(changes=st.lists(edits, min_size=1, max_size=5), where=positions, diag_at=positions,
       message=st.text(chars, max_size=80), prompt=st.text(chars, max_size=200))
async def test_fuzz_edits_then_features(client, changes, where, diag_at, message, prompt):
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=next(_versions)), content_changes=changes))
    await asyncio.wait_for(client.text_document_inline_completion_async(inline_params(URI, where.line, where.character)), 10)
    diag = types.Diagnostic(range=types.Range(start=diag_at, end=diag_at), message=message or "x", source="fuzz")
    actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag]))), 10)
    assert [a.title for a in actions][-1] == "Explain with Kestrel"
    result = await asyncio.wait_for(client.protocol.send_request_async("kestrel/chat", {"prompt": prompt}), 10)
    assert result.text == "fuzzed()\n"
