"""Tool calls read from whatever the model wrote: the endpoint's native calls, or calls printed as text.

Small local models are served by endpoints whose native tool calling often returns nothing: the model
prints the call in its answer instead (Qwen2.5-Coder writes `<tool_call>{...}</tool_call>`, its own
chat format; others a fenced JSON object or `name(arg=...)`). `parse` takes the native calls when there
are any, else the printed ones, repairs JSON a model got almost right (json-repair), resolves names
against the tools offered and gives each argument the type its schema says. Each call says which path
found it ("native", "text", "repaired"): the eval reports accuracy per path (bench/tool_calls)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from json_repair import repair_json

NATIVE, TEXT, REPAIRED = "native", "text", "repaired"
_WIRE_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json|JSON|tool_call|python|py)?\s*\n(.*?)```", re.S)

# Qwen2.5's own words for tools in its chat template: the format the model was trained to answer in.
TEXT_PROTOCOL = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tools}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": "
    "<args-json-object>}}\n</tool_call>"
)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    path: str = NATIVE  # how it was found: NATIVE, TEXT or REPAIRED


@dataclass
class Toolbox:
    """The tools offered (JSON-schema function definitions, OpenAI's shape or bare), by name."""

    functions: list[dict[str, Any]]
    by_name: dict[str, dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {f["name"]: f for f in self.functions}

    def wire(self) -> list[dict[str, Any]]:
        """The `tools` parameter of a Chat Completions request: names made legal there (OpenAI allows
        [a-zA-Z0-9_-]; `math.factorial` goes as `math_factorial`), JSON-schema types ("dict" → "object")."""
        return [{"type": "function", "function": {"name": wire_name(f["name"]), "description": f.get("description", ""),
                                                  "parameters": _schema(f.get("parameters") or {})}}
                for f in self.functions]

    def text_protocol(self) -> str:
        """The system prompt that describes the tools in the model's own text format."""
        lines = (json.dumps(t, ensure_ascii=False) for t in self.wire())
        return TEXT_PROTOCOL.format(tools="\n".join(lines))

    def resolve(self, name: str) -> str | None:
        """The offered tool a called name means: itself, its wire name, or one that differs only in case."""
        if name in self.by_name:
            return name
        for real in self.by_name:
            if wire_name(real) == name or real.lower() == name.lower() or wire_name(real).lower() == name.lower():
                return real
        return None


def wire_name(name: str) -> str:
    return _WIRE_NAME.sub("_", name)[:64]


def _schema(params: dict[str, Any]) -> dict[str, Any]:
    """A parameter schema with JSON Schema's type names (BFCL and others write "dict", "float", "tuple")."""
    names = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}
    out = {k: v for k, v in params.items()}
    if isinstance(out.get("type"), str):
        out["type"] = names.get(out["type"], out["type"])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _schema(v) if isinstance(v, dict) else v for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _schema(out["items"])
    return out


def parse(content: str | None, native: Iterable[Any] | None, tools: Toolbox) -> list[ToolCall]:
    """The calls of one model answer: the native ones (`message.tool_calls`) when there are any, else
    those printed in `content`. Calls to tools that were not offered are left out."""
    found: list[tuple[str, Any, str]] = []
    for call in native or ():
        fn = getattr(call, "function", None) or (call.get("function") if isinstance(call, dict) else None)
        name = getattr(fn, "name", None) or (fn.get("name") if isinstance(fn, dict) else None)
        raw = getattr(fn, "arguments", None) if not isinstance(fn, dict) else fn.get("arguments")
        args, path = _json(raw) if isinstance(raw, str) else (raw, NATIVE)
        found.append((name or "", args, NATIVE if path == TEXT else path))
    if not found and content:
        found = _printed(content)
    calls = []
    for name, args, path in found:
        real = tools.resolve(str(name))
        if real is None or not isinstance(args, dict):
            continue
        calls.append(ToolCall(real, _typed(args, tools.by_name[real].get("parameters") or {}), path))
    return calls


def unoffered(content: str | None, tools: Toolbox) -> list[ToolCall]:
    """Calls to tools that were not offered, such as a read-only agent's model asking to edit a file or
    a small model inventing `rename_function`: the loop answers them with the tools there are rather
    than showing the call to the user as its answer. Only what is unmistakably a call counts: a
    `<tool_call>` block, or a fenced or bare JSON object with a `name` and an object of `arguments`."""
    if not content:
        return []
    if _TAGGED.search(content):
        found = _printed(content)
    else:
        found = [(name, args, path) for name, args, path in _printed(content, python=False)
                 if isinstance(args, dict) and args]
    return [ToolCall(str(name), {}, path) for name, _args, path in found if tools.resolve(str(name)) is None]


def _json(text: str) -> tuple[Any, str]:
    try:
        return json.loads(text), TEXT
    except (json.JSONDecodeError, ValueError):
        pass
    quoted = _TRIPLE_QUOTED.sub(lambda m: json.dumps(m.group(2).removeprefix("\n")), text)  # as `"""\` would
    if quoted != text:
        try:
            return json.loads(quoted), REPAIRED
        except (json.JSONDecodeError, ValueError):
            text = quoted
    fixed = repair_json(text, return_objects=True)
    return (fixed if fixed not in ("", None) else None), REPAIRED


# Code in a JSON argument written as a Python triple-quoted string (the 1.5B's edit_file calls did, 10 of
# 10 in a trial): json_repair reads it as empty strings; its text, taken as written, is what was meant.
_TRIPLE_QUOTED = re.compile(r'("""|\'\'\')(.*?)\1', re.S)


def _printed(content: str, python: bool = True) -> list[tuple[str, Any, str]]:
    """Calls written as text: `<tool_call>` blocks, else fenced or bare JSON, else (with `python`)
    `name(arg=value)`."""
    blocks = _TAGGED.findall(content) or _FENCED.findall(content) or [content.strip()]
    calls: list[tuple[str, Any, str]] = []
    for block in blocks:
        value, path = _json(block)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and "name" not in item and isinstance(item.get("function"), dict):
                item = item["function"]  # the wire shape a model imitates: {"type": "function", "function": {...}}
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                args = item.get("arguments", item.get("parameters", {}))
                if isinstance(args, str):
                    args, path = _json(args)
                calls.append((item["name"], args, path))
        if not calls and python:
            calls.extend(_python_calls(block))
    return calls


def _python_calls(text: str) -> list[tuple[str, Any, str]]:
    """`name(a=1, b="x")` or `[f(a=1), g()]`, keyword arguments with literal values only."""
    src = text.strip().strip("`")
    try:
        tree = ast.parse(src, mode="eval").body
    except SyntaxError:
        return []
    out = []
    for node in tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]:
        if not isinstance(node, ast.Call) or node.args:
            continue
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        except (ValueError, SyntaxError):
            continue
        out.append((ast.unparse(node.func), args, TEXT))
    return out


def _typed(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`args` with each value given the type its schema names when the model wrote it as another one
    ("10" for an integer, "true" for a boolean, a JSON string for an array or object)."""
    props = schema.get("properties") or {}
    return {k: _as(v, (props.get(k) or {}).get("type")) for k, v in args.items()}


def _as(value: Any, kind: Any) -> Any:
    if not isinstance(value, str) or not isinstance(kind, str):
        return value
    text = value.strip()
    try:
        if kind == "integer" and re.fullmatch(r"[-+]?\d+", text):
            return int(text)
        if kind in ("number", "float") and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
            return float(text)
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if kind in ("array", "tuple", "dict", "object") and text[:1] in "[{":
            parsed = json.loads(text)
            return parsed if isinstance(parsed, (list, dict)) else value
    except (ValueError, json.JSONDecodeError):
        return value
    return value
