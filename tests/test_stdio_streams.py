"""Streams an editor may hand the server besides two pipes (what every other test uses): a file as
stdin, read to its end; one socket as both stdin and stdout, where the answers must wait for an editor
that reads late rather than be lost (a reader that made stdin non-blocking would make stdout so too:
docs/design-notes.md#pyserverkestreltransportstdiopy)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

from security.lsp_wire import frame

SERVER = [sys.executable, "-m", "kestrel", "--log-level", "WARNING", "--no-prestart-local"]


def answers(data: bytes) -> dict:
    """id -> message of every response in `data`."""
    out = {}
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        fields = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        msg = json.loads(rest[:length])
        data = rest[length:]
        if "id" in msg and "method" not in msg:
            out[msg["id"]] = msg
    return out


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"processId": None, "rootUri": None, "capabilities": {}}}
STATUS = "kestrel/getStatus"


def test_a_file_as_stdin_is_read_to_its_end(tmp_path):
    messages = [INITIALIZE, {"jsonrpc": "2.0", "method": "initialized", "params": {}},
                {"jsonrpc": "2.0", "id": 1, "method": STATUS},  # params left out, as JSON-RPC allows
                {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
    script = tmp_path / "session.lsp"
    script.write_bytes(b"".join(frame(m) for m in messages))
    with open(script, "rb") as stdin:
        done = subprocess.run(SERVER, stdin=stdin, capture_output=True, timeout=60)
    got = answers(done.stdout)
    assert "capabilities" in got[0]["result"] and got[1]["result"]["state"] and got[2]["result"] is None


def test_one_socket_as_stdin_and_stdout_loses_no_answer_when_the_editor_reads_late():
    editor, server_end = socket.socketpair()
    proc = subprocess.Popen(SERVER, stdin=server_end, stdout=server_end, stderr=subprocess.PIPE)
    server_end.close()
    try:
        editor.sendall(frame(INITIALIZE) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        count = 2000  # ~800 KB of answers: more than the socket holds while the editor is not reading
        editor.sendall(b"".join(frame({"jsonrpc": "2.0", "id": i, "method": STATUS, "params": {}}) for i in range(1, count + 1)))
        time.sleep(3)  # the server writes into a full socket meanwhile
        editor.sendall(frame({"jsonrpc": "2.0", "id": count + 1, "method": "shutdown", "params": None})
                       + frame({"jsonrpc": "2.0", "method": "exit"}))
        data = bytearray()
        editor.settimeout(60)
        while chunk := editor.recv(1 << 16):
            data += chunk
        assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()[-2000:]
    finally:
        editor.close()
        if proc.poll() is None:
            proc.kill()
    got = answers(bytes(data))
    missing = [i for i in range(1, count + 1) if "result" not in got.get(i, {})]
    assert not missing, f"{len(missing)} answers lost, first {missing[:5]}"
    assert len(data) > 600_000  # more than the socket holds (~200 KB each way here)
