"""Run as a script (tests/test_lsp_converter.py): every attrs class of lsprotocol.types, built with every
field it can fill, through the server's converter (`lazy`) or pygls' default (`eager`). Prints the wire
form of each and its round trip, and how many classes were resolved before the first conversion;
`lazy-in` reads wire forms (a JSON object, class name to wire form) on stdin first and prints them read
back by the server's converter."""

import collections.abc
import enum
import json
import sys
import typing

import attrs
from lsprotocol import types as T


def sample(t, depth=0):
    origin, args = typing.get_origin(t), typing.get_args(t)
    if t is type(None):
        return None
    if origin is typing.Union:
        for a in args:
            if a is not type(None):
                v = sample(a, depth)
                if v is not None:
                    return v
        return None
    if origin is typing.Literal:
        return args[0]
    if origin in (list, collections.abc.Sequence):  # get_origin(List[X]) is list, of Sequence[X] the ABC
        v = sample(args[0], depth + 1) if args else 1
        return [] if v is None else [v]
    if origin in (dict, collections.abc.Mapping):
        v = sample(args[1], depth + 1) if len(args) == 2 else 1
        return {} if v is None else {"k": v}
    if origin is tuple:
        return tuple(sample(a, depth + 1) for a in args)
    if isinstance(t, type) and issubclass(t, enum.Enum):
        return next(iter(t))
    if t is str:
        return "s"
    if t is bool:
        return True
    if t is int:
        return 3
    if t is float:
        return 1.5
    if isinstance(t, type) and attrs.has(t):
        if depth > 3:
            return None
        hints = typing.get_type_hints(t, T.ALL_TYPES_MAP, {})
        kwargs = {}
        for f in attrs.fields(t):
            if not f.init:
                continue
            v = sample(hints[f.name], depth + 1)
            if v is None and f.default is attrs.NOTHING:
                return None
            if v is not None:
                kwargs[f.name] = v
        try:
            return t(**kwargs)
        except Exception:
            return None
    if t is typing.Any or t is object:
        return {"a": 1}
    return None


def main(kind):
    classes = [v for _, v in sorted(T.ALL_TYPES_MAP.items()) if isinstance(v, type) and attrs.has(v)]
    # The samples are built from hints read on the side: attrs' own resolution (what the converter
    # decides) must not have run before the converter is made.
    samples = [(c.__name__, c, sample(c)) for c in classes]
    if kind.startswith("lazy"):
        from kestrel.protocol import converter

        conv = converter()
    else:
        from pygls.protocol import default_converter

        conv = default_converter()
    resolved = sum(getattr(c, "__attrs_types_resolved__", None) is c for c in classes)
    out = {}
    if kind == "lazy-in":  # read first: the wire forms on stdin, before anything is unstructured
        wires = json.load(sys.stdin)
        for name, cls, _ in samples:
            if name in wires:
                try:
                    out[name] = conv.unstructure(conv.structure(wires[name], cls))
                except Exception as exc:
                    out[name] = ["error", type(exc).__name__, str(exc)[:200]]
        print(json.dumps({"classes": len(classes), "resolved_at_start": resolved, "read": out}, sort_keys=True, default=str))
        return
    for name, cls, value in samples:
        if value is None:
            continue
        try:
            wire = conv.unstructure(value)
            back = conv.unstructure(conv.structure(wire, cls))
        except Exception as exc:  # some types lsprotocol's own converter cannot read back: the same either way
            out[name] = ["error", type(exc).__name__, str(exc)[:200]]
        else:
            out[name] = [wire, back]
    print(json.dumps({"classes": len(classes), "resolved_at_start": resolved, "samples": out}, sort_keys=True, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
