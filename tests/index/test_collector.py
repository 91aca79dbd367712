"""Tests for ctx_lsp/index/collector.py: the collector is paused for a block, never left off."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from ctx_lsp.config import Config
from ctx_lsp.index.collector import collector_paused
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.workspace import Workspace
from tests.conftest import write_tree


def test_the_collector_is_off_inside_and_on_again_after_even_on_error() -> None:
    """Ensure that the block runs without the cyclic collector and that it runs again
    afterwards, also when the block raises (a failed restore must not leave a server
    collecting nothing for the rest of its life)."""
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner exit leaves it off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("restore failed")
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_caller_stays_off() -> None:
    """Ensure that the pause restores the state it found, not 'on'."""
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_graphs_first_pass_and_rank_leave_the_collector_on(tmp_path: Path) -> None:
    """Ensure that building the graph and its first rank (the blocks that pause the
    collector) gives it back, and that the graph they build is the one asked for."""
    write_tree(tmp_path, {"a.py": "from b import f\n\ndef g():\n    return f()\n", "b.py": "def f():\n    return 1\n"})
    config = Config()
    config.index.cache = False
    workspace = Workspace([tmp_path], config)
    graph = ReferenceGraph()
    workspace.subscribe(graph.update)
    workspace.index()
    graph.warm_up()
    assert gc.isenabled()
    a, b = str(tmp_path / "a.py"), str(tmp_path / "b.py")
    assert graph.edge_weight(a, b) > 0
