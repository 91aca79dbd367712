"""A queue of index changes, drained by whoever derives state from the index.

The search postings and the reference graph both listen to the workspace; queuing keeps
a full index pass cheap (thousands of files are processed once, when first needed, not
on the thread that reports the index ready) and lets `update` never wait for a query.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence

from ctx_lsp.index.files import IndexedFile


class ChangeQueue:
    """Latest change per file: an entry (added or modified) or None (removed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, IndexedFile | None] = {}
        self.held = False
        """While a first index is published piecewise, queries do not apply the queue
        (a request would derive a second of parsing each time); a follower thread does,
        every few seconds (`Engine._follow_pass`), with `force`, and so does the pass's end
        (`Engine._settle_piecewise`) before the hold is lifted."""

    def add(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        with self._lock:
            for abs_path in removed:
                self._pending[abs_path] = None
            for entry in updated:
                self._pending[entry.abs_path] = entry

    def drain(self, force: bool = False, limit: int | None = None) -> dict[str, IndexedFile | None]:
        """The queued changes, oldest first (at most `limit`: a caller applying them under
        a lock that requests also take applies a few at a time); none while `held`,
        unless `force`."""
        if self.held and not force:
            return {}
        with self._lock:
            if limit is None or len(self._pending) <= limit:
                pending, self._pending = self._pending, {}
                return pending
            taken = list(itertools.islice(self._pending, limit))
            return {path: self._pending.pop(path) for path in taken}

    def __bool__(self) -> bool:
        return bool(self._pending)
