"""Tests for ctx_lsp/index/history_loader.py: the history is read off the request path."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ctx_lsp.index.git_history import History, head_token, read_history
from ctx_lsp.index.history_loader import READING, HistoryLoader
from tests.index.git_fixtures import CO_CHANGE_HISTORY, commit, make_repo

WAIT_S = 30.0  # a bound for a stalled test, never reached


class GatedReader:
    """The real reader, held at a gate until the test opens it: the one stand-in these
    tests use, because the real read of a small repository is too quick to catch running."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.reads: list[int] = []

    def __call__(self, root: str, **kw: object) -> History:
        self.reads.append(len(kw.get("known") or {}))  # type: ignore[arg-type]
        self.started.set()
        assert self.gate.wait(WAIT_S)
        return read_history(root, **kw)  # type: ignore[arg-type]


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    ws = tmp_path / "ws"
    return ws, make_repo(ws, CO_CHANGE_HISTORY)


def test_nothing_waits_for_a_read_in_progress(repo: tuple[Path, list[str]]) -> None:
    """Ensure that while the first read runs `ready` answers None at once and status says
    reading, and that once it is done `ready` has HEAD's signals."""
    ws, shas = repo
    reader = GatedReader()
    loader = HistoryLoader(ws, read=reader)
    try:
        assert loader.ready() is None
        assert reader.started.wait(WAIT_S)
        assert loader.ready() is None and loader.state().reading
        assert loader.state().status == READING
        assert loader.wait(0.01) is None  # a short wait gives up, the read goes on
        reader.gate.set()
        signals = loader.wait(WAIT_S)
        assert signals is not None and signals.history.head == shas[-1]
        assert loader.ready() is signals and not loader.state().reading
        assert loader.state().status.startswith("5 commits from HEAD")
        assert reader.reads == [0]
    finally:
        reader.gate.set()
        loader.close()


def test_a_moved_head_is_read_again_in_the_background(repo: tuple[Path, list[str]]) -> None:
    """Ensure that after a commit the previous read serves until the new one is in, that
    the new read reuses the commits already read, and that an unmoved HEAD is not read again."""
    ws, _ = repo
    reader = GatedReader()
    reader.gate.set()
    loader = HistoryLoader(ws, read=reader)
    try:
        first = loader.wait(WAIT_S)
        assert first is not None and loader.ready() is first and reader.reads == [0]
        reader.gate.clear()
        new = commit(ws, "One more", {"src/render.py": "def render():\n    return 1\n"}, 1_700_009_000)
        assert loader.ready() is first  # HEAD moved: a read starts, the old signals serve
        assert loader.state().reading and loader.state().status.endswith("re-reading (HEAD moved)")
        reader.gate.set()
        second = loader.wait(WAIT_S)
        assert second is not None and second.history.head == new == head_token(str(ws))
        assert reader.reads == [0, 5]  # the five commits read before were reused
    finally:
        reader.gate.set()
        loader.close()


def test_a_closed_loader_starts_no_read(repo: tuple[Path, list[str]]) -> None:
    """Ensure that a closed loader reads nothing and waits for nothing."""
    ws, _ = repo
    reader = GatedReader()
    loader = HistoryLoader(ws, read=reader)
    loader.close()
    assert loader.ready() is None and loader.wait(WAIT_S) is None
    assert reader.reads == [] and loader.state().status == "not read yet"


def test_a_failing_reader_leaves_a_status_not_a_thread(repo: tuple[Path, list[str]]) -> None:
    """Ensure that an unexpected failure in the read ends as a problem in status, never as a
    read that seems to run forever."""
    ws, _ = repo

    def broken(root: str, **kw: object) -> History:
        raise RuntimeError("boom")

    loader = HistoryLoader(ws, read=broken)
    signals = loader.wait(WAIT_S)
    assert signals is not None and not signals
    assert signals.history.problem and "RuntimeError: boom" in signals.history.status
    assert not loader.state().reading
