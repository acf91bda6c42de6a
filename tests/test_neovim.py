"""kestrel-lsp driven by a real Neovim (0.7+, headless) as the LSP client.

Neovim runs tests/nvim/drive_kestrel.lua, which starts the server with
`vim.lsp.start_client`, asks for an inline completion, lists code actions for a
diagnostic and applies the "Fix with Kestrel" action; the mock model stands in for
the real one. The script stops at two checkpoints so that this test can read the
mock's counters around the code action listing and set the model's fix.

Two client flavours:
* "resolve": Neovim's own capabilities (0.7.2 advertises codeAction resolveSupport
  for `edit`), settings in `initializationOptions`; the fix is picked in Neovim's code
  action menu (`vim.lsp.buf.code_action`, `vim.ui.select` stubbed), which resolves it.
* "command": resolveSupport removed from the capabilities, settings in the server's
  environment (`cmd_env`); the fix is the action's `kestrel.fix` command, run with
  `workspace/executeCommand`, and applied by Neovim's `workspace/applyEdit` handler.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import clean_env

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).parent / "nvim" / "drive_kestrel.lua"
TIMEOUT_S = 60.0
CHAT = "/v1/chat/completions"

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not on PATH (Debian: apt-get install neovim; or `make system-deps`)")


def run_nvim(work: Path, config: dict[str, Any], on_checkpoint: Callable[[str], None]) -> dict[str, Any]:
    """Run the Lua driver in headless Neovim; release its checkpoints; return its results."""
    config_file = work / "config.json"
    config_file.write_text(json.dumps(config))
    env = clean_env(
        KESTREL_NVIM_TEST=str(config_file),
        XDG_CONFIG_HOME=str(work / "xdg" / "config"),
        XDG_DATA_HOME=str(work / "xdg" / "data"),
        XDG_STATE_HOME=str(work / "xdg" / "state"),
        XDG_CACHE_HOME=str(work / "xdg" / "cache"),  # Neovim's lsp.log lands here
    )
    output = (work / "nvim-output.log").open("wb")
    proc = subprocess.Popen(
        [NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {SCRIPT}"],
        stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=work,
        start_new_session=True,  # its own process group: a timeout also ends the server
    )
    pending = ["before_code_action", "after_code_action"]
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                pytest.fail(f"nvim did not finish within {TIMEOUT_S:.0f} s\n{logs(work, config)}")
            for name in list(pending):
                if (work / f"{name}.ready").exists():
                    on_checkpoint(name)
                    (work / f"{name}.go").write_text("")
                    pending.remove(name)
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        output.close()
    print(logs(work, config))  # shown by pytest when the test fails
    results_file = Path(config["results"])
    assert results_file.exists(), f"the Lua driver wrote no results (nvim exit {proc.returncode})"
    results = json.loads(results_file.read_text())
    assert results.get("done"), f"the Lua driver did not finish: {results}"
    assert "error" not in results, results["error"]
    return results


def logs(work: Path, config: dict[str, Any]) -> str:
    out = []
    for title, path in (("kestrel-lsp stderr", Path(config["stderr_log"])), ("nvim output", work / "nvim-output.log"),
                        ("driver results", Path(config["results"]))):
        text = path.read_text(errors="replace") if path.exists() else "(none)"
        out.append(f"----- {title} -----\n{text}")
    return "\n".join(out)


def edit_requests(mock) -> int:
    """Chat requests other than inline completions (after a suggestion is shown, the one that would
    follow it may be prepared at any moment: completion.prepareNext is on by default)."""
    return sum(1 for r in mock.stats()["request_log"] if r["endpoint"].endswith(CHAT)
               and "code completion engine" not in json.dumps(r["body"].get("messages")))


@pytest.mark.parametrize("flavour", ["resolve", "command"])
def test_neovim_client(mock, tmp_path: Path, flavour: str) -> None:
    mock.configure(text="return a + b\n")
    add_file, fix_file = tmp_path / "add.py", tmp_path / "fix.py"
    add_file.write_text("def add(a, b):\n    \n")
    fix_file.write_text('pritn("hi")\n')
    settings = {"provider": "chat", "baseUrl": mock.base_url, "model": "mock-model", "apiKey": "test-key-123456"}
    env_settings = {"KESTREL_PROVIDER": "chat", "KESTREL_MODEL": "mock-model", "OPENAI_BASE_URL": mock.base_url,
                    "OPENAI_API_KEY": "test-key-123456"}
    config = {
        "python": sys.executable,
        "server_args": ["-m", "kestrel", "--log-level", "DEBUG"],
        "work_dir": str(tmp_path),
        "stderr_log": str(tmp_path / "kestrel-lsp.stderr.log"),
        "results": str(tmp_path / "results.json"),
        "add_file": str(add_file),
        "fix_file": str(fix_file),
        "fix_mode": "ui" if flavour == "resolve" else "command",
        "strip_resolve_support": flavour == "command",
        "init_options": {"kestrel": settings} if flavour == "resolve" else None,
        "cmd_env": env_settings if flavour == "command" else None,
    }
    chat_requests: dict[str, int] = {}

    def on_checkpoint(name: str) -> None:
        chat_requests[name] = edit_requests(mock)
        if name == "after_code_action":
            mock.configure(text='print("hi")')  # the model's corrected line

    started = time.monotonic()
    results = run_nvim(tmp_path, config, on_checkpoint)
    print(f"nvim session took {time.monotonic() - started:.2f} s")

    assert tuple(int(part) for part in results["nvim_version"].split(".")) >= (0, 7, 0), results["nvim_version"]
    assert results["inline_completion_provider"] not in (None, False)

    # a. inline completion, sent by Neovim as a raw request
    inline = results["inline"]
    assert inline.get("err") is None, inline
    items = inline["result"]["items"]
    assert items[0]["insertText"] == "return a + b"
    assert items[0]["range"] == {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 4}}
    assert results["add_text"] == "def add(a, b):\n    "  # a completion request never edits the buffer

    # b. two actions per diagnostic, and listing them costs no model request
    listed = results["code_actions"]
    assert listed.get("err") is None, listed
    titles = [action["title"] for action in listed["result"]]
    assert titles == ["Fix with Kestrel: undefined name 'pritn'", "Explain with Kestrel"]
    assert chat_requests["before_code_action"] == 0  # only the inline completion so far
    assert chat_requests["after_code_action"] == 0
    fix, explain = listed["result"]
    assert fix["kind"] == "quickfix" and fix["data"]["action"] == "fix"
    assert fix["diagnostics"][0]["message"] == "undefined name 'pritn'"
    assert explain["command"]["command"] == "kestrel.explain"

    # c. the fix, applied to the buffer by Neovim
    if flavour == "command":
        assert results["client_resolve_support"] == {"properties": ["edit"]}  # what Neovim itself advertises
        assert fix["command"]["command"] == "kestrel.fix"
        assert fix["command"]["arguments"][0]["uri"].endswith("/fix.py")
        assert results["execute"] == {"result": True}, results["execute"]
    else:
        assert "command" not in fix  # Neovim advertises resolveSupport: the edit comes from codeAction/resolve
        assert results["menu"] == titles
    assert results["fixed_text"] == 'print("hi")'
    assert edit_requests(mock) == chat_requests["after_code_action"] + 1  # the fix
    assert not any(n["method"] == "window/showMessage" and n["params"]["type"] == 1 for n in results["notifications"])

    # orderly shutdown
    assert results["stopped"] and results["server_exit"]["code"] == 0, results.get("server_exit")
