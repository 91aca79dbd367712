"""Tests for the content-addressed index cache (issue 34, item 4): `index/store.py`'s
analyses keyed by content, and the indexer's reuse of them.

A `git checkout` rewrites the files it changes with new mtimes; switching back writes the
old content again. Keyed by path and time, every such file was parsed again; keyed by
content, only content never seen is.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctx_lsp.engine import Engine
from ctx_lsp.index.store import UNREFERENCED_KEPT_MIN, IndexStore, StoredFile, analysis_key
from tests.conftest import write_tree

FILES = 60


def _module(i: int, version: str) -> str:
    return f'"""Module {i}, {version}."""\n\n\ndef step_{i}_{version}(value):\n    return value * {i}\n'


def _tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "ws", {f"pkg/m{i}.py": _module(i, "main") for i in range(FILES)})


def _checkout(root: Path, version: str, changed: range) -> None:
    """Rewrite the files of `changed` as a checkout does: new content, new mtime."""
    later = time.time() + 10
    for i in changed:
        path = root / f"pkg/m{i}.py"
        path.write_text(_module(i, version))
        os.utime(path, (later, later))


def _index(root: Path) -> dict:
    engine = Engine([root], history_in_background=False)
    try:
        engine.index()
        return engine.status().last_index
    finally:
        engine.close()


def test_a_branch_switch_parses_what_changed_and_switching_back_parses_nothing(tmp_path: Path) -> None:
    """Ensure that after a checkout changing 12 files a full pass parses those 12, and that
    a checkout back to the first tree (same content, new mtimes) parses none: each file is
    read and hashed, and its analysis is found by content."""
    root = _tree(tmp_path)
    first = _index(root)
    assert first["parsed"] == FILES

    _checkout(root, "feature", range(12))
    switched = _index(root)
    assert (switched["parsed"], switched["reused_by_content"], switched["reused"]) == (12, 0, FILES - 12)

    _checkout(root, "main", range(12))
    back = _index(root)
    assert (back["parsed"], back["reused_by_content"], back["reused"]) == (0, 12, FILES - 12)

    engine = Engine([root], history_in_background=False)
    engine.index()
    hits = engine.search("step_3_main")
    assert hits and hits[0].path == "pkg/m3.py"  # the reused analysis is this content's
    engine.close()


def test_a_running_engine_reuses_analyses_for_files_changed_on_disk(tmp_path: Path) -> None:
    """Ensure that the watcher's path (a refresh of changed files) also finds content by
    its analysis: a file switched back, and a file copied under a new name, are not parsed."""
    root = _tree(tmp_path)
    engine = Engine([root], history_in_background=False)
    engine.index()
    _checkout(root, "feature", range(3))
    engine.refresh([root / f"pkg/m{i}.py" for i in range(3)])
    assert "step_0_feature" in {s.name for s in engine.workspace.get(root / "pkg/m0.py").outline.symbols}

    parsed = []
    import ctx_lsp.index.files as files_module

    original = files_module._analysed

    def counting(job, data, mtime_ns, encoding):  # type: ignore[no-untyped-def]
        parsed.append(job.rel_path)
        return original(job, data, mtime_ns, encoding)

    files_module._analysed = counting  # type: ignore[assignment]
    try:
        _checkout(root, "main", range(3))
        (root / "pkg/copy_of_m5.py").write_text(_module(5, "main"))
        engine.refresh([*(root / f"pkg/m{i}.py" for i in range(3)), root / "pkg/copy_of_m5.py"])
    finally:
        files_module._analysed = original  # type: ignore[assignment]
    assert parsed == []
    assert "step_0_main" in {s.name for s in engine.workspace.get(root / "pkg/m0.py").outline.symbols}
    assert engine.workspace.get(root / "pkg/copy_of_m5.py").outline.symbols[0].name == "step_5_main"
    engine.close()


def test_analyses_no_path_refers_to_are_kept_up_to_a_bound(tmp_path: Path) -> None:
    """Ensure that analyses of content no path holds any more are kept (to switch back),
    the newest first, and dropped beyond UNREFERENCED_KEPT_MIN."""
    store = IndexStore.memory()
    extra = 25
    rows = [
        StoredFile(f"f{i}.py", 1, i, f"h{i}", "python", 1, 1, 0, False, "{}", key=analysis_key(f"h{i}", "f.py", True))
        for i in range(UNREFERENCED_KEPT_MIN + extra)
    ]
    for row in rows:  # one at a time: each a newer `seen`
        store.put_many([row])
    store.delete_many(r.rel_path for r in rows[:-1])  # the last one is still referenced
    assert store.forget_unreferenced() == extra - 1
    assert not store.known(rows[extra - 2].key) and store.known(rows[extra - 1].key) and store.known(rows[-1].key)


def test_the_analysis_key_is_content_suffix_and_masking() -> None:
    """Ensure that the same bytes under paths of one kind share a key, and that another
    suffix, or secret masking switched off for an opted-in path, does not."""
    assert analysis_key("abc", "a/b.py", True) == analysis_key("abc", "c/d.PY", True)
    assert analysis_key("abc", "a/b.py", True) != analysis_key("abc", "a/b.pyi", True)
    assert analysis_key("abc", "a/b.py", True) != analysis_key("abc", "a/b.py", False)
    assert analysis_key("abc", "Makefile", True) != analysis_key("abc", "Dockerfile", True)
    assert analysis_key("abc", ".env", True) != analysis_key("abc", ".bashrc", True)
