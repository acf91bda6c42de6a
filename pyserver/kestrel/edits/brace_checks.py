"""Checks on a fix's answer in the languages tree-sitter parses, where no linter of Kestrel's runs:
is it a change at all, does it sit at the region's indentation, does it use a name from nowhere.

Why: asked for a TypeScript statement's fix, the 0.5B answered the same statement re-indented,
with a `;` added, or with a name it made up (`${prefix}`, `quoted.join`); each parsed, so each was
offered as a fix that fixed nothing. Compared as syntax trees (layout, comments and statement-ending
`;` aside) a re-typed statement is "nothing to change"; a bare identifier the file never mentions,
that the answer does not declare and that is not a global of the language, is not the file's code.
"""

from __future__ import annotations

import re
from typing import Any

from .statement_region import parser_for

_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
# Bare names a JavaScript/TypeScript file may use without declaring them (the language's and the
# common hosts' globals); other languages: none are assumed.
_JS_GLOBALS = frozenset("""
Array ArrayBuffer AggregateError BigInt BigInt64Array BigUint64Array Boolean DataView Date Error EvalError
FinalizationRegistry Float32Array Float64Array Function Infinity Int8Array Int16Array Int32Array Intl JSON Map
Math NaN Number Object Promise Proxy RangeError ReferenceError Reflect RegExp Set SharedArrayBuffer String
Symbol SyntaxError TypeError URIError Uint8Array Uint8ClampedArray Uint16Array Uint32Array WeakMap WeakRef
WeakSet Atomics globalThis undefined console decodeURI decodeURIComponent encodeURI encodeURIComponent
isFinite isNaN parseFloat parseInt queueMicrotask setTimeout clearTimeout setInterval clearInterval
structuredClone fetch URL URLSearchParams TextEncoder TextDecoder AbortController AbortSignal Buffer process
require module exports window document navigator self arguments Blob Event EventTarget Headers Request
Response crypto performance
""".split())
_JS_LIKE = frozenset({"typescript", "typescriptreact", "javascript", "javascriptreact"})
# How a name is introduced in these languages (`const x`, `let mut x`, `x :=`, `func x`, `(x) =>`, ...):
# a name the answer introduces itself is not one it made up.
_DECLARES = r"(?:\b(?:const|let|var|mut|function|class|fn|func|type|interface|enum|struct|auto|val)\s+{0}\b|\b{0}\s*:=|\b{0}\s*=>|\(\s*{0}\s*[,)])"


def tokens(text: str, language: str) -> list[str] | None:
    """The leaves of `text`'s syntax tree without layout, comments and statement-ending `;`; None
    when there is no grammar or `text` does not parse."""
    parser = parser_for(language)
    if parser is None:
        return None
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    if tree.root_node.has_error:
        return None
    out: list[str] = []
    stack: list[Any] = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _COMMENTS or node.type == ";":
            continue
        if node.child_count == 0:
            out.append(node.text.decode("utf-8", "replace"))
        else:
            stack.extend(reversed(node.children))
    return out


def same_program(before: str, after: str, language: str) -> bool:
    """Do the two documents differ only in layout, comments or statement-ending semicolons?"""
    a = tokens(before, language)
    return a is not None and a == tokens(after, language)


def reindent(answer: str, region: str) -> str:
    """The answer moved to the region's indentation (the first lines' difference, applied to every
    line): small models answer a nested statement at column 0 or at their own indentation."""
    want = _indent(next((ln for ln in region.split("\n") if ln.strip()), ""))
    first = next((ln for ln in answer.split("\n") if ln.strip()), None)
    if first is None or _indent(first) == want:
        return answer
    have = _indent(first)
    out = []
    for line in answer.split("\n"):
        if not line.strip():
            out.append(line)
        elif line.startswith(have):
            out.append(want + line[len(have):])
        else:  # a line left of the first: keep its place relative to the region
            out.append(want + line.lstrip())
    return "\n".join(out)


def made_up_name(document: str, answer: str, language: str) -> str | None:
    """A bare identifier the answer uses that the document never mentions, the answer does not
    declare, and the language does not provide; None when there is none (or no grammar)."""
    known = set(re.findall(r"[A-Za-z_$][\w$]*", document))
    builtins = _JS_GLOBALS if language in _JS_LIKE else frozenset()
    for name in _identifiers(answer, language, ("identifier",)):
        if name not in known and name not in builtins and not re.search(_DECLARES.format(re.escape(name)), answer):
            return name
    return None


def dropped_name(before: str, after: str, first: int, last: int, language: str) -> str | None:
    """A bare identifier lines `first`..`last` (1-based) of `before` use that the rewritten lines
    of `after` no longer do, though the rest of the file still uses it (a binding or a use taken out
    from under the code around it); None when there is none (or no grammar)."""
    old_lines, new_lines = before.split("\n"), after.split("\n")
    tail = len(old_lines) - last  # the lines after the change, in both
    old_part = "\n".join(old_lines[first - 1 : last])
    new_part = "\n".join(new_lines[first - 1 : len(new_lines) - tail])
    rest = "\n".join(old_lines[: first - 1] + old_lines[last:])
    kept = set(re.findall(r"[A-Za-z_$][\w$]*", new_part))
    for name in _identifiers(old_part, language):
        if name not in kept and re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", rest):
            return name
    return None


_NAMES = ("identifier", "shorthand_property_identifier_pattern", "shorthand_property_identifier")


def _identifiers(text: str, language: str, types: tuple[str, ...] = _NAMES) -> list[str]:
    """The distinct names in `text`'s syntax tree held by nodes of `types` ([] without a grammar)."""
    parser = parser_for(language)
    if parser is None:
        return []
    out: list[str] = []
    stack: list[Any] = [parser.parse(text.encode("utf-8", "surrogatepass")).root_node]
    while stack:
        node = stack.pop()
        if node.type in types:
            out.append(node.text.decode("utf-8", "replace"))
        stack.extend(node.children)
    return list(dict.fromkeys(out))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
