"""One run of the repository set: every task through every system on one model endpoint (the local
llama.cpp server started here, or an OpenAI-compatible endpoint given with --base-url).

Systems, each asked once per task, which one goes first rotating task by task:
- raw: the model's FIM answer on the file alone (bench.quality.raw.RawFim, the windows of
  bench.quality.lang_tasks.raw_window, single-line treatment);
- oracle: the same windows with the oracle definitions in Qwen2.5-Coder's repository format
  (prompts.repo_prompt);
- kestrel: `kestrel-lsp` with only the current file open;
- kestrel-tabs: `kestrel-lsp` with the defining modules open as tabs (didOpen'ed, whole files from
  disk, before the current file), as an editor holds them;
- kestrel-nocontext: `kestrel-lsp` with only the current file open and `completion.repositoryContext`
  off (what the context engine adds, on the same pipeline);
- kestrel-budget: `kestrel-lsp` with only the current file open and `completion.latencyBudgetMs` 1000
  (the prompt cut to what the endpoint reads in a second: what that buys in time and costs in quality).
- copilot, copilot-tabs (peers, asked for by name): GitHub Copilot's language server on the same
  model (bench/quality/copilot.py: the stand-in for GitHub forwarding to the same endpoint) with only
  the file open, or with the same tabs open first; its workspace folder holds a link to each package,
  so its documents sit at the same relative paths as Kestrel's (its `# Path:` line and its choice of
  neighbouring tabs see what Kestrel's context sees). One Copilot process each (Copilot caches too).

The TypeScript set (`--language typescript`, ts_tasks.py) runs the same systems: its documents and
tabs open with language id `typescript`, and its warm-up request is TypeScript.

The two Kestrel systems are two server processes (Kestrel caches an answer per document and cursor,
so one process would hand the second system the first one's answer). Both have every package's
root as a workspace folder, and documents open at their real paths (`agents/run.py` as the model
sees it); nothing is written into the packages.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types

from bench.lsp_client import (
    KestrelClient,
    client_capabilities,
    inline_params,
    open_doc,
    position_of,
    server_command,
    stop_server,
    wait_ready,
)
from bench.quality.lang_tasks import raw_window
from bench.quality.lsp import LspAnswer, apply_item, server_env

from . import prompts, scoring
from .tasks import RepoTask

BUDGET_MS = 1000  # kestrel-budget's completion.latencyBudgetMs
SYSTEMS = ("raw", "oracle", "kestrel", "kestrel-tabs", "kestrel-nocontext", "kestrel-budget")
PEER_SYSTEMS = ("copilot", "copilot-tabs")  # never by default: they need Node and run in a network namespace
N_CTX = 8192  # raw windows (1,500 + 400 tokens) + up to ~1,150 tokens of definitions, with room to spare


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Endpoint:
    base_url: str
    model: str
    api_key: str | None = None


class KestrelRepo:
    """One kestrel-lsp process with the packages' roots as its workspace folders."""

    def __init__(self, endpoint: Endpoint, roots: dict[str, Path], log_path: Path, kestrel_src: str | None = None,
                 options: dict[str, Any] | None = None, language: str = "python") -> None:
        self.endpoint = endpoint
        self.language = language  # the documents' language id
        self.options = options  # initializationOptions
        self.roots = roots
        self.log_path = log_path
        self.kestrel_src = kestrel_src
        self.client = KestrelClient("kestrel-repo-context-eval")
        self.cwd = Path(tempfile.mkdtemp(prefix="kestrel-repo-eval-"))
        self._log: Any = None

    async def start(self) -> None:
        e = self.endpoint
        fim = None if "qwen" in e.model.lower() else "qwen"  # raw speaks Qwen's FIM tokens: keep both equal
        env = server_env(e.base_url, e.model, fim, self.kestrel_src)
        if e.api_key:
            env["OPENAI_API_KEY"] = e.api_key  # bound by Kestrel to KESTREL_BASE_URL's origin
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        await self.client.spawn(server_command(console_script=not self.kestrel_src), env, self._log, self.cwd)
        folders = [types.WorkspaceFolder(uri=root.as_uri(), name=name) for name, root in self.roots.items()]
        result = await self.client.initialize_async(types.InitializeParams(
            capabilities=client_capabilities(), process_id=os.getpid(), root_uri=folders[0].uri,
            workspace_folders=folders, initialization_options=self.options))
        self.client.initialized(types.InitializedParams())
        if result.capabilities.inline_completion_provider is None:
            raise RuntimeError("kestrel-lsp does not advertise textDocument/inlineCompletion")
        if not await wait_ready(self.client, 60.0, connected=False, strict=False):
            _say("repo context: kestrel-lsp did not report ready in 60 s; continuing")

    async def complete(self, root: Path, path: str, text: str, cursor: int, tabs: tuple[str, ...] = ()) -> LspAnswer:
        """didOpen the tabs (whole files from disk), then the file; inlineCompletion at `cursor`; the
        first item applied; every document closed again."""
        opened = []
        for tab in tabs:
            uri = (root / tab).as_uri()
            open_doc(self.client, uri, (root / tab).read_text(encoding="utf-8"), self.language)
            opened.append(uri)
        uri = (root / path).as_uri()
        open_doc(self.client, uri, text, self.language)
        opened.append(uri)
        pos = position_of(text, cursor)
        error = None
        t0 = time.perf_counter()
        try:
            items = await self.client.inline_items(inline_params(uri, pos.line, pos.character))
        except Exception as exc:  # an error answer counts as nothing shown
            items, error = [], f"{type(exc).__name__}: {exc}"
        latency = (time.perf_counter() - t0) * 1000
        for u in opened:
            self.client.close_doc(u)
        if not items:
            return LspAnswer(text, "", latency, 0, error)
        new_doc, inserted = apply_item(text, cursor, items[0])
        return LspAnswer(new_doc, inserted, latency, len(text) - (len(new_doc) - len(inserted)), error)

    async def context(self, path: str) -> dict[str, Any] | None:
        """What the context engine sent with this task's prompt (`kestrel/completionContext`): the
        definitions as "path:name", in prompt order; None from a Kestrel without the request, or when
        the last prompt was another file's (the answer came from a cache)."""
        try:
            got = await self.client.protocol.send_request_async("kestrel/completionContext", {})
        except Exception:  # an older Kestrel: no such request
            return None
        got = got if isinstance(got, dict) else getattr(got, "_asdict", lambda: vars(got))()
        if got.get("path") != path:
            return None
        defs = [d if isinstance(d, dict) else getattr(d, "_asdict", lambda d=d: vars(d))() for d in got["definitions"]]
        return {"definitions": [f"{d['path']}:{d['name']}" for d in defs], "chars": got["chars"],
                "resolved": got["resolved"]}

    async def stop(self) -> None:
        await stop_server(self.client, timeout=10.0)
        if self._log is not None:
            self._log.close()
        try:
            self.cwd.rmdir()
        except OSError:
            pass


class CopilotRepo:
    """Copilot's language server (bench/quality/copilot.py's session: the stand-in and one process)
    with a link to every package root in its workspace folder: documents open at
    `<workspace>/<package>/<path>`. Nothing is written into the packages."""

    def __init__(self, endpoint: Endpoint, roots: dict[str, Path], logs: Path, language: str = "python") -> None:
        from bench.quality.copilot import CopilotSession

        self.session = CopilotSession(endpoint.base_url, endpoint.model, logs)  # Qwen's FIM tokens, as raw's
        self.roots = roots
        self.language = language
        self._links: list[Path] = []

    async def start(self) -> None:
        await self.session.start()
        workspace = self.session.server.workspace
        for name, root in self.roots.items():
            link = workspace / name
            link.symlink_to(root, target_is_directory=True)
            self._links.append(link)

    async def complete(self, package: str, path: str, text: str, cursor: int, tabs: tuple[str, ...] = ()) -> LspAnswer:
        """As KestrelRepo.complete: the tabs (focused in turn, as a user opens them), then the file;
        the first item of Copilot's answer applied over its range."""
        client = self.session.server.client
        base = self.session.server.workspace / package
        opened = []
        for tab in tabs:
            uri = (base / tab).as_uri()
            client.open(uri, (self.roots[package] / tab).read_text(encoding="utf-8"), self.language)
            opened.append(uri)
        uri = (base / path).as_uri()
        client.open(uri, text, self.language)
        opened.append(uri)
        answer = await self.session.ask(uri, text, cursor)
        for u in opened:
            client.text_document_did_close(types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=u)))
        return answer

    async def context(self, path: str) -> None:
        return None

    async def stop(self) -> None:
        for link in self._links:  # before the workspace folder is removed: never a walk into a package
            link.unlink(missing_ok=True)
        await self.session.stop()


async def answer(task: RepoTask, system: str, rawc: prompts.RepoFim, sessions: dict[str, KestrelRepo],
                 roots: dict[str, Path]) -> dict[str, Any]:
    """One system's answer to one task, scored."""
    extra: dict[str, Any] = {}
    if system in ("raw", "oracle"):
        p, s = raw_window(task.prefix, task.suffix)
        if system == "raw":
            ans = await rawc.complete(p, s, single_line=True)
        else:
            ans = await rawc.complete_prompt(prompts.repo_prompt(task.package, task.context, task.path, p, s))
        text, latency, document = ans.text, ans.latency_ms, task.prefix + ans.text + task.suffix
        extra = {"finish": ans.finish, "tokens": ans.tokens}
    elif system in PEER_SYSTEMS:
        tabs = task.tabs if system.endswith("-tabs") else ()
        lsp = await sessions[system].complete(task.package, task.path, task.prefix + task.suffix, task.start, tabs)
        text, latency, document = lsp.text, lsp.latency_ms, lsp.document
        extra = {"replaced": lsp.replaced, **({"error": lsp.error} if lsp.error else {})}
    else:
        tabs = task.tabs if system == "kestrel-tabs" else ()
        lsp = await sessions[system].complete(roots[task.package], task.path, task.prefix + task.suffix, task.start,
                                              tabs)  # the editor's text: the reference is what is left to type
        text, latency, document = lsp.text, lsp.latency_ms, lsp.document
        extra = {"replaced": lsp.replaced, **({"error": lsp.error} if lsp.error else {}),
                 "context": await sessions[system].context(task.path)}
    return {"text": text, "latency_ms": round(latency, 1), **scoring.score(task, document, text), **extra}


WARM_UP = {"python": ("__kestrel_eval_warmup__.py", "import os\n\n\ndef main() -> None:\n    path = os.path.join(\n"),
           "typescript": ("__kestrel_eval_warmup__.ts",
                          'import { join } from "node:path";\n\nexport function main(): void {\n  const path = join(\n')}


async def _warm_up(rawc: prompts.RepoFim, sessions: dict[str, KestrelRepo], roots: dict[str, Path],
                   language: str = "python") -> None:
    """One unmeasured request per path (the first request of each pays one-time costs)."""
    name, text = WARM_UP[language]
    await rawc.complete(text, "", single_line=True)
    package, root = next(iter(roots.items()))
    for session in sessions.values():
        await session.complete(package if isinstance(session, CopilotRepo) else root, name, text, len(text))


async def evaluate(tasks: list[RepoTask], roots: dict[str, Path], *, model_path: str | None, endpoint: Endpoint | None,
                   logs: Path, systems: tuple[str, ...] = SYSTEMS, kestrel_src: str | None = None,
                   progress: Callable[[str], None] = _say, language: str = "python") -> dict[str, Any]:
    """Every task through every system; the per-task records and what was measured. `language`: the
    tasks' language id (their documents open with it)."""
    server = None
    t_start = time.perf_counter()
    model_info: dict[str, Any]
    if endpoint is None:
        from kestrel.local.models import resolve_model
        from kestrel.local.runtime import LocalModelServer

        model = resolve_model(model_path, allow_download=False)
        server = LocalModelServer(model, n_ctx=N_CTX, require_key=False)
        progress(f"repo context: starting llama.cpp with {model.path} ...")
        await server.start()
        endpoint = Endpoint(server.base_url, model.name)
        model_info = {"model": model.name, "model_path": str(model.path), "endpoint": "local llama.cpp", "n_ctx": N_CTX}
    else:
        model_info = {"model": endpoint.model, "model_path": None, "endpoint": endpoint.base_url}
    rawc = prompts.RepoFim(endpoint.base_url, endpoint.model, endpoint.api_key)
    changed = {"kestrel-nocontext": {"kestrel": {"completion": {"repositoryContext": False}}},
               "kestrel-budget": {"kestrel": {"completion": {"latencyBudgetMs": BUDGET_MS}}}}
    log = "repo-context" if language == "python" else f"repo-context-{language}"
    sessions: dict[str, Any] = {
        s: KestrelRepo(endpoint, roots, logs / f"{log}-{s}.log", kestrel_src, changed.get(s), language)
        for s in systems if s.startswith("kestrel")}
    sessions.update({s: CopilotRepo(endpoint, roots, logs / f"{log}-{s}", language) for s in systems
                     if s in PEER_SYSTEMS})
    records: list[dict[str, Any]] = []
    try:
        for session in sessions.values():
            await session.start()
        await _warm_up(rawc, sessions, roots, language)
        t_loop = time.perf_counter()
        for k, task in enumerate(tasks):
            r = k % len(systems)
            order = systems[r:] + systems[:r]
            rec: dict[str, Any] = {"task_id": task.task_id, "package": task.package, "path": task.path,
                                   "line": task.line, "kind": task.kind, "name": task.name, "names": list(task.names),
                                   "tabs": list(task.tabs), "context_chars": sum(len(c) for _, c in task.context),
                                   "expected": task.truth, "first": order[0]}
            for system in order:
                rec[system] = await answer(task, system, rawc, sessions, roots)
            records.append(rec)
            done = k + 1
            if done % 4 == 0 or done == len(tasks):
                el = time.perf_counter() - t_loop
                progress(f"repo context: {done}/{len(tasks)} ({task.package}) {el:.0f}s elapsed, "
                         f"~{el / done * (len(tasks) - done):.0f}s left")
    finally:
        for session in sessions.values():
            try:
                await session.stop()
            except Exception as exc:
                progress(f"repo context: stopping kestrel-lsp failed: {type(exc).__name__}: {exc}")
        await rawc.close()
        if server is not None:
            await server.stop()
    return {**model_info, "records": records, "wall_seconds": round(time.perf_counter() - t_start, 1)}
