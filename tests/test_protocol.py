"""The `kestrel/*` protocol is written down three times: pyserver/kestrel/protocol.py (read here by
introspection), extension/src/protocol.ts (read by a small parser) and docs/protocol.md (its
tables). These tests fail when the three disagree on a method, a type, a field or its presence,
when the server registers or sends a `kestrel/*` method without a type, or when what the server
builds as plain dicts (the turn streamer, the status) no longer has the shape of its type."""

from __future__ import annotations

import ast
import asyncio
import re
import types as pytypes
import typing
from pathlib import Path

import attrs
import pytest

from conftest import kestrel, mock_options, wait_for
from kestrel.core.payload import plain
from kestrel import protocol
from kestrel.chat import engine as chat_engine
from kestrel.providers.base import StreamBrokenError
from kestrel.status import StatusReporter

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pyserver" / "kestrel"
TS_PROTOCOL = ROOT / "extension" / "src" / "protocol.ts"
DOCS = ROOT / "docs" / "protocol.md"

ALWAYS, NULLABLE, OPTIONAL = "always", "always (may be null)", "optional"
REQUEST, TO_SERVER, TO_CLIENT = "request", "notification, client → server", "notification, server → client"


# -- the Python side, by introspection -----------------------------------------------------
def type_name(hint: object) -> str:
    """A result type as TypeScript and the docs spell it: `boolean`, `NextEditResult | null`."""
    if hint is None or hint is type(None):
        return "null"
    if hint is bool:
        return "boolean"
    if isinstance(hint, pytypes.UnionType) or typing.get_origin(hint) is typing.Union:
        return " | ".join(type_name(arg) for arg in typing.get_args(hint))
    return getattr(hint, "__name__", str(hint))


def python_methods() -> dict[str, tuple[str, str, str | None]]:
    """method -> (kind, params type, result type or None for a notification)."""
    methods = {r.method: (REQUEST, r.params.__name__, type_name(r.result)) for r in protocol.REQUESTS}
    for n in protocol.NOTIFICATIONS:
        methods[n.method] = (TO_SERVER if n.to_server else TO_CLIENT, n.params.__name__, None)
    return methods


def python_types() -> dict[str, dict[str, str]]:
    """Every attrs class the method table reaches: name -> {wire field name: presence}."""
    found: dict[str, dict[str, str]] = {}
    pending = [r.params for r in protocol.REQUESTS] + [r.result for r in protocol.REQUESTS]
    pending += [n.params for n in protocol.NOTIFICATIONS]
    while pending:
        hint = pending.pop()
        pending.extend(typing.get_args(hint))
        if not attrs.has(hint) or hint.__name__ in found:
            continue
        hints = typing.get_type_hints(hint)
        found[hint.__name__] = {wire_name(f.name): python_presence(f, hints[f.name]) for f in attrs.fields(hint)}
        pending.extend(hints.values())
    return found


def wire_name(name: str) -> str:  # as lsprotocol's converter renames a field
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


def python_presence(field: attrs.Attribute, hint: object) -> str:
    if field.default is not attrs.NOTHING:
        return OPTIONAL
    return NULLABLE if type(None) in typing.get_args(hint) else ALWAYS


# -- the TypeScript side, by a small parser ------------------------------------------------
_INTERFACE = re.compile(r"^export interface (\w+)(?: extends ([\w, ]+))? \{(.*?)\}$", re.M | re.S)
_FIELD = re.compile(r"^\s*(\w+)(\?)?: (.+);$")
_REQUEST_ENTRY = re.compile(r'^\s*"(kestrel/\w+)": \{ params: (\w+); result: ([^}]+?) \};$', re.M)
_NOTIFICATION_ENTRY = re.compile(r'^\s*"(kestrel/\w+)": (\w+);$', re.M)
TS_TABLES = {"KestrelRequests": REQUEST, "ClientNotifications": TO_SERVER, "ServerNotifications": TO_CLIENT}


def ts_interfaces() -> dict[str, tuple[list[str], str]]:
    """name -> (the interfaces it extends, its body) for every `export interface` without type parameters."""
    return {m[1]: ([p.strip() for p in (m[2] or "").split(",") if p.strip()], m[3])
            for m in _INTERFACE.finditer(TS_PROTOCOL.read_text(encoding="utf-8"))}


def ts_types() -> dict[str, dict[str, str]]:
    interfaces = ts_interfaces()

    def fields(name: str) -> dict[str, str]:
        parents, body = interfaces[name]
        out = {k: v for parent in parents for k, v in fields(parent).items()}
        for line in body.splitlines():
            m = _FIELD.match(line)
            if m:
                nullable = "null" in [part.strip() for part in m[3].split("|")]
                out[m[1]] = OPTIONAL if m[2] else NULLABLE if nullable else ALWAYS
        return out

    return {name: fields(name) for name in interfaces if name not in TS_TABLES}


def ts_methods() -> dict[str, tuple[str, str, str | None]]:
    interfaces = ts_interfaces()
    methods: dict[str, tuple[str, str, str | None]] = {}
    for table, kind in TS_TABLES.items():
        body = interfaces[table][1]
        if kind == REQUEST:
            methods.update({m[1]: (kind, m[2], m[3].strip()) for m in _REQUEST_ENTRY.finditer(body)})
        else:
            methods.update({m[1]: (kind, m[2], None) for m in _NOTIFICATION_ENTRY.finditer(body)})
    return methods


# -- the docs, by their tables -------------------------------------------------------------
def _cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [cell.strip().replace("\\|", "|").strip("`") for cell in cells]


def docs_sections() -> dict[str, str]:
    """`## Heading` -> its text."""
    parts = re.split(r"^## (.+)$", DOCS.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def docs_methods() -> dict[str, tuple[str, str, str | None]]:
    rows = [_cells(line) for line in docs_sections()["Methods"].splitlines() if line.startswith("| `kestrel/")]
    return {method: (kind, params, None if result == "—" else result) for method, kind, params, result, _ in rows}


def docs_types() -> dict[str, dict[str, str]]:
    found = {}
    for heading, body in re.findall(r"^### `(\w+)`$(.*?)(?=^### |\Z)", docs_sections()["Types"], re.M | re.S):
        rows = [_cells(line) for line in body.splitlines() if line.startswith("| `")]
        found[heading] = {field: presence for field, _type, presence, _meaning in rows}
    return found


# -- the three agree ---------------------------------------------------------------------------
@pytest.mark.parametrize("other, where", [(ts_methods, "extension/src/protocol.ts"),
                                          (docs_methods, "docs/protocol.md")])
def test_the_methods_agree(other, where):
    python, theirs = python_methods(), other()
    assert python.keys() == theirs.keys(), f"{where}: methods differ from protocol.py: " \
        f"missing {sorted(python.keys() - theirs.keys())}, extra {sorted(theirs.keys() - python.keys())}"
    for method, (kind, params, result) in python.items():
        assert theirs[method] == (kind, params, result), f"{where}: {method} is {theirs[method]}, " \
            f"protocol.py says {(kind, params, result)} (kind, params, result)"


@pytest.mark.parametrize("other, where", [(ts_types, "extension/src/protocol.ts"), (docs_types, "docs/protocol.md")])
def test_the_types_agree(other, where):
    python, theirs = python_types(), other()
    assert python.keys() == theirs.keys(), f"{where}: types differ from protocol.py: " \
        f"missing {sorted(python.keys() - theirs.keys())}, extra {sorted(theirs.keys() - python.keys())}"
    for name, fields in python.items():
        assert theirs[name] == fields, f"{where}: {name} has {theirs[name]}, protocol.py has {fields}"


def test_the_parsers_read_something():
    """Guards the guards: an empty parse would make the comparisons above pass vacuously."""
    assert len(python_methods()) >= 14 and len(python_types()) >= 20
    steered = {"at": ALWAYS, "text": ALWAYS, "mode": ALWAYS, "commitMs": ALWAYS, "id": ALWAYS}  # with `extends`
    assert ts_types()["ChatSteeredParams"] == steered
    assert ts_types()["ChatResult"]["ttftMs"] == NULLABLE and ts_types()["NoParams"] == {}
    assert docs_types()["SetApiKeyParams"]["apiKey"] == OPTIONAL
    assert docs_methods()["kestrel/nextEdit"] == (REQUEST, "NextEditParams", "NextEditResult | null")


def test_an_optional_field_defaults_to_none():
    """The converter leaves out a field equal to its default: `stopped: bool = False` would never
    send `false`, and a client reading it would see it missing."""
    for name in python_types():
        cls = getattr(protocol, name)
        for field in attrs.fields(cls):
            assert field.default in (attrs.NOTHING, None), f"{name}.{field.name} defaults to {field.default!r}"


# -- nothing kestrel/* without a type ----------------------------------------------------------
def test_every_registered_kestrel_method_has_a_type():
    from kestrel.server import create_server

    registered = {name for name in create_server().protocol.fm.features if name.startswith("kestrel/")}
    typed = {r.method for r in protocol.REQUESTS} | {n.method for n in protocol.NOTIFICATIONS if n.to_server}
    assert registered == typed


def test_every_kestrel_method_named_in_the_server_has_a_type():
    """Every `"kestrel/..."` string in pyserver/kestrel (a notification sent, a delta method passed
    on) is in the method table."""
    known = {m.method for m in (*protocol.REQUESTS, *protocol.NOTIFICATIONS)}
    named = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_str = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_str and re.fullmatch(r"kestrel/\w+", node.value):
                named.setdefault(node.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    assert "kestrel/chatResumed" in named and "kestrel/status" in named  # the scan sees the senders
    assert not {m: w for m, w in named.items() if m not in known}, "kestrel/* methods without a type in protocol.py"


# -- what the server builds as dicts has the shape of its type ---------------------------------
def exactly(data: object, cls: object) -> object:
    """`data` read as `cls` and written back is `data` again: no field missing, none extra."""
    assert protocol.to_wire(protocol.from_wire(data, cls)) == data, f"{data} is not a {type_name(cls)}"
    return data


class _Provider:
    """Streams words; the first stream breaks after two of them (to see kestrel/chatResumed)."""

    native_steering = False

    def __init__(self) -> None:
        self.streams = 0

    def chat(self, messages, stats, **options):
        self.streams += 1
        broken = self.streams == 1

        async def stream():
            for n in range(40):
                if broken and n == 2:
                    raise StreamBrokenError("connection dropped")
                await asyncio.sleep(0.001)
                yield f"w{n} "

        return stream()


async def test_the_turn_streamer_sends_and_answers_protocol_shapes(monkeypatch):
    monkeypatch.setattr(chat_engine, "RESUME_BACKOFF_S", 0, raising=False)
    sent: list[tuple[str, object]] = []
    turns = chat_engine.ChatEngine(lambda method, params: sent.append((method, params)))
    pending = asyncio.ensure_future(turns.turn(_Provider(), "t1", [{"role": "user", "content": "hi"}]))
    await wait_for(lambda: sum(m == "kestrel/chatDelta" for m, _ in sent) >= 3, what="deltas after the resume")
    exactly(await turns.steer("t1", "shorter"), protocol.SteerResult)
    exactly(await pending, protocol.ChatResult)
    notifications = {n.method: n.params for n in protocol.NOTIFICATIONS}
    for method, params in sent:
        exactly(params, notifications[method])
    assert {"kestrel/chatDelta", "kestrel/chatResumed", "kestrel/chatSteered"} <= {m for m, _ in sent}
    exactly(await turns.steer("t1", "too late"), protocol.SteerResult)


def test_the_status_snapshot_is_a_status():
    status = StatusReporter(lambda method, params: None, lambda message, kind: None)
    exactly(status.snapshot(), protocol.Status)
    status.busy, status.state, status.last_ttft_ms = 1, "ready", 12.34
    exactly(status.snapshot(), protocol.Status)


# -- malformed params get error answers ----------------------------------------------------------
def test_params_that_do_not_fit_are_named_with_their_wire_names():
    with pytest.raises(protocol.MalformedParams, match=r"required field missing @ \$\.uri"):
        protocol.EDIT.parse({"instruction": "x"})
    with pytest.raises(protocol.MalformedParams, match=r"\$\.range\.start\.line"):
        protocol.EDIT.parse({"uri": "u", "instruction": "x", "range": {"start": {"line": "a", "character": 0}}})
    with pytest.raises(protocol.MalformedParams, match="expected an object"):
        protocol.CHAT.parse([1, 2])
    assert protocol.GET_STATUS.parse([1, 2]) == protocol.NoParams()  # no params: anything goes
    assert protocol.CHAT.parse(None) == protocol.ChatParams()


def test_set_api_key_reads_what_older_clients_sent():
    assert protocol.SET_API_KEY.parse("sk-bare").api_key == "sk-bare"
    legacy = protocol.SET_API_KEY.parse({"api_key": "k", "base_url": "http://x/v1", "provider": "chat"})
    assert protocol.to_wire(legacy) == {"apiKey": "k", "provider": "chat", "baseUrl": "http://x/v1"}
    assert protocol.to_wire(protocol.SET_API_KEY.parse({"apiKey": None})) == {}


async def test_malformed_requests_get_the_methods_error_answer(mock):
    async with kestrel(mock_options(mock)) as client:
        send = client.protocol.send_request_async
        edit = await send("kestrel/edit", {"id": "e1", "instruction": "x"})
        assert edit.id == "e1" and "malformed kestrel/edit params" in edit.error and "$.uri" in edit.error
        chat = await send("kestrel/chat", {"id": "c1", "messages": "not a list"})
        assert chat.id == "c1" and "malformed kestrel/chat params" in chat.error and chat.text == ""
        steer = await send("kestrel/steer", {"text": 5})
        assert steer.accepted is False and "$.id" in steer.error
        assert await send("kestrel/stopChat", {}) is False
        assert await send("kestrel/nextEdit", {"position": {"line": -1, "character": 0}}) is None
        assert (await send("kestrel/chat", {"prompt": "still serving?"})).text
        exactly(plain(await send("kestrel/getStatus", None)), protocol.Status)
        exactly(plain(await send("kestrel/diagnostics", {})), protocol.DiagnosticsResult)
