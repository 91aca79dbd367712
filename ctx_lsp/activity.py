"""Whether requests are being answered: what background work waits for."""

from __future__ import annotations

import threading
import time

__all__ = ["REQUEST_PAUSE_S", "Activity"]


class Activity:
    """Whether requests are being answered, for background work that should wait for a
    pause (the watcher's reconcile): on 2 cores a scan in another thread takes half the
    interpreter from the requests of those moments (Django, LSP 8K: p50 30 -> 58 ms while
    the watcher's first reconcile ran)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._last_end = 0.0

    def __enter__(self) -> Activity:
        with self._lock:
            self._active += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._active -= 1
            self._last_end = time.monotonic()

    def busy(self) -> bool:
        """A request is running now (the history read steps aside while one does)."""
        with self._lock:
            return self._active > 0

    def serving(self) -> bool:
        """A request is running, or one ended less than REQUEST_PAUSE_S ago (an agent's
        requests come back to back)."""
        with self._lock:
            return self._active > 0 or time.monotonic() - self._last_end < REQUEST_PAUSE_S


REQUEST_PAUSE_S = 0.5
