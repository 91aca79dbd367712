"""Fit ranked candidates into a token budget, condensing before dropping.

The invariant every caller relies on: the rendered text's real token count never
exceeds the budget. Estimates (per-section sums) steer the greedy fill; the final text
is counted once and trimmed if token merges across section boundaries pushed it over.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from ctx_lsp.assembly.render import render
from ctx_lsp.assembly.result import LineRange, Section
from ctx_lsp.code.outline import Tier
from ctx_lsp.code.tiers import TIER_CAP_TOKENS, Rendering
from ctx_lsp.tokens import TokenCounter

MIN_CUT_SECTION_TOKENS = 80
"""A tier-1 outline cut below ~80 tokens shows a path and a line or two: not worth its slot."""
SECTION_OVERHEAD_SLACK = 2
"""Tokens added per section for the blank lines joining sections (merges vary by one)."""


@dataclass
class Candidate:
    """A possible section: what it is, why, and how to render it at each tier."""

    id: str
    contributor: str
    path: str
    uri: str
    salience: float
    reason: str
    tier: Tier  # the richest tier wanted; condensing steps down from here
    render: Callable[[Tier, int], Rendering]  # (tier, cap_tokens) -> rendering
    min_tier: Tier = Tier.OUTLINE


@dataclass
class FitResult:
    sections: list[Section] = field(default_factory=list)
    text: str = ""
    total_tokens: int = 0
    condensations: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def _section(c: Candidate, r: Rendering) -> Section:
    return Section(
        id=c.id,
        contributor=c.contributor,
        path=c.path,
        uri=c.uri,
        tier=int(r.tier),
        range=LineRange(r.start_line, r.end_line),
        tokens=r.tokens,
        salience=round(c.salience, 4),
        reason=c.reason,
        content=r.content,
    )


def _overhead(c: Candidate, section: Section, counter: TokenCounter, fmt: str) -> int:
    """Tokens of the section's heading and fences, rendered around empty content."""
    return counter.count(render([replace(section, content="")], "", fmt)) + SECTION_OVERHEAD_SLACK


def fit(
    candidates: Sequence[Candidate],
    budget: int,
    counter: TokenCounter,
    title: str,
    fmt: str = "markdown",
) -> FitResult:
    """Place candidates in the given (rank) order; each takes the richest tier that fits."""
    result = FitResult()
    used = counter.count(render([], title, fmt))
    if used > budget:
        title = ""
        used = counter.count(render([], title, fmt))
    for c in candidates:
        section, note = _place(c, budget - used, counter, fmt)
        if section is None:
            result.dropped.append(c.id)
            continue
        result.sections.append(section)
        used += section.tokens + _overhead(c, section, counter, fmt)
        if note:
            result.condensations.append(note)
    result.text = render(result.sections, title, fmt)
    result.total_tokens = counter.count(result.text)
    while result.total_tokens > budget and result.sections:
        gone = result.sections.pop()
        result.dropped.append(gone.id)
        result.text = render(result.sections, title, fmt)
        result.total_tokens = counter.count(result.text)
    if result.total_tokens > budget:  # even the title alone does not fit
        result.text, result.total_tokens = "", 0
    return result


def _place(c: Candidate, remaining: int, counter: TokenCounter, fmt: str) -> tuple[Section | None, str]:
    """The richest tier of `c` that fits `remaining`; else a cut outline; else nothing."""
    for tier in (Tier(t) for t in range(int(c.tier), int(c.min_tier) - 1, -1)):
        r = c.render(tier, TIER_CAP_TOKENS[tier])
        if not r.content:
            continue
        section = _section(c, r)
        if r.tokens + _overhead(c, section, counter, fmt) <= remaining:
            note = f"{c.path}: tier {int(c.tier)} → {int(tier)} to fit" if tier < c.tier else ""
            return section, note
    # Last resort: the outline cut to what is left, if a useful amount still fits.
    probe = _section(c, c.render(c.min_tier, MIN_CUT_SECTION_TOKENS))
    cap = remaining - _overhead(c, probe, counter, fmt)
    if cap >= MIN_CUT_SECTION_TOKENS:
        cut = c.render(c.min_tier, cap)
        if cut.content:
            return _section(c, cut), f"{c.path}: tier {int(c.min_tier)} cut to {cut.tokens} tokens"
    return None, ""
