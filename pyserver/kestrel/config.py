"""Typed settings, in one place.

Precedence (lowest first): built-in defaults < environment < `initializationOptions`
< `workspace/didChangeConfiguration`. Environment values alone are enough to run
(`KESTREL_PROVIDER=groq GROQ_API_KEY=... kestrel-lsp`), so editors with no Kestrel
settings UI (Neovim, Helix) work out of the box.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

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
    context_tokens: int = 600  # budget for snippets from other open documents
    disabled_languages: tuple[str, ...] = ()
    exclude_globs: tuple[str, ...] = ()
    # How long an abandoned-but-still-matching generation may keep streaming, waiting
    # for the next request to adopt it, before it is cancelled upstream.
    adopt_grace_ms: int = 1000


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
    "disabledLanguages": "disabled_languages",
    "excludeGlobs": "exclude_globs",
    "adoptGraceMs": "adopt_grace_ms",
    "wsRotateSeconds": "ws_rotate_s",
    "modelPath": "model_path",
    "caBundle": "ca_bundle",
    "predictedOutputs": "predicted_outputs",
    "nextEdit": "next_edit",
}

_NESTED = {"completion": CompletionSettings, "local": LocalSettings}


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
    """`provider` may name a preset (groq, ollama, ...) or a transport kind."""
    name = s.provider
    if name and name not in PROVIDER_KINDS:
        preset = PRESETS.get(str(name).lower())
        if preset is None:
            raise SettingsError(
                f"unknown provider {name!r}: use one of {', '.join(PROVIDER_KINDS)} "
                f"or a preset ({', '.join(PRESETS)})"
            )
        key = s.api_key or (environ.get(preset.api_key_env) if preset.api_key_env else None)
        s = dataclasses.replace(
            s,
            preset=str(name).lower(),
            provider=preset.kind,
            base_url=s.base_url or preset.base_url,
            model=s.model or preset.model,
            api_key=key,
        )
    elif name is None and environ.get("OPENAI_API_KEY"):
        # Only an OpenAI key in the environment: use OpenAI's default transport.
        preset = PRESETS["openai"]
        s = dataclasses.replace(
            s, preset="openai", provider=preset.kind, base_url=s.base_url or preset.base_url,
            model=s.model or preset.model,
        )
    if s.provider and not s.api_key and s.preset in (None, "openai"):
        # Never hand an OpenAI key to a third-party preset (Groq, Cerebras, ...).
        s = dataclasses.replace(s, api_key=environ.get("OPENAI_API_KEY"))
    if s.provider and not s.base_url:
        s = dataclasses.replace(s, base_url=PRESETS["openai"].base_url)
    return s


def _validate(s: Settings) -> Settings:
    if s.effort not in EFFORTS:
        raise SettingsError(f"effort must be one of {', '.join(EFFORTS)}, not {s.effort!r}")
    if s.http2 not in ("auto", "on", "off"):
        raise SettingsError(f"http2 must be auto, on or off, not {s.http2!r}")
    c = s.completion
    for name in ("max_lines", "max_tokens", "prefix_tokens"):
        if not isinstance(getattr(c, name), int) or getattr(c, name) <= 0:
            raise SettingsError(f"completion.{name} must be a positive integer")
    return s


def load_settings(
    init_options: Mapping[str, Any] | None = None,
    changed: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Build Settings from every source; raises SettingsError with a readable message."""
    env = dict(os.environ if environ is None else environ)
    s = _apply(Settings(), env_overrides(env))
    s = _apply(s, _flatten(init_options))
    s = _apply(s, _flatten(changed))
    return _validate(_resolve_preset(s, env))
