"""Does the endpoint's model call tools natively? One small request finds out, once per endpoint.

Servers take a request's `tools` whether or not the model behind them uses them: llama.cpp's server
passes them to the model's chat template, and the embedded 0.5B then prints its calls in the answer
(0 native calls in 200 BFCL questions, bench/AGENT.md). So an agent asks once: a one-tool request
that a tool-using model answers with the call. A native call: the agent offers its tools natively;
anything else (text, an error, a server that refuses `tools`): the text protocol, which reads calls
from any answer."""

from __future__ import annotations

from ..providers.base import Provider, ProviderError, StreamStats

PROBE_TOOL = {"type": "function", "function": {
    "name": "report_ready", "description": "Report that you are ready to work.",
    "parameters": {"type": "object", "properties": {"ready": {"type": "boolean"}}, "required": ["ready"]}}}
PROBE_MESSAGES = [{"role": "user", "content": "Call the report_ready tool with ready set to true."}]
PROBE_MAX_TOKENS = 64


async def uses_native_tools(provider: Provider) -> bool:
    if not getattr(provider, "native_tools", False):
        return False
    stats = StreamStats()
    try:
        async for _ in provider.chat(PROBE_MESSAGES, stats, max_tokens=PROBE_MAX_TOKENS, deterministic=True,
                                     tools=[PROBE_TOOL]):
            pass
    except ProviderError:
        return False
    return any((c.get("function") or {}).get("name") == "report_ready" for c in stats.tool_calls)


class NativeToolsCache:
    """The probe's answer per endpoint and model (a changed setting is another endpoint)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str, str], bool] = {}

    async def native(self, provider: Provider) -> bool:
        key = (provider.kind, getattr(provider.settings, "base_url", "") or "", provider.model)
        if key not in self._known:
            self._known[key] = await uses_native_tools(provider)
        return self._known[key]
