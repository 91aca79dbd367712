"""Tests for ctx_lsp/index/workspace.py: full passes, the cache, refresh and buffers."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ctx_lsp.config import Config
from ctx_lsp.errors import NotFound, OutsideWorkspace
from ctx_lsp.index.workspace import Workspace
from tests.conftest import write_tree


def _ws(root: Path, **index_opts) -> Workspace:
    config = Config()
    for k, v in index_opts.items():
        setattr(config.index, k, v)
    return Workspace([root], config)


def test_index_then_restart_reuses_cache(sample_workspace: Path) -> None:
    """Ensure that a second workspace on the same folder parses nothing unchanged."""
    first = _ws(sample_workspace)
    stats = first.index()
    assert stats.parsed == 5 and stats.reused == 0
    assert {f.path for f in first.files.values()} == {
        "README.md", "notes.txt", "pkg/__init__.py", "pkg/bundle.py", "pkg/tokens.py"}
    first.close()

    (sample_workspace / "pkg" / "bundle.py").write_text("def changed():\n    pass\n")
    second = _ws(sample_workspace)
    stats = second.index()
    assert (stats.parsed, stats.reused) == (1, 4)
    assert [s.qualname for s in second.get("pkg/bundle.py").outline.symbols] == ["changed"]


def test_touch_without_change_keeps_outline(sample_workspace: Path) -> None:
    """Ensure that a new mtime with the same content re-reads but keeps the same hash."""
    ws = _ws(sample_workspace)
    ws.index()
    before = ws.get("pkg/tokens.py")
    later = time.time() + 5
    os.utime(sample_workspace / "pkg" / "tokens.py", (later, later))
    ws.index()
    after = ws.get("pkg/tokens.py")
    assert after.hash == before.hash and after.mtime_ns != before.mtime_ns


def test_parallel_cold_index_matches_serial(tmp_path: Path) -> None:
    """Ensure that the process-pool path gives the same index as the in-process one."""
    files = {f"m{i}.py": f"def f{i}(x: int) -> int:\n    return x + {i}\n" for i in range(40)}
    root = write_tree(tmp_path / "ws", files)
    serial = _ws(root, workers=1, cache=False)
    serial.index()
    parallel = _ws(root, workers=2, cache=False)
    parallel.index()
    assert {p: (f.hash, f.tokens, f.outline) for p, f in serial.files.items()} == {
        p: (f.hash, f.tokens, f.outline) for p, f in parallel.files.items()}


def test_non_utf8_and_binary_content(tmp_path: Path) -> None:
    """Ensure that non-UTF-8 text is indexed with replacements and NUL content is skipped."""
    root = write_tree(tmp_path / "ws", {"latin.py": "NAME = 'caf\xe9'\n".encode("latin-1"),
                                         "blob.dat2": b"abc\x00def"})
    ws = _ws(root)
    stats = ws.index()
    entry = ws.get("latin.py")
    assert entry.decode_replaced and entry.outline.constants[0].name == "NAME"
    assert stats.skipped["binary"] == 1


def test_refresh_created_modified_deleted(sample_workspace: Path) -> None:
    """Ensure that refresh picks up created, modified and deleted files and notifies listeners."""
    ws = _ws(sample_workspace)
    ws.index()
    seen: list[tuple[list[str], list[str]]] = []
    ws.subscribe(lambda removed, updated: seen.append((list(removed), [u.path for u in updated])))
    new = sample_workspace / "pkg" / "new.py"
    new.write_text("def fresh():\n    return 1\n")
    (sample_workspace / "notes.txt").unlink()
    removed, updated = ws.refresh([new, sample_workspace / "notes.txt"])
    assert [u.path for u in updated] == ["pkg/new.py"]
    assert removed == [str(sample_workspace.resolve() / "notes.txt")]
    assert seen and seen[-1][1] == ["pkg/new.py"]
    with pytest.raises(NotFound):
        ws.get("notes.txt")


def test_refresh_directory_and_gitignore(sample_workspace: Path) -> None:
    """Ensure that a new directory is scanned and a .gitignore change hides files."""
    ws = _ws(sample_workspace)
    ws.index()
    write_tree(sample_workspace, {"sub/a.py": "A = 1\n", "sub/b.py": "B = 2\n"})
    ws.refresh([sample_workspace / "sub"])
    assert ws.get("sub/a.py") and ws.get("sub/b.py")
    (sample_workspace / ".gitignore").write_text("sub/b.py\n")
    ws.refresh([sample_workspace / ".gitignore"])
    with pytest.raises(NotFound):
        ws.get("sub/b.py")
    assert ws.get("sub/a.py")


def test_overlay_overrides_disk_until_close(sample_workspace: Path) -> None:
    """Ensure that an editor buffer wins over the disk copy until it is closed."""
    ws = _ws(sample_workspace)
    ws.index()
    path = sample_workspace / "pkg" / "bundle.py"
    ws.open_document(path, "def unsaved_edit():\n    pass\n", 3)
    entry = ws.get(path)
    assert entry.overlay_version == 3
    assert [s.name for s in entry.outline.symbols] == ["unsaved_edit"]
    assert ws.read_text(entry)[0].startswith("def unsaved_edit")
    ws.refresh([path])  # the watcher must not clobber the buffer
    assert ws.get(path).overlay_version == 3
    ws.close_document(path)
    assert [s.name for s in ws.get(path).outline.symbols] == ["assemble_bundle"]


def test_outside_paths_are_refused(tmp_path: Path) -> None:
    """Ensure that paths outside the folders, via .. or a symlink, are refused."""
    outside = write_tree(tmp_path / "outside", {"secret.py": "X = 1\n"})
    root = write_tree(tmp_path / "ws", {"a.py": ""})
    os.symlink(outside / "secret.py", root / "link.py")
    ws = _ws(root)
    ws.index()
    for bad in (outside / "secret.py", root / ".." / "outside" / "secret.py", root / "link.py", "/etc/passwd"):
        with pytest.raises(OutsideWorkspace):
            ws.locate(bad)
    with pytest.raises(OutsideWorkspace):
        ws.open_document(outside / "secret.py", "X = 2\n", 1)


def test_read_text_catches_up_with_disk(sample_workspace: Path) -> None:
    """Ensure that text read for rendering always matches the outline's line numbers."""
    ws = _ws(sample_workspace)
    ws.index()
    stale = ws.get("pkg/bundle.py")
    (sample_workspace / "pkg" / "bundle.py").write_text("# moved\n\n\ndef assemble_bundle():\n    pass\n")
    text, fresh = ws.read_text(stale)
    assert fresh.outline.symbols[0].start_line == 4
    assert text.splitlines()[3].startswith("def assemble_bundle")


def test_multi_root_paths(tmp_path: Path) -> None:
    """Ensure that multi-root workspaces prefix display paths with the folder name."""
    a = write_tree(tmp_path / "alpha", {"x.py": "X = 1\n"})
    b = write_tree(tmp_path / "beta", {"y.py": "Y = 1\n"})
    ws = Workspace([a, b], Config())
    ws.index()
    assert sorted(f.path for f in ws.files.values()) == ["alpha/x.py", "beta/y.py"]
