"""A candidate section: what a contributor offers, why, and how to render it at each tier."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ctx_lsp.code.outline import Tier
from ctx_lsp.code.tiers import Rendering

RenderFn = Callable[[Tier, int], Rendering]
"""(tier, cap_tokens) → rendering. Contributors memoise: assembly asks repeatedly."""


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    contributor: str
    path: str  # display path; also the duplicate key (no file appears twice in a bundle)
    uri: str
    salience: float  # [0, 1]
    reason: str  # never empty: ctx.explain shows it
    tier: Tier  # the richest tier wanted; condensing steps down from here
    render: RenderFn
    min_tier: Tier = Tier.OUTLINE


def memoised(fn: RenderFn) -> RenderFn:
    cache: dict[tuple[int, int], Rendering] = {}

    def render(tier: Tier, cap: int) -> Rendering:
        key = (int(tier), cap)
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = fn(tier, cap)
        return hit

    return render
