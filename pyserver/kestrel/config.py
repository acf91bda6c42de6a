"""Typed settings, in one place.

Precedence (lowest first): built-in defaults < environment < `initializationOptions`
< `workspace/didChangeConfiguration`; environment values alone are enough to run
(`KESTREL_PROVIDER=groq GROQ_API_KEY=... kestrel-lsp`). API keys do not follow that precedence:
each is bound to the endpoint it was given for (`keys.py`), and the settings get the one bound to
where they send requests, or none.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping

from . import keys

log = logging.getLogger(__name__)

ProviderKind = Literal["responses-ws", "responses", "chat", "fim"]
Effort = Literal["low", "medium", "high", "xhigh"]

PROVIDER_KINDS: tuple[str, ...] = ("responses-ws", "responses", "chat", "fim")
EFFORTS: tuple[str, ...] = ("low", "medium", "high", "xhigh")


@dataclass(frozen=True)
class Preset:
    """The usual way to reach a hosted or local model family."""

    kind: ProviderKind
    base_url: str
    model: str
    api_key_env: str | None  # where its key usually lives; None = no key needed
    http2: bool  # whether the endpoint speaks HTTP/2 (TLS + ALPN)


PRESETS: dict[str, Preset] = {
    "openai": Preset("responses-ws", "https://api.openai.com/v1", "gpt-5.1-codex-mini", "OPENAI_API_KEY", True),
    "cerebras": Preset("chat", "https://api.cerebras.ai/v1", "qwen-3-coder-480b", "CEREBRAS_API_KEY", True),
    "groq": Preset("chat", "https://api.groq.com/openai/v1", "openai/gpt-oss-120b", "GROQ_API_KEY", True),
    "ollama": Preset("fim", "http://127.0.0.1:11434/v1", "qwen2.5-coder:1.5b", None, False),
    "vllm": Preset("fim", "http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-Coder-7B", None, False),
    "llamacpp": Preset("fim", "http://127.0.0.1:8080/v1", "qwen2.5-coder", None, False),
}


class SettingsError(ValueError):
    """A setting has a value Kestrel cannot use; the message says which and why."""


@dataclass(frozen=True)
class CompletionSettings:
    enabled: bool = True
    max_lines: int = 12  # multi-line completions are cut after this many lines
    max_tokens: int = 160  # upstream max output tokens per inline completion
    prefix_tokens: int = 1500  # budget for text before the cursor
    suffix_tokens: int = 400  # budget for text after the cursor
    context_tokens: int = 600  # budget for context from other files (imported definitions, then open tabs)
    # The definitions of names the file imports from the workspace, found without opening anything.
    repository_context: bool = True
    disabled_languages: tuple[str, ...] = ()
    exclude_globs: tuple[str, ...] = ()
    # How long an abandoned-but-still-matching generation may keep streaming, waiting
    # for the next request to adopt it, before it is cancelled upstream.
    adopt_grace_ms: int = 1000
    # Once a suggestion's stream has ended, ask for what follows it while the user reads it, so the
    # next one is there when they accept (one more request per suggestion; unused ones are counted).
    prepare_next: bool = True
    # Where the cursor comes to rest, a model on this machine reads the prompt of a suggestion there
    # before the first keystroke (its first suggestion then waits for the cursor's line and what
    # follows, not the whole prompt: completion/read_ahead.py). Remote models are never asked.
    read_ahead: bool = True
    # A new suggestion asked for as the user types (on a line and past Enter), with a fill-in-the-middle endpoint: the
    # prompt the model last read is sent again and the characters typed since as the start of its answer,
    # so the model reads those few tokens, not the whole suffix behind the changed prefix again
    # (completion/engine.py, _continued). Off: every prompt ends at the cursor.
    continue_typed: bool = True
    # Keep what was learned about each endpoint's model (how it ends blocks, how fast it reads a prompt)
    # in the user's private cache for the next start (completion/remembered.py); off: every start learns again.
    remember_endpoints: bool = True
    # The time a prompt read from scratch may take before the first token (ms; 0: no limit, the default:
    # on a CPU the cut costs the 0.5B more than it saves, see docs/design-notes.md). Kestrel learns the
    # endpoint's pace from its streams (while a budget is set) and cuts the windows above to fit
    # (completion/pace.py).
    latency_budget_ms: int = 0
    # A one-line suggestion whose tokens the model itself gives a joint probability below this is not
    # shown (0: off). Asked of `fim` endpoints only (their log probabilities come with the stream).
    # Why 5 %: docs/design-notes.md#pyserverkestrelcompletionconfidencepy
    min_line_probability: float = 0.05


@dataclass(frozen=True)
class ChatSettings:
    # Search the workspace for the code a question names that the conversation does not hold (or
    # when it says `#codebase`), put it in the prompt and list it as the answer's sources.
    codebase: bool = True
    codebase_tokens: int = 6000  # budget for the code found, on a remote model
    max_tokens: int = 0  # an answer's output cap (0: the model's own); a local server may not stop when asked to
    # The model's context window in tokens, when it is small (a server of your own: Ollama's and llama.cpp's
    # defaults are 2,048-4,096); a conversation is then fitted into it (chat/fit.py). 0: not known (remote models'
    # are far larger); the embedded model's is `local.context`.
    context_tokens: int = 0


@dataclass(frozen=True)
class LocalSettings:
    """The embedded local model (used when no provider is configured)."""

    enabled: bool = True
    model: str = "qwen2.5-coder-0.5b"  # or "qwen2.5-coder-1.5b": better, about half the speed
    model_path: str | None = None  # a GGUF file: overrides `model`
    context: int = 2048  # llama.cpp n_ctx
    threads: int | None = None
    # CPU-sized prompt windows: the first token must arrive fast on 2 cores.
    prefix_tokens: int = 384
    suffix_tokens: int = 96
    max_tokens: int = 48
    chat_codebase_tokens: int = 1200  # the code a chat question is given (its prompt is prefilled on a CPU)
    chat_max_tokens: int = 1024  # an answer on a CPU: ~30 s at most, and a runaway answer cannot hold the model
    # Drafts looked up in the prompt for answers (edits, chat), checked several tokens a pass: rewrites 0.58x as
    # long, the edit eval's instructed edits 0.65x with as many fixed (design notes, lookup_draft.py).
    speculative: bool = True


@dataclass(frozen=True)
class Settings:
    provider: ProviderKind | None = None  # None: nothing configured
    preset: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never printed
    effort: Effort = "low"
    fim_template: str = "auto"  # auto | qwen | starcoder | deepseek | codellama
    http2: Literal["auto", "on", "off"] = "auto"  # on = also h2c (prior knowledge) on http://
    request_timeout_s: float = 30.0
    max_retries: int = 2
    ws_rotate_s: float = 55 * 60  # Responses WS sockets live 60 min: rotate before
    next_edit: bool = False  # next edit suggestions (off by default)
    predicted_outputs: bool = False  # send `prediction` to non-OpenAI Chat Completions servers too
    ca_bundle: str | None = None  # extra CA certificates (PEM) for HTTPS and WSS; SSL_CERT_FILE works too
    completion: CompletionSettings = field(default_factory=CompletionSettings)
    local: LocalSettings = field(default_factory=LocalSettings)
    chat: ChatSettings = field(default_factory=ChatSettings)

    @property
    def configured(self) -> bool:
        return self.provider is not None and bool(self.model)

    def describe(self) -> str:
        """Human summary without the key."""
        return f"{self.preset or self.provider or 'unconfigured'}:{self.model or '?'}"

    def use_http2(self) -> tuple[bool, bool]:
        """(http1, http2) flags for the HTTP client: h2 over TLS by ALPN, h2c only when asked."""
        secure = (self.base_url or "").startswith("https://")
        if self.http2 == "off":
            return True, False
        if self.http2 == "on" and not secure:
            return False, True  # prior-knowledge h2c: the server must speak it
        return True, secure


_CAMEL = {
    "baseUrl": "base_url",
    "apiKey": "api_key",
    "fimTemplate": "fim_template",
    "requestTimeout": "request_timeout_s",
    "maxRetries": "max_retries",
    "maxLines": "max_lines",
    "maxTokens": "max_tokens",
    "prefixTokens": "prefix_tokens",
    "suffixTokens": "suffix_tokens",
    "contextTokens": "context_tokens",
    "repositoryContext": "repository_context",
    "disabledLanguages": "disabled_languages",
    "excludeGlobs": "exclude_globs",
    "adoptGraceMs": "adopt_grace_ms",
    "codebaseTokens": "codebase_tokens",
    "chatCodebaseTokens": "chat_codebase_tokens",
    "chatMaxTokens": "chat_max_tokens",
    "prepareNext": "prepare_next",
    "readAhead": "read_ahead",
    "continueTyped": "continue_typed",
    "rememberEndpoints": "remember_endpoints",
    "latencyBudgetMs": "latency_budget_ms",
    "minLineProbability": "min_line_probability",
    "wsRotateSeconds": "ws_rotate_s",
    "modelPath": "model_path",
    "caBundle": "ca_bundle",
    "predictedOutputs": "predicted_outputs",
    "nextEdit": "next_edit",
}

_NESTED = {"completion": CompletionSettings, "local": LocalSettings, "chat": ChatSettings}


def _snake(key: str) -> str:
    return _CAMEL.get(key, key)


def env_overrides(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    env = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    if env.get("KESTREL_PROVIDER"):
        out["provider"] = env["KESTREL_PROVIDER"]
    if env.get("KESTREL_MODEL"):
        out["model"] = env["KESTREL_MODEL"]
    if env.get("KESTREL_EFFORT"):
        out["effort"] = env["KESTREL_EFFORT"]
    base = env.get("KESTREL_BASE_URL") or env.get("OPENAI_BASE_URL")
    if base:
        out["base_url"] = base
    if env.get("KESTREL_HTTP2"):
        out["http2"] = env["KESTREL_HTTP2"]
    if env.get("KESTREL_FIM_TEMPLATE"):
        out["fim_template"] = env["KESTREL_FIM_TEMPLATE"]
    if env.get("KESTREL_CA_BUNDLE"):
        out["ca_bundle"] = env["KESTREL_CA_BUNDLE"]
    if env.get("KESTREL_MODEL_PATH"):
        out["local"] = {"model_path": env["KESTREL_MODEL_PATH"]}
    if env.get("KESTREL_LOCAL_MODEL"):
        out.setdefault("local", {})["model"] = env["KESTREL_LOCAL_MODEL"]
    if env.get("KESTREL_LOCAL", "").lower() in ("0", "off", "false", "no"):
        out.setdefault("local", {})["enabled"] = False
    return out


def _flatten(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Accept `{"kestrel": {...}}` (VS Code sections) or a flat dict; camelCase or snake_case."""
    if not options:
        return {}
    if isinstance(options.get("kestrel"), Mapping):
        options = options["kestrel"]
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key in _NESTED and isinstance(value, Mapping):
            out[key] = {_snake(k): v for k, v in value.items() if v is not None}
        elif value is not None and value != "":
            out[_snake(key)] = value
    return out


def _apply(base: Settings, raw: Mapping[str, Any]) -> Settings:
    raw = dict(raw)
    nested: dict[str, Any] = {}
    for name, cls in _NESTED.items():
        section = raw.pop(name, None)
        if not section:
            continue
        valid = {f.name for f in dataclasses.fields(cls)}
        unknown = set(section) - valid
        if unknown:  # a newer client may know more settings: ignore them, do not fail
            log.warning("ignoring unknown %s setting(s): %s", name, ", ".join(sorted(unknown)))
            section = {k: v for k, v in section.items() if k in valid}
        for key in ("disabled_languages", "exclude_globs"):
            if key in section:
                section[key] = tuple(section[key])
        nested[name] = dataclasses.replace(getattr(base, name), **section)
    valid = {f.name for f in dataclasses.fields(Settings)}
    known = {k: v for k, v in raw.items() if k in valid}
    return dataclasses.replace(base, **nested, **known)


def _resolve_preset(s: Settings, environ: Mapping[str, str]) -> Settings:
    """`provider` may name a preset (groq, ollama, ...) or a transport kind. Keys are not chosen
    here: `load_settings` picks the one bound to the resolved endpoint (see `keys.py`)."""
    name = s.provider
    if name and name not in PROVIDER_KINDS:
        preset = PRESETS.get(str(name).lower())
        if preset is None:
            raise SettingsError(
                f"unknown provider {name!r}: use one of {', '.join(PROVIDER_KINDS)} "
                f"or a preset ({', '.join(PRESETS)})"
            )
        s = dataclasses.replace(
            s,
            preset=str(name).lower(),
            provider=preset.kind,
            base_url=s.base_url or preset.base_url,
            model=s.model or preset.model,
        )
    elif name is None and environ.get("OPENAI_API_KEY"):
        # Only an OpenAI key in the environment: use OpenAI's default transport.
        preset = PRESETS["openai"]
        s = dataclasses.replace(
            s, preset="openai", provider=preset.kind, base_url=s.base_url or preset.base_url,
            model=s.model or preset.model,
        )
    if s.provider and not s.base_url:
        s = dataclasses.replace(s, base_url=PRESETS["openai"].base_url)
    return s


def endpoint_of(s: Settings) -> keys.Endpoint | None:
    """Where resolved settings send requests (and so which key they may use)."""
    return keys.endpoint(s.preset, s.base_url) if s.provider else None


def _resolved(environ: Mapping[str, str], *payloads: Mapping[str, Any] | None) -> Settings:
    s = _apply(Settings(), env_overrides(environ))
    for payload in payloads:
        raw = _flatten(payload)
        raw.pop("api_key", None)
        s = _apply(s, raw)
    return _resolve_preset(s, environ)


def endpoint_for(options: Mapping[str, Any] | None, environ: Mapping[str, str] | None = None) -> keys.Endpoint | None:
    """The endpoint that `options` (over the environment) configure; None when they configure
    none (no provider) or cannot be read."""
    env = os.environ if environ is None else environ
    try:
        return endpoint_of(_resolved(env, options))
    except (SettingsError, TypeError, ValueError):
        return None


def bind_key(
    secret: str | None, options: Mapping[str, Any] | None, source: str, environ: Mapping[str, str] | None = None
) -> keys.BoundKey | None:
    """Bind a key to the endpoint that `options` configure (see `endpoint_for`)."""
    target = endpoint_for(options, environ) if secret else None
    return keys.BoundKey(str(secret), target, source) if target else None


def environment_keys(environ: Mapping[str, str]) -> list[keys.BoundKey]:
    """Keys from the environment, each bound to its own provider's default endpoint, and the
    environment's own endpoint (`KESTREL_PROVIDER` + `KESTREL_BASE_URL`/`OPENAI_BASE_URL`) to the key
    its provider reads. Settings from the editor or a workspace pointing elsewhere get none of them."""
    out: list[keys.BoundKey] = []
    try:
        own = _resolved(environ)
    except SettingsError:
        own = Settings()
    own_endpoint = endpoint_of(own)
    if own_endpoint is not None:
        var = PRESETS[own.preset].api_key_env if own.preset else "OPENAI_API_KEY"
        if var and environ.get(var):
            out.append(keys.BoundKey(environ[var], own_endpoint, var))
    for name, preset in PRESETS.items():
        var = preset.api_key_env
        target = keys.endpoint(name, preset.base_url)
        if var and environ.get(var) and target is not None:
            out.append(keys.BoundKey(environ[var], target, var))
    return out


def offered_keys(
    init_options: Mapping[str, Any] | None = None,
    changed: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    client_keys: Iterable[keys.BoundKey] = (),
) -> list[keys.BoundKey]:
    """Every key the server was given, each bound, most preferred first: the client's
    (`kestrel/setApiKey`), a key inside a settings payload (bound to the endpoint that payload
    configures), then the environment's."""
    env = dict(os.environ if environ is None else environ)
    out = list(client_keys)
    payloads: list[Mapping[str, Any] | None] = []
    in_payloads: list[keys.BoundKey] = []
    for source, payload in (("initializationOptions", init_options), ("workspace/didChangeConfiguration", changed)):
        payloads.append(payload)
        secret = _flatten(payload).get("api_key")
        if secret:
            try:
                target = endpoint_of(_resolved(env, *payloads))
            except SettingsError:
                target = None
            if target is not None:
                in_payloads.insert(0, keys.BoundKey(str(secret), target, source))
    return out + in_payloads + environment_keys(env)


def missing_key_hint(s: Settings, offered: list[keys.BoundKey]) -> str | None:
    """Why configured settings run without a key and how to give one; None when none is missing
    (a key was picked, or a local server that needs none and no key was given for elsewhere)."""
    target = endpoint_of(s)
    if not s.configured or s.api_key or target is None:
        return None
    preset = PRESETS.get(s.preset or "")
    var = preset.api_key_env if preset else None
    elsewhere = sorted({k.endpoint.describe() for k in offered if k.endpoint != target})
    if not var and not elsewhere:
        return None
    hint = f"no API key for {target.describe()}: run \"Kestrel: Set API Key\" with this provider selected"
    if var:
        hint += f" or set {var}"
    if elsewhere:
        hint += f" (the keys Kestrel has are bound to {', '.join(elsewhere)} and go nowhere else)"
    return hint


def _validate(s: Settings) -> Settings:
    if s.effort not in EFFORTS:
        raise SettingsError(f"effort must be one of {', '.join(EFFORTS)}, not {s.effort!r}")
    if s.http2 not in ("auto", "on", "off"):
        raise SettingsError(f"http2 must be auto, on or off, not {s.http2!r}")
    c = s.completion
    for name in ("max_lines", "max_tokens", "prefix_tokens"):
        if not isinstance(getattr(c, name), int) or getattr(c, name) <= 0:
            raise SettingsError(f"completion.{name} must be a positive integer")
    if not isinstance(c.latency_budget_ms, int) or c.latency_budget_ms < 0:
        raise SettingsError("completion.latencyBudgetMs must be 0 (no limit) or a positive number of milliseconds")
    if isinstance(c.min_line_probability, bool) or not isinstance(c.min_line_probability, (int, float)) \
            or not 0 <= c.min_line_probability < 1:
        raise SettingsError("completion.minLineProbability must be a number from 0 (off) to below 1")
    if not isinstance(s.local.speculative, bool):  # it goes to the model's process as JSON, checked there too
        raise SettingsError("kestrel.local.speculative must be true or false")
    model_path = s.local.model_path
    if model_path and not os.path.isabs(os.path.expanduser(str(model_path))):
        # Relative to what? The server's working directory, which can be an untrusted workspace.
        raise SettingsError(
            f"kestrel.local.modelPath (KESTREL_MODEL_PATH) must be an absolute path to a GGUF file, not {model_path!r}"
        )
    return s


def load_settings(
    init_options: Mapping[str, Any] | None = None,
    changed: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    client_keys: Iterable[keys.BoundKey] = (),
) -> Settings:
    """Build Settings from every source; raises SettingsError with a readable message. `api_key`
    is the first key (see `offered_keys`) bound to the endpoint the settings resolve to, else None."""
    return load_settings_and_keys(init_options, changed, environ, client_keys)[0]


def load_settings_and_keys(
    init_options: Mapping[str, Any] | None = None,
    changed: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    client_keys: Iterable[keys.BoundKey] = (),
) -> tuple[Settings, list[keys.BoundKey]]:
    """`load_settings`, and every key offered (the one picked among them), for callers that
    register the keys with the redactor or say which one is missing."""
    env = dict(os.environ if environ is None else environ)
    s = _apply(Settings(), env_overrides(env))
    s = _apply(s, _flatten(init_options))
    s = _apply(s, _flatten(changed))
    s = _validate(_resolve_preset(dataclasses.replace(s, api_key=None), env))
    offered = offered_keys(init_options, changed, env, client_keys)
    chosen = keys.pick(offered, endpoint_of(s))
    return dataclasses.replace(s, api_key=chosen.secret if chosen else None), offered
