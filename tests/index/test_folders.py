"""Tests for ctx_lsp/index/folders.py: the one decision of what is inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctx_lsp.errors import NotFound, OutsideWorkspace
from ctx_lsp.index.folders import Folders, Location, locate
from ctx_lsp.index.store import CACHE_DIR_NAME
from tests.conftest import write_tree


def _folders(*roots: Path) -> Folders:
    return Folders(list(roots), ignore=(), respect_gitignore=True)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    outside = write_tree(tmp_path / "outside", {"secret.py": "KEY = 1\n"})
    root = write_tree(tmp_path / "ws", {"a.py": "A = 1\n", "pkg/b.py": "B = 1\n"})
    return root.resolve(), outside.resolve()


def test_paths_inside_are_located(layout: tuple[Path, Path]) -> None:
    """Ensure that an absolute, a relative and a not-yet-existing path inside are located."""
    root, _ = layout
    folders = _folders(root)
    assert folders.locate(root / "pkg" / "b.py") == Location(next(iter(folders)), "pkg/b.py")
    assert folders.locate("pkg/b.py").abs_path == str(root / "pkg" / "b.py")
    assert folders.locate(root / "new.py").rel == "new.py"
    assert folders.locate(root).rel == "" and folders.locate(root).abs_path == str(root)


def test_a_path_outside_is_refused(layout: tuple[Path, Path]) -> None:
    """Ensure that a path outside every folder is refused."""
    root, outside = layout
    for bad in (outside / "secret.py", "/etc/passwd", root.parent):
        with pytest.raises(OutsideWorkspace):
            _folders(root).locate(bad)


def test_a_dotdot_path_is_refused(layout: tuple[Path, Path]) -> None:
    """Ensure that `..` cannot climb out, written absolute or relative."""
    root, _ = layout
    for bad in (root / ".." / "outside" / "secret.py", "../outside/secret.py", "pkg/../../outside/secret.py"):
        with pytest.raises(OutsideWorkspace):
            _folders(root).locate(bad)
    assert _folders(root).locate(root / "pkg" / ".." / "a.py").rel == "a.py"


def test_a_symlink_pointing_outside_is_refused(layout: tuple[Path, Path]) -> None:
    """Ensure that a link inside the workspace to a file or a directory outside is refused."""
    root, outside = layout
    os.symlink(outside / "secret.py", root / "link.py")
    os.symlink(outside, root / "linked_dir")
    for bad in (root / "link.py", root / "linked_dir" / "secret.py", "linked_dir/secret.py"):
        with pytest.raises(OutsideWorkspace):
            _folders(root).locate(bad)


def test_a_symlink_pointing_inside_is_its_target(layout: tuple[Path, Path]) -> None:
    """Ensure that a link to a file inside is located as the file it points to."""
    root, _ = layout
    os.symlink(root / "pkg" / "b.py", root / "alias.py")
    assert _folders(root).locate(root / "alias.py").rel == "pkg/b.py"


def test_the_cache_directory_is_never_inside(layout: tuple[Path, Path]) -> None:
    """Ensure that our own cache is not workspace content."""
    root, _ = layout
    with pytest.raises(OutsideWorkspace):
        _folders(root).locate(root / CACHE_DIR_NAME / "index.sqlite3")


def test_the_innermost_folder_wins(tmp_path: Path) -> None:
    """Ensure that nested folders locate a path in the deepest one that holds it."""
    outer = write_tree(tmp_path / "outer", {"inner/x.py": "", "y.py": ""}).resolve()
    folders = _folders(outer, outer / "inner")
    x, y = folders.locate(outer / "inner" / "x.py"), folders.locate(outer / "y.py")
    assert (x.folder.root, x.rel) == (outer / "inner", "x.py")
    assert (y.folder.root, y.rel) == (outer, "y.py")
    assert locate(list(folders), outer / "inner" / "x.py") == x


def test_display_paths_name_the_folder_only_when_there_are_several(tmp_path: Path) -> None:
    """Ensure that display paths are relative in one folder and prefixed in several."""
    a = write_tree(tmp_path / "alpha", {"x.py": ""}).resolve()
    b = write_tree(tmp_path / "beta", {"y.py": ""}).resolve()
    folders = _folders(a)
    location = folders.locate(a / "x.py")
    assert folders.display_path(location.folder, location.rel) == "x.py"
    assert folders.set_roots([a, b]) == []
    assert folders.display_path(location.folder, location.rel) == "alpha/x.py"
    assert [f.root for f in folders.set_roots([b])] == [a]


def test_read_refuses_a_file_swapped_for_a_link(layout: tuple[Path, Path]) -> None:
    """Ensure that reading decides again at the moment of reading: a regular file is read,
    a link swapped in (pointing inside or out) is not, and neither is a FIFO."""
    root, outside = layout
    folders = _folders(root)
    location, data, mtime_ns = folders.read(str(root / "a.py"))
    assert (location.rel, data, mtime_ns) == ("a.py", b"A = 1\n", os.stat(root / "a.py").st_mtime_ns)
    (root / "a.py").unlink()
    os.symlink(root / "pkg" / "b.py", root / "a.py")
    with pytest.raises(NotFound):
        folders.read(str(root / "a.py"))
    (root / "a.py").unlink()
    os.symlink(outside / "secret.py", root / "a.py")
    with pytest.raises(OutsideWorkspace):
        folders.read(str(root / "a.py"))
    os.mkfifo(root / "pipe.py")
    with pytest.raises(NotFound):
        folders.read(str(root / "pipe.py"))
