"""Pure logic: settings, windows, FIM templates, post-processing, exclusion, redaction."""

from __future__ import annotations

import logging

import pytest

from kestrel.completion.shape import wants_multiline
from kestrel.config import SettingsError, load_settings
from kestrel.context.exclusion import is_excluded
from kestrel.context.window import ANCHOR, column_to_index, prefix_window, split_at, suffix_window
from kestrel.providers.base import CompletionPrompt, Snippet
from kestrel.providers.prompts import completion_messages, fim_template_for
from kestrel.redact import RedactingFilter, redact, register_secret


# -- settings ---------------------------------------------------------------------------
def test_environment_alone_configures_a_provider():
    s = load_settings(environ={"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "m", "OPENAI_BASE_URL": "http://x/v1",
                               "OPENAI_API_KEY": "sk-env", "KESTREL_EFFORT": "high"})
    assert (s.provider, s.model, s.base_url, s.api_key, s.effort) == ("chat", "m", "http://x/v1", "sk-env", "high")


def test_precedence_env_then_init_then_changed():
    env = {"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "env-model"}
    s = load_settings({"kestrel": {"model": "init-model", "completion": {"maxLines": 3}}}, {"kestrel": {"effort": "xhigh"}}, env)
    assert s.model == "init-model" and s.effort == "xhigh" and s.completion.max_lines == 3


def test_presets_fill_base_url_and_never_borrow_the_openai_key():
    s = load_settings({"provider": "groq"}, environ={"OPENAI_API_KEY": "sk-openai-secret"})
    assert s.provider == "chat" and s.base_url.startswith("https://api.groq.com") and s.api_key is None
    s = load_settings({"provider": "groq"}, environ={"GROQ_API_KEY": "gsk-x"})
    assert s.api_key == "gsk-x"
    s = load_settings({"provider": "ollama"}, environ={})
    assert s.provider == "fim" and s.base_url == "http://127.0.0.1:11434/v1"


def test_only_an_openai_key_selects_openai_websocket():
    s = load_settings(environ={"OPENAI_API_KEY": "sk-abc"})
    assert s.provider == "responses-ws" and s.preset == "openai" and s.configured


def test_nothing_configured():
    assert not load_settings(environ={}).configured


@pytest.mark.parametrize("bad", [{"effort": "max"}, {"provider": "nope"}, {"completion": {"maxLines": 0}}])
def test_bad_settings_raise_readable_errors(bad):
    with pytest.raises(SettingsError):
        load_settings(bad, environ={"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "m"})


def test_unknown_nested_settings_are_ignored_not_fatal():
    s = load_settings({"completion": {"bogus": 1, "maxLines": 4}}, environ={"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "m"})
    assert s.completion.max_lines == 4 and s.configured


def test_settings_repr_hides_the_key():
    s = load_settings({"provider": "chat", "model": "m", "apiKey": "sk-supersecret-123456"}, environ={})
    assert "supersecret" not in repr(s)


# -- windows ----------------------------------------------------------------------------
def test_split_at_utf16_surrogates_and_clamping():
    text = "a😀b = 1\nsecond\n"
    cur = split_at(text, 0, 3)  # 'a' + surrogate pair (2 units) -> before 'b'
    assert cur.before == "a😀" and cur.line_after == "b = 1"
    assert split_at(text, 0, 2).before == "a😀"  # inside the pair: never split a character
    assert split_at(text, 0, 999).line_after == ""  # past end of line
    cur = split_at(text, 99, 0)  # past end of file
    assert cur.after == "" and cur.before == text
    assert column_to_index("é", 2, "utf-8") == 1 and column_to_index("é", 1, "utf-32") == 1


def test_prefix_window_is_stable_while_typing():
    before = "".join(f"line {i}\n" for i in range(3000))
    w1 = prefix_window(before, 500)
    w2 = prefix_window(before + "x", 500)
    assert w2 == w1 + "x"  # same start: prompt caches keep hitting
    assert len(w1) <= 500 * 3.5 and w1.startswith("line ")
    assert prefix_window("short", 500) == "short"


def test_suffix_window_cuts_on_a_line():
    after = "".join(f"row {i}\n" for i in range(1000))
    s = suffix_window(after, 50)
    assert s.endswith("\n") and len(s) <= 175


# -- shape and post-processing ----------------------------------------------------------
def test_multiline_decision():
    assert wants_multiline("def f(x):", "")
    assert wants_multiline("    ", "")
    assert not wants_multiline("x = fo", "")
    assert not wants_multiline("print(", "x, y)")
    assert wants_multiline("call(", ")")


# -- prompts ----------------------------------------------------------------------------
def test_fim_templates_by_family():
    p = CompletionPrompt(prefix="def f(", suffix=")\n", language="python", path="/a.py",
                         snippets=(Snippet("/b.py", "import os"),))
    qwen = fim_template_for("Qwen2.5-Coder-0.5B").render(p)
    assert qwen.endswith("<|fim_prefix|>def f(<|fim_suffix|>)\n<|fim_middle|>") and "<|file_sep|>/b.py\nimport os" in qwen
    assert fim_template_for("bigcode/starcoder2-3b").render(p).endswith("<fim_prefix>def f(<fim_suffix>)\n<fim_middle>")
    assert "<｜fim▁hole｜>" in fim_template_for("deepseek-coder-6.7b").render(p)
    cl = fim_template_for("codellama:7b-code").render(p)
    assert "<PRE> def f( <SUF>)\n <MID>" in cl and "# Path: /b.py" in cl
    with pytest.raises(ValueError):
        fim_template_for("x", "nope")


def test_chat_prompt_marks_the_cursor():
    msgs = completion_messages(CompletionPrompt(prefix="a = ", suffix="\n", language="python", path="/a.py", multiline=False))
    assert msgs[0]["role"] == "system" and "a = <|cursor|>\n" in msgs[1]["content"]


# -- exclusion and redaction ------------------------------------------------------------
@pytest.mark.parametrize("uri", ["file:///w/.env", "file:///w/.env.local", "file:///w/certs/server.pem",
                                 "file:///w/k.key", "file:///home/u/.ssh/id_rsa", "file:///w/.git/config"])
def test_secret_files_are_excluded(uri):
    assert is_excluded(uri)


def test_user_globs_and_normal_files():
    assert not is_excluded("file:///w/src/app.py")
    assert is_excluded("file:///w/secret/app.py", ("**/secret/*",))


def test_redaction_of_known_and_shaped_keys(caplog):
    register_secret("my-canary-key-123456")
    assert "canary" not in redact("key=my-canary-key-123456")
    assert "sk-proj" not in redact("Authorization: Bearer sk-proj-abcdefghijklmnop")
    logger = logging.getLogger("t")
    logger.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO):
        logger.info("using %s", "my-canary-key-123456")
    assert "my-canary-key-123456" not in caplog.text


# -- the completion engine (the cuts themselves: tests/completion/golden/) ---------------
def test_paths_are_relative_to_the_workspace_and_never_absolute():
    from types import SimpleNamespace

    from kestrel.core.documents import Documents

    folder = SimpleNamespace(uri="file:///home/ana/project")
    server = SimpleNamespace(workspace=SimpleNamespace(folders={"p": folder}, root_path="/home/ana/project"))
    docs = Documents(server)
    assert docs.path("file:///home/ana/project/src/app.py") == "src/app.py"
    assert docs.path("file:///tmp/elsewhere/notes.py") == "notes.py"


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
    cursor = doc.index("\n    return") + 1
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
        return first, waited

    first, waited = asyncio.run(go())
    # While nothing is known, the answer is what the early cuts give (the block is longer than
    # the horizon in which a hole must rejoin the code below); once the model is known to end its
    # blocks, the whole ended block, dedents and all.
    assert all(text != middle for text in first[:MIN_SEEN]) and first[MIN_SEEN:] == [middle] * 2, first
    # Kept to the end: the first MIN_SEEN (to learn), then one in every PROBE_EVERY.
    assert [i for i, w in enumerate(waited) if w] == [*range(MIN_SEEN), MIN_SEEN - 1 + PROBE_EVERY], waited


class _ScriptedProvider:
    """A provider that streams one fixed answer and records the prompt it was given."""

    kind, model, connection_state = "scripted", "scripted", "ready"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[CompletionPrompt] = []

    async def complete(self, prompt, stats):
        self.prompts.append(prompt)
        stats.stop_reason = "stop"
        yield self.answer


def _complete_at(document: str, cursor: int, answer: str) -> tuple[str, CompletionPrompt]:
    import asyncio

    from kestrel.completion.engine import CompletionInput, InlineCompletionEngine
    from kestrel.config import CompletionSettings

    class Quiet:
        def generation_started(self): ...
        def generation_finished(self, stats, error): ...

    provider = _ScriptedProvider(answer)
    engine = InlineCompletionEngine(CompletionSettings(), Quiet())
    engine.set_provider(provider)
    before = document[:cursor]
    line = before.count("\n")
    cur = split_at(document, line, cursor - (before.rfind("\n") + 1))
    req = CompletionInput("file:///w/a.py", "a.py", "python", cur, lambda q, n: ())
    return asyncio.run(engine.complete(req)), provider.prompts[0]


def test_the_cursor_before_a_line_of_code_asks_for_a_new_line_above_it():
    doc = "def f(xs):\n    total = 0\n    return total\n"
    # At the line's start: the model sees the code pushed down to the next line.
    cursor = doc.index("    return")
    text, prompt = _complete_at(doc, cursor, "    total += len(xs)")
    assert prompt.suffix.startswith("\n    return total") and prompt.multiline
    assert text == "    total += len(xs)\n"
    new = doc[:cursor] + text + doc[cursor:]
    assert new == "def f(xs):\n    total = 0\n    total += len(xs)\n    return total\n"
    # After the indentation: the pushed-down code keeps its column.
    cursor = doc.index("return")
    text, prompt = _complete_at(doc, cursor, "total += 1")
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


def test_a_suggestion_that_breaks_the_syntax_is_not_shown():
    from kestrel.completion.syntax_guard import breaks_syntax

    before, after = "def f(n):\n    if n == 0:\n", "\n    if n == 1:\n        return 1\n"
    assert not breaks_syntax(before, "        return 0", after, "python")  # fills the empty body
    assert breaks_syntax(before, "        return 0\n    else:", after, "python")  # a header with no body
    assert breaks_syntax(before, "        return (0", after, "python")
    # Half-typed code is not held against the suggestion, and other languages are not checked.
    assert not breaks_syntax("def f(x):\n    return foo(", "a, b", "\n", "python")
    assert not breaks_syntax("function f() {\n", "  return (0", "\n}\n", "javascript")
    # Through the engine: the model's answer would leave a dangling bracket: nothing is shown.
    doc = "def f(xs):\n    total = 0\n    return total\n"
    text, _ = _complete_at(doc, doc.index("    return"), "    total += (len(xs)")
    assert text == ""

def test_a_block_that_does_not_fit_the_code_around_it_offers_its_first_line_if_that_fits():
    # The line that opens the `if` is missing; the model writes it, then a branch of its own that
    # collides with the `else:` below (two `else`s). The block is broken; its first line is right.
    doc = "def same(i, j):\n        return '0'\n    else:\n        return '1'\n"
    cursor = doc.index("        return '0'")
    text, _ = _complete_at(doc, cursor, "    if i == j:\n        return '1'\n    else:")
    assert text == "    if i == j:\n"
    # Nothing when the first line does not fit either.
    text, _ = _complete_at(doc, cursor, "    if i == j\n        return '1'\n    else:")
    assert text == ""


def test_a_suggestion_that_reads_a_name_the_code_cannot_have_is_not_shown():
    from kestrel.completion.name_guard import misreads_names

    head = "import math\n\nLIMIT = 3\n\ndef shift(x, n):\n"
    # Bound nowhere (not a parameter, import, module name, builtin): NameError.
    assert misreads_names(head, "    return s[n:] + s[:n]\n", "", "python")
    assert not misreads_names(head, "    s = str(x)\n", "    return s[n:] + s[:n]\n", "python")
    assert not misreads_names(head, "    return math.floor(x) + LIMIT + len(str(n))\n", "", "python")
    assert not misreads_names(head, "    return helper(x)\n", "\ndef helper(y):\n    return y\n", "python")
    # A local of the function assigned only further down, outside any loop: UnboundLocalError.
    body = "    out = []\n    for i in range(n):\n"
    later = "    text = ''.join(out)\n    for c in text:\n        out.append(c)\n    return out\n"
    assert misreads_names(head + body, "        out.append(c)\n", later, "python")
    assert not misreads_names(head + body, "        out.append(i)\n", later, "python")
    # ... but bound on an earlier pass of the loop that holds the read is fine.
    loop = "    prev = None\n    for c in str(x):\n"
    assert not misreads_names(head + loop, "        if c == last: continue\n", "        last = c\n", "python")
    # The code right after the cursor needs a name nothing binds: the gap is where it belongs.
    gap_after = "    return s[n:] + s[:n]\n"
    assert misreads_names(head, "    n = n % 10\n", gap_after, "python")
    assert not misreads_names(head, "    s = str(x)\n", gap_after, "python")
    # Far from the cursor, an undefined name is the person's business, not the suggestion's.
    far = "    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return undefined_thing\n"
    assert not misreads_names(head, "    y = x + 1\n", far, "python")
    # Not checked: a star import, unparsable code (the syntax guard's job), other languages.
    assert not misreads_names("from m import *\n" + head, "    return s\n", "", "python")
    assert not misreads_names(head, "    return s[", "\n", "python")
    assert not misreads_names("function f() {\n", "  return s;\n", "}\n", "javascript")
    # Through the engine: the model reads a name nothing binds, so nothing is shown.
    doc = "def area(r):\n    return pi * r * r\n"
    text, _ = _complete_at(doc, doc.index("    return"), "    r = radius\n")
    assert text == ""
    text, _ = _complete_at(doc, doc.index("    return"), "    pi = 3.14159\n")
    assert text.startswith("    pi = 3.14159")



def test_the_repairs_a_diagnostic_spells_out():
    from kestrel.edits.imports import missing_imports
    from kestrel.edits.repairs import missing_token, similar_name

    # The parser names the missing token: it goes where the parser stopped or at a line's end near it.
    header = "def f(x):\n    if x == 1\n        return 0\n    return x\n"
    assert next(missing_token(header, 1, "Expected `:`, found newline", "python")) == header.replace("== 1", "== 1:")
    call = "def f(xs):\n    total = sum(abs(x) for x in xs\n    return total\n"
    fixed = list(missing_token(call, 3, "unexpected EOF while parsing", "python"))
    assert fixed and fixed[0] == call.replace("in xs", "in xs)")  # from Python's "'(' was never closed"
    assert all(compile(t, "t", "exec") for t in fixed)  # only candidates that parse
    assert list(missing_token("def f(x):\n    return x\n", 1, "Expected `:`", "python")) == []  # it parses already
    assert list(missing_token("x = = 1\n", 0, "invalid syntax", "python")) == []  # nothing named: no guess
    # An undefined name close to one the file binds, or to a builtin: the reads on its lines renamed.
    loop = "def f(x):\n    for t in x:\n        print(ts)\n    return ts\n"
    assert next(similar_name(loop, 2, 2, "ts", "python")) == loop.replace("print(ts)", "print(t)")
    assert next(similar_name("def g(a):\n    pritn(a)\n", 1, 1, "pritn", "python")) == "def g(a):\n    print(a)\n"
    assert list(similar_name("def g(a):\n    zqxv(a)\n", 1, 1, "zqxv", "python")) == []
    # "Add import" brings the other names the file needs from the same module in the same line.
    typed = "def f(x: List[int]) -> Optional[int]:\n    return math.floor(Counter(x).most_common(1)[0][0])\n"
    assert missing_imports(typed, "List", "python") == "from typing import List, Optional"
    assert missing_imports(typed, "math", "python") == "import math"
    assert missing_imports(typed, "frobnicate", "python") is None


def test_a_fix_is_asked_for_the_enclosing_function_or_only_the_faulty_lines():
    from kestrel.edits.quickfix import fix_region

    src = ("import os\n\n\ndef greet(name):\n    for x in name:\n        if x:\n            pritn(x)\n"
           "    return name\n\n\nfor i in range(3):\n    prnt(i)\n")
    r = fix_region(src, 6, 6)
    assert (r.start_line, r.end_line, r.problem_line) == (3, 7, 6)  # the whole def, not just the `if`
    assert (fix_region(src, 11, 11).start_line, fix_region(src, 11, 11).end_line) == (11, 11)  # module level
    assert (fix_region(src, 3, 3).start_line, fix_region(src, 3, 3).end_line) == (3, 7)  # on the def line itself
    data = '{\n  "a": 1,\n  "b": 2,\n}\n'
    r = fix_region(data, 2, 2)
    assert data[r.start : r.end] == '  "b": 2,'  # JSON: the line, never its closing brace


def test_no_spare_connection_is_opened_to_a_model_server_on_this_machine():
    """After an abandoned HTTP/1.1 stream a spare connection is opened (GET /models) to a remote
    server; a local llama.cpp Python server would interrupt its running stream for that request."""
    import asyncio

    from kestrel.config import Settings
    from kestrel.providers.openai_http import HttpStreamer, is_loopback

    assert is_loopback("http://127.0.0.1:8080/v1") and is_loopback("http://localhost:11434/v1")
    assert is_loopback("http://[::1]:8000/v1") and not is_loopback("https://api.groq.com/openai/v1")

    async def spare_after_abort(base_url):
        streamer = HttpStreamer(Settings(provider="chat", base_url=base_url, model="m", api_key="k"))
        streamer.client  # the pool exists
        streamer._after_abort()
        opened = streamer._replenishing is not None
        await streamer.aclose()
        return opened

    assert not asyncio.run(spare_after_abort("http://127.0.0.1:9/v1"))
    assert asyncio.run(spare_after_abort("http://192.0.2.1:9/v1"))  # TEST-NET: never answers


def test_a_slip_is_a_few_tokens_with_no_new_names():
    from kestrel.edits.line_scan import asks_for_a_repair, slip

    words = {"i", "n", "xs", "len", "range", "total", "x"}
    assert slip("if x != 0:", "if x == 0:", words) == 1
    assert slip("for i in range(1, n):", "for i in range(0, n):", words) == 1
    assert slip("if x > 0 or n > 0:", "if x > 0 and n > 0:", words) == 1
    assert slip("return total", "return total", words) is None  # the same line
    assert slip("total = 0", "count = 0", words) is None  # a name the code does not have
    assert slip("total = sum(xs)", "total = 0\nfor x in xs: total += x", words) is None  # another way to write it
    assert asks_for_a_repair("Fix the bug. The tests fail: assert f(2) == 4")
    assert asks_for_a_repair("this returns the wrong value for empty lists")
    assert asks_for_a_repair("it doesn't work when n is 0")
    assert not asks_for_a_repair("add a docstring") and not asks_for_a_repair("rename x to count")
    assert not asks_for_a_repair("fix the formatting") and not asks_for_a_repair("add error handling")


def test_re_reading_a_region_line_by_line_offers_the_slip_the_model_insists_on():
    import asyncio

    from kestrel.edits.line_scan import candidates

    doc = "def count_even(xs):\n    n = 0\n    for x in xs:\n        if x % 2 == 1:\n            n += 1\n    return n\n"

    class LineModel:
        """Writes back each asked line as a correct version of the function has it."""
        kind, model, connection_state = "scripted", "scripted", "ready"
        right = ["n = 0", "for x in xs:", "if x % 2 == 0:", "n += 1", "return n"]

        def __init__(self):
            self.asked = []

        async def complete(self, prompt, stats):
            line = prompt.prefix.count("\n")
            self.asked.append(line)
            yield self.right[line - 1] + "\n    more"

    model = LineModel()
    found = asyncio.run(candidates(doc, 0, len(doc) - 1, model, "python", "a.py", lambda region: True))
    assert model.asked == [1, 2, 3, 4, 5]  # every line of the body, not the def line
    assert [(c.line, c.new_line) for c in found] == [(3, "        if x % 2 == 0:")]
    assert found[0].apply(doc[:-1]) + "\n" == doc.replace("== 1", "== 0")
    # A candidate the validator refuses (it would not lint, say) is not offered.
    assert asyncio.run(candidates(doc, 0, len(doc) - 1, LineModel(), "python", "a.py", lambda region: False)) == []


def test_an_import_is_certain_only_when_the_code_uses_the_name_as_that_module():
    from kestrel.edits.imports import missing_imports

    assert missing_imports("def f(s):\n    return re.sub('a', 'b', s)\n", "re", "python") == "import re"
    assert missing_imports("def f(ret):\n    return re\n", "re", "python") is None  # `ret` with a letter dropped
    assert missing_imports("def f(ret):\n    re.append(1)\n", "re", "python") is None  # `re` has no `append`
    assert missing_imports("def f(x):\n    return re.sub(x) + re\n", "re", "python") is None  # also read bare
    assert missing_imports("def f(:\n    return re.sub(x)\n", "re", "python") is None  # no parse, no certainty
    # `count` is `counts` with its last letter dropped, not itertools.count
    assert missing_imports("def f(xs):\n    counts = len(xs)\n    return count\n", "count", "python") is None
    assert missing_imports("def f(xs):\n    return count(xs)\n", "count", "python") == "from itertools import count"
