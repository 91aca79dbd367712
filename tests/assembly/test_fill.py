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


def test_units_are_taken_best_first_whichever_file_and_within_the_share() -> None:
    """Ensure that an offer with code units places the files holding the best units, in the
    order of their best unit, each sized to its units (a unit that does not fit the room
    left is skipped for a smaller one), within the offer's share, before breadth."""
    from ctx_lsp.assembly.fill import fill
    from ctx_lsp.vocabulary import Decision, Offer, Strategy

    asked: dict[str, list[tuple[Tier, int]]] = {}

    def make(path: str) -> Candidate:
        def render(tier: Tier, cap: int) -> Rendering:
            asked.setdefault(path, []).append((tier, cap))
            if tier == Tier.FULL:
                return rendering("x = 1\n" * 2000, tier)
            lines = max(2, min(cap, 1000) // 10)
            return rendering("".join(f"{n}│ y = {n}\n" for n in range(1, lines)), tier)

        return Candidate(f"retrieval:{path}", "retrieval", path, "", 1.0, "because", Tier.FOCUSED, memoised(render))

    a, b, c = make("a.py"), make("b.py"), make("c.py")
    offer = Offer(
        "retrieval",
        [a, b, c],
        Strategy.BREADTH,
        depth_share=0.6,
        units=((b.id, 200), (a.id, 900), (a.id, 100), (c.id, 50)),
    )
    decisions = {
        x.id: Decision(x.id, x.contributor, x.path, x.salience, x.salience, x.reason) for x in offer.candidates
    }
    placed = fill("retrieval", offer, 1000, {}, Pricer(COUNTER, Format.MARKDOWN), decisions)
    units = [p for p in placed if p.how is Placement.UNITS]
    assert [p.candidate.path for p in units] == ["b.py", "a.py", "c.py"]  # a's 900 skipped, its 100 taken
    first_focused = {path: next(cap for tier, cap in calls if tier == Tier.FOCUSED) for path, calls in asked.items()}
    assert first_focused["b.py"] <= 200 + 80 and first_focused["c.py"] <= 50 + 80  # sized to their units
    assert all(p.tier == Tier.FOCUSED for p in units)
