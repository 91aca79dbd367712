"""Tests for ctx_lsp/gate.py: the one read gate, on real files, links, FIFOs and devices."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctx_lsp import gate
from ctx_lsp.errors import OutsideWorkspace
from ctx_lsp.gate import Reason, Refused, inside, read_file, read_head, read_text
from tests.conftest import within, write_tree

LIMIT = 1_000_000


@pytest.fixture(autouse=True, params=["descriptor", "path"])
def strategy(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs both ways of finding the opened file: the kernel's answer
    (/proc/self/fd, Linux) and resolving the path again (elsewhere)."""
    if request.param == "path":
        monkeypatch.setattr(gate, "FD_PATHS", "")
    elif not gate.FD_PATHS:
        pytest.skip("no /proc/self/fd here")
    return str(request.param)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = write_tree(tmp_path / "ws", {"a.py": "A = 1\n", "pkg/b.py": "B = 2\n"})
    outside = write_tree(tmp_path / "outside", {"secret.py": "KEY = 'hunter2'\n"})
    return root, outside


def test_a_regular_file_inside_is_read(layout: tuple[Path, Path]) -> None:
    """Ensure that a regular file inside a root is read whole, with its mtime and real path."""
    root, _ = layout
    read = read_file(root / "a.py", [root], LIMIT)
    assert (read.data, read.mtime_ns, read.real) == (b"A = 1\n", os.stat(root / "a.py").st_mtime_ns, str(root / "a.py"))
    assert read_text(root / "pkg" / "b.py", [root], LIMIT) == "B = 2\n"


def test_outside_dotdot_and_links_out_are_refused(layout: tuple[Path, Path]) -> None:
    """Ensure that the decision is made on the resolved path: `..`, a link to a file outside
    and a file under a linked directory are all outside."""
    root, outside = layout
    (root / "link.py").symlink_to(outside / "secret.py")
    (root / "linked").symlink_to(outside)
    dotdot = root / ".." / "outside" / "secret.py"
    for path in (outside / "secret.py", dotdot, root / "link.py", root / "linked" / "secret.py"):
        with pytest.raises(OutsideWorkspace):
            read_file(path, [root], LIMIT)


def test_a_prefix_of_a_root_is_not_inside(tmp_path: Path) -> None:
    """Ensure that `/ws-evil` is not taken for a path under `/ws`."""
    (tmp_path / "ws").mkdir()
    evil = write_tree(tmp_path / "ws-evil", {"x.py": "X = 1\n"})
    assert not inside(str(evil / "x.py"), [tmp_path / "ws"])
    with pytest.raises(OutsideWorkspace):
        read_file(evil / "x.py", [tmp_path / "ws"], LIMIT)


def test_a_link_that_stays_inside_is_read(layout: tuple[Path, Path]) -> None:
    """Ensure that in-workspace links pointing inside are fine: read as their target."""
    root, _ = layout
    (root / "alias.py").symlink_to(root / "pkg" / "b.py")
    read = read_file(root / "alias.py", [root], LIMIT)
    assert (read.data, read.real) == (b"B = 2\n", str(root / "pkg" / "b.py"))


def test_a_fifo_is_refused_without_blocking(layout: tuple[Path, Path]) -> None:
    """Ensure that a FIFO (no writer: an open would block, a read never end) is refused at
    once, by read_file and read_head alike."""
    root, _ = layout
    os.mkfifo(root / "pipe.py")
    for fn in (read_file, read_head):
        with pytest.raises(Refused, match="is a FIFO, not a regular file") as info:
            within(lambda fn=fn: fn(root / "pipe.py", [root], LIMIT))
        assert info.value.reason == Reason.NOT_A_FILE


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused(device: str, tmp_path: Path) -> None:
    """Ensure that a character device (`/dev/zero` reads forever) is never read: directly
    with no root, through a link, and as a device node inside the workspace."""
    with pytest.raises(Refused, match="character device") as info:
        within(lambda: read_file(device, None, LIMIT))
    assert info.value.reason == Reason.NOT_A_FILE
    (tmp_path / "dev.py").symlink_to(device)
    with pytest.raises(Refused, match="character device"):
        within(lambda: read_file(tmp_path / "dev.py", None, LIMIT))
    node = tmp_path / "node.py"
    st = os.stat(device)
    try:
        os.mknod(node, 0o600 | (st.st_mode & 0o170000), st.st_rdev)
    except PermissionError:
        pytest.skip("mknod needs privileges here")
    with pytest.raises(Refused, match="character device"):
        within(lambda: read_file(node, [tmp_path], LIMIT))


def test_a_directory_is_refused(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(Refused, match="is a directory"):
        read_file(root / "pkg", [root], LIMIT)


def test_a_file_over_the_limit_is_refused_but_its_head_can_be_read(layout: tuple[Path, Path]) -> None:
    """Ensure that the size limit is checked before reading (refused, not read), while
    read_head reads the start of any regular file."""
    root, _ = layout
    (root / "big.txt").write_bytes(b"x" * 5000)
    with pytest.raises(Refused, match="over the 4,096-byte limit") as info:
        read_file(root / "big.txt", [root], 4096)
    assert info.value.reason == Reason.TOO_LARGE
    assert read_head(root / "big.txt", [root], 10) == b"x" * 10


def test_missing_files_and_bad_paths(layout: tuple[Path, Path]) -> None:
    """Ensure that a missing file is an OSError (like any unreadable file) and a path with a
    NUL byte is refused, not an exception of another kind."""
    root, _ = layout
    with pytest.raises(FileNotFoundError):
        read_file(root / "gone.py", [root], LIMIT)
    with pytest.raises(Refused):
        read_file(str(root / "a\x00.py"), [root], LIMIT)
