"""What completions learn about an endpoint is kept between starts (kestrel.completion.remembered):
a restarted server does not wait again for streams' ends to learn how the model ends its blocks."""

from __future__ import annotations

import asyncio
import json
import os
import stat

from kestrel.completion.ending import MIN_SEEN
from kestrel.completion.remembered import Remembered, endpoint_key
from kestrel.context.window import split_at

DOC = "def f(rows):\n    total = 0\n\n    return total\n"
MIDDLE = ("    for row in rows:\n        if not row:\n            continue\n        for x in row:\n"
          "            total += x\n    total = round(total, 2)\n")


class RunsOn:
    """A model that writes on to the token cap (it does not end its blocks)."""

    kind, model, connection_state = "scripted", "scripted", "ready"

    def __init__(self):
        self.sent = 0

    async def complete(self, prompt, stats):
        for line in (MIDDLE + "".join(f"    print({i})\n" for i in range(20))).splitlines(keepends=True):
            self.sent += 1
            yield line
            await asyncio.sleep(0)
        stats.stop_reason = "length"


class Quiet:
    def generation_started(self): ...
    def generation_finished(self, stats, error): ...


def _session(folder, runs, key="k1", remember=True):
    """One server's life: `runs` multi-line requests; how many lines each stream had sent when answered."""
    from kestrel.completion.engine import CompletionInput, InlineCompletionEngine
    from kestrel.config import CompletionSettings

    req = CompletionInput("file:///w/a.py", "a.py", "python", split_at(DOC, 2, 0), lambda q, n: ())

    async def go():
        engine = InlineCompletionEngine(CompletionSettings(latency_budget_ms=500), Quiet())
        model = RunsOn()
        engine.set_provider(model, key, Remembered(folder) if remember else None)
        sent = []
        for _ in range(runs):
            engine.forget(req.uri)
            engine._answers.clear()
            model.sent = 0
            await asyncio.wait_for(engine.complete(req), 5)
            sent.append(model.sent)
            await asyncio.sleep(0.01)  # the stream, answered, ends alone (and is counted)
        await engine.aclose()
        return sent

    return asyncio.run(go())


def test_a_restart_does_not_learn_the_ending_habit_again(tmp_path):
    first = _session(tmp_path, MIN_SEEN + 1)
    waited = [n > 8 for n in first]  # kept to its end, past the few lines an early cut needs
    assert waited == [True] * MIN_SEEN + [False], first
    saved = json.loads((tmp_path / "endpoints.json").read_text())
    assert list(saved) == ["k1"] and saved["k1"]["ending"][:MIN_SEEN] == [False] * MIN_SEEN
    assert stat.S_IMODE(os.stat(tmp_path / "endpoints.json").st_mode) == 0o600
    # The next start knows the model: no stream is waited for.
    assert all(n <= 8 for n in _session(tmp_path, 2)), "a restarted server waited to learn again"
    # Another endpoint (or the setting off) starts from nothing.
    assert _session(tmp_path, 1, key="k2")[0] > 8
    assert _session(tmp_path, 1, remember=False)[0] > 8


def test_a_damaged_file_is_ignored_and_replaced(tmp_path):
    (tmp_path / "endpoints.json").write_text('{"k1": {"ending": "yes", "pace": [[1, "x"], [-1, 2]]}, "k2": [')
    assert _session(tmp_path, 1)[0] > 8  # nothing usable: learning from scratch
    (tmp_path / "endpoints.json").write_text('{"k1": {"ending": [false, false, 3], "pace": {"a": 1}}}')
    assert _session(tmp_path, 1)[0] > 8
    assert isinstance(json.loads((tmp_path / "endpoints.json").read_text())["k1"]["ending"], list)


def test_the_key_names_the_model_and_endpoint_but_not_the_embedded_port():
    a = endpoint_key("fim", "qwen", "http://127.0.0.1:4001/v1", embedded=True)
    assert a == endpoint_key("fim", "qwen", "http://127.0.0.1:4999/v1", embedded=True)
    assert a != endpoint_key("fim", "qwen-1.5b", "http://127.0.0.1:4001/v1", embedded=True)
    assert endpoint_key("chat", "m", "https://a.example/v1", False) != endpoint_key("chat", "m", "https://b.example/v1", False)
    assert "example" not in endpoint_key("chat", "m", "https://a.example/v1", False)
