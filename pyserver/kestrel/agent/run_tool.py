"""The agent's run tool: `run_command` runs a shell command in the workspace folder (the tests, a build)
and gives the model its exit code and output, only after the user said Run to that exact command (the
feature asks through `window/showMessageRequest`); text the agent read gets no further than that
question. The command gets no stdin, its own process group (ended by Stop, the time limit or its own
exit) and the server's environment without anything that looks like a credential; its output is cut
to a head and tail, keys masked. Why: docs/design-notes.md#pyserverkestrelagentrun_toolpy
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..redact import redact, registered_secrets
from .read_tools import ToolRefused, ToolResult

RUN_TOOL: dict[str, Any] = {
    "name": "run_command", "description": "Run a shell command in the workspace folder (tests, a build, a "
    "linter) and get its exit code and output. The user approves each command first.",
    "parameters": {"type": "object", "properties": {
        "command": {"type": "string", "description": "the command line, as typed in a terminal"}},
        "required": ["command"]}}
RUN_NAME = RUN_TOOL["name"]

TIMEOUT_S = 120.0  # a test suite on a laptop; past it the command is ended and the model told
MAX_COMMAND_CHARS = 2_000
OUTPUT_HEAD, OUTPUT_TAIL = 1_500, 2_500  # characters of output the model gets (the tail holds the failures)
_CREDENTIAL_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|AUTH)", re.I)


def command_of(arguments: dict[str, Any]) -> str:
    """The call's command line, checked: one non-empty line of reasonable length."""
    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolRefused("run_command needs a `command`: the command line to run")
    command = command.strip()
    if len(command) > MAX_COMMAND_CHARS:
        raise ToolRefused(f"the command is {len(command)} characters long; at most {MAX_COMMAND_CHARS}")
    if "\x00" in command:
        raise ToolRefused("the command holds a NUL character")
    hidden = _HIDDEN.search(command)
    if hidden:
        # What the user approves must be what runs: control characters and bidirectional overrides
        # show as nothing (or reorder the text) in the approval dialog.
        raise ToolRefused(f"the command holds an invisible control character (U+{ord(hidden.group()):04X}); "
                          "write it with visible characters only")
    return command


# Control characters other than tab and newline, DEL, C1 controls, and the bidirectional marks and
# overrides (U+061C, U+200E-F, U+202A-E, U+2066-9): shown as nothing, or reordering what is shown.
_HIDDEN = re.compile("[\x01-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# What a command run without asking may not hold: anything that chains, redirects, substitutes, expands
# or escapes (so `pytest; curl … | sh`, `pytest $(…)`, `pytest > ~/.bashrc` are asked about like any other).
_SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}\[\]*?~!#\\\n\r]")


def allowed_unasked(command: str, allowed: list[str] | None) -> bool:
    """Does the user's allow-list let `command` run without asking? Only a single simple command
    (no shell syntax beyond quoting) whose first words are one entry's words: `pytest` allows
    `pytest -q tests/a.py`, never `pytest; rm -rf ~` nor `pytest-evil`."""
    if not allowed or _SHELL_SYNTAX.search(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for entry in allowed:
        try:
            want = shlex.split(entry) if isinstance(entry, str) and not _SHELL_SYNTAX.search(entry) else []
        except ValueError:
            continue
        if want and words[: len(want)] == want:
            return True
    return False


def command_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment without credentials: by name, and any value that holds a key Kestrel was given."""
    secrets = [s for s in registered_secrets() if s]
    return {k: v for k, v in (os.environ if environ is None else environ).items()
            if not _CREDENTIAL_NAME.search(k) and not any(s in v for s in secrets)}


def cut_output(text: str) -> str:
    """The head and tail of a command's output."""
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return text
    return f"{text[:OUTPUT_HEAD]}\n… ({len(text) - OUTPUT_HEAD - OUTPUT_TAIL} characters left out) …\n{text[-OUTPUT_TAIL:]}"


@dataclass(frozen=True)
class CommandOutcome:
    exit_code: int | None  # None: ended by Kestrel (stopped or out of time)
    output: str  # stdout and stderr as they came, cut, keys masked
    seconds: float
    ended: str = ""  # why it was ended: "stopped", "timeout" or ""
    limit: float = TIMEOUT_S

    def for_model(self, command: str) -> ToolResult:
        head = (f"`{command}` was stopped by the user after {self.seconds:.1f} s" if self.ended == "stopped" else
                f"`{command}` ran longer than {self.limit:g} s and was ended" if self.ended == "timeout" else
                f"`{command}` exited with code {self.exit_code} after {self.seconds:.1f} s")
        body = self.output if self.output.strip() else "(no output)"
        return ToolResult(self.exit_code == 0, f"{head}. Output:\n{body}")


async def run_command(command: str, cwd: Path, stopped: Callable[[], bool], timeout: float = TIMEOUT_S,
                      environ: Mapping[str, str] | None = None) -> CommandOutcome:
    """Run `command` with /bin/sh in `cwd` until it exits, `stopped()` turns true (checked every 50 ms)
    or `timeout` passes; then its whole process group is ended."""
    t0 = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", command, cwd=str(cwd), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, env=command_environment(environ), start_new_session=True)
    head, tail = bytearray(), bytearray()  # the first bytes, and a bounded window of the last ones
    total = 0
    keep = 4 * (OUTPUT_HEAD + OUTPUT_TAIL)  # bytes: enough for the characters shown, even multi-byte

    async def read() -> None:
        nonlocal total, tail
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            total += len(chunk)
            room = keep - len(head)
            if room > 0:
                head.extend(chunk[:room])
                chunk = chunk[room:]
            tail.extend(chunk)
            if len(tail) > keep:
                tail = tail[-keep:]

    reader = asyncio.create_task(read())
    ended = ""
    # The exit is polled: asyncio's wait() also waits for the output to close, which a child left
    # running in the background holds open.
    while not ended and proc.returncode is None:
        await asyncio.wait({reader}, timeout=0.05)
        ended = "stopped" if stopped() else "timeout" if time.monotonic() - t0 > timeout else ""
    # Children it left behind (a server started with `&`) end with it; the group is gone when there are none.
    await _end_group(proc.pid)
    # A child out of the group (its own session) may hold the output open: it is not waited for.
    await asyncio.wait({reader}, timeout=0.5)
    reader.cancel()
    code = await proc.wait() if proc.returncode is None else proc.returncode
    text = bytes(head).decode("utf-8", "replace")
    if tail:
        dropped = total - len(head) - len(tail)
        text += ("\n" if dropped else "") + bytes(tail).decode("utf-8", "replace")
    return CommandOutcome(None if ended else code, redact(cut_output(text)), time.monotonic() - t0, ended, timeout)


async def _end_group(pid: int) -> None:
    """SIGTERM to the command's process group (a test runner may clean up), SIGKILL 0.2 s later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGTERM:
            await asyncio.sleep(0.2)
