"""`$/progress` for a long server-side task, when the client supports it."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from lsprotocol import types


class WorkDoneProgress:
    def __init__(self, server: Any, title: str) -> None:
        self.server = server
        self.title = title
        self.token = f"kestrel-{uuid.uuid4().hex[:8]}"
        self.active = False

    async def begin(self) -> None:
        window = self.server.client_capabilities.window
        if not (window and window.work_done_progress):
            return
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(self.token), 5)
        except Exception:
            return
        self.server.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(title=self.title, cancellable=False))
        self.active = True

    def report(self, message: str, percent: int | None = None) -> None:
        if self.active:
            self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message, percentage=percent))

    def end(self) -> None:
        if self.active:
            self.active = False
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd())
