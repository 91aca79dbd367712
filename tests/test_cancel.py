"""Tests for ctx_lsp/cancel.py: cancelled work stops at its next check, in the core and
through the server's `off_loop`."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from ctx_lsp import cancel
from ctx_lsp.cancel import Cancelled, cancellable
from ctx_lsp.engine import BundleRequest, Engine
from ctx_lsp.server.requests import off_loop
from tests.conftest import SAMPLE_FILES, write_tree


def test_check_is_a_no_op_outside_a_scope_and_raises_once_cancelled() -> None:
    """Ensure that work with no scope (the CLI, MCP) is never cancelled, and that a set
    token makes the next check raise."""
    cancel.check()
    with cancellable() as token:
        cancel.check()
        token.set()
        with pytest.raises(Cancelled):
            cancel.check()
    cancel.check()  # the scope is gone with its token


def test_a_cancelled_bundle_stops_and_leaves_no_trace(tmp_path: Path) -> None:
    """Ensure that a bundle whose request was cancelled stops with `Cancelled` before it
    assembles anything, and does not replace the last bundle's explanation."""
    engine = Engine([write_tree(tmp_path / "ws", SAMPLE_FILES)], {"index": {"watch": False}})
    try:
        engine.index()
        engine.bundle(BundleRequest(query="first", budget=2000))
        with cancellable() as token:
            token.set()
            with pytest.raises(Cancelled):
                engine.bundle(BundleRequest(query="second", budget=2000))
        assert engine.explain().query == "first"
    finally:
        engine.close()


async def test_cancelling_the_request_stops_the_worker_thread() -> None:
    """Ensure that cancelling the task awaiting `off_loop` (what pygls does on
    `$/cancelRequest`) stops the work in its thread at the next check, rather than
    letting it run to the end: the token reaches the thread through the context."""
    started, stopped = threading.Event(), threading.Event()
    finished = []

    def long_work() -> None:
        started.set()
        try:
            for _ in range(500):  # 10 s if never stopped
                cancel.check()
                time.sleep(0.02)
            finished.append(True)
        except Cancelled:
            stopped.set()
            raise

    task = asyncio.ensure_future(off_loop(long_work))
    assert await asyncio.to_thread(started.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(stopped.wait, 5)
    assert not finished
