"""The server's converter resolves lsprotocol's forward references when a class is first converted
(kestrel/lsp_converter.py), not all at start: it must put every type on the wire exactly as pygls'
default converter does, and read it back the same. Each converter runs in a fresh interpreter, since
a converter built the eager way anywhere in a process resolves every class for all of them."""

import json
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).with_name("lsp_type_samples.py")


def _convert(kind: str, stdin: str = "") -> dict:
    done = subprocess.run([sys.executable, str(SAMPLES), kind], input=stdin, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_lsp_type_goes_on_the_wire_as_with_pygls_default_converter():
    lazy, eager = _convert("lazy-out"), _convert("eager")
    assert lazy["classes"] > 500 and len(lazy["samples"]) > 500
    assert lazy["resolved_at_start"] == 0  # nothing was resolved ahead: the lazy path is what ran
    assert eager["resolved_at_start"] == eager["classes"]
    assert lazy["samples"] == eager["samples"]
    read_back = [name for name, sample in lazy["samples"].items() if sample[0] != "error" and sample[0] == sample[1]]
    assert len(read_back) > 500


def test_every_lsp_type_is_read_off_the_wire_as_with_pygls_default_converter():
    eager = _convert("eager")
    wires = {name: sample[0] for name, sample in eager["samples"].items() if sample[0] != "error"}
    lazy = _convert("lazy-in", json.dumps(wires))
    assert lazy["resolved_at_start"] == 0 and len(wires) > 500
    assert lazy["read"] == {name: eager["samples"][name][1] for name in wires}
