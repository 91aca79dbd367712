"""Rendering leaves no cyclic garbage: what a renderer builds is freed by reference
counting when it goes, so a warm server's collector passes stay short (issue 11: a
renderer <-> prefix-costs cycle once left ~3,000 objects a Django bundle to the collector,
~5 % of a warm server's CPU)."""

from __future__ import annotations

import gc
from collections import Counter

from ctx_lsp.code.outline import outline_for
from ctx_lsp.code.tiers import OutlineRenderer
from ctx_lsp.tokens import counter_for
from ctx_lsp.vocabulary import Tier


def _big_module(n: int) -> str:
    """A module whose outline is far over the caps below, so it is pruned to fit."""
    return "\n\n".join(
        f'def budget_step_{i}(tokens, limit):\n    """Step {i} of the budget walk."""\n    return tokens + {i}\n'
        for i in range(n)
    )


def test_a_renderer_pruned_to_its_cap_leaves_no_cyclic_garbage() -> None:
    """Ensure that a renderer that fitted an outline at several caps (building its
    prefix costs, rows and units) leaves nothing for the cyclic collector once dropped."""
    text = _big_module(300)
    outline = outline_for("steps.py", text.encode())
    counter = counter_for("o200k_base")
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        renderer = OutlineRenderer("steps.py", text, outline, counter, ranks={"budget_step_7": 1.0})
        for cap in (200, 800, 3000):
            assert renderer.render(Tier.OUTLINE, cap).truncated
        del renderer
        gc.collect()
        left = Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not left, f"cyclic garbage left by one renderer: {left.most_common(8)}"
