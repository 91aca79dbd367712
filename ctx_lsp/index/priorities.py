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
        self._imports: frozenset[str] = frozenset()
        self._task_terms: tuple[str, ...] = ()
        self._task_set: frozenset[str] = frozenset()
        self.version = 0
        """Moves whenever a rank may have changed: a queue sorted under an older version
        is sorted again."""

    def note_working(self, abs_paths: Iterable[str], imports: Iterable[str] = ()) -> None:
        """Files being worked on, and the modules they import (`Import.module`: `pkg.mod`,
        `./util`, `linux/sched.h`), matched against the end of a path (`import_suffix`)."""
        paths = {os.path.normpath(p) for p in abs_paths}
        suffixes = {suffix for module in imports if (suffix := import_suffix(module))}
        with self._lock:
            new_paths = self._paths | paths
            new_folders = self._folders | {os.path.dirname(p) for p in paths}
            new_near = self._imports | suffixes
            if (new_paths, new_folders, new_near) == (self._paths, self._folders, self._imports):
                return
            self._paths, self._folders, self._imports = frozenset(new_paths), frozenset(new_folders), new_near
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
        imports, task = self._imports, self._task_set
        if os.path.dirname(abs_path) in self._folders:
            return NEAR
        if imports:
            parts = os.path.splitext(rel_path)[0].split("/")
            if len(parts) > 1 and parts[-1] in PACKAGE_FILES:  # `pkg/__init__.py` is `pkg`
                parts = parts[:-1]
            if any("/".join(parts[-k:]) in imports for k in range(1, min(len(parts), MAX_IMPORT_PARTS) + 1)):
                return NEAR
        if task and not task.isdisjoint(path_terms(rel_path)):
            return NAMED
        return REST


PACKAGE_FILES = frozenset({"__init__", "index", "mod"})
"""File stems that stand for their folder in an import (Python, JavaScript, Rust)."""
MAX_IMPORT_PARTS = 4
"""Path components an import is matched on (`linux/sched.h`, `django/db/models/base`)."""


def import_suffix(module: str) -> str:
    """The end of the path an import names, without extension: `pkg.sub.mod` → `pkg/sub/mod`,
    `./util.js` → `util`, `linux/sched.h` → `linux/sched`; "" for none."""
    module = module.strip().strip("\"'<>")
    if "/" not in module:
        module = module.strip(".").replace(".", "/")
    module = os.path.splitext(module)[0] if "/" in module or "." in module else module
    parts = [p for p in module.split("/") if p not in ("", ".", "..")]
    return "/".join(parts[-MAX_IMPORT_PARTS:])


def path_terms(rel_path: str) -> set[str]:
    """The search's terms of a path's parts, without its extension (`kernel/fork.c` →
    {kernel, fork}): what a task's words and an import's module name are compared with."""
    stem, _ = os.path.splitext(rel_path)
    return set(terms(stem.replace("/", " ")))
