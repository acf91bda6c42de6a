"""Tool calls are read from whatever the model wrote: native calls, Qwen's `<tool_call>` text, fenced or
bare JSON, `name(arg=...)`; broken JSON repaired; names resolved to the tools offered; argument types
fixed to the schema; calls to tools nobody offered left out."""

from __future__ import annotations

import json
from types import SimpleNamespace

from kestrel.agent.tool_calls import NATIVE, REPAIRED, TEXT, ToolCall, Toolbox, parse, unoffered, wire_name
from kestrel.agent.write_tools import WRITE_TOOLS

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
    wrapped = 'Here is the call:\n```json\n{"function": {"name": "read_file", "arguments": {"path": "e.py"}}}\n```'
    assert parse(wrapped, None, TOOLS) == [ToolCall("read_file", {"path": "e.py"}, TEXT)]
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


def test_a_call_to_a_tool_nobody_offered_is_told_apart_from_an_answer_with_json_or_code():
    invented = '```json\n{"name": "rename_function", "arguments": {"old_name": "f", "new_name": "g"}}\n```\nDone.'
    assert [c.name for c in unoffered(invented, TOOLS)] == ["rename_function"]
    assert [c.name for c in unoffered('<tool_call>{"name": "edit_file", "arguments": {}}</tool_call>', TOOLS)] == ["edit_file"]
    for answer in ['The config is:\n```json\n{"name": "kestrel", "version": "1.0"}\n```',
                   'Call it like this:\n```python\nconnect(host="db", port=5432)\n```',
                   '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```']:  # offered: parse() runs it
        assert unoffered(answer, TOOLS) == []


def test_code_in_a_python_triple_quoted_string_is_read_as_written():
    # The 1.5B writes edit_file's code as a Python triple-quoted string inside its JSON: kept, not emptied.
    tools = Toolbox(WRITE_TOOLS)
    printed = ('```json\n{\n  "name": "edit_file",\n  "arguments": {\n    "path": "a.py",\n    "old_text": """\n'
               'if k == 0:\n    return []\n""",\n    "new_text": \'\'\'if k == 0:\n    return [[]]  # "empty"\n\'\'\'\n  }\n}\n```')
    assert parse(printed, None, tools) == [ToolCall("edit_file", {
        "path": "a.py", "old_text": "if k == 0:\n    return []\n", "new_text": 'if k == 0:\n    return [[]]  # "empty"\n'},
        REPAIRED)]
