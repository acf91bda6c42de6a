"""Keep API keys out of every log line and every message the server sends.

Three nets, the same as `extension/src/redact.ts` (both checked against
`tests/security/redaction_cases.json`): the keys given (in any case, also a token with 8+ of a
key's first or last characters), anything shaped like a supported provider's key, and bearer and
basic credentials and fields named as API keys (`"apiKey"`, `x-api-key:`, `OPENAI_API_KEY=`).
`redact_payload` applies it to every string of an outgoing JSON-RPC message, `RedactingFilter` to
every log record. The exact rules: docs/design-notes.md#pyserverkestrelredactpy
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable

MASK = "[REDACTED]"
FRAGMENT = 8  # a run this long of a key's start or end is treated as the key
_MIN_SECRET = 6

# Kept in step with KEY_PATTERNS in extension/src/redact.ts, which start with `\b`: here the
# callbacks check that a match starts a word instead (a leading `\b` makes `re` try every
# position, three times slower on a large edit).
_KEY_SHAPE = re.compile(r"(?:sk-|gsk_|csk-|xai-)[A-Za-z0-9_\-*.\u2026]{8,}")
_BEARER = re.compile(r"(?i)((?:bearer|basic)\s+)[A-Za-z0-9._~+/=\-*\u2026]{8,}")
_JSON_KEY_FIELD = re.compile(r'(?i)("api_?key"\s*:\s*")((?:[^"\\]|\\.){8,})(")')
# A credential by its field's name in any other syntax: a header (`x-api-key:`, Azure's `api-key:`),
# an environment line (`OPENAI_API_KEY=`), a Python repr (`'api_key': '`). The value must look like a
# key (16+ characters, letters and digits), so `api_key = os.environ["OPENAI_API_KEY"]` in code stays.
_NAMED_KEY_FIELD = re.compile(
    r"""(?i)(api[_-]?key['"]?\s*[:=]\s*['"]?)([A-Za-z0-9_~+/=\-*\u2026]{16,})""")
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-*.\u2026~+/=]")

_secrets: set[str] = set()


def register_secret(secret: str | None) -> None:
    if secret and len(secret) >= _MIN_SECRET:
        _secrets.add(secret)


def registered_secrets() -> frozenset[str]:
    """The keys given so far (what must not leave through a command's environment either)."""
    return frozenset(_secrets)


def _starts_word(m: re.Match) -> bool:
    """Whether the match is not the tail of a longer word ("risk-assessment", "task_manager")."""
    start = m.start()
    return start == 0 or not (m.string[start - 1].isalnum() or m.string[start - 1] == "_")


def _token_like(m: re.Match) -> bool:
    """Tokens are long or have digits; the word after "Bearer" in prose ("Bearer Authentication") is not."""
    token = m.group(0)[len(m.group(1)):]
    return len(token) >= 16 or any(c.isdigit() for c in token)


def _token_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to the whole key-like token around it (a truncated echo goes with it)."""
    while start > 0 and _TOKEN_CHAR.match(text, start - 1):
        start -= 1
    while end < len(text) and _TOKEN_CHAR.match(text, end):
        end += 1
    while end > start and text[end - 1] == ".":  # a full stop ends a sentence, not a key
        end -= 1
    return start, end


def _mask_fragments(text: str, secret: str) -> str:
    if len(secret) < FRAGMENT:
        return text
    for probe in {secret[:FRAGMENT], secret[-FRAGMENT:]}:
        at = text.find(probe)
        while at != -1:
            start, end = _token_bounds(text, at, at + FRAGMENT)
            text = text[:start] + MASK + text[end:]
            at = text.find(probe, start + len(MASK))
    return text


def _looks_like_key(m: re.Match) -> bool:
    value = m.group(2)
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """`text` without keys: the registered ones (or `secrets`), and anything key-shaped."""
    low = text.lower()  # masking only removes text: what `low` lacks, the masked text lacks too
    for secret in _secrets if secrets is None else secrets:
        if secret.lower() in low:  # in any case (a log that upper-cases a header's value)
            text = re.sub(re.escape(secret), MASK, text, flags=re.IGNORECASE)
        text = _mask_fragments(text, secret)
    text = _KEY_SHAPE.sub(lambda m: MASK if _starts_word(m) else m.group(0), text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK if _starts_word(m) and _token_like(m) else m.group(0), text)
    if "key" in low and "api" in low:  # (a regex that ignores case is slow to scan a large edit)
        text = _NAMED_KEY_FIELD.sub(lambda m: m.group(1) + MASK if _looks_like_key(m) else m.group(0), text)
    return _JSON_KEY_FIELD.sub(lambda m: m.group(1) + MASK + m.group(3), text)


# Fields that carry code the editor inserts into the user's file (a completion, a text edit). Only
# the keys Kestrel holds are removed there, verbatim: a key-shaped literal the user's code already
# has (a test fixture, an example) must reach the file unchanged, not as "[REDACTED]".
CODE_FIELDS = frozenset({"newText", "insertText"})


def _redact_known(text: str) -> str:
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_payload(value: Any) -> Any:
    """`value` with every string in it redacted (dicts, lists and tuples are copied; keys of
    dicts are names, and lose only the held keys, as code fields do). Anything else is
    returned as it is."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {(_redact_known(k) if isinstance(k, str) else k):
                _redact_known(v) if k in CODE_FIELDS and isinstance(v, str) else redact_payload(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_payload(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        clean = redact(message)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            import traceback

            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)))
            record.exc_info = None
        return True
