"""The custom `kestrel/*` protocol: one params and one result type per request, one params type
per notification, and the table of methods (like rust-analyzer's `lsp/ext.rs`). Fields are
snake_case here and camelCase on the wire (lsprotocol's converter renames them). A field with a
default is optional and its default is None: the converter leaves out a field equal to its
default, so a non-None default would vanish from the wire. extension/src/protocol.ts and
docs/protocol.md describe the same types; tests/test_protocol.py fails when the three disagree."""

import re
from typing import Any, Callable

import attrs
import cattrs
from lsprotocol import types

from . import lsp_converter

Position = types.Position  # {line, character}: LSP's, in the position encoding the client negotiated
Range = types.Range
TextEdit = types.TextEdit  # {range, newText}

# A chat message's content: text, or OpenAI's multi-part form (a list of parts such as {type, text}).
MessageContent = str | list[dict[str, Any]]


# -- shared ------------------------------------------------------------------------------
@attrs.define(kw_only=True)
class ChatMessage:
    role: str  # "system", "user" or "assistant"
    content: MessageContent


@attrs.define(kw_only=True)
class SteerMark:
    """Where a steer landed in a streamed answer."""

    at: int  # characters of the answer before the steer
    text: str  # the steering message
    mode: str  # "native" (the provider redirected its stream) or "emulated" (stopped and restarted)
    commit_ms: float  # from the steer request until the steer took effect


@attrs.define(kw_only=True)
class SourceRef:
    """A span of a workspace file: what a chat prompt was given, or what an answer cited."""

    uri: str
    path: str  # relative to its workspace folder, as the model was shown it
    range: Range  # whole lines: start at character 0, end at the start of the line after the span
    name: str | None = None  # the definition the span holds, when it holds one


@attrs.define(kw_only=True)
class NoParams:
    """A request without params: anything sent (`{}`, null) is ignored."""


# -- requests ----------------------------------------------------------------------------
@attrs.define(kw_only=True)
class ChatParams:
    id: str | None = None  # the turn's id for steer/stop and notifications; default: generated
    messages: list[ChatMessage] | None = None  # the conversation; default: one user message, `prompt`
    prompt: str | None = None
    # Search the workspace for code the question needs: True always, False never; None (default) when
    # the question names code (a backticked or code-shaped identifier) that the conversation does not hold.
    codebase: bool | None = None


@attrs.define(kw_only=True)
class ChatResult:
    id: str
    text: str  # the whole answer (also what arrived before an error or a stop)
    ttft_ms: float | None  # time to the first token; None when none arrived
    steers: list[SteerMark]
    last_segment: str  # the answer after the last emulated steer (an edit's rewrite)
    error: str | None = None
    stopped: bool | None = None  # True when kestrel/stopChat ended it
    sources: list[SourceRef] | None = None  # the workspace code put in the prompt (also sent as kestrel/chatSources)
    citations: list[SourceRef] | None = None  # what the answer cited (`[2]`: the 2nd source; `[path:L-L]`), in order
    invented_citations: list[str] | None = None  # cited paths no workspace file has, numbers past the sources (`[9]`)
    invented_paths: list[str] | None = None  # paths written as inline code that name no workspace file (marked)
    trimmed: str | None = None  # what was left out of the prompt to fit the model's context window, for the user
    hit_token_limit: bool | None = None  # True: the answer stopped at its token limit (it may end mid-sentence)

    @classmethod
    def refused(cls, turn_id: str, error: str) -> "ChatResult":
        """A turn that never started: nothing was sent to a model."""
        return cls(id=turn_id, text="", ttft_ms=None, steers=[], last_segment="", error=error)


@attrs.define(kw_only=True)
class SteerParams:
    id: str  # the running chat turn or inline edit
    text: str


@attrs.define(kw_only=True)
class SteerResult:
    accepted: bool
    mode: str | None = None  # "native" or "emulated" when accepted; "queued": an agent run between steps takes it next
    error: str | None = None  # why not, when not accepted


@attrs.define(kw_only=True)
class StopChatParams:
    id: str


@attrs.define(kw_only=True)
class AgentParams:
    id: str | None = None  # the run's id for steer/stop and notifications; default: generated
    messages: list[ChatMessage] | None = None  # the conversation; default: one user message, `prompt`
    prompt: str | None = None
    max_steps: int | None = None  # tool steps (model calls) before it must answer (default 6, at most 20)
    # Offer the write tools (edit_file, write_file, replace_symbol, rename_symbol): each change is proposed as a workspace/applyEdit whose
    # edits need the user's confirmation. Only honoured for a client with change annotation support;
    # VS Code sends it in a trusted workspace only.
    allow_writes: bool | None = None
    # Offer run_command: each command is put to the user (window/showMessageRequest: "Run" / "Don't run")
    # and runs in the workspace folder only on "Run". VS Code sends it in a trusted workspace only.
    allow_commands: bool | None = None
    # With allow_commands: commands that run without asking (the user's own allow-list; VS Code: the
    # user settings' kestrel.agent.allowedCommands, never a workspace's). An entry's words must begin the
    # command, which must be one simple command (no shell operators, redirections or substitutions).
    allowed_commands: list[str] | None = None


@attrs.define(kw_only=True)
class AgentToolCall:
    """A tool the agent called, and what came of it."""

    name: str
    arguments: dict[str, Any]
    found: str  # how the call was read: "native", "text" (printed in the answer) or "repaired" (its JSON mended)
    ok: bool  # False: refused or failed (the result says why)
    result: str  # what the model was given (cut to 400 characters here)


@attrs.define(kw_only=True)
class AgentStepParams:
    id: str  # the agent run
    step: int  # 1-based: the model call whose tools these are
    calls: list[AgentToolCall]


@attrs.define(kw_only=True)
class AgentReviewParams:
    id: str  # the agent run
    files: list[str]  # the workspace files whose proposed changes wait for the user's review, as the model named them
    command: str | None = None  # or: the command whose approval the run waits for (files is then empty)
    running: bool | None = None  # with command: it was approved (or allowed) and runs now; the step ends when it does


@attrs.define(kw_only=True)
class AgentResult:
    id: str
    text: str  # the final answer (with a stop, an error or the step limit: the last step's text)
    steps: list[AgentStepParams]  # the tools each step called, in order
    error: str | None = None
    stopped: bool | None = None  # True when kestrel/stopChat ended it
    step_limit: bool | None = None  # True when it reached max_steps (then answered without tools): a new run goes on
    trimmed: str | None = None  # how many tool results were shortened to fit the model's context window, for the user

    @classmethod
    def refused(cls, run_id: str, error: str) -> "AgentResult":
        return cls(id=run_id, text="", steps=[], error=error)


@attrs.define(kw_only=True)
class EditRange:
    start: Position
    end: Position | None = None  # default: `start` (no selection: the block around `start`)


@attrs.define(kw_only=True)
class EditParams:
    uri: str
    instruction: str
    id: str | None = None  # default: generated
    range: EditRange | None = None  # default: the start of the document


@attrs.define(kw_only=True)
class EditResult:
    """Either `error`, or the edit: minimal `edits` against document `version`."""

    id: str
    error: str | None = None
    version: int | None = None
    new_text: str | None = None  # the region's new text
    edits: list[TextEdit] | None = None
    steers: list[SteerMark] | None = None
    stopped: bool | None = None
    made_by: str | None = None  # "model:line-scan" (one line re-read) or "model:rewrite"


@attrs.define(kw_only=True)
class NextEditParams:
    uri: str
    position: Position | None = None  # the cursor; default: the first line


@attrs.define(kw_only=True)
class NextEditResult:
    uri: str
    version: int
    edits: list[TextEdit]


@attrs.define(kw_only=True)
class Status:
    """The status bar's data: `kestrel/status` notifications and the `kestrel/getStatus` result."""

    state: str  # "starting", "ready", "busy", "error", "offline" or "unconfigured"
    busy: bool
    provider: str
    model: str
    connection: str
    ttft_ms: float | None
    tokens_per_sec: float | None
    message: str | None  # why error/offline/unconfigured; while ready, which API key is missing
    effort_supported: bool
    effort_note: str | None


@attrs.define(kw_only=True)
class ContextDefinition:
    path: str  # the defining file, relative to its workspace folder
    name: str


@attrs.define(kw_only=True)
class CompletionContext:
    """What the last completion prompt was given from other files (repository context)."""

    path: str | None  # the file completed; None before any completion had repository context
    definitions: list[ContextDefinition]  # in the order they were sent
    chars: int  # their size in the prompt
    resolved: int  # names the file imports from the workspace (what could have been sent)
    enabled: bool  # kestrel.completion.repositoryContext


@attrs.define(kw_only=True)
class DiagnosticsResult:
    """Resource counts for soak tests and bug reports (no document text, no secrets)."""

    tasks: int
    open_files: int
    rss_mb: float
    documents: int
    pending_requests: int
    live_generations: int
    generations_started: int
    last_generation_ttft_ms: float | None = None  # the endpoint's first-token time of the last generation started
    prepared_generations: int  # what followed a shown suggestion, asked for before it was accepted
    prepared_used: int  # of those, taken by a request (the rest were not needed)
    read_aheads: int  # prompts a local model read where the cursor rested, before a keystroke
    read_aheads_used: int  # of those, begun by the next suggestion's prompt


# -- notifications -----------------------------------------------------------------------
@attrs.define(kw_only=True)
class CursorParams:
    """Where the cursor came to rest (the client sends it once it has stayed put, not per keystroke)."""

    uri: str
    position: Position


@attrs.define(kw_only=True)
class SetApiKeyParams:
    api_key: str | None = None  # null: forget the key(s) given for the endpoint named (or all)
    provider: str | None = None  # the endpoint the key is bound to (see keys.py)
    base_url: str | None = None


@attrs.define(kw_only=True)
class StreamDelta:
    id: str  # the chat turn or inline edit
    delta: str  # the text that arrived since the last delta


@attrs.define(kw_only=True)
class EditStartedParams:
    id: str
    edits: list[TextEdit]  # one edit: the region being rewritten, with its current text


@attrs.define(kw_only=True)
class ChatResumedParams:
    id: str
    at: int  # characters of the answer kept from before the dropped connection
    reason: str


@attrs.define(kw_only=True)
class ChatSteeredParams(SteerMark):
    id: str


@attrs.define(kw_only=True)
class ChatSourcesParams:
    id: str  # the chat turn
    sources: list[SourceRef]  # the workspace code the prompt holds, best first
    search_ms: float  # from the request to the sources found


# -- the method table --------------------------------------------------------------------
class MalformedParams(ValueError):
    """A message's params do not fit its type; the message names the fields."""


@attrs.frozen
class Request:
    """A client → server request. `malformed(request id, reason)` is the answer to params that do
    not fit `params`: the method's own error result (or null), never a JSON-RPC crash."""

    method: str
    params: type
    result: Any
    malformed: Callable[[str, str], Any] = lambda _id, why: None

    def parse(self, data: Any) -> Any:
        return _parse(self.method, self.params, data)


@attrs.frozen
class Notification:
    method: str
    params: type
    to_server: bool = False  # sent by the client (else by the server)
    legacy: Callable[[Any], Any] = lambda data: data  # older clients' forms, made current

    def parse(self, data: Any) -> Any:
        return _parse(self.method, self.params, self.legacy(data))


def _set_api_key_legacy(data: Any) -> Any:
    """Older clients sent the bare key, or snake_case names (core.model_host reads them too)."""
    if data is not None and not isinstance(data, dict):
        return {"apiKey": data}
    data = dict(data or {})
    for old, new in (("api_key", "apiKey"), ("base_url", "baseUrl")):
        value = data.pop(old, None)
        if value and not data.get(new):
            data[new] = value
    return data


CHAT = Request("kestrel/chat", ChatParams, ChatResult, ChatResult.refused)
STEER = Request("kestrel/steer", SteerParams, SteerResult, lambda _id, why: SteerResult(accepted=False, error=why))
STOP_CHAT = Request("kestrel/stopChat", StopChatParams, bool, lambda _id, why: False)
EDIT = Request("kestrel/edit", EditParams, EditResult, lambda edit_id, why: EditResult(id=edit_id, error=why))
NEXT_EDIT = Request("kestrel/nextEdit", NextEditParams, NextEditResult | None)
GET_STATUS = Request("kestrel/getStatus", NoParams, Status)
DIAGNOSTICS = Request("kestrel/diagnostics", NoParams, DiagnosticsResult)
COMPLETION_CONTEXT = Request("kestrel/completionContext", NoParams, CompletionContext)

SET_API_KEY = Notification("kestrel/setApiKey", SetApiKeyParams, to_server=True, legacy=_set_api_key_legacy)
CURSOR = Notification("kestrel/cursor", CursorParams, to_server=True)
STATUS = Notification("kestrel/status", Status)
CHAT_DELTA = Notification("kestrel/chatDelta", StreamDelta)
CHAT_STEERED = Notification("kestrel/chatSteered", ChatSteeredParams)
CHAT_RESUMED = Notification("kestrel/chatResumed", ChatResumedParams)
EDIT_STARTED = Notification("kestrel/editStarted", EditStartedParams)
EDIT_DELTA = Notification("kestrel/editDelta", StreamDelta)
CHAT_SOURCES = Notification("kestrel/chatSources", ChatSourcesParams)
AGENT = Request("kestrel/agent", AgentParams, AgentResult, AgentResult.refused)
AGENT_STEP = Notification("kestrel/agentStep", AgentStepParams)
AGENT_REVIEW = Notification("kestrel/agentReview", AgentReviewParams)

REQUESTS = (CHAT, STEER, STOP_CHAT, EDIT, NEXT_EDIT, GET_STATUS, DIAGNOSTICS, COMPLETION_CONTEXT, AGENT)
NOTIFICATIONS = (SET_API_KEY, CURSOR, STATUS, CHAT_DELTA, CHAT_STEERED, CHAT_RESUMED, EDIT_STARTED, EDIT_DELTA,
                 CHAT_SOURCES, AGENT_STEP, AGENT_REVIEW)


# -- converting --------------------------------------------------------------------------
MAX_PROBLEMS = 3  # named in a malformed-params answer (a string sent for a list fails per character)


def _structure_content(value: Any, _type: Any) -> MessageContent:
    if isinstance(value, (str, list)):
        return value
    raise ValueError("expected a string or a list of content parts")


# The server's own converter (pygls' default, with its JSON-RPC hooks), shared by the server and this
# module (server.py passes it to pygls): one is built per start, without lsprotocol's eager
# forward-reference pass (lsp_converter.py).
_converter = lsp_converter.build()
_converter.register_structure_hook_func(lambda t: t == MessageContent, _structure_content)


def converter() -> Any:
    """The converter every `kestrel/*` and LSP message goes through (the server's converter_factory)."""
    return _converter


def to_wire(value: Any) -> Any:
    """A protocol value as JSON data (camelCase names, optional fields left out when None)."""
    return _converter.unstructure(value)


def conversation(messages: list[ChatMessage] | None, prompt: str | None) -> list[dict[str, Any]]:
    """A chat or agent request's conversation as plain messages: its `messages`, or one user `prompt`."""
    return [to_wire(message) for message in messages] if messages else [{"role": "user", "content": prompt or ""}]


def from_wire(data: Any, cls: Any) -> Any:
    """JSON data the server built itself (an engine's dict) as protocol type `cls`."""
    return _converter.structure(data, cls)


def _parse(method: str, cls: type, data: Any) -> Any:
    """A client's params (plain JSON data) as `cls`; MalformedParams says what does not fit."""
    if cls is NoParams:
        return NoParams()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MalformedParams(f"malformed {method} params: expected an object")
    try:
        return _converter.structure(data, cls)
    except Exception as exc:  # whatever a client sends, it gets an error answer, never a crash
        raise MalformedParams(f"malformed {method} params: {_describe(exc)}") from None


def _describe(exc: Exception) -> str:
    if not isinstance(exc, cattrs.BaseValidationError):
        return str(exc) or type(exc).__name__
    # cattrs names the Python attributes ("@ $.ttft_ms"): name them as the client wrote them.
    problems = [re.sub(r"(?<=@ )\S+", lambda path: _camel(path.group()), line) for line in cattrs.transform_error(exc)]
    return "; ".join(problems[:MAX_PROBLEMS]) + ("; ..." if len(problems) > MAX_PROBLEMS else "")


def _camel(path: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), path)
