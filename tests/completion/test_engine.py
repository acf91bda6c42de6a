"""The completion engine (kestrel.completion.engine): prompts, waiting for a model's end of block
(ending.py), streams that fail late. The cuts themselves are golden cases (golden/, test_golden.py)."""

from __future__ import annotations

from kestrel.context.window import split_at
from scripted_completion import complete_at


def test_the_engine_waits_for_a_model_that_ends_its_blocks_and_learns_one_that_does_not():
    import asyncio

    from kestrel.completion.engine import CompletionInput, InlineCompletionEngine
    from kestrel.completion.ending import MIN_SEEN, PROBE_EVERY
    from kestrel.config import CompletionSettings

    class Streaming:
        kind, model, connection_state = "scripted", "scripted", "ready"

        def __init__(self, answer, stop):
            self.answer, self.stop, self.sent = answer, stop, 0

        async def complete(self, prompt, stats):
            for line in self.answer.splitlines(keepends=True):
                self.sent += 1
                yield line
                await asyncio.sleep(0)
            stats.stop_reason = self.stop

    class Quiet:
        def generation_started(self): ...
        def generation_finished(self, stats, error): ...

    # A hole two levels deep above `return total`: the right middle leaves the inner block.
    doc = "def f(rows):\n    total = 0\n\n    return total\n"
    middle = ("    for row in rows:\n        if not row:\n            continue\n        for x in row:\n"
              "            total += x\n    total = round(total, 2)\n")  # past the early cuts' horizon
    req = CompletionInput("file:///w/a.py", "a.py", "python", split_at(doc, 2, 0), lambda q, n: ())

    async def ask(engine, provider):
        engine.forget(req.uri)
        engine._answers.clear()
        return await asyncio.wait_for(engine.complete(req), 5)

    async def go():
        engine = InlineCompletionEngine(CompletionSettings(), Quiet())
        ends = Streaming(middle, "stop")
        engine.set_provider(ends)
        first = [await ask(engine, ends) for _ in range(MIN_SEEN + 2)]
        # A model that runs on to the token cap: once that is known, answers come from the early
        # cuts, and one generation in PROBE_EVERY is still kept to its end to count it.
        runs_on = Streaming(middle + "".join(f"    print({i})\n" for i in range(20)), "length")
        engine.set_provider(runs_on)
        waited = []
        for _ in range(2 * PROBE_EVERY):
            runs_on.sent = 0
            await ask(engine, runs_on)
            waited.append(runs_on.sent > 8)  # past the few lines an early cut needs
        # Answered at once, a stream is still counted when it ends alone (nothing started beside it).
        counted = []
        engine._habit.record = lambda ended, record=engine._habit.record: (counted.append(ended), record(ended))
        await ask(engine, runs_on)
        await engine._live[req.uri].task
        return first, waited, counted

    first, waited, counted = asyncio.run(go())
    # While nothing is known, the answer is what the early cuts give (the block is longer than
    # the horizon in which a hole must rejoin the code below); once the model is known to end its
    # blocks, the whole ended block, dedents and all.
    assert all(text != middle for text in first[:MIN_SEEN]) and first[MIN_SEEN:] == [middle] * 2, first
    # Waited for to its end: only the first MIN_SEEN (to learn); later streams answer from the cuts.
    assert [i for i, w in enumerate(waited) if w] == [*range(MIN_SEEN)], waited
    assert counted == [False]  # the model that runs on, counted from a stream it was not waited for


def test_a_stream_another_started_beside_is_not_counted():
    """A one-slot local server cuts a stream short for a newcomer, and the cut can look like the
    model's own end: a completion stream that another stream started beside is not counted."""
    import asyncio

    from kestrel.completion.ending import EndingHabit
    from kestrel.completion.generation import Generation
    from kestrel.providers.base import CompletionPrompt, StreamStats

    class Ends:
        async def complete(self, prompt, stats):
            for piece in ("x = 1\n", "y = 2\n"):
                await asyncio.sleep(0.01)
                yield piece
            stats.stop_reason = "stop"

    class Quiet:
        def generation_started(self): ...
        def generation_finished(self, stats, error): ...

    async def go():
        habit, counted = EndingHabit(), []
        habit.record = counted.append
        prompt = CompletionPrompt(prefix="def f():\n    ", suffix="", language="python", path="a.py", multiline=True)
        cur = split_at("def f():\n    \n", 1, 4)
        alone = Generation(Ends(), prompt, cur, Quiet(), 1000, 10, habit=habit)
        await alone.task
        beside = Generation(Ends(), prompt, cur, Quiet(), 1000, 10, habit=habit)
        StreamStats()  # another stream (a chat turn, an edit) starts while it runs
        await beside.task
        return counted

    assert asyncio.run(go()) == [True]  # the first (alone) counted, the second not


def test_the_cursor_before_a_line_of_code_asks_for_a_new_line_above_it():
    doc = "def f(xs):\n    total = 0\n    return total\n"
    # At the line's start: the model sees the code pushed down to the next line.
    cursor = doc.index("    return")
    text, prompt = complete_at(doc, cursor, "    total += len(xs)")
    assert prompt.suffix.startswith("\n    return total") and prompt.multiline
    assert text == "    total += len(xs)\n"
    new = doc[:cursor] + text + doc[cursor:]
    assert new == "def f(xs):\n    total = 0\n    total += len(xs)\n    return total\n"
    # After the indentation: the pushed-down code keeps its column.
    cursor = doc.index("return")
    text, prompt = complete_at(doc, cursor, "total += 1")
    assert prompt.suffix.startswith("\n    return total")
    assert doc[:cursor] + text + doc[cursor:] == "def f(xs):\n    total = 0\n    total += 1\n    return total\n"


def test_a_stream_that_fails_after_it_answered_is_not_reported():
    """The answer was shown; the stream, kept only for typing-through, dies later (a local server
    interrupts it when chat starts): the user is not told about a failure that cost them nothing."""
    import asyncio

    from kestrel.completion.engine import CompletionInput, InlineCompletionEngine
    from kestrel.config import CompletionSettings
    from kestrel.providers.base import StreamBrokenError

    release = asyncio.Event()

    class Provider:
        kind, model, connection_state = "scripted", "scripted", "ready"

        async def complete(self, prompt, stats):
            yield "x + 1\nmore"
            await release.wait()
            raise StreamBrokenError("the connection to the model dropped mid-stream")

    errors: list = []

    class Observer:
        def generation_started(self): ...
        def generation_finished(self, stats, error):
            errors.append(error)

    async def go():
        engine = InlineCompletionEngine(CompletionSettings(), Observer())
        engine.set_provider(Provider())
        doc = "def f(x):\n    return "
        req = CompletionInput("file:///w/a.py", "a.py", "python", split_at(doc, 1, 11), lambda q, n: ())
        text = await asyncio.wait_for(engine.complete(req), 5)
        release.set()
        await asyncio.sleep(0.05)
        return text

    assert asyncio.run(go()) == "x + 1"
    assert errors == [None]


def test_a_long_file_s_prompt_keeps_its_imports_in_front_of_the_window():
    """Past the prefix window the file's head is cut off; its import block is not (context/file_head.py)."""
    head = "import numpy as np\nfrom pathlib import Path\n\n"
    doc = head + "".join(f"def f{i}(x):\n    return np.asarray(x) + {i}\n\n" for i in range(400)) + "root = \n"
    _, prompt = complete_at(doc, len(doc) - 1, "Path('.')")
    assert prompt.prefix.startswith("import numpy as np\nfrom pathlib import Path\n")
    assert prompt.prefix.endswith("root = ") and prompt.prefix.count("from pathlib import Path") == 1
    assert len(prompt.prefix) < len(doc) / 2  # the window is still the file's tail, not the file
