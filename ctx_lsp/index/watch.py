"""Keep the index current with the disk: watchfiles in a background thread.

watchfiles batches events (it waits `STEP_MS` of quiet before yielding, at most
`DEBOUNCE_MS` in all), so a `git checkout` of 500 files is one refresh, not 500.
Ignored paths are filtered before they reach the index; note the Rust watcher still
places inotify watches on ignored directories (NOTES-ENV §5), which status reports when
it fails on a huge tree.

The index converges whatever the watcher misses. After a storm (a batch of
`STORM_EVENTS` or more: a checkout, a build, a `rm -rf`, where the kernel's event queue
may overflow and drop events silently) and after the watcher fails, the workspace is
reconciled with a scan once things are quiet (`RECONCILE_QUIET_MS`) — cheap, as unchanged
files are known by size and mtime. So is a new watcher, once: what changed between the last
scan and the moment its watches were in place was seen by no one. A watcher that fails (e.g. the inotify watch limit) is
replaced by polling, and status says so (`state`, `error`, `reconciles`, `lost_events`).

The watcher never leaves the workspace. watchfiles has no switch for following links, and
its recursive watch follows them: a `proc_link -> /proc/self` led it into `/proc/<pid>/root`
(issue 12), and a link to `~` would put a watch on every directory of the home. So each
directory is watched on its own (`recursive=False`): the folders and the directories
under them found without following a link (`watched_dirs`), ignored ones (`.git`,
`node_modules`, …) left out, which also spares the inotify watches NOTES-ENV §5 counts
there. A directory created later (or a changed `.gitignore`, which may exclude or
include some) restarts the watches over a new walk, and the restart reconciles: what
happened in a new directory before its watch was placed is found by the scan.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ctx_lsp.errors import OutsideWorkspace
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.workspace import Workspace

log = logging.getLogger(__name__)

STEP_MS = 20
"""Quiet time before a batch is yielded: low enough that a save shows up in ~20–40 ms."""
DEBOUNCE_MS = 1600
"""Longest a burst is batched before the index sees it."""
STOP_POLL_MS = 200
"""How often the Rust watcher checks the stop event; bounds shutdown latency."""
STORM_EVENTS = 500
"""A batch this big may have lost events in the kernel's queue: reconcile after it."""
RECONCILE_QUIET_MS = 1000
"""Reconcile once no event has come for this long (a storm is over)."""
MAX_RECONCILE_DEFER_MS = 10_000
"""…and no request is being answered, or this long has passed without events anyway."""
SETTLE_S = 0.06
"""A change reaches the index within about this long of being made (STEP_MS of quiet,
then the refresh): `settle` waits for it."""
POLL_DELAY_MS = 2000
"""Polling interval when the native watcher failed: a full stat walk per poll."""

ChangeCallback = Callable[[Sequence[str], Sequence[IndexedFile]], None]


class WatchFilter:
    """Drop events for ignored paths and the cache directory before they cost a refresh."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    def __call__(self, change: object, path: str) -> bool:
        try:
            location = self.workspace.locate(path)
        except OutsideWorkspace:
            return False
        if not location.rel:
            return False
        if os.path.basename(location.rel) == ".gitignore":
            return True
        return not location.folder.rules.is_excluded(location.rel, os.path.isdir(path))


def watched_dirs(workspace: Workspace) -> list[str]:
    """The directories to watch: every folder, and every directory under one that is not
    a link and not excluded by the folder's rules, found without following a link (so
    none is outside the workspace)."""
    found: dict[str, None] = {}
    for root in workspace.roots:
        try:
            folder = workspace.locate(root).folder
        except OutsideWorkspace:
            continue
        stack = [(str(folder.root), "")]
        while stack:
            path, rel = stack.pop()
            if path in found:  # a nested folder, walked from its parent too
                continue
            found[path] = None
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                        child = f"{rel}/{entry.name}" if rel else entry.name
                        # Its ancestors were checked on the way down (an excluded one is
                        # never entered): checking them again per directory cost a
                        # 1,000-deep tree 200 s (cubic in its depth), with requests waiting.
                        if not folder.rules.is_ignored(child, True):
                            stack.append((entry.path, child))
            except OSError:  # gone or unreadable since: nothing under it to watch
                continue
    return list(found)


def _needs_new_watches(changes: set[tuple[object, str]]) -> bool:
    """A directory appeared (it has no watch yet) or a `.gitignore` changed (the set of
    ignored directories may have)."""
    for _change, path in changes:
        if os.path.basename(path) == ".gitignore":
            return True
        if os.path.isdir(path) and not os.path.islink(path):
            return True
    return False


class Watcher:
    """A daemon thread that feeds file-system changes into `Workspace.refresh`."""

    def __init__(
        self,
        workspace: Workspace,
        on_change: ChangeCallback | None = None,
        serving: Callable[[], bool] | None = None,
        idle_work: Callable[[], None] | None = None,
    ):
        self.workspace = workspace
        self.on_change = on_change
        self.serving = serving
        """True while requests are being answered: a reconcile (a scan of the whole tree,
        ~0.25 s of CPU on Django) waits for a pause in them, up to MAX_RECONCILE_DEFER_MS,
        rather than take half the interpreter from the requests of those moments."""
        self.idle_work = idle_work
        """Run once, after the start-up reconcile, in the same pause: work the owner wants
        done before the first change rather than in it (the graph's tables for changes)."""
        self.state = "stopped"
        self.error: str | None = None
        self.events = 0
        self.polling = False
        """The native watcher failed and the tree is polled instead."""
        self.reconciles = 0
        self.lost_events = False
        """A storm or a failure may have dropped events (a reconcile followed)."""
        self._reconcile_due = False
        self.watched = 0
        """Directories watched (each on its own: see the module docstring)."""
        self.rewatches = 0
        """Times the watches were placed again for new directories."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._busy = threading.Lock()
        """Held while a batch or a reconcile is being applied (`settle` waits for it)."""

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._started.clear()
        self._thread = threading.Thread(target=self._run, name="ctx-lsp-watch", daemon=True)
        self._thread.start()
        self._started.wait(timeout=2.0)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self._thread = None
        self.state = "stopped"

    def restart(self) -> None:
        """Folders changed: watch the new set."""
        self.stop()
        self.start()

    def _run(self) -> None:
        try:
            from watchfiles import watch
        except ImportError as err:  # pragma: no cover - a core dependency
            self._fail(f"watchfiles unavailable: {err}")
            return
        if not any(Path(r).is_dir() for r in self.workspace.roots):
            self._fail("no folder to watch")
            return
        # "watching" once the watches are in place (`_watch`): a client that waits for it
        # may then count on an event for every change it makes.
        self.state = "starting"
        self.error = None
        # Changes between the last scan and the moment the watches are in place are seen by
        # no one: reconcile once the new watcher has been quiet a moment.
        self._reconcile_due = True
        self._started.set()
        while not self._stop.is_set():
            try:
                if self._watch(watch):
                    self.rewatches += 1
                    self._reconcile_due = True
                    continue
                break
            except Exception as err:
                if self.polling:
                    self._fail(f"{type(err).__name__}: {err}")
                    return
                # The native watcher gave up (an inotify limit, a vanished root): events may
                # be lost, so reconcile, and go on by polling rather than go stale.
                self.error = f"native watcher failed, polling every {POLL_DELAY_MS} ms: {type(err).__name__}: {err}"
                log.warning("file watcher: %s", self.error)
                self.polling, self.state, self.lost_events = True, "polling", True
                self._reconcile()
        if self.state in ("starting", "watching", "polling"):
            self.state = "stopped"

    def _watch(self, watch) -> bool:
        """Watch until stopped (False) or until the set of directories to watch changed
        (True: the caller watches again)."""
        quiet_ms = 0
        dirs = watched_dirs(self.workspace)
        if not dirs:
            raise FileNotFoundError("no folder to watch")
        self.watched = len(dirs)
        for changes in watch(
            *dirs,
            recursive=False,
            watch_filter=WatchFilter(self.workspace),
            stop_event=self._stop,
            step=STEP_MS,
            debounce=DEBOUNCE_MS,
            rust_timeout=STOP_POLL_MS,
            yield_on_timeout=True,  # an empty batch per quiet STOP_POLL_MS: the reconcile clock
            raise_interrupt=False,
            force_polling=self.polling or None,
            poll_delay_ms=POLL_DELAY_MS,
        ):
            # The first batch (an empty one after STOP_POLL_MS if nothing happened) comes once
            # the watches exist; before, a change is seen only by the start-up reconcile,
            # which requests may defer (MAX_RECONCILE_DEFER_MS).
            self.state = "polling" if self.polling else "watching"
            if not changes:
                quiet_ms += STOP_POLL_MS
                if self._reconcile_due and quiet_ms >= RECONCILE_QUIET_MS and self._may_reconcile(quiet_ms):
                    self._reconcile()
                continue
            quiet_ms = 0
            self.events += len(changes)
            if len(changes) >= STORM_EVENTS:
                self._reconcile_due = self.lost_events = True
            self._apply(sorted({path for _change, path in changes}))
            if _needs_new_watches(changes):
                return True
        return False

    def settle(self, since: float) -> None:
        """Return once every change made before `since` (a `time.time()`) is in the index,
        as far as the watcher can know: SETTLE_S after it (the watcher's batching delay),
        and not while a batch is being applied. A caller outside the editor (the daemon
        serving a CLI call) has no didChange to wait for, only the disk."""
        delay = since + SETTLE_S - time.time()
        if delay > 0:
            time.sleep(min(delay, SETTLE_S))
        with self._busy:
            pass

    def _may_reconcile(self, quiet_ms: int) -> bool:
        return self.serving is None or quiet_ms >= MAX_RECONCILE_DEFER_MS or not self.serving()

    def _reconcile(self) -> None:
        """Bring the index in line with the disk by a scan (the cache makes it cheap)."""
        self._reconcile_due = False
        try:
            with self._busy:
                self.workspace.index()
            self.reconciles += 1
        except Exception:  # keep watching; the next storm or failure tries again
            log.exception("reconciling the index with the disk failed")
        idle_work, self.idle_work = self.idle_work, None
        if idle_work is not None:
            try:
                idle_work()
            except Exception:  # the owner's work: it must not stop the watcher
                log.exception("idle work after the reconcile failed")

    def _apply(self, paths: list[str]) -> None:
        try:
            with self._busy:
                result = self.workspace.refresh(paths)
        except Exception:  # keep watching whatever one batch did
            log.exception("refresh after file changes failed")
            return
        if self.on_change and result.changed:
            try:
                self.on_change(result.removed, result.updated)
            except Exception:  # a callback bug must not stop the watcher
                log.exception("change callback failed")

    def _fail(self, message: str) -> None:
        self.state = "failed"
        self.error = message
        log.warning("file watcher stopped: %s", message)
        self._started.set()
