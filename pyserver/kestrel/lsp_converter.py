"""pygls' converter, with lsprotocol's forward references resolved per class when a hook for it is first
built, not all ~560 while the converter is built (lsprotocol's `register_hooks` runs
`attrs.resolve_types` on every class of `lsprotocol.types` first; deferred, a start runs ~2 % fewer
instructions before the `initialize` answer). cattrs needs a class's field types only when it writes
the class's hook, so a hook factory resolves the class (or a union's members) there and hands over to
the hook the converter would have used. docs/design-notes.md#pyserverkestrellsp_converterpy
"""

from __future__ import annotations

import typing
from typing import Any

import attrs
from lsprotocol import _hooks as lsprotocol_hooks
from lsprotocol import types as lsprotocol_types
from pygls.protocol import default_converter


def build() -> Any:
    """pygls' `default_converter()`, built without the eager pass (any other converter built in the
    process still gets it: only this call skips it)."""
    eager = lsprotocol_hooks._resolve_forward_references
    lsprotocol_hooks._resolve_forward_references = lambda: None
    try:
        converter = default_converter()
    finally:
        lsprotocol_hooks._resolve_forward_references = eager
    converter.register_structure_hook_factory(
        _unresolved, lambda t: _resolved_then(t, converter.get_structure_hook))
    converter.register_unstructure_hook_factory(
        _unresolved, lambda t: _resolved_then(t, converter.get_unstructure_hook))
    return converter


def _classes(t: Any) -> list[type]:
    """The attrs classes a hook for `t` reads the fields of: `t`, or a union's (Optional's) members."""
    if typing.get_origin(t) is typing.Union:
        return [a for a in typing.get_args(t) if isinstance(a, type) and attrs.has(a)]
    return [t] if isinstance(t, type) and attrs.has(t) else []


def _unresolved(t: Any) -> bool:
    # attrs marks a resolved class with itself (a subclass of a resolved class is not resolved).
    return any(getattr(c, "__attrs_types_resolved__", None) is not c for c in _classes(t))


def _resolved_then(t: Any, hook_for: Any) -> Any:
    for cls in _classes(t):
        if cls.__module__ == lsprotocol_types.__name__:  # as lsprotocol's pass resolves them
            attrs.resolve_types(cls, lsprotocol_types.ALL_TYPES_MAP, {})
        else:  # in the class's own module, as cattrs resolves PEP 563 annotations
            attrs.resolve_types(cls)
    return hook_for(t, cache_result=False)  # this factory no longer matches: the hook it would have had
