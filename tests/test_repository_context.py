"""Repository context (issue 23): the definitions of names a file imports from the workspace reach
the prompt without the user opening anything; files outside the workspace, secrets and excluded
files never do; the layout stays byte-identical while the user types."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types

from conftest import change_doc, complete, kestrel, mock_options, open_doc
from kestrel.context.python_outline import import_statements, imported_names, outline
from kestrel.context.repository import RepositoryContext
from kestrel.context.workspace_index import WorkspaceIndex

MODELS = '''"""Billing models."""
from dataclasses import dataclass


@dataclass
class Invoice:
    """An invoice to a customer.

    Long description that is not part of the summary.
    """

    customer: str
    amount_cents: int

    def overdue(self, today: int) -> bool:
        return today > 30

    def _private(self):
        pass


def total_due(invoice: Invoice, *, tax: float = 0.2) -> float:
    """What the customer pays, tax included."""
    return invoice.amount_cents * (1 + tax) / 100


RATE = 0.2
'''


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "billing").mkdir(parents=True)
    (ws / "src" / "billing" / "__init__.py").write_text("from .models import Invoice, total_due\n")
    (ws / "src" / "billing" / "models.py").write_text(MODELS)
    (ws / "src" / "billing" / "util.py").write_text("def cents(x: float) -> int:\n    return round(x * 100)\n")
    return ws


def context_engine(tmp_path: Path) -> tuple[RepositoryContext, Path]:
    """The context engine over the billing workspace, and the path of a file in it (not yet written)."""
    ws = workspace(tmp_path)
    index = WorkspaceIndex()
    index.set_roots([str(ws)])
    return RepositoryContext(index), ws / "src" / "billing" / "app.py"


def test_outline_is_signatures_docstring_summaries_and_fields():
    out = outline(MODELS)
    assert out.definitions["total_due"] == (
        "def total_due(invoice: Invoice, *, tax: float=0.2) -> float:\n"
        "    \"\"\"What the customer pays, tax included.\"\"\"\n    ..."
    )
    invoice = out.definitions["Invoice"]
    assert invoice.startswith("@dataclass\nclass Invoice:\n    \"\"\"An invoice to a customer.\"\"\"\n")
    assert "customer: str\n    amount_cents: int" in invoice and "def overdue(self, today: int) -> bool:\n        ..." in invoice
    assert "_private" not in invoice and "return today" not in invoice and "Long description" not in invoice
    assert out.definitions["RATE"] == "RATE = 0.2"
    assert out.header("total_due") == "def total_due(invoice: Invoice, *, tax: float=0.2) -> float: ..."
    assert out.header("Invoice") == "class Invoice: ..."
    assert outline("def broken(:\n").definitions == {}


def test_import_statements_are_found_without_strings_that_look_like_imports():
    src = ('import os\nfrom .models import (\n    Invoice,\n    total_due as due,\n)\n'
           'x = "import this"\n\ndef f():\n    from billing import util\n    important = 1\n')
    assert import_statements(src) == [
        "import os", "from .models import (\n    Invoice,\n    total_due as due,\n)", "from billing import util"]
    assert [(n.bound, n.level, n.module, n.name) for n in imported_names(src)] == [
        ("os", 0, "os", None), ("Invoice", 1, "models", "Invoice"), ("due", 1, "models", "total_due"),
        ("util", 0, "billing", "util")]


def test_imports_resolve_relative_absolute_src_layout_reexports_and_modules(tmp_path):
    ws = workspace(tmp_path)
    index = WorkspaceIndex()
    index.set_roots([str(ws)])
    app = ws / "src" / "billing" / "app.py"
    models = (ws / "src" / "billing" / "models.py").resolve()
    assert index.resolve_module(app, 1, "models") == models
    assert index.resolve_module(app, 0, "billing.models") == models
    assert index.resolve_module(app, 0, "json") is None  # the standard library is not the workspace
    package = index.resolve_module(app, 0, "billing")
    found = index.definition(package, "total_due")  # re-exported by billing/__init__.py
    assert found is not None and found.path == "src/billing/models.py"
    assert index.submodule(package, "util") == (ws / "src" / "billing" / "util.py").resolve()


async def test_first_uses_come_first_and_the_layout_is_stable_while_typing(tmp_path):
    ctx, app = context_engine(tmp_path)
    head = "from billing import util\nfrom billing.models import Invoice, total_due, RATE\n\n"
    text = head + "inv = Invoice('a', 5)\nprint(util.cents(1.5))\nx = "
    await ctx.ready("file:///app.py", app, text, 1, 5.0)
    # A budget too small for Invoice's outline: total_due and RATE (not used yet) come before Invoice
    # (used above); the function read above through its module (util.cents) fits too.
    snippets = ctx.snippets("file:///app.py", "src/billing/app.py", text, 200)
    assert [s.path for s in snippets] == ["src/billing/util.py", "src/billing/models.py"]
    assert snippets[1].text.startswith("def total_due(invoice: Invoice, *, tax: float=0.2) -> float:\n")
    assert "RATE = 0.2" in snippets[1].text and "class Invoice" not in snippets[1].text
    # Smaller still: the headers of the first uses only.
    tiny = ctx.snippets("file:///app.py", "src/billing/app.py", text, 90)
    assert tiny[0].text == "def total_due(invoice: Invoice, *, tax: float=0.2) -> float: ...\n\nRATE = 0.2"
    # With room for everything: import order, grouped by file; the module's attribute read above too.
    full = ctx.snippets("file:///app.py", "src/billing/app.py", text, 5000)
    assert [s.path for s in full] == ["src/billing/util.py", "src/billing/models.py"]
    models_text = full[1].text
    assert models_text.index("class Invoice") < models_text.index("def total_due") < models_text.index("RATE")
    # Typing more of the line changes nothing in the context (the prompt cache keeps it).
    assert ctx.snippets("file:///app.py", "src/billing/app.py", text + "round(", 5000) == full


async def test_a_first_use_read_soon_below_the_cursor_comes_before_earlier_imports(tmp_path):
    ctx, app = context_engine(tmp_path)
    head = "from billing.models import Invoice, total_due, RATE\n\n"
    text = head + "x = "
    below = "\n\n\ndef later():\n    return RATE * 2\n"
    await ctx.ready("file:///app.py", app, text + below, 1, 5.0)
    # Room for one header: without what follows the cursor it is the first import's...
    assert ctx.snippets("file:///app.py", "src/billing/app.py", text, 25)[0].text == "class Invoice: ..."
    # ... with it, the name the code reads just below: a line here likely needs it too.
    ctx = RepositoryContext(ctx.index)
    await ctx.ready("file:///app.py", app, text + below, 1, 5.0)
    assert ctx.snippets("file:///app.py", "src/billing/app.py", text, 25, after=below)[0].text == "RATE = 0.2"


def test_a_long_constant_is_outlined_short_not_left_out():
    message = "{converter} could not read {extension}: install the extra [{feature}]. " * 5
    table = "{" + ", ".join(f"'k{i}': {i}" for i in range(60)) + "}"
    out = outline(f"MESSAGE = {message!r}\nTABLE: dict[str, int] = {table}\nLIMIT: int\n")
    assert out.definitions["MESSAGE"] == "MESSAGE = " + repr(message[:120] + "...")
    assert out.definitions["TABLE"] == "TABLE: dict[str, int] = ..."
    assert out.definitions["LIMIT"] == "LIMIT: int"


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_a_symlink_out_of_the_workspace_a_secret_and_an_excluded_file_are_never_read(tmp_path):
    """The hostile workspace: a module that is a symlink to a file of the user's outside it, a
    secrets module, and a file the user excluded by glob."""
    ws = workspace(tmp_path)
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "keys.py").write_text('API_TOKEN = "sk-outside-the-workspace"\n')
    (ws / "src" / "billing" / "leak.py").symlink_to(outside / "keys.py")
    (ws / "src" / "billing" / "secrets.py").write_text('DB_PASSWORD = "hunter2"\n')
    (ws / "src" / "billing" / "internal.py").write_text('SALT = "pepper"\n')
    index = WorkspaceIndex()
    index.set_roots([str(ws)])
    index.exclude_globs = ("**/internal.py",)
    app = ws / "src" / "billing" / "app.py"
    for module in ("leak", "secrets", "internal"):
        assert index.resolve_module(app, 1, module) is None
    assert index.scan()["files"] == 3  # __init__, models, util and nothing else
    assert not any(p.name in ("keys.py", "secrets.py", "internal.py") for p in index._outlines)


async def test_the_model_receives_the_imported_definitions_without_open_tabs(mock, tmp_path):
    ws = workspace(tmp_path)
    app = ws / "src" / "billing" / "app.py"
    text = "from billing.models import Invoice, total_due\n\ninv = Invoice('acme', 1200)\namount = "
    mock.configure(text="total_due(inv)")
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b"), workspace=ws) as client:
        open_doc(client, app.as_uri(), text)
        assert await complete(client, app.as_uri(), 3, 9) == "total_due(inv)"
        prompt = mock.stats()["last_request"]["prompt"]
    # Qwen2.5-Coder's repository format: the workspace folder's name first, the current file last
    assert prompt.startswith(f"<|repo_name|>{ws.name}\n<|file_sep|>src/billing/models.py\n@dataclass\nclass Invoice:")
    assert "def total_due(invoice: Invoice, *, tax: float=0.2) -> float:" in prompt
    assert "<|file_sep|>src/billing/app.py\n<|fim_prefix|>from billing.models import" in prompt
    assert str(tmp_path) not in prompt  # relative paths only


async def test_the_prompt_has_the_definition_the_code_below_the_cursor_reads(mock, tmp_path):
    ws = workspace(tmp_path)
    app = ws / "src" / "billing" / "app.py"
    text = ("from billing.models import Invoice, total_due, RATE\n\n"
            "def price(x):\n    return \n\n\ndef later():\n    return RATE * 2\n")
    mock.configure(text="x")
    # 8 tokens of context: room for one definition's header, no more
    options = mock_options(mock, "fim", model="qwen2.5-coder-0.5b", completion={"contextTokens": 8})
    async with kestrel(options, workspace=ws) as client:
        open_doc(client, app.as_uri(), text)
        await complete(client, app.as_uri(), 3, 11)
        prompt = mock.stats()["last_request"]["prompt"]
    assert "RATE = 0.2" in prompt.split("<|file_sep|>src/billing/app.py")[0]
    assert "class Invoice" not in prompt


async def test_repository_context_can_be_turned_off(mock, tmp_path):
    ws = workspace(tmp_path)
    app = ws / "src" / "billing" / "app.py"
    mock.configure(text="1")
    options = mock_options(mock, "fim", model="qwen2.5-coder-0.5b", completion={"repositoryContext": False})
    async with kestrel(options, workspace=ws) as client:
        open_doc(client, app.as_uri(), "from billing.models import total_due\n\nx = ")
        await complete(client, app.as_uri(), 2, 4)
        prompt = mock.stats()["last_request"]["prompt"]
    assert "total_due(invoice" not in prompt and "<|file_sep|>" not in prompt


async def test_an_open_tab_that_defines_an_imported_name_sends_its_definitions_not_a_window(mock, tmp_path):
    """The defining module open as a tab: its outline is sent once, not also a similarity window."""
    ws = workspace(tmp_path)
    app = ws / "src" / "billing" / "app.py"
    models = ws / "src" / "billing" / "models.py"
    mock.configure(text="1")
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b"), workspace=ws) as client:
        open_doc(client, models.as_uri(), MODELS)
        open_doc(client, app.as_uri(), "from billing.models import total_due, Invoice\n\ninvoice = Invoice(")
        await complete(client, app.as_uri(), 2, 18)
        prompt = mock.stats()["last_request"]["prompt"]
    assert prompt.count("<|file_sep|>src/billing/models.py\n") == 1
    assert "return invoice.amount_cents" not in prompt  # the body is not sent: the outline is


async def test_a_saved_change_to_a_defining_file_reaches_the_next_prompt(mock, tmp_path):
    ws = workspace(tmp_path)
    app = ws / "src" / "billing" / "app.py"
    models = ws / "src" / "billing" / "models.py"
    text = "from billing.models import total_due\n\nx = "
    mock.configure(text="1")
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b"), workspace=ws) as client:
        open_doc(client, app.as_uri(), text)
        await complete(client, app.as_uri(), 2, 4)
        assert "def total_due(invoice: Invoice, *, tax: float=0.2)" in mock.stats()["last_request"]["prompt"]
        models.write_text(MODELS.replace("tax: float = 0.2", "vat: float = 0.25"))
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=models.as_uri())))
        change_doc(client, app.as_uri(), text + "t", 2)
        await complete(client, app.as_uri(), 2, 5)
        prompt = mock.stats()["last_request"]["prompt"]
    assert "def total_due(invoice: Invoice, *, vat: float=0.25)" in prompt and "tax: float" not in prompt


async def test_a_workspace_folder_added_later_is_indexed(mock, tmp_path):
    first, second = tmp_path / "first", workspace(tmp_path)
    first.mkdir()
    app = second / "src" / "billing" / "app.py"
    text = "from billing.models import total_due\n\nx = "
    mock.configure(text="1")
    async with kestrel(mock_options(mock, "fim", model="qwen2.5-coder-0.5b"), workspace=first) as client:
        client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(event=types.WorkspaceFoldersChangeEvent(
            added=[types.WorkspaceFolder(uri=second.as_uri(), name="ws")], removed=[])))
        open_doc(client, app.as_uri(), text)
        await complete(client, app.as_uri(), 2, 4)
        prompt = mock.stats()["last_request"]["prompt"]
    assert "<|file_sep|>src/billing/models.py\ndef total_due(" in prompt


async def test_typing_an_import_line_never_waits_and_keeps_the_earlier_definitions(tmp_path, monkeypatch):
    """Each keystroke in an import line changes the imports: the request goes on with the earlier
    resolution (no wait) while the new one runs."""
    import kestrel.context.repository as repository

    ctx, app = context_engine(tmp_path)
    text = "from billing.models import total_due\n\nx = "
    await ctx.ready("file:///app.py", app, text, 1, 5.0)
    gate = asyncio.Event()
    real = repository._resolve

    def slow(*args):  # the next resolution does not finish until the test says so
        asyncio.run_coroutine_threadsafe(gate.wait(), loop).result()
        return real(*args)

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(repository, "_resolve", slow)
    typed = "from billing.models import total_due, Inv\n\nx = "
    started = loop.time()
    await ctx.ready("file:///app.py", app, typed, 2, 5.0)
    assert loop.time() - started < 1.0  # did not wait for the slow resolution
    snippets = ctx.snippets("file:///app.py", "src/billing/app.py", typed, 5000)
    assert "def total_due(" in snippets[0].text  # the earlier resolution's definitions
    gate.set()


async def test_typing_a_first_use_keeps_the_context_near_where_it_was_chosen(tmp_path):
    ctx, app = context_engine(tmp_path)
    text = "from billing.models import Invoice, total_due, RATE\n\nx = "
    await ctx.ready("file:///app.py", app, text, 1, 5.0)
    first = ctx.snippets("file:///app.py", "src/billing/app.py", text, 200, len(text))
    typed = text + "total_due("  # total_due is no longer a first use: re-ranked, the choice would change
    assert ctx.snippets("file:///app.py", "src/billing/app.py", typed, 200, len(typed)) == first
    far = len(typed) + 5000  # elsewhere in the file: chosen again for where the cursor is
    assert ctx.snippets("file:///app.py", "src/billing/app.py", typed, 200, far) != first
