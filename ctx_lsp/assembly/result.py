"""The shapes of a bundle result: DESIGN's `ctx/bundle` contract as frozen dataclasses.

Stdlib dataclasses, never attrs: pygls serialises attrs classes with camelCase keys, and
the contract is snake_case (STYLE §2). Field names here are wire names.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class LineRange:
    start_line: int  # 1-based, inclusive
    end_line: int


@dataclass(frozen=True, slots=True)
class Section:
    """One block of a bundle. Frozen: a pass that condenses one builds a new Section."""

    id: str
    contributor: str
    path: str
    uri: str
    tier: int
    range: LineRange
    tokens: int
    salience: float
    reason: str  # shown by ctx.explain; never empty
    content: str


@dataclass(frozen=True, slots=True)
class Contribution:
    contributor: str
    allocated: int
    used: int
    items: int
    condensed: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """How the budget was spent, for people and for agents that adapt their requests."""

    context_window_type: str
    model_context_limit: int | None
    output_reserve: int
    available_budget: int
    total_used: int
    utilization_pct: float
    tokenizer: str
    contributions: tuple[Contribution, ...] = ()
    condensations: tuple[str, ...] = ()
    dynamic_adjustments_fired: tuple[str, ...] = ()
    reallocation_events: tuple[str, ...] = ()
    skipped_contributors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BundleResult:
    sections: tuple[Section, ...]
    text: str
    total_tokens: int
    budget: int
    snapshot: Snapshot
    messages: tuple[dict, ...] = field(default_factory=tuple)
