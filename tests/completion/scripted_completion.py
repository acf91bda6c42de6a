"""The completion engine run on one document against a provider that streams a fixed answer: what
would be shown, and the prompt the model was given. Shared by the engine and guard tests here."""

from __future__ import annotations

from kestrel.context.window import split_at
from kestrel.providers.base import CompletionPrompt


class ScriptedProvider:
    """A provider that streams one fixed answer and records the prompt it was given."""

    kind, model, connection_state = "scripted", "scripted", "ready"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[CompletionPrompt] = []

    async def complete(self, prompt, stats):
        self.prompts.append(prompt)
        stats.stop_reason = "stop"
        yield self.answer


def complete_at(document: str, cursor: int, answer: str) -> tuple[str, CompletionPrompt]:
    import asyncio

    from kestrel.completion.engine import CompletionInput, InlineCompletionEngine
    from kestrel.config import CompletionSettings

    class Quiet:
        def generation_started(self): ...
        def generation_finished(self, stats, error): ...

    provider = ScriptedProvider(answer)
    engine = InlineCompletionEngine(CompletionSettings(), Quiet())
    engine.set_provider(provider)
    before = document[:cursor]
    line = before.count("\n")
    cur = split_at(document, line, cursor - (before.rfind("\n") + 1))
    req = CompletionInput("file:///w/a.py", "a.py", "python", cur, lambda q, n: ())
    return asyncio.run(engine.complete(req)), provider.prompts[0]
