"""A queue of index changes, drained by whoever derives state from the index.

The search postings and the reference graph both listen to the workspace; queuing keeps
a full index pass cheap (thousands of files are processed once, when first needed, not
on the thread that reports the index ready) and lets `update` never wait for a query.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ctx_lsp.index.files import IndexedFile


class ChangeQueue:
    """Latest change per file: an entry (added or modified) or None (removed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, IndexedFile | None] = {}

    def add(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        with self._lock:
            for abs_path in removed:
                self._pending[abs_path] = None
            for entry in updated:
                self._pending[entry.abs_path] = entry

    def drain(self) -> dict[str, IndexedFile | None]:
        with self._lock:
            pending, self._pending = self._pending, {}
        return pending

    def __bool__(self) -> bool:
        return bool(self._pending)
