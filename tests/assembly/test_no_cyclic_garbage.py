"""A bundle leaves no cyclic garbage: what it builds is freed by reference counting, so a
warm server's collector passes stay short (issue 11; a renderer <-> prefix-costs cycle
once left ~3,000 objects a bundle to the collector)."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

from ctx_lsp.engine import BundleRequest, Engine


def test_a_bundle_leaves_no_cyclic_garbage(sample_workspace: Path) -> None:
    """Ensure that after a warm bundle nothing it made is left for the cyclic collector."""
    engine = Engine([sample_workspace], {"index": {"cache": False}})
    engine.index()
    engine.warm_up()
    engine.bundle(BundleRequest(query="assemble bundle within budget", budget=4000))  # caches filled
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        engine.bundle(BundleRequest(query="count tokens of text", budget=4000, open=()))
        engine.bundle(BundleRequest(query="search index", budget=8000))
        gc.collect()
        left = Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
        engine.close()
    assert not left, f"cyclic garbage after two bundles: {left.most_common(8)}"
