"""The branch switch's second tree and swap (benchmarks/scalebench/switch.py) and the
kernel preparation's `.gitignore` step (kernel.py), on a small tree written here.

What matters: the second tree is the same for the same seed, the swap there and back
gives the first tree's bytes again, and the measured tree is never written (the scratch
copy's files are hard links to it, so a write through one would change it).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
DEFINITION = "\n\nint {name}(int value)\n{{\n\treturn value;\n}}\n"


@pytest.fixture(scope="module")
def scalebench() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import scalebench.kernel
        import scalebench.switch

        yield scalebench
    finally:
        sys.path.remove(str(BENCHMARKS))


def tree(root: Path, n: int = 40) -> list[Path]:
    files = []
    for i in range(n):
        path = root / f"dir{i % 4}" / f"file{i}.c"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"int f{i}(void)\n{{\n\treturn {i};\n}}\n")
        files.append(path)
    (root / ".ctx-lsp").mkdir()
    (root / ".ctx-lsp" / "index.sqlite3").write_bytes(b"cache")
    return files


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_switch_there_and_back_leaves_the_measured_tree_alone(scalebench: ModuleType, tmp_path: Path) -> None:
    """Ensure that the swap changes the copy as planned and the pristine tree not at all."""
    switch = scalebench.switch
    root = tmp_path / "ws"
    files = tree(root)
    before = snapshot(root)
    plan = switch.plan(root, files, "c", DEFINITION, 20, 3, tmp_path / "b1")
    again = switch.plan(root, files, "c", DEFINITION, 20, 3, tmp_path / "b2")
    assert (plan.modified, plan.added, plan.deleted) == (again.modified, again.added, again.deleted)
    assert plan.changed == 20 and plan.added and plan.deleted
    copy = tmp_path / "copy"
    switch.hardlink_copy(root, copy)
    assert snapshot(copy) == before
    switch.apply(plan, copy, root, "b")
    assert plan.probe_ident in (copy / plan.probe_path).read_text()
    assert all(not (copy / rel).exists() for rel in plan.deleted)
    assert all((copy / rel).exists() for rel in plan.added)
    assert snapshot(root) == before
    switch.apply(plan, copy, root, "a")
    assert snapshot(copy) == before
    assert snapshot(root) == before
    with pytest.raises(ValueError):
        switch.apply(plan, root, root, "b")


def test_prepare_removes_exactly_debians_gitignore_lines(scalebench: ModuleType, tmp_path: Path) -> None:
    """Ensure that only `/*` and `!/debian/` go, every other line (comments too) stays."""
    (tmp_path / ".gitignore").write_text("*.o\n# Debian packaging\n/*\n!/debian/\n/vmlinux\n")
    removed = scalebench.kernel._strip_debian_gitignore(tmp_path)
    assert removed == ["/*", "!/debian/"]
    assert (tmp_path / ".gitignore").read_text() == "*.o\n# Debian packaging\n/vmlinux\n"
    assert scalebench.kernel._strip_debian_gitignore(tmp_path) == []
