"""Tests for ctx_lsp/server/buffers.py: buffers are applied off the loop, newest text per
file, and `settled()` waits for everything recorded before it."""

from __future__ import annotations

import asyncio
import threading

from ctx_lsp.server.buffers import BufferQueue, BufferUpdate


async def test_updates_are_applied_in_a_thread_newest_text_first_and_settled_waits() -> None:
    """Ensure that updates run off the event loop, that updates queued while one is applied
    collapse to the newest per file (keeping an edit's recency through a later save), and
    that `settled()` returns only once all are applied."""
    loop_thread = threading.get_ident()
    release = threading.Event()
    applied: list[BufferUpdate] = []

    def apply(update: BufferUpdate) -> None:
        assert threading.get_ident() != loop_thread
        release.wait(5)
        applied.append(update)

    queue = BufferQueue(apply)
    queue.put(BufferUpdate("a.py", "v1", 1))
    await asyncio.sleep(0.05)  # the worker is now inside apply("v1")
    queue.put(BufferUpdate("a.py", "v2", 2, edited=True))
    queue.put(BufferUpdate("b.py", "b1", 1))
    queue.put(BufferUpdate("a.py", "v3", 3, edited=False))  # a save right after the edit
    queue.put(BufferUpdate("b.py", None))  # closed before it was ever applied
    settled = asyncio.ensure_future(queue.settled())
    await asyncio.sleep(0.05)
    assert not settled.done()
    release.set()
    await asyncio.wait_for(settled, 5)
    assert applied == [
        BufferUpdate("a.py", "v1", 1),
        BufferUpdate("a.py", "v3", 3, edited=True),
        BufferUpdate("b.py", None),
    ]
    assert queue.pending == 0


async def test_a_failing_update_does_not_stop_the_queue() -> None:
    """Ensure that one update that raises is logged and the next ones are still applied."""
    applied: list[str] = []

    def apply(update: BufferUpdate) -> None:
        if update.path == "bad.py":
            raise RuntimeError("boom")
        applied.append(update.path)

    queue = BufferQueue(apply)
    queue.put(BufferUpdate("bad.py", "x"))
    queue.put(BufferUpdate("good.py", "y"))
    await asyncio.wait_for(queue.settled(), 5)
    assert applied == ["good.py"]
