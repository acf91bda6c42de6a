"""A document past the size limit is refused by every feature with a clear error, its text is
not kept, and nothing else is lost: the server stays up and other documents keep working.

The attack is a workspace file (or a paste) larger than any source file: before the limit
covered every feature, an inline edit on a 219 MB document took 13 s and 1 GB.
"""

from __future__ import annotations

from lsprotocol import types

from conftest import code_actions, change_doc, complete, kestrel, mock_options, open_doc, wait_for
from kestrel.core import documents

LIMIT = getattr(documents, "MAX_DOCUMENT_CHARS", 20_000_000)  # (the old code kept it in features/completion.py)
LINE = "value = compute(value)\n"
BIG_TEXT = LINE * (LIMIT // len(LINE) + 40_000)  # ~1 MB past the limit
BIG = "file:///work/big.py"
NORMAL = "file:///work/app.py"
NORMAL_TEXT = "import math\n\n\ndef area(r):\n    return 3.14 * r * r\n"
REWRITE = "def area(r):\n    return math.pi * r * r\n"


def too_large(text: str | None) -> bool:
    return bool(text) and "too large" in text and f"{LIMIT:,}" in text


def model_calls(mock) -> int:
    return mock.stats()["requests"].get("/v1/chat/completions", 0)


async def rss_mb(client) -> float:
    return (await client.protocol.send_request_async("kestrel/diagnostics", {})).rssMb


async def edit(client, uri: str, edit_id: str):
    return await client.protocol.send_request_async("kestrel/edit", {
        "id": edit_id, "uri": uri, "instruction": "use math.pi",
        "range": {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 4}}})


async def test_a_document_opened_too_large_is_refused_by_every_feature_and_dropped(mock):
    mock.configure(text=REWRITE)
    async with kestrel(mock_options(mock, nextEdit=True)) as client:
        open_doc(client, NORMAL, NORMAL_TEXT)
        before = await rss_mb(client)
        open_doc(client, BIG, BIG_TEXT)

        assert await complete(client, BIG, 1, 4) is None
        assert too_large(getattr(await edit(client, BIG, "e1"), "error", None))
        nes = await client.protocol.send_request_async("kestrel/nextEdit", {"uri": BIG, "position": {"line": 1, "character": 0}})
        assert nes is None
        diag = types.Diagnostic(range=types.Range(start=types.Position(line=0, character=8),
                                                  end=types.Position(line=0, character=15)),
                                message="undefined name 'compute'", source="pyflakes")
        listed = await code_actions(client, BIG, diag)
        assert not listed
        data = {"uri": BIG, "version": 1, "message": diag.message, "startLine": 0, "endLine": 0,
                "code": None, "source": "pyflakes", "action": "fix"}
        resolved = await client.code_action_resolve_async(types.CodeAction(
            title="Fix with Kestrel", kind=types.CodeActionKind.QuickFix, data=data))
        assert resolved.edit is None
        for command in ("kestrel.fix", "kestrel.explain"):
            assert not await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=command, arguments=[data]))
        await wait_for(lambda: any(too_large(m.message) for m in client.messages), what="the too-large message")
        # Chat context is text the editor attaches: the same limit.
        chat = await client.protocol.send_request_async("kestrel/chat", {
            "id": "c1", "messages": [{"role": "user", "content": f"Explain:\n{BIG_TEXT}"}]})
        assert too_large(getattr(chat, "error", None))
        assert model_calls(mock) == 0

        # Nothing else is lost: the other document still gets an edit, and the big text is not kept.
        ok = await edit(client, NORMAL, "e2")
        assert not getattr(ok, "error", None) and "math.pi" in ok.newText
        assert model_calls(mock) >= 1
        # Bounded: receiving and parsing the ~21 MB messages costs a few copies (measured ~+70 MB,
        # and it does not grow with more big documents); an inline edit on it used to cost 1.3 GB.
        assert await rss_mb(client) < before + 6 * len(BIG_TEXT) / 1e6


async def test_a_document_that_grows_past_the_limit_is_set_aside_until_reopened(mock):
    mock.configure(text=REWRITE)
    async with kestrel(mock_options(mock, nextEdit=True)) as client:
        open_doc(client, BIG, NORMAL_TEXT)  # small when opened: next edit keeps it as the baseline
        change_doc(client, BIG, NORMAL_TEXT + BIG_TEXT, 2)  # then a paste makes it huge
        nes = await client.protocol.send_request_async("kestrel/nextEdit", {"uri": BIG, "position": {"line": 1, "character": 0}})
        assert nes is None
        assert too_large(getattr(await edit(client, BIG, "e1"), "error", None))
        assert model_calls(mock) == 0
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=BIG)))
        open_doc(client, BIG, NORMAL_TEXT, version=3)  # reopened small: usable again
        ok = await edit(client, BIG, "e3")
        assert not getattr(ok, "error", None) and "math.pi" in ok.newText
