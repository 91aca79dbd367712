"""Tests for ctx_lsp/index/indexer.py: the per-file check and its typed outcome."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctx_lsp.config import Config
from ctx_lsp.index.folders import Folders
from ctx_lsp.index.indexer import Change, FileOutcome, Indexer
from tests.conftest import write_tree


def _indexer(root: Path) -> tuple[Folders, Indexer]:
    config = Config()
    config.index.cache = False
    folders = Folders([root], config.index.ignore, config.index.respect_gitignore)
    return folders, Indexer(folders, config)


def test_check_says_what_a_file_change_means(tmp_path: Path) -> None:
    """Ensure that each state of a file on disk maps to one outcome, with an entry exactly
    when the index should hold one."""
    root = write_tree(tmp_path / "ws", {"a.py": "def f():\n    pass\n"})
    folders, indexer = _indexer(root)
    location = folders.locate(root / "a.py")

    created = indexer.check(location, None)
    assert created.change is Change.UPDATED and created.entry is not None
    assert created.entry.outline.symbols[0].name == "f"
    assert indexer.check(location, created.entry) == FileOutcome(location.abs_path, Change.UNCHANGED)

    later = time.time() + 5
    os.utime(root / "a.py", (later, later))
    touched = indexer.check(location, created.entry)
    assert touched.change is Change.RESTAMPED and touched.entry is not None
    assert touched.entry.hash == created.entry.hash and touched.entry.mtime_ns != created.entry.mtime_ns

    (root / "a.py").write_text("def g():\n    pass\n")
    edited = indexer.check(location, touched.entry)
    assert edited.change is Change.UPDATED and edited.entry is not None
    assert edited.entry.outline.symbols[0].name == "g"

    (root / "a.py").unlink()
    assert indexer.check(location, edited.entry) == FileOutcome(location.abs_path, Change.REMOVED)
    assert indexer.check(location, None) == FileOutcome(location.abs_path, Change.UNCHANGED)


def test_refresh_skips_buffers_and_reports_only_changes(tmp_path: Path) -> None:
    """Ensure that refresh returns outcomes for changed files only, never for skipped ones."""
    root = write_tree(tmp_path / "ws", {"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": "C = 1\n"})
    _folders, indexer = _indexer(root)
    files, _stats = indexer.index({}, None, force=False, stale=frozenset())
    (root / "a.py").write_text("A = 2\n")
    (root / "b.py").write_text("B = 2\n")
    outcomes = indexer.refresh([root], files, skip=[str(root.resolve() / "b.py")])
    assert [(Path(o.abs_path).name, o.change) for o in outcomes] == [("a.py", Change.UPDATED)]
