"""Tests for ctx_lsp/index/watch.py: the index follows the disk, and converges when the
watcher misses events (a storm) or fails (then it polls)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ctx_lsp.engine import Engine
from ctx_lsp.index import watch
from ctx_lsp.index.watch import Watcher, WatchFilter


def wait_until(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def indexed(engine: Engine) -> set[str]:
    return {f.path for f in engine.workspace.files.values()}


@pytest.fixture
def engine(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("def a():\n    return 1\n")
    e = Engine([ws], {"index": {"cache": False}})
    e.index()
    yield e
    e.close()


def test_an_edit_on_disk_reaches_the_index(engine: Engine) -> None:
    """Ensure that a file written while watching is indexed, and a deleted one dropped."""
    ws = engine.roots[0]
    watcher = engine.start_watching()
    assert watcher.state == "watching"
    assert wait_until(lambda: watcher.reconciles == 1)  # the start-up reconcile: the watches are in place
    (ws / "b.py").write_text("def b():\n    return 2\n")
    assert wait_until(lambda: "b.py" in indexed(engine))
    (ws / "a.py").unlink()
    assert wait_until(lambda: "a.py" not in indexed(engine))
    assert watcher.events >= 2 and watcher.reconciles == 1 and not watcher.lost_events  # events did it


def test_changes_before_the_watches_are_in_place_are_reconciled(engine: Engine) -> None:
    """Ensure that files written right after the watcher starts — before its watches are
    in place, so no event reports them — are indexed by the reconcile a new watcher does."""
    ws = engine.roots[0]
    watcher = engine.start_watching()
    for i in range(10):
        (ws / f"early_{i}.py").write_text(f"def early_{i}():\n    return {i}\n")
    assert wait_until(lambda: {f"early_{i}.py" for i in range(10)} <= indexed(engine))
    assert wait_until(lambda: watcher.reconciles >= 1)


def test_a_storm_that_lost_events_is_reconciled(engine: Engine, monkeypatch) -> None:
    """Ensure that after a storm (a batch of STORM_EVENTS or more) the index is reconciled
    with a scan once quiet: files whose events the kernel dropped (here: a filter that
    drops every `lost_*` event) are indexed anyway, and status says events may be lost."""
    monkeypatch.setattr(watch, "STORM_EVENTS", 20)
    keep = WatchFilter.__call__
    monkeypatch.setattr(
        WatchFilter,
        "__call__",
        lambda self, change, path: not Path(path).name.startswith("lost_") and keep(self, change, path),
    )
    ws = engine.roots[0]
    watcher = engine.start_watching()
    (ws / "probe.py").write_text("def probe():\n    return 0\n")
    assert wait_until(lambda: "probe.py" in indexed(engine) and watcher.reconciles >= 1)  # live, start-up done
    before = watcher.reconciles
    for i in range(30):
        (ws / f"seen_{i}.py").write_text(f"def seen_{i}():\n    return {i}\n")
    for i in range(5):
        (ws / f"lost_{i}.py").write_text(f"def lost_{i}():\n    return {i}\n")
    want = {f"seen_{i}.py" for i in range(30)} | {f"lost_{i}.py" for i in range(5)}
    assert wait_until(lambda: want <= indexed(engine))
    assert watcher.reconciles > before and watcher.lost_events
    status = engine.status().watcher
    assert status.lost_events and status.reconciles >= 1


def test_a_failed_watcher_reconciles_and_polls(engine: Engine, monkeypatch) -> None:
    """Ensure that when the native watcher fails (an inotify limit, say), the index is
    reconciled at once and the tree is then polled: later changes still arrive, and
    status says `polling` with the reason."""
    monkeypatch.setattr(watch, "POLL_DELAY_MS", 200)
    native = Watcher._watch

    def fails_unless_polling(self: Watcher, watch_fn, roots: list[str]) -> None:
        if not self.polling:
            raise OSError(28, "inotify watch limit reached")
        native(self, watch_fn, roots)

    monkeypatch.setattr(Watcher, "_watch", fails_unless_polling)
    ws = engine.roots[0]
    (ws / "before.py").write_text("def before():\n    return 0\n")  # never seen by a watcher
    watcher = engine.start_watching()
    assert wait_until(lambda: watcher.state == "polling" and "before.py" in indexed(engine))
    assert watcher.reconciles >= 1 and "inotify watch limit reached" in (watcher.error or "")
    (ws / "after.py").write_text("def after():\n    return 3\n")
    assert wait_until(lambda: "after.py" in indexed(engine))
    assert engine.status().watcher.state == "polling"
