"""Keep API keys out of every log line and message.

Known secrets (the configured keys) are replaced verbatim; anything shaped like a
provider key (`sk-...`, `gsk_...`, `csk-...`, bearer tokens) is masked as well.
"""

from __future__ import annotations

import logging
import re

_PATTERN = re.compile(r"\b(?:sk|gsk|csk|pk|rk)[-_][A-Za-z0-9_\-]{12,}|(?i:bearer\s+)[A-Za-z0-9._\-]{12,}")
_secrets: set[str] = set()


def register_secret(secret: str | None) -> None:
    if secret and len(secret) >= 6:
        _secrets.add(secret)


def redact(text: str) -> str:
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, "[REDACTED]")
    return _PATTERN.sub("[REDACTED]", text)


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
