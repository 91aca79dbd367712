"""Keep the index current with the disk: watchfiles in a background thread.

watchfiles batches events (it waits `STEP_MS` of quiet before yielding, at most
`DEBOUNCE_MS` in all), so a `git checkout` of 500 files is one refresh, not 500.
Ignored paths are filtered before they reach the index; note the Rust watcher still
places inotify watches on ignored directories (NOTES-ENV §5), which status reports when
it fails on a huge tree.
"""

from __future__ import annotations

import logging
import os
import threading
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


class Watcher:
    """A daemon thread that feeds file-system changes into `Workspace.refresh`."""

    def __init__(self, workspace: Workspace, on_change: ChangeCallback | None = None):
        self.workspace = workspace
        self.on_change = on_change
        self.state = "stopped"
        self.error: str | None = None
        self.events = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = threading.Event()

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
        roots = [str(r) for r in self.workspace.roots if Path(r).is_dir()]
        if not roots:
            self._fail("no folder to watch")
            return
        self.state = "watching"
        self.error = None
        self._started.set()
        try:
            for changes in watch(
                *roots,
                watch_filter=WatchFilter(self.workspace),
                stop_event=self._stop,
                step=STEP_MS,
                debounce=DEBOUNCE_MS,
                rust_timeout=STOP_POLL_MS,
                yield_on_timeout=False,
                raise_interrupt=False,
            ):
                self.events += len(changes)
                self._apply(sorted({path for _change, path in changes}))
        except Exception as err:
            self._fail(f"{type(err).__name__}: {err}")
            return
        if self.state == "watching":
            self.state = "stopped"

    def _apply(self, paths: list[str]) -> None:
        try:
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
