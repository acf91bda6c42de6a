"""The server's architecture invariants (docs/architecture.md), read from the source with `ast`:
nothing here imports a kestrel module. A violation listed in a KNOWN_* table is debt that exists
today; a new one fails. Size limits (issue 21) have no known exceptions: split a long function,
move a long docstring's story to docs/design-notes.md."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pyserver" / "kestrel"
LSP_LIBRARIES = ("lsprotocol", "pygls")
ENTRY_POINT = "kestrel.__main__"

# (importer, imported): features that import another feature today. Fail on any new pair.
KNOWN_FEATURE_TO_FEATURE: set[tuple[str, str]] = set()  # none today (chat_guard moved to core/)
# Import cycles (as sorted module sets) that exist today; none. Fail on any new one.
KNOWN_CYCLES: set[frozenset[str]] = set()
# Size limits (issue 21), outside testing/: a function's lines from `def` to its end (decorators
# left out), a module docstring's lines of text (a line holding only the closing quotes left out).
FUNCTION_LINES, DOCSTRING_LINES = 60, 8


@dataclass(frozen=True)
class Import:
    target: str  # a kestrel module ("kestrel.core.documents") or an outside top-level name ("lsprotocol")
    line: int
    lazy: bool  # inside a function or `if TYPE_CHECKING:`, not run when the module loads


def module_name(path: Path) -> str:
    parts = ("kestrel",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    found = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}
    assert "kestrel.server" in found and ENTRY_POINT in found, f"no kestrel package at {PACKAGE}"
    return found


@lru_cache(maxsize=None)
def tree(name: str) -> ast.Module:
    path = modules()[name]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = importer if modules()[importer].name == "__init__.py" else importer.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(importer: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = _resolve(importer, node)
        # `from pkg import sub` imports the submodule `pkg.sub`; `from mod import name`, only `mod`
        subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules()]
        names = subs if len(subs) == len(node.names) else [base, *subs]
    return [n if n.split(".")[0] == "kestrel" else n.split(".")[0] for n in names if n]


@lru_cache(maxsize=None)
def imports(name: str) -> tuple[Import, ...]:
    """Every import statement of module `name`, at any depth (a lazy import is still a dependency)."""
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(Import(t, child.lineno, lazy) for t in _targets(name, child))
            inner = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            checking = isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            visit(child, lazy or inner or checking)

    visit(tree(name), False)
    return tuple(found)


def in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def server_modules() -> list[str]:
    return [m for m in modules() if not in_package(m, "kestrel.testing")]


def where(importer: str, imp: Import) -> str:
    return f"{modules()[importer].relative_to(PACKAGE.parent)}:{imp.line} imports {imp.target}"


# -- invariants --------------------------------------------------------------------------
def test_providers_never_see_lsp_types_features_or_the_server():
    """providers/ talk to models, not editors: no LSP library, no feature, no server, also not
    through another kestrel module they import."""
    forbidden = (*LSP_LIBRARIES, "kestrel.features", "kestrel.server")
    bad: dict[str, str] = {}  # the offending import -> one chain of imports from a provider to it
    for start in (m for m in modules() if in_package(m, "kestrel.providers")):
        seen, stack = {start}, [(start, [start])]
        while stack:
            current, path = stack.pop()
            for imp in imports(current):
                if any(in_package(imp.target, f) for f in forbidden):
                    bad.setdefault(where(current, imp), " -> ".join(path + [imp.target]))
                elif imp.target in modules() and imp.target not in seen:
                    seen.add(imp.target)
                    stack.append((imp.target, path + [imp.target]))
    assert not bad, "providers must not depend on the editor side:\n" + "\n".join(
        f"{what}  ({chain})" for what, chain in sorted(bad.items()))


def test_features_never_import_each_other():
    """Each feature translates LSP <-> one engine; what two features share lives in core/ or an engine."""
    pairs: dict[tuple[str, str], str] = {}
    for name in (m for m in modules() if in_package(m, "kestrel.features") and m != "kestrel.features"):
        for imp in imports(name):
            if in_package(imp.target, "kestrel.features") and imp.target not in (name, "kestrel.features"):
                pairs[(name, imp.target)] = where(name, imp)
    new = sorted(v for k, v in pairs.items() if k not in KNOWN_FEATURE_TO_FEATURE)
    assert not new, "a feature imports another feature:\n" + "\n".join(new)
    gone = KNOWN_FEATURE_TO_FEATURE - pairs.keys()
    assert not gone, f"fixed, remove from KNOWN_FEATURE_TO_FEATURE: {sorted(gone)}"


def test_only_the_entry_point_imports_the_server():
    """server.py is the registry at the top: only `python -m kestrel` (__main__.py) builds it."""
    bad = [where(m, imp) for m in modules() if m != ENTRY_POINT
           for imp in imports(m) if imp.target == "kestrel.server"]
    assert not bad, "only kestrel/__main__.py may import kestrel.server:\n" + "\n".join(bad)
    assert any(imp.target == "kestrel.server" for imp in imports(ENTRY_POINT)), "the entry point no longer builds the server"


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), plus self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                cycles.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return cycles


def test_no_import_cycles_in_the_server():
    """Module-level graph of the server (testing/ left out), lazy imports included: a cycle that
    only works because one side imports inside a function is still a cycle."""
    graph = {m: {i.target for i in imports(m) if i.target in modules() and not in_package(i.target, "kestrel.testing")}
             for m in server_modules()}
    cycles = import_cycles(graph)
    new = [sorted(c) for c in cycles if c not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in new)
    gone = KNOWN_CYCLES - set(cycles)
    assert not gone, f"fixed, remove from KNOWN_CYCLES: {[sorted(c) for c in gone]}"


# What the server imports before it can answer `initialize` (the cold start, issue 24): engines no
# request before the first edit, fix, chat turn or agent run needs load on first use
# (docs/design-notes.md#pyserverkestrelcompiled_methodspy). Fail when one is imported at start again.
LOADED_ON_FIRST_USE = ("kestrel.edits.inline_edit", "kestrel.edits.quick_fix", "kestrel.edits.next_edit",
                       "kestrel.agent.loop", "kestrel.agent.read_tools", "kestrel.chat.codebase", "json_repair",
                       # stdlib modules only a model download or the latency budget's fit needs (~5 ms)
                       "statistics", "tempfile")


def loaded_at_start(start: str) -> set[str]:
    """Modules a plain `import start` runs: eager imports, followed, with each module's packages."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:k]) for k in range(1, len(parts)) if ".".join(parts[:k]) in modules()]
        if name in modules():
            todo += [i.target for i in imports(name) if not i.lazy]
    return seen


def test_the_server_starts_without_the_engines_it_loads_on_first_use():
    at_start = loaded_at_start("kestrel.server") | loaded_at_start(ENTRY_POINT)
    assert "kestrel.features.inline_edit" in at_start and "kestrel.core" in at_start  # the walk sees the server
    early = [m for m in LOADED_ON_FIRST_USE if m in at_start]
    assert not early, f"imported before initialize again: {early}"


# -- sizes ---------------------------------------------------------------------------------
def long_functions() -> list[tuple[int, str]]:
    """(lines, "path:line name") of every function or method over FUNCTION_LINES, longest first."""
    found = []
    for name in server_modules():
        path = modules()[name].relative_to(PACKAGE.parent)
        for node in ast.walk(tree(name)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    found.append((lines, f"{path}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)


def docstring_lines(module: ast.Module, source: list[str]) -> int | None:
    """The lines of text of a module's docstring in the file (a closing-quotes-only line not counted),
    read from the source so that an escape such as `\\n` inside it does not add a line."""
    if ast.get_docstring(module) is None:
        return None
    node = module.body[0]
    lines = node.end_lineno - node.lineno + 1
    closing = source[node.end_lineno - 1].strip()
    return lines - 1 if lines > 1 and closing in ('"""', "'''") else lines


def long_module_docstrings() -> list[tuple[int, str]]:
    """(lines, path) of every module docstring over DOCSTRING_LINES, longest first."""
    found = []
    for name in server_modules():
        path = modules()[name]
        lines = docstring_lines(tree(name), path.read_text(encoding="utf-8").splitlines())
        if lines is not None and lines > DOCSTRING_LINES:
            found.append((lines, str(path.relative_to(PACKAGE.parent))))
    return sorted(found, reverse=True)


def test_no_function_is_longer_than_60_lines():
    """A function a newcomer can read in one screen: split a longer one into named steps."""
    found = long_functions()
    assert not found, f"functions over {FUNCTION_LINES} lines (split them):\n" + "\n".join(
        f"{lines:4d}  {what}" for lines, what in found)


def test_no_module_docstring_is_longer_than_8_lines():
    """A module docstring is the contract (what it does, what a caller must know); the story
    (figures, history, why) goes to docs/design-notes.md under the module's path."""
    found = long_module_docstrings()
    assert not found, (f"module docstrings over {DOCSTRING_LINES} lines (move the story to "
                       "docs/design-notes.md):\n" + "\n".join(f"{lines:4d}  {what}" for lines, what in found))


def test_the_size_scanner_counts_as_documented():
    """Guards the guards: docstring text lines without the closing quotes (an escape adds none),
    function lines from `def` (decorators left out) to the end."""
    source = '"""One.\n\nThree, with an escape: \\r\\n.\n"""\n\n@cache\ndef f():\n    pass\n'
    module = ast.parse(source)
    assert docstring_lines(module, source.splitlines()) == 3
    assert docstring_lines(ast.parse('"""One line."""'), ['"""One line."""']) == 1
    assert docstring_lines(ast.parse("x = 1"), ["x = 1"]) is None
    function = module.body[1]
    assert function.end_lineno - function.lineno + 1 == 2


def test_the_scanner_sees_imports():
    """Guards the guards: the scanner resolves relative, submodule and lazy imports as Python does."""
    core = {i.target for i in imports("kestrel.core")}  # `from .. import redact`, `from .documents import ...`
    assert {"kestrel.redact", "kestrel.core.documents", "kestrel.chat.engine", "lsprotocol"} <= core
    main = {i.target: i.lazy for i in imports(ENTRY_POINT)}
    assert main["kestrel.server"] is True and main["kestrel.transport.tcp"] is True
    provider_base = {i.target: i.lazy for i in imports("kestrel.providers.base")}
    assert provider_base["kestrel.config"] is True  # under `if TYPE_CHECKING:`
    assert "lsprotocol" in {i.target for i in imports("kestrel.server")}
