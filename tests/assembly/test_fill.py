"""Tests for ctx_lsp/assembly/fill.py: what one contributor's allocation buys."""

from __future__ import annotations

from ctx_lsp.assembly.fill import Placement, Pricer, best_fit, shows_something
from ctx_lsp.tokens import counter_for
from ctx_lsp.vocabulary import Candidate, Format, Rendering, Tier, memoised

COUNTER = counter_for()


def rendering(content: str, tier: Tier = Tier.OUTLINE) -> Rendering:
    return Rendering(tier, content, COUNTER.count(content), 1, 10, True, ())


def test_a_section_of_markers_shows_nothing() -> None:
    """Ensure that content holding only 'left out' markers (with or without gutters) counts
    as empty, and anything else counts."""
    assert not shows_something(rendering("… 2 more lines\n"))
    assert not shows_something(rendering("   │ … 3 more definitions not shown\n\n"))
    assert shows_something(rendering(" 12│ def f(x) -> int\n … 2 more lines\n"))
    assert not shows_something(rendering(""))


def test_marker_only_renderings_are_never_placed() -> None:
    """Ensure that a candidate whose renderings are only markers is left out, not shown as
    an empty section."""

    def render(tier: Tier, cap: int) -> Rendering:
        return rendering("… 2 more lines\n", tier)

    candidate = Candidate("retrieval:a.py", "retrieval", "a.py", "", 1.0, "because", Tier.FOCUSED, memoised(render))
    assert best_fit(candidate, 10_000, Pricer(COUNTER, Format.MARKDOWN)) is None


def test_best_fit_records_why_a_lower_tier() -> None:
    """Ensure that a candidate shown below the tier it asked for says it did not fit."""

    def render(tier: Tier, cap: int) -> Rendering:
        return rendering("x = 1\n" * (200 if tier == Tier.FOCUSED else 5), tier)

    candidate = Candidate(
        "working_files:a.py", "working_files", "a.py", "", 1.0, "because", Tier.FOCUSED, memoised(render)
    )
    placed = best_fit(candidate, 300, Pricer(COUNTER, Format.MARKDOWN))
    assert placed is not None and placed.tier == Tier.OUTLINE and placed.how is Placement.SMALLER
