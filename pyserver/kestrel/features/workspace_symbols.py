"""`workspace/symbol`: the definitions of the workspace by name, from the codebase index (the chat's
`#sym` picker in VS Code, `:lua vim.lsp.buf.workspace_symbol()` in Neovim). Answers from what is
indexed; before the first index pass has finished, nothing (it never waits for one)."""

from __future__ import annotations

from lsprotocol import types

from ..core import Core

_KINDS = {
    "class": types.SymbolKind.Class, "class_definition": types.SymbolKind.Class, "class_declaration": types.SymbolKind.Class,
    "abstract_class_declaration": types.SymbolKind.Class, "struct_item": types.SymbolKind.Struct,
    "struct_specifier": types.SymbolKind.Struct, "struct_declaration": types.SymbolKind.Struct,
    "interface_declaration": types.SymbolKind.Interface, "trait_item": types.SymbolKind.Interface,
    "enum_declaration": types.SymbolKind.Enum, "enum_item": types.SymbolKind.Enum,
    "method": types.SymbolKind.Method, "method_definition": types.SymbolKind.Method,
    "method_declaration": types.SymbolKind.Method, "constructor_declaration": types.SymbolKind.Constructor,
    "variable": types.SymbolKind.Variable, "const_item": types.SymbolKind.Constant,
    "static_item": types.SymbolKind.Constant, "mod_item": types.SymbolKind.Module,
    "namespace_declaration": types.SymbolKind.Namespace, "type_spec": types.SymbolKind.Class,
    "type_alias_declaration": types.SymbolKind.Class, "type_item": types.SymbolKind.Class,
}
MAX_RESULTS = 100


class WorkspaceSymbolFeature:
    def __init__(self, core: Core) -> None:
        self.core = core

    def find(self, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
        codebase = self.core.codebase
        if not self.core.host.settings.chat.codebase or not codebase.ready.is_set():
            return []
        out = []
        for name, qualified, kind, file, start, end in codebase.find_symbols(params.query, MAX_RESULTS):
            container = qualified[: -len(name) - 1] if qualified.endswith("." + name) else None
            out.append(types.WorkspaceSymbol(
                name=name, kind=_KINDS.get(kind, types.SymbolKind.Function), container_name=container,
                location=types.Location(uri=file.as_uri(), range=types.Range(
                    start=types.Position(line=start, character=0), end=types.Position(line=end + 1, character=0)))))
        return out
