"""`next_suggestion`: on the embedded model, the suggestion after one is accepted, with the next one
prepared while the user reads (`completion.prepareNext`) and without, in one run.

Per sample: a new function to complete; the suggestion is shown; the user reads it (READ_S); then
either accepts it (the document gets it, the cursor lands at its end, VS Code asks again) or types
something else instead (a character the suggestion does not start with). The clock runs from the
request after that edit to its answer. Arms alternate sample by sample on two servers, each with
its own embedded llama.cpp child (only one of them is ever asked at a time). Reported: p50/p95 per
arm and case, whether a suggestion was shown, and the prepared generations started and used.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from .common import summary
from .lsp_client import SERVER_CMD, clean_env
from .rawclient import RawClient

READ_S = 1.0  # how long a user looks at a suggestion before accepting it
FUNCTIONS = [  # (header, docstring): real-looking code whose body the model completes
    ("def celsius_to_fahrenheit(celsius):", "Convert a temperature from Celsius to Fahrenheit."),
    ("def is_palindrome(text):", "Whether text reads the same backwards, ignoring case."),
    ("def average(values):", "The arithmetic mean of a non-empty list of numbers."),
    ("def count_vowels(word):", "How many vowels the word has."),
    ("def clamp(value, low, high):", "value limited to the range [low, high]."),
    ("def word_lengths(sentence):", "The length of each word in the sentence."),
    ("def factorial(n):", "n! for a non-negative integer n."),
    ("def unique_sorted(items):", "The distinct items, sorted."),
    ("def first_word(line):", "The first whitespace-separated word of the line, or ''."),
    ("def hypotenuse(a, b):", "The hypotenuse of a right triangle with legs a and b."),
    ("def merge_dicts(a, b):", "A new dict with a's items updated by b's."),
    ("def flatten(lists):", "The items of a list of lists, in order."),
]


def _document(k: int) -> tuple[str, int, int]:
    header, doc = FUNCTIONS[k % len(FUNCTIONS)]
    text = f"import math\n\n\n{header}\n    \"\"\"{doc}\"\"\"\n    \n"
    return text, 5, 4


def _insert(text: str, line: int, ch: int, piece: str) -> tuple[str, int, int]:
    """The document with `piece` typed at (line, ch), and the cursor after it."""
    lines = text.split("\n")
    lines[line] = lines[line][:ch] + piece + lines[line][ch:]
    new = "\n".join(lines)
    added = piece.split("\n")
    return new, line + len(added) - 1, (ch + len(piece)) if len(added) == 1 else len(added[-1])


async def _sample(client: RawClient, k: int, accept: bool) -> dict[str, Any]:
    uri = f"file:///bench/next_{k}_{int(accept)}.py"
    text, line, ch = _document(k)
    client.open(text, uri)
    shown = await client.inline(line, ch, uri)
    if not shown:
        return {"shown_first": False}
    await asyncio.sleep(READ_S)
    if accept:
        new, line, ch = _insert(text, line, ch, shown)
    else:
        other = "#" if not shown.startswith("#") else "x"
        new, line, ch = _insert(text, line, ch, other)
    client.change(new, uri)
    t0 = time.perf_counter()
    nxt = await client.inline(line, ch, uri)
    return {"shown_first": True, "ms": (time.perf_counter() - t0) * 1000, "shown_next": bool(nxt)}


async def start_embedded(completion: dict[str, Any], log: Any) -> RawClient:
    """A new `kestrel-lsp` on the embedded model with these completion settings, its model loaded."""
    client = RawClient()
    await client.spawn(SERVER_CMD, clean_env(KESTREL_LOCAL="1"), log)
    await client.initialize({"kestrel": {"completion": completion}})
    client.open("x = 1\n", "file:///bench/warm.py")
    await client.inline(0, 5, "file:///bench/warm.py")  # waits for the model to load
    return client


async def run(samples: int, logs: Path) -> dict[str, Any]:
    from kestrel.local.models import runtime_available

    if not runtime_available():
        return {"skipped": "llama-cpp-python is not installed"}
    log = open(logs / "server.log", "ab")
    arms: dict[str, RawClient] = {}
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for name, prepare in (("prepared", True), ("not prepared", False)):
            arms[name] = await start_embedded({"prepareNext": prepare}, log)
        for k in range(samples):
            for case, accept in (("accepted", True), ("typed instead", False)):
                for name, client in arms.items():
                    rows.setdefault((name, case), []).append(await _sample(client, k, accept))
                    await asyncio.sleep(0.5)  # let a prepared stream finish or be dropped before the other arm
        counters = {name: await client.request("kestrel/diagnostics", {}) for name, client in arms.items()}
    finally:
        for client in arms.values():
            await client.stop()
        log.close()
    out: dict[str, Any] = {"read_s": READ_S, "samples": samples, "arms": {}}
    for (name, case), rs in rows.items():
        timed = [r["ms"] for r in rs if "ms" in r]
        out["arms"].setdefault(name, {})[case] = {
            "ms": summary(timed) if timed else None,
            "first_shown": sum(r["shown_first"] for r in rs),
            "next_shown": sum(bool(r.get("shown_next")) for r in rs),
        }
    for name, c in counters.items():
        out["arms"][name]["prepared_started"] = c.get("preparedGenerations")
        out["arms"][name]["prepared_used"] = c.get("preparedUsed")
    print(f"  next after accept p50: prepared {out['arms']['prepared']['accepted']['ms']}, not prepared "
          f"{out['arms']['not prepared']['accepted']['ms']}", flush=True)
    return out
