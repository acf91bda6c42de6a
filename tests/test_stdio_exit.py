"""After `exit` closes stdout, what the cancelled tasks still send is dropped, not logged as an error."""

from __future__ import annotations

import io

from kestrel.transport.stdio import ExitingStdoutWriter


def test_the_writer_writes_until_the_stream_is_closed_then_drops_silently():
    out = io.BytesIO()
    writer = ExitingStdoutWriter(out)
    writer.write(b"Content-Length: 2\r\n\r\n{}")
    assert out.getvalue() == b"Content-Length: 2\r\n\r\n{}"
    writer.close()
    writer.write(b"Content-Length: 2\r\n\r\n{}")  # used to raise ValueError: I/O operation on closed file
    assert out.closed
