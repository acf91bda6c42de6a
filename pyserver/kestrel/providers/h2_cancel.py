"""Make an abandoned HTTP/2 response actually stop the model.

httpcore2 sends no RST_STREAM when a response is closed early, so the server keeps generating: we
send RST_STREAM(CANCEL) ourselves before the normal close, and the warm connection stays. The patch
is idempotent and falls back silently if httpcore2's internals change (then
`test_cancel_keeps_the_http2_connection` fails). Why: docs/design-notes.md#pyserverkestrelprovidersh2_cancelpy
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)
_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    try:
        import h2.errors
        from httpcore2._async.http2 import HTTP2ConnectionByteStream
    except ImportError:  # no h2: HTTP/1.1 only, nothing to patch
        return
    original = HTTP2ConnectionByteStream.aclose

    async def aclose(self) -> None:  # type: ignore[no-untyped-def]
        if not getattr(self, "_closed", True):
            conn, stream_id = self._connection, self._stream_id
            try:
                stream = conn._h2_state.streams.get(stream_id)
                if stream is not None and not stream.closed:
                    conn._h2_state.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.CANCEL)
                    await conn._write_outgoing_data(self._request)
            except Exception:  # the connection may already be gone: closing is enough then
                log.debug("RST_STREAM failed", exc_info=True)
        await original(self)

    HTTP2ConnectionByteStream.aclose = aclose  # type: ignore[method-assign]
    _installed = True
