"""Editor buffers reach the engine off the event loop, in order, newest text only.

Analysing a buffer (tree-sitter parse, outline, token count) takes about 1.3 s per MB of
Python. Done on the event loop, as it was, one 9 MB didOpen stalled every other request
for 15 s (issue 12), and each keystroke in a 1 MB file blocked the server for a second.
Here a didOpen/didChange/didSave/didClose only records the buffer's latest state; one
worker applies the states in a thread, newest text per file (keystrokes that arrive while
one is analysed collapse into one analysis). A request that reads the workspace first
awaits `settled()`, so it still sees every edit sent before it, which is what running on
the loop guaranteed; a request that does not read it (library docs, windowing) never waits
behind a buffer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BufferUpdate:
    """The state a file's buffer should have: its text, or None once closed (or refused)."""

    path: str
    text: str | None
    version: int = 0
    edited: bool = False
    """An edit since the last state applied (didChange), which moves the file's edit recency."""


class BufferQueue:
    def __init__(self, apply: Callable[[BufferUpdate], None]) -> None:
        self._apply = apply
        self._pending: dict[str, BufferUpdate] = {}
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None

    def put(self, update: BufferUpdate) -> None:
        """Record `update` (on the event loop); it replaces a pending one for the same file."""
        previous = self._pending.pop(update.path, None)
        if previous is not None and previous.edited and update.text is not None:
            update = replace(update, edited=True)  # a save after an edit is still an edit
        self._pending[update.path] = update
        self._idle.clear()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._drain())

    async def settled(self) -> None:
        """Return once every update recorded so far has been applied."""
        await self._idle.wait()

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def _drain(self) -> None:
        try:
            while self._pending:
                path = next(iter(self._pending))
                update = self._pending.pop(path)
                try:
                    await asyncio.to_thread(self._apply, update)
                except Exception:
                    log.exception("could not apply the buffer of %s", path)
        finally:
            if not self._pending:
                self._idle.set()
