"""The repository's history, read and turned into signals off the request path.

Reading 1,000 commits takes ~0.6 s on clap and ~1.5 s on typeorm (up to the 3 s budget
under load), and building the signals another 25-35 ms: a request that waited for it
took 1.9 s instead of 0.4 s. So one background thread at a time reads the history (the
engine starts it when it indexes, or on first need) and requests take what is ready:
while the first read runs they rank without history, and after HEAD moved they keep
the previous read until the new one is in (its commits are reused, only new ones are
diffed). Only a caller that must measure with history waits (`wait`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ctx_lsp.index.git_history import Commit, History, empty, head_token, read_history
from ctx_lsp.index.history_signals import HistorySignals

READING = "reading…"
"""What status says while the first read runs."""


@dataclass(frozen=True, slots=True)
class LoaderState:
    """What status shows: the read that is ready (None: none yet) and whether one runs."""

    signals: HistorySignals | None
    reading: bool

    @property
    def status(self) -> str:
        if self.signals is None:
            return READING if self.reading else "not read yet"
        status = self.signals.history.status
        return f"{status}; re-reading (HEAD moved)" if self.reading else status


class HistoryLoader:
    """One workspace root's history signals, read in a background thread, never more
    than one read at a time; again when HEAD moves."""

    def __init__(
        self, root: str | Path, read: Callable[..., History] | None = None, busy: Callable[[], bool] | None = None
    ) -> None:
        """`busy()` says a request is running: the read steps aside meanwhile
        (`git_history.MAX_PAUSE_S`)."""
        self.root = os.path.realpath(root)
        self._read = read if read is not None else read_history  # looked up now: tests slow it down
        self._busy = busy
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._signals: HistorySignals | None = None
        self._token: str | None = None
        """HEAD (or why there is none) when the ready read started."""
        self._thread: threading.Thread | None = None

    def refresh(self) -> None:
        """Start a read unless one runs or the ready one is HEAD's. Costs a look at HEAD
        (a few small reads); never waits for the history."""
        token = head_token(self.root)
        with self._lock:
            if self._stop.is_set() or self._thread is not None or token == self._token:
                return
            known = {c.sha: c for c in self._signals.history.commits} if self._signals is not None else {}
            self._thread = threading.Thread(target=self._run, args=(token, known), name="ctx-lsp-history", daemon=True)
            self._thread.start()

    def _run(self, token: str, known: dict[str, Commit]) -> None:
        try:
            history = self._read(self.root, known=known, stop=self._stop, busy=self._busy)
            signals = HistorySignals(history, self.root)
        except Exception as err:  # read_history never raises; a bug here must not leave status "reading…"
            signals = HistorySignals(empty(f"history not read: {type(err).__name__}: {err}", True), self.root)
        with self._lock:
            self._signals = signals
            self._token = token
            self._thread = None
            self._changed.notify_all()

    def ready(self) -> HistorySignals | None:
        """The signals read last (None while the first read runs), starting a read when
        HEAD moved since."""
        self.refresh()
        with self._lock:
            return self._signals

    def wait(self, timeout: float) -> HistorySignals | None:
        """The signals of HEAD as it is now, waiting up to `timeout` seconds for the read
        (None if the first read is still running then)."""
        self.refresh()
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._thread is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return self._signals

    def state(self) -> LoaderState:
        """Without starting a read (status)."""
        with self._lock:
            return LoaderState(self._signals, self._thread is not None)

    def close(self) -> None:
        """End a running read at its next commit; start none again."""
        self._stop.set()
