"""Which files a first index parses first: those the first requests will read.

A fresh clone of a monorepo takes minutes to index (the Linux kernel: 60,000 C files), and
an agent asks for context in the first seconds. Requests are answered from what is indexed
so far (`Workspace.progress`), so the order of the parse decides what those answers hold:
the files being worked on first, then their folders and what they import, then the paths
the first tasks' words name, then the rest in walk order.

The engine tells this object what it learns (an editor opens a file, a request names a
focus file, extra open files or a query); the indexer asks `rank` for each file still to
parse and re-sorts its queue when `version` moves. Reading is lock-free (the sets are
replaced, never mutated), so a rank costs a few dict lookups per file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

from ctx_lsp.index.terms import terms

__all__ = ["FIRST", "NAMED", "NEAR", "REST", "IndexPriorities"]

FIRST = 0
"""A file being worked on: open in the editor, or named by a request (focus, open)."""
NEAR = 1
"""In the folder of a file being worked on, or named by what such a file imports."""
NAMED = 2
"""A path whose words a task names (`kernel/fork.c` for "copy_process when fork fails")."""
REST = 3

MAX_TASK_TERMS = 64
"""Task words kept: the first requests' words matter, not a long session's vocabulary."""


class IndexPriorities:
    """What the first requests will read, as the engine learns it; see the module doc."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: frozenset[str] = frozenset()
        self._folders: frozenset[str] = frozenset()
        self._near_terms: frozenset[str] = frozenset()
        self._task_terms: tuple[str, ...] = ()
        self._task_set: frozenset[str] = frozenset()
        self.version = 0
        """Moves whenever a rank may have changed: a queue sorted under an older version
        is sorted again."""

    def note_working(self, abs_paths: Iterable[str], imports: Iterable[str] = ()) -> None:
        """Files being worked on, and the module names they import (`Import.module`)."""
        paths = {os.path.normpath(p) for p in abs_paths}
        words = {t for module in imports for t in terms(module.replace(".", " ").replace("/", " "))}
        with self._lock:
            new_paths = self._paths | paths
            new_folders = self._folders | {os.path.dirname(p) for p in paths}
            new_near = self._near_terms | words
            if (new_paths, new_folders, new_near) == (self._paths, self._folders, self._near_terms):
                return
            self._paths, self._folders, self._near_terms = frozenset(new_paths), frozenset(new_folders), new_near
            self.version += 1

    def note_task(self, text: str) -> None:
        """A task's words (a bundle's query, a search, a symbol's name)."""
        fresh = [t for t in dict.fromkeys(terms(text)) if t not in self._task_set]
        if not fresh:
            return
        with self._lock:
            kept = (*self._task_terms, *fresh)[:MAX_TASK_TERMS]
            if kept == self._task_terms:
                return
            self._task_terms = kept
            self._task_set = frozenset(kept)
            self.version += 1

    def rank(self, abs_path: str, rel_path: str) -> int:
        """FIRST, NEAR, NAMED or REST (lower parses sooner)."""
        if abs_path in self._paths:
            return FIRST
        near, task = self._near_terms, self._task_set
        if os.path.dirname(abs_path) in self._folders:
            return NEAR
        if not near and not task:
            return REST
        words = path_terms(rel_path)
        if near and not near.isdisjoint(words):
            return NEAR
        if task and not task.isdisjoint(words):
            return NAMED
        return REST

    @property
    def empty(self) -> bool:
        return not (self._paths or self._near_terms or self._task_set)


def path_terms(rel_path: str) -> set[str]:
    """The search's terms of a path's parts, without its extension (`kernel/fork.c` →
    {kernel, fork}): what a task's words and an import's module name are compared with."""
    stem, _ = os.path.splitext(rel_path)
    return set(terms(stem.replace("/", " ")))
