"""Does the model end a block by itself? Learned from its own streams.

A fill-in-the-middle model that ends the middle itself (its end-of-middle token) has placed
the end of the hole: waiting for that end gives the right block, while the engine's guesses
(a dedent, no rejoin with the code below within a few lines) cut right answers short. A model
that never ends (it writes on until the token cap) must be cut by those guesses instead, or
every multi-line suggestion would cost the whole cap.

Which kind the configured model is, nobody declares (two sizes of the same instruct family
differ), so each finished multi-line stream counts: ended by the model within `max_lines`, or
ran past them. The engine waits for the model's end while most recent streams ended; after it
stops waiting, every `PROBE_EVERY`-th multi-line generation still waits, so a model that ends
its blocks is recognised again after a few unlucky streams.
"""

from __future__ import annotations

from collections import deque

WINDOW = 16  # recent multi-line streams that decide
PROBE_EVERY = 8  # while not waiting, one multi-line generation in this many still waits


class EndingHabit:
    def __init__(self) -> None:
        self._ended: deque[bool] = deque(maxlen=WINDOW)
        self._since_probe = 0

    def expects_end(self) -> bool:
        """Should the next multi-line generation wait for the model's own end?"""
        if not self._ended or 2 * sum(self._ended) >= len(self._ended):
            return True  # nothing known yet, or the model ends most of its blocks
        self._since_probe += 1
        if self._since_probe >= PROBE_EVERY:
            self._since_probe = 0
            return True
        return False

    def record(self, ended: bool) -> None:
        self._ended.append(ended)
