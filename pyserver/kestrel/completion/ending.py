"""Does the model end a block by itself? Learned per model from its own streams.

Each finished multi-line stream counts: ended by the model within `max_lines`, or ran past them (or
hit the cap). Once MIN_SEEN streams are known, a model that ended most of them `ends_blocks`: its end
is waited for and trusted. Until then the engine `watches`: it keeps the stream to its end only to
count it, and answers exactly as without waiting, but only then. Afterwards one multi-line
generation in PROBE_EVERY is watched without waiting: answered at once, counted if its stream ends
alone (generation.py). Why: docs/design-notes.md#pyserverkestrelcompletionendingpy
"""

from __future__ import annotations

from collections import deque

WINDOW = 16  # recent multi-line streams that decide
MIN_SEEN = 3  # streams counted before the habit is known
PROBE_EVERY = 25  # while the model is known not to end its blocks, one generation in this many is watched
# (a watched stream of a model that writes on to the cap costs the whole cap: ≈5 s for the 0.5B on 2 cores)


class EndingHabit:
    def __init__(self) -> None:
        self._ended: deque[bool] = deque(maxlen=WINDOW)
        self._since_probe = 0

    @property
    def known(self) -> bool:
        """Enough streams counted to say (until then a watched stream is waited for, see engine)."""
        return len(self._ended) >= MIN_SEEN

    @property
    def ends_blocks(self) -> bool:
        """Known to end its blocks: most of at least MIN_SEEN recent multi-line streams ended."""
        return len(self._ended) >= MIN_SEEN and 2 * sum(self._ended) > len(self._ended)

    def watches(self) -> bool:
        """Should the next multi-line generation (of a model not known to end its blocks) be kept
        to its end, to learn how it ends?"""
        if len(self._ended) < MIN_SEEN:
            return True
        self._since_probe += 1
        if self._since_probe >= PROBE_EVERY:
            self._since_probe = 0
            return True
        return False

    def record(self, ended: bool) -> None:
        self._ended.append(ended)

    def snapshot(self) -> list[bool]:
        return list(self._ended)

    def restore(self, ended: object) -> None:
        """Streams counted in an earlier run (remembered.py); anything but a list of booleans is ignored."""
        if isinstance(ended, list) and all(isinstance(e, bool) for e in ended):
            self._ended.extend(ended[-WINDOW:])
