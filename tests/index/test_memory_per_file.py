"""Memory per indexed file is bounded and does not grow with the workspace (issue 34,
item 3): a warm engine over generated workspaces of N and 4N files (the scale bench's
generator, `benchmarks/scalebench/generate.py`), its Python heap measured with
`tracemalloc` once the engine is warm.

What is measured is what a warm server holds between requests: the entries, the derived
indexes (search and body postings, the graph, its rank) restored from the cache, after
the process-wide caches with a fixed bound (decoded outlines) are emptied. The cache's
own memory (SQLite's pages) is C memory and not counted: per-file data kept in the store
is the point. Allocations are counted, not timed, so the figures are the same run to run.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from ctx_lsp.code import outline as outline_module
from ctx_lsp.engine import Engine

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

FILES = 100
"""The smaller workspace; the larger has 4x as many files."""
GROWTH_MAX = 1.25
"""Heap per file at 4N over heap per file at N: the fixed part (config, grammars' tables,
the graph's name table) makes it ~0.85; memory that grows with the workspace exceeds it."""
PER_FILE_MAX_BYTES = 26 * 1024
"""Heap per file of the larger workspace: ~23 KiB here (the postings, the graph's facts
and image, the entry), ~28 KiB when every entry held its outline JSON (as up to session
18). A generated file's outline JSON is ~5 KiB; the kernel's average is ~8 KiB."""
OPTIONS = {"index": {"watch": False, "workers": 1}}


@pytest.fixture(scope="module")
def generate() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import scalebench.generate

        yield scalebench.generate
    finally:
        sys.path.remove(str(BENCHMARKS))


def warm_heap_per_file(root: Path) -> float:
    """Index `root` cold (not measured), then the Python heap a warm engine over its
    cache holds once `warm_up` is done, per indexed file."""
    cold = Engine([root], OPTIONS, history_in_background=False)
    cold.index()
    cold.warm_up()
    cold.close()
    thresholds = gc.get_threshold()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        engine = Engine([root], OPTIONS, history_in_background=False)
        engine.index()
        engine.warm_up()
        outline_module._DECODED.clear()  # bounded for the process, not per file
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        files = len(engine.workspace.files)
        engine.close()
    finally:
        tracemalloc.stop()
        gc.unfreeze()  # `warm_up` freezes what it built; the engines of a test are dropped
        gc.set_threshold(*thresholds)
    assert files > 0.9 * int(root.name.removeprefix("files"))
    return held / files


def test_memory_per_indexed_file_is_bounded_and_does_not_grow_with_the_workspace(
    generate: ModuleType, tmp_path: Path
) -> None:
    """Ensure that a warm engine's Python heap per indexed file at 4N files is within
    GROWTH_MAX of that at N, and under PER_FILE_MAX_BYTES: per-file data (outlines, units)
    is read from the cache on use, not held for the life of the process."""
    small, large = (tmp_path / f"files{n}" for n in (FILES, 4 * FILES))
    generate.generate(small, FILES, 0, quiet=True)
    generate.generate(large, 4 * FILES, 0, quiet=True)
    at_small, at_large = warm_heap_per_file(small), warm_heap_per_file(large)
    assert at_large <= GROWTH_MAX * at_small, f"{at_small:.0f} -> {at_large:.0f} bytes per file"
    assert at_large <= PER_FILE_MAX_BYTES, f"{at_large:.0f} bytes per file at {4 * FILES} files"
