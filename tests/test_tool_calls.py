"""Tool calls are read from whatever the model wrote: native calls, Qwen's `<tool_call>` text, fenced or
bare JSON, `name(arg=...)`; broken JSON repaired; names resolved to the tools offered; argument types
fixed to the schema; calls to tools nobody offered left out."""

from __future__ import annotations

import json
from types import SimpleNamespace

from kestrel.agent.tool_calls import NATIVE, REPAIRED, TEXT, ToolCall, Toolbox, parse, wire_name

AREA = {"name": "geometry.area", "description": "Area of a triangle.",
        "parameters": {"type": "dict", "properties": {"base": {"type": "integer"}, "height": {"type": "float"},
                                                      "exact": {"type": "boolean"}, "tags": {"type": "array"}},
                       "required": ["base", "height"]}}
TOOLS = Toolbox([AREA, {"name": "read_file", "parameters": {"type": "dict", "properties": {"path": {"type": "string"}}}}])


def native(name: str, arguments: str) -> SimpleNamespace:
    return SimpleNamespace(function=SimpleNamespace(name=name, arguments=arguments))


def test_native_calls_come_first_with_wire_names_resolved():
    calls = parse("I will call it", [native("geometry_area", '{"base": 10, "height": 5.5}')], TOOLS)
    assert calls == [ToolCall("geometry.area", {"base": 10, "height": 5.5}, NATIVE)]
    assert wire_name("geometry.area") == "geometry_area" and TOOLS.wire()[0]["function"]["parameters"]["type"] == "object"


def test_calls_printed_in_qwens_format_fenced_bare_or_as_python_are_read():
    tagged = 'Sure.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
    assert parse(tagged, None, TOOLS) == [ToolCall("read_file", {"path": "a.py"}, TEXT)]
    fenced = '```json\n[{"name": "geometry.area", "parameters": {"base": 3, "height": 4}}]\n```'
    assert parse(fenced, [], TOOLS) == [ToolCall("geometry.area", {"base": 3, "height": 4}, TEXT)]
    assert parse('{"name": "read_file", "arguments": "{\\"path\\": \\"b.py\\"}"}', None, TOOLS)[0].arguments == {"path": "b.py"}
    assert parse("[geometry.area(base=2, height=1.5)]", None, TOOLS) == [
        ToolCall("geometry.area", {"base": 2, "height": 1.5}, TEXT)]
    two = "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}</tool_call>\n" * 2
    assert len(parse(two, None, TOOLS)) == 2


def test_json_a_model_got_almost_right_is_repaired_and_says_so():
    broken = "<tool_call>\n{'name': 'read_file', 'arguments': {'path': 'c.py',}}\n"  # quotes, comma, no end tag
    assert parse(broken, None, TOOLS) == [ToolCall("read_file", {"path": "c.py"}, REPAIRED)]
    assert parse(None, [native("read_file", '{"path": "d.py"')], TOOLS) == [ToolCall("read_file", {"path": "d.py"}, REPAIRED)]


def test_arguments_get_their_schemas_types_and_unknown_tools_are_left_out():
    call = parse(json.dumps({"name": "geometry.area", "arguments": {
        "base": "10", "height": "2.5", "exact": "true", "tags": "[\"a\"]"}}), None, TOOLS)[0]
    assert call.arguments == {"base": 10, "height": 2.5, "exact": True, "tags": ["a"]}
    assert parse('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>', None, TOOLS) == []
    assert parse("The area is 25.", None, TOOLS) == []
    assert TOOLS.text_protocol().count("<tool_call>") == 2 and '"name": "geometry_area"' in TOOLS.text_protocol()
