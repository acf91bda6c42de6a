"""ReadAhead: the model reads the prompt where the cursor rests, before the first keystroke.

A local server keeps what it read of its last prompt; the suggestion after the first keystroke then
reads only what follows the cursor. Asked in chunks (one token each, discarded), so a request that
arrives meanwhile waits for one chunk at most; stopped once anything else asks the model.
Why and measured: docs/design-notes.md#pyserverkestrelcompletionenginepy
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Callable

from ..context.window import CHARS_PER_TOKEN
from ..providers.base import CompletionPrompt, Provider, ProviderError, StreamStats, streams_opened

log = logging.getLogger(__name__)

CHUNK_CHARS = int(128 * CHARS_PER_TOKEN)  # ~0.4 s of prompt reading on 2 cores: the longest a request waits


def chunk_ends(text: str, size: int = CHUNK_CHARS) -> list[int]:
    """Where each chunk of `text` ends: after a newline about every `size` characters; the last at its end."""
    ends, at = [], size
    while at < len(text):
        nl = text.find("\n", at)
        if nl < 0 or nl + 1 >= len(text):
            break
        ends.append(nl + 1)
        at = nl + 1 + size
    return [*ends, len(text)]


def _key(prompt: CompletionPrompt) -> tuple:
    return (prompt.snippets, prompt.repo, prompt.path)


class ReadAhead:
    """At most one read at a time; `started` and `used` count them for `kestrel/diagnostics`."""

    def __init__(self) -> None:
        self._task: asyncio.Task | None = None
        self._read: tuple[tuple, str] | None = None  # (context key, prefix) of the last read begun
        self.started = 0
        self.used = 0  # reads whose prefix the next suggestion's prompt began with

    def start(self, provider: Provider, prompt: CompletionPrompt, quiet: Callable[[], bool]) -> bool:
        """Read `prompt`'s context and prefix (not its suffix: a keystroke changes what follows it).
        `quiet` says no completion was asked for since; False when nothing was started."""
        read = (_key(prompt), prompt.prefix)
        if read == self._read or not prompt.prefix.strip():
            return False  # read already, or nothing before the cursor to read
        self.cancel()
        self._read = read
        self.started += 1
        self._task = asyncio.get_running_loop().create_task(self._chunks(provider, prompt, quiet))
        return True

    async def _chunks(self, provider: Provider, prompt: CompletionPrompt, quiet: Callable[[], bool]) -> None:
        last_seq = streams_opened()
        for end in chunk_ends(prompt.prefix):
            if not quiet() or streams_opened() != last_seq:
                return  # the user typed, or something else asked the model: it has what it needs
            stats = StreamStats()
            part = replace(prompt, prefix=prompt.prefix[:end], suffix="", max_tokens=1, top_logprobs=0,
                           multiline=False, answered="")
            try:
                async for _ in provider.complete(part, stats):
                    pass
            except ProviderError as exc:  # unseen: the next suggestion reports its own failure
                log.debug("read ahead stopped: %s", exc.message)
                return
            last_seq = stats.seq

    def prompt_sent(self, prompt: CompletionPrompt) -> None:
        """A suggestion's prompt went out: count the read it used."""
        if self._read is not None and self._read[0] == _key(prompt) and prompt.prefix.startswith(self._read[1]):
            self.used += 1
            self._read = None  # counted once

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
