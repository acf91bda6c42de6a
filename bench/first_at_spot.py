"""`first_at_spot`: on the embedded model, the first suggestion at a new place in a file, with the prompt
read where the cursor rested (`kestrel/cursor`, completion.readAhead) and without, in one server.

Places: lines of code (after their indentation) at least 40 lines into files of packages installed
beside Kestrel that nobody here wrote (h2, hpack, anyio, httpx2). Per trial: the file is opened, the
cursor put at the place (the arm with the read sends `kestrel/cursor`, as the VS Code client does
after the cursor has been still for 250 ms; the other sends nothing, as with the setting off), a pause
(the user reads), then the line's first character typed and a suggestion asked for; the clock runs
from that request to its answer. *Moved away*: the cursor rests at one place, then after 0.5 s the user
types at another place 60 lines further on (the case the read can cost: the model is busy reading the
wrong place). Each trial has its own document, and consecutive trials are at different places, so
every one starts with the model's cache holding another file's prompt (cold, as at a new place).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from pathlib import Path
from typing import Any

from .common import summary
from .lsp_client import SERVER_CMD, clean_env
from .rawclient import RawClient

PAUSES_S = (0.3, 1.0, 2.0)
MOVED_PAUSE_S = 0.5
MOVED_LINES = 60
PACKAGES = ("h2", "hpack", "anyio", "httpx2")


def places(n: int, seed: int = 2026) -> list[tuple[Path, int, int]]:
    """(file, line, indent) of `n` lines of code, each with a line MOVED_LINES further on that is code too."""
    import importlib.util

    files = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            files += sorted(p for loc in spec.submodule_search_locations for p in Path(loc).rglob("*.py"))
    rng = random.Random(seed)
    rng.shuffle(files)
    found: list[tuple[Path, int, int]] = []
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        ok = [i for i in range(40, len(lines) - MOVED_LINES - 5) if _code(lines[i]) and _code(lines[i + MOVED_LINES])]
        if ok:
            i = rng.choice(ok)
            found.append((path, i, len(lines[i]) - len(lines[i].lstrip())))
        if len(found) == n:
            break
    return found


def _code(line: str) -> bool:
    s = line.strip()
    return len(s) > 8 and not s.startswith(("#", '"', "'", "@", ")", "]", "}"))


def _typed(text: str, line: int, indent: int) -> tuple[str, str]:
    """The file with its line `line` cut to the indentation plus the first character typed; the character."""
    lines = text.split("\n")
    first = lines[line][indent]
    lines[line] = lines[line][:indent] + first
    return "\n".join(lines), first


async def _quiet(client: RawClient) -> None:
    """Until no completion stream runs (the last answer's stream may go on after it was shown)."""
    for _ in range(200):
        d = await client.request("kestrel/diagnostics", {})
        if not d.get("liveGenerations"):
            return
        await asyncio.sleep(0.05)


async def _trial(client: RawClient, uri: str, text: str, rest: tuple[int, int], at: tuple[int, int], pause: float,
                 read: bool) -> dict[str, Any]:
    client.open(text, uri)
    if read:
        client.notify("kestrel/cursor", {"uri": uri, "position": {"line": rest[0], "character": rest[1]}})
    await asyncio.sleep(pause)
    typed, _ = _typed(text, *at)
    client.change(typed, uri)
    t0 = time.perf_counter()
    shown = await client.inline(at[0], at[1] + 1, uri)
    ms = (time.perf_counter() - t0) * 1000
    await _quiet(client)
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return {"ms": round(ms, 1), "shown": shown or ""}


async def run(n_places: int, logs: Path) -> dict[str, Any]:
    from kestrel.local.models import runtime_available

    if not runtime_available():
        return {"skipped": "llama-cpp-python is not installed"}
    spots = places(n_places)
    cases = [f"pause {p} s" for p in PAUSES_S] + ["moved away"]
    trials: dict[str, dict[str, list[dict[str, Any]]]] = {c: {"read": [], "not read": []} for c in cases}
    client = RawClient()
    log = open(logs / "first-at-spot.log", "ab")
    await client.spawn(SERVER_CMD, clean_env(KESTREL_LOCAL="1"), log)
    t_start = time.perf_counter()
    try:
        await client.initialize({"kestrel": {"completion": {"prepareNext": False}}})
        client.open("import os\n\n\ndef main():\n    \n", "file:///bench/spot-warm.py")
        await client.inline(4, 4, "file:///bench/spot-warm.py")  # waits for the model to load
        k = 0
        # Two rounds with the arms swapped, places in the same order: consecutive trials are never at the
        # same place, so neither arm finds its place's prompt left in the model's cache by the other.
        for swap in (False, True):
            for case in cases:
                pause = MOVED_PAUSE_S if case == "moved away" else float(case.split()[1])
                for i, (path, line, indent) in enumerate(spots):
                    text = path.read_text(encoding="utf-8", errors="replace")
                    read = (i % 2 == 0) != swap
                    rest = (line, indent)
                    at = rest
                    if case == "moved away":
                        far = line + MOVED_LINES
                        at = (far, len(text.split("\n")[far]) - len(text.split("\n")[far].lstrip()))
                    k += 1
                    r = await _trial(client, f"file:///bench/spot_{k}.py", text, rest, at, pause, read)
                    r["place"] = f"{path.parent.name}/{path.name}:{line + 1}"
                    trials[case]["read" if read else "not read"].append(r)
        d = await client.request("kestrel/diagnostics", {})
    finally:
        await client.stop()
        log.close()
    out: dict[str, Any] = {"places": [f"{p.parent.name}/{p.name}:{ln + 1}" for p, ln, _ in spots],
                           "read_aheads": d.get("readAheads"), "read_aheads_used": d.get("readAheadsUsed"),
                           "wall_s": round(time.perf_counter() - t_start, 1), "cases": {}}
    for case, arms in trials.items():
        by_place = {arm: {r["place"]: r for r in rs} for arm, rs in arms.items()}
        paired = [(by_place["read"][p], by_place["not read"][p]) for p in by_place["read"] if p in by_place["not read"]]
        ratios = [a["ms"] / b["ms"] for a, b in paired if b["ms"] > 0]
        out["cases"][case] = {
            "read_ms": summary([r["ms"] for r in arms["read"]]),
            "not_read_ms": summary([r["ms"] for r in arms["not read"]]),
            "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
            "same_text": sum(a["shown"] == b["shown"] for a, b in paired),
            "pairs": len(paired),
            "trials": arms,
        }
    return out
