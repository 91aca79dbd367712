"""Tests for ctx_lsp/index/watch.py: the index follows the disk, and converges when the
watcher misses events (a storm) or fails (then it polls)."""

from __future__ import annotations

import os
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
    assert watcher.state in ("starting", "watching")
    assert wait_until(lambda: watcher.state == "watching")  # the watches are in place
    assert wait_until(lambda: watcher.reconciles == 1)  # the start-up reconcile
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


def test_a_reconcile_waits_for_a_pause_in_requests(engine: Engine, monkeypatch) -> None:
    """Ensure that the start-up reconcile (a scan of the whole tree) waits while requests
    are being answered, runs in the first pause, and never waits longer than
    MAX_RECONCILE_DEFER_MS."""
    serving = [True]
    monkeypatch.setattr(engine.activity, "serving", lambda: serving[0])
    watcher = engine.start_watching()
    time.sleep((watch.RECONCILE_QUIET_MS + 3 * watch.STOP_POLL_MS) / 1000)
    assert watcher.reconciles == 0  # due, quiet, but requests are running
    serving[0] = False
    assert wait_until(lambda: watcher.reconciles == 1)


def test_a_reconcile_is_deferred_no_longer_than_its_limit(engine: Engine, monkeypatch) -> None:
    monkeypatch.setattr(engine.activity, "serving", lambda: True)
    monkeypatch.setattr(watch, "MAX_RECONCILE_DEFER_MS", watch.RECONCILE_QUIET_MS + 2 * watch.STOP_POLL_MS)
    watcher = engine.start_watching()
    assert wait_until(lambda: watcher.reconciles == 1)


def test_an_engine_is_serving_during_a_request_and_shortly_after(engine: Engine) -> None:
    assert not engine.activity.serving()
    with engine.activity:
        assert engine.activity.serving()
    assert engine.activity.serving()  # within REQUEST_PAUSE_S of the end
    time.sleep(0.6)
    assert not engine.activity.serving()


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

    def fails_unless_polling(self: Watcher, watch_fn) -> bool:
        if not self.polling:
            raise OSError(28, "inotify watch limit reached")
        return native(self, watch_fn)

    monkeypatch.setattr(Watcher, "_watch", fails_unless_polling)
    ws = engine.roots[0]
    (ws / "before.py").write_text("def before():\n    return 0\n")  # never seen by a watcher
    watcher = engine.start_watching()
    assert wait_until(lambda: watcher.state == "polling" and "before.py" in indexed(engine))
    assert watcher.reconciles >= 1 and "inotify watch limit reached" in (watcher.error or "")
    (ws / "after.py").write_text("def after():\n    return 3\n")
    assert wait_until(lambda: "after.py" in indexed(engine))
    assert engine.status().watcher.state == "polling"


def inotify_watches() -> set[tuple[int, int]]:
    """(st_dev, st_ino) of every inode this process has an inotify watch on (Linux: the
    kernel lists them in /proc/self/fdinfo of each inotify descriptor)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            lines = Path(f"/proc/self/fdinfo/{fd}").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            fields = dict(f.split(":", 1) for f in line.split()[1:] if ":" in f)
            if line.startswith("inotify") and "ino" in fields:
                sdev = int(fields["sdev"], 16)  # the kernel's dev_t: major << 20 | minor
                found.add((os.makedev(sdev >> 20, sdev & 0xFFFFF), int(fields["ino"], 16)))
    return found


def inode(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="inotify watches are listed by Linux only")
def test_the_watcher_never_leaves_the_workspace(engine: Engine, tmp_path: Path) -> None:
    """Ensure that directory links leading out (one to /proc/self, one to a directory
    outside) get no watch, nor does anything under them, nor ignored directories, while
    the watcher keeps `watching` (the recursive watch followed `proc_link` into /proc and
    failed) and still sees the workspace's own directories."""
    ws = engine.roots[0]
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (ws / "pkg").mkdir()
    (ws / ".git" / "objects").mkdir(parents=True)
    (ws / "proc_link").symlink_to("/proc/self")
    (ws / "out_link").symlink_to(outside)
    (ws / "pkg" / "up_link").symlink_to(tmp_path)
    before = inotify_watches()
    watcher = engine.start_watching()
    assert wait_until(lambda: watcher.reconciles == 1)
    placed = inotify_watches() - before
    assert watcher.state == "watching" and watcher.error is None
    assert placed == {inode(ws), inode(ws / "pkg")}, placed
    assert not placed & {inode(outside), inode(outside / "deep"), inode(tmp_path), inode(Path("/proc/self"))}
    (ws / "pkg" / "b.py").write_text("def b():\n    return 2\n")
    assert wait_until(lambda: "pkg/b.py" in indexed(engine))


def test_watching_means_the_watches_are_in_place(engine: Engine) -> None:
    """Ensure that once the watcher says `watching`, a file written is indexed from its
    event, without the start-up reconcile (which requests may defer for seconds): the
    state is set when the watches exist, not when the thread starts."""
    ws = engine.roots[0]
    watcher = engine.start_watching()
    watcher.serving = lambda: True  # requests all the time: the reconcile waits
    assert wait_until(lambda: watcher.state == "watching")
    (ws / "early.py").write_text("def early():\n    return 1\n")
    assert wait_until(lambda: "early.py" in indexed(engine))
    assert watcher.reconciles == 0


def test_a_new_directory_is_watched(engine: Engine) -> None:
    """Ensure that a directory created while watching gets its watch (each directory is
    watched on its own), and that files written into it before that are found too."""
    ws = engine.roots[0]
    watcher = engine.start_watching()
    assert wait_until(lambda: watcher.reconciles == 1)
    watched = watcher.watched
    (ws / "new" / "deeper").mkdir(parents=True)
    (ws / "new" / "deeper" / "early.py").write_text("def early():\n    return 1\n")
    assert wait_until(lambda: "new/deeper/early.py" in indexed(engine))
    assert wait_until(lambda: watcher.watched == watched + 2 and watcher.rewatches >= 1)
    (ws / "new" / "deeper" / "late.py").write_text("def late():\n    return 2\n")
    assert wait_until(lambda: "new/deeper/late.py" in indexed(engine))
    assert watcher.state == "watching"


def test_a_deep_tree_is_watched_checking_each_directory_once(tmp_path: Path) -> None:
    """Ensure that the directories to watch in a 300-deep tree are found with one ignore
    check per directory, not one per ancestor of each (a 1,000-deep tree took 200 s, and
    requests waited for it), and that an ignored directory is still left out."""
    root = tmp_path / "ws"
    root.mkdir()
    path = root
    for _ in range(300):
        path = path / "a"
        path.mkdir()  # one level at a time: mkdir(parents=True) recurses once per level
    (path / "deep.py").write_text("D = 1\n")
    (root / "build").mkdir()
    (root / ".gitignore").write_text("**/a/**/a/**/b\nbuild/\n")
    engine = Engine([root], {"index": {"watch": False}})
    engine.index()
    rules = engine.workspace.locate(root).folder.rules
    checked: list[str] = []
    original = rules.is_ignored

    def counted(rel_path: str, is_dir: bool) -> bool:
        checked.append(rel_path)
        return original(rel_path, is_dir)

    rules.is_ignored = counted  # type: ignore[method-assign]
    found = watch.watched_dirs(engine.workspace)
    assert len(found) == 301 and str(path) in found
    assert str(root / "build") not in found
    assert len(checked) == len(set(checked)) == 302  # each directory once: 300 deep, and build
    engine.close()
