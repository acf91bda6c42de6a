"""A rewrite the model gave only in part, merged into the region as an editor's apply step does.

Asked to rewrite a region holding a class or several definitions, small models often answer with
only what they changed or added (the 1.5B on instructed edits: 6 of 9 edits its raw answer made and
Kestrel refused). Applied as the region, such an answer deletes the rest; `applied_answer` merges it
(rules on `applied_answer`). Independently, an answer less indented than the region (a method answered
at column 0) is put back at the region's indentation. Python only for the merge (it needs the tree);
other languages' rewrites are applied as answered, re-indented."""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize

_DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)
_REMOVES = re.compile(r"\b(remov\w*|delet\w*|drop\w*|renam\w*|replac\w*|merg\w*|inlin\w*|combin\w*|eliminat\w*|"
                      r"get rid|instead of|move\w*)\b", re.IGNORECASE)


def applied_answer(region: str, answer: str, instruction: str, language: str, repair: bool = False) -> str:
    """The region's new text from the model's (cleaned) answer, at the region's indentation; when the
    answer is a part of the region's rewrite, merged into it:
    - a definition the answer gives again replaces the region's one of that name, in place (a method
      answered without its class replaces the class's method of that name);
    - a new method (first parameter `self` or `cls`) goes at the end of the class whose attributes and
      methods it uses (the only class when there is one; no guess between two: not merged);
    - a new function or class goes before the definition it preceded in the answer, else last;
    - a definition the answer leaves out stays, unless the instruction names it and asks to remove,
      rename or replace something (then leaving it out is the edit).
    An answer of anything but imports and definitions, or that does not parse, is not merged; nor is
    a repair's answer that only adds code (it changes nothing the bug is in: the checks judge it)."""
    answer = _at_region_indent(region, answer, language)
    if language != "python":
        return answer
    merged = _merged(region, answer, instruction, repair)
    return answer if merged is None else merged


# --- indentation ----------------------------------------------------------------------------
def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _first_code_line(text: str) -> str | None:
    return next((ln for ln in text.split("\n") if ln.strip() and not ln.lstrip().startswith("#")), None)


def _string_continuations(code: str) -> set[int]:
    """0-based lines that continue a multi-line string (their leading spaces are the string's)."""
    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0], tok.end[0]))  # rows are 1-based: start+1.. end, 0-based
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set()
    return inside


def _shifted(lines: list[str], old: int, new: str) -> list[str]:
    """`lines` of Python whose code is indented by `old` columns, moved to the indentation `new`
    (lines inside a multi-line string left as they are: their spaces are the string's)."""
    keep = _string_continuations(textwrap.dedent("\n".join(lines)))
    out = []
    for i, line in enumerate(lines):
        if i in keep:
            out.append(line)
        elif not line.strip():
            out.append("")
        else:
            out.append(new + line[min(old, len(_indent_of(line))) :])
    return out


def _at_region_indent(region: str, answer: str, language: str) -> str:
    """The answer moved right to the region's indentation when its first code line is less indented
    (a model answers a method at column 0 more often than not)."""
    want, got = _first_code_line(region), _first_code_line(answer)
    if want is None or got is None:
        return answer
    base, have = _indent_of(want), _indent_of(got)
    if len(have) >= len(base) or "\t" in base + have:
        return answer
    lines = answer.split("\n")
    if language == "python":
        return "\n".join(_shifted(lines, len(have), base))
    return "\n".join(base + ln[len(have) :] if ln.startswith(have) and ln.strip() else ln for ln in lines)


# --- the merge ---------------------------------------------------------------------------------
def _span(node: ast.stmt) -> tuple[int, int]:
    """0-based first line (decorators included) and end line (exclusive) of a statement."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    return first, node.end_lineno or node.lineno


def _with_comments(lines: list[str], first: int) -> int:
    """The first line of the comments written right above line `first` (they go with the definition)."""
    while first > 0 and lines[first - 1].lstrip().startswith("#"):
        first -= 1
    return first


def _text(lines: list[str], node: ast.stmt) -> list[str]:
    first, end = _span(node)
    return lines[_with_comments(lines, first) : end]


def _gap(tree: ast.Module, lines: list[str], base: str) -> list[str]:
    """The blank lines the region puts between its top-level definitions (PEP 8's when it has one)."""
    body = tree.body
    for prev, node in zip(body, body[1:]):
        blank = _with_comments(lines, _span(node)[0]) - _span(prev)[1]
        if blank >= 1:
            return [""] * blank
    return [""] * (1 if base else 2)


def _is_method(node: ast.stmt) -> bool:
    if not isinstance(node, _FUNCTION):
        return False
    params = node.args.posonlyargs + node.args.args
    return bool(params) and params[0].arg in ("self", "cls")


def _self_names(node: ast.AST) -> set[str]:
    """Attributes of `self` (or `cls`) that the code reads or writes."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id in ("self", "cls")}


def _home(method: ast.stmt, classes: list[ast.ClassDef]) -> ast.ClassDef | None:
    """The class a new method belongs to: the one whose attributes and methods it uses most."""
    if len(classes) == 1:
        return classes[0]
    used = _self_names(method)
    scores = []
    for cls in classes:
        own = _self_names(cls) | {n.name for n in cls.body if isinstance(n, _DEFINITION)}
        scores.append((len(used & own), cls))
    scores.sort(key=lambda s: -s[0])
    if not scores or scores[0][0] == 0 or (len(scores) > 1 and scores[1][0] == scores[0][0]):
        return None
    return scores[0][1]


def _merged(region: str, answer: str, instruction: str, repair: bool) -> str | None:
    """The region with the answer's definitions merged in, or None when the answer is a whole
    rewrite (it gives every definition the region had, each with its members) or not a merge case."""
    base = _indent_of(_first_code_line(region) or "")
    old_src, new_src = textwrap.dedent(region), textwrap.dedent(answer)
    try:
        old, new = ast.parse(old_src), ast.parse(new_src)
    except SyntaxError:
        return None
    imports = [n for n in new.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    given = [n for n in new.body if isinstance(n, _DEFINITION)]
    if not given or len(imports) + len(given) != len(new.body):
        return None
    # Stricter than inline_edit._lost (named is enough there): a partial answer leaves out what it did not
    # change as a matter of course, so leaving a definition out means "delete it" only when asked to remove.
    may_drop = set(re.findall(r"[A-Za-z_]\w*", instruction)) if _REMOVES.search(instruction) else set()
    old_lines = old_src.split("\n")
    merge = _Merge(old, old_lines, new_src.split("\n"), may_drop, _gap(old, old_lines, base))
    merge.partial = any(name not in {n.name for n in given} and name not in may_drop for name in merge.top)
    if not all(merge.place(node) for node in given) or not merge.partial or (repair and not merge.replaced):
        return None
    head = [ln for n in imports for ln in merge.new_lines[_span(n)[0] : _span(n)[1]]]
    # Both sides lost the same `base` to the dedent above, string lines too: all get it back.
    merged = "\n".join(base + ln if ln.strip() else ln for ln in [*head, *merge.lines()])
    return merged + answer[len(answer.rstrip("\n")) :]


class _Merge:
    """The region's lines (dedented) and what the answer puts where: spans it replaces, blocks it
    inserts before a line."""

    def __init__(self, old: ast.Module, old_lines: list[str], new_lines: list[str], may_drop: set[str],
                 gap: list[str]) -> None:
        self.old_lines, self.new_lines, self.may_drop, self.gap = old_lines, new_lines, may_drop, gap
        self.top = {n.name: n for n in old.body if isinstance(n, _DEFINITION)}
        self.classes = [n for n in old.body if isinstance(n, ast.ClassDef)]
        self.replace: dict[int, tuple[int, list[str]]] = {}
        self.insert: dict[int, list[list[str]]] = {}
        self.pending: list[list[str]] = []  # new top-level definitions, before the next one replaced
        self.partial = False  # the answer leaves out part of the region
        self.replaced = False  # the answer gives code of the region again (not only new code)

    def place(self, node: ast.stmt) -> bool:
        """Put one definition of the answer; False when there is no telling where it goes."""
        text = _text(self.new_lines, node)
        name = getattr(node, "name", "")
        if name in self.top:
            return self._put_top(self.top[name], node, text)
        owners = [c for c in self.classes if name in _methods(c)]
        if isinstance(node, _FUNCTION) and owners:
            self.replaced = True
        elif not (_is_method(node) and self.classes):
            self.pending.append(_shifted(text, node.col_offset, ""))
            return True
        home = _home(node, owners or self.classes)
        if home is None:
            return False
        self.partial = True
        self._put_method(home, node, text)
        return True

    def _put_top(self, mine: ast.stmt, node: ast.stmt, text: list[str]) -> bool:
        self.replaced = True
        if isinstance(node, ast.ClassDef) and isinstance(mine, ast.ClassDef) and _lazy_class(mine, node, self.may_drop):
            if any(not isinstance(m, _FUNCTION) and not _is_docstring(m) for m in node.body):
                return False  # class attributes given again: not a member-by-member merge
            self.partial = True
            first = _span(mine)[0]
            self.replace[first] = (mine.body[0].lineno - 1, self.new_lines[_span(node)[0] : node.body[0].lineno - 1])
            for member in node.body:
                if isinstance(member, _FUNCTION):
                    self._put_method(mine, member, _text(self.new_lines, member))
        else:
            self._put(mine, _shifted(text, node.col_offset, ""))
        at = _with_comments(self.old_lines, _span(mine)[0])
        self.insert.setdefault(at, []).extend([*block, *self.gap] for block in self.pending)
        self.pending = []
        return True

    def _put(self, mine: ast.stmt, text: list[str]) -> None:
        first, end = _span(mine)
        if text and text[0].lstrip().startswith("#"):
            first = _with_comments(self.old_lines, first)  # the answer wrote the comments above it again
        self.replace[first] = (end, text)

    def _put_method(self, cls: ast.ClassDef, node: ast.stmt, text: list[str]) -> None:
        moved = _shifted(text, node.col_offset, _indent_of(self.old_lines[cls.body[0].lineno - 1]))
        mine = _methods(cls).get(getattr(node, "name", ""))
        if mine is not None:
            self._put(mine, moved)
        else:
            self.insert.setdefault(_span(cls)[1], []).append(["", *moved])

    def lines(self) -> list[str]:
        body = "\n".join(self.old_lines).rstrip("\n").split("\n")
        self.insert.setdefault(len(body), []).extend([*self.gap, *block] for block in self.pending)
        out: list[str] = []
        i = 0
        while i <= len(body):
            for block in self.insert.get(i, []):
                out.extend(block)
            if i == len(body):
                break
            end, text = self.replace.get(i, (i + 1, [body[i]]))
            out.extend(text)
            i = end
        return out


def _methods(cls: ast.ClassDef) -> dict[str, ast.stmt]:
    return {n.name: n for n in cls.body if isinstance(n, _FUNCTION)}


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _lazy_class(mine: ast.ClassDef, given: ast.ClassDef, may_drop: set[str]) -> bool:
    """The answer's class leaves out methods the region's class has (and made of methods only, so its
    methods can be merged one by one)."""
    own = {n.name for n in mine.body if isinstance(n, _FUNCTION)}
    kept = {n.name for n in given.body if isinstance(n, _FUNCTION)}
    return bool(own - kept - may_drop) and all(isinstance(n, _FUNCTION) or isinstance(n, ast.Expr) for n in given.body)
