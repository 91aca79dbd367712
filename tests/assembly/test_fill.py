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


def test_files_far_below_the_best_are_named_and_never_grown() -> None:
    """Ensure that a breadth contributor shows a file far below its best (a test the task is
    not about) as a skeleton, and spends the rest of its allocation on the files the task
    is about; a file as salient as the best grows as before."""
    from ctx_lsp.assembly.fill import fill
    from ctx_lsp.code.tiers import TIER_CAP_TOKENS
    from ctx_lsp.relevance import GROWTH_MIN_RELATIVE_SALIENCE
    from ctx_lsp.vocabulary import Decision, Offer, Strategy

    def make(path: str, salience: float) -> Candidate:
        def render(tier: Tier, cap: int) -> Rendering:
            tokens = min(cap, 3000)  # an outline as long as its cap allows
            lines = "".join(f"{n}│ def f{n}()\n" for n in range(1, max(2, tokens // 8)))
            return Rendering(tier, lines, tokens, 1, 900, tokens < 3000, ())

        return Candidate(
            f"codebase_map:{path}", "codebase_map", path, "", salience, "rank", Tier.OUTLINE, memoised(render)
        )

    pricer = Pricer(COUNTER, Format.MARKDOWN, growth_floor=GROWTH_MIN_RELATIVE_SALIENCE)
    for salience, grows in ((GROWTH_MIN_RELATIVE_SALIENCE / 2, False), (0.9, True)):
        candidates = [make("core.py", 1.0), make("other.py", salience)]
        offer = Offer("codebase_map", candidates, Strategy.BREADTH)
        decisions = {x.id: Decision(x.id, x.contributor, x.path, x.salience, x.salience, x.reason) for x in candidates}
        placed = {p.candidate.path: p for p in fill("codebase_map", offer, 2400, {}, pricer, decisions)}
        assert placed["core.py"].rendering.tokens == TIER_CAP_TOKENS[Tier.OUTLINE]  # grown to its cap
        assert (placed["other.py"].rendering.tokens > pricer.skeleton_tokens) is grows


def test_the_tail_placed_after_breadth_is_a_skeleton() -> None:
    """Ensure that a low-salience candidate that the skeleton pass had no room for, placed by
    the fill's last pass, is a skeleton rather than its whole outline cut to the room left."""
    from ctx_lsp.assembly.fill import fill
    from ctx_lsp.relevance import GROWTH_MIN_RELATIVE_SALIENCE
    from ctx_lsp.vocabulary import Decision, Offer, Strategy

    def make(path: str, salience: float, size: int) -> Candidate:
        def render(tier: Tier, cap: int) -> Rendering:
            tokens = min(cap, size)
            lines = max(2, tokens // 8)
            return Rendering(
                tier, "".join(f"{n}│ def f{n}()\n" for n in range(1, lines)), tokens, 1, 900, tokens < size, ()
            )

        return Candidate(
            f"codebase_map:{path}", "codebase_map", path, "", salience, "rank", Tier.OUTLINE, memoised(render)
        )

    # The best file's whole outline is small: after it grows, room is left for the tail.
    candidates = [make("core.py", 1.0, 150), make("test_core.py", GROWTH_MIN_RELATIVE_SALIENCE / 2, 3000)]
    offer = Offer("codebase_map", candidates, Strategy.BREADTH)
    decisions = {x.id: Decision(x.id, x.contributor, x.path, x.salience, x.salience, x.reason) for x in candidates}
    pricer = Pricer(COUNTER, Format.MARKDOWN, growth_floor=GROWTH_MIN_RELATIVE_SALIENCE)
    placed = {p.candidate.path: p for p in fill("codebase_map", offer, 4000, {}, pricer, decisions)}
    assert placed["test_core.py"].rendering.tokens <= pricer.skeleton_tokens


def test_the_tail_grows_from_a_large_budget_on() -> None:
    """Ensure that only budgets below LARGE_BUDGET_TOKENS keep the tail to skeletons: from
    there on the files the task is about have their room, and the tail's outlines name
    functions of files the search ranks low."""
    from ctx_lsp.relevance import GROWTH_MIN_RELATIVE_SALIENCE, LARGE_BUDGET_TOKENS, growth_floor

    assert growth_floor(2000) == growth_floor(LARGE_BUDGET_TOKENS - 1) == GROWTH_MIN_RELATIVE_SALIENCE
    assert growth_floor(LARGE_BUDGET_TOKENS) == growth_floor(32_000) == 0.0


def test_a_file_shown_for_its_units_tries_its_whole_focused_tier_only_with_room_to_spare() -> None:
    """Ensure that in the last growth round a file placed for its units renders its focused
    tier at the full cap only when MIN_UNITS_GROWTH_TOKENS are left: with less, that tier
    can never fit, and rendering it is the slowest step of a bundle."""
    from ctx_lsp.assembly.fill import fill
    from ctx_lsp.relevance import MIN_UNITS_GROWTH_TOKENS
    from ctx_lsp.vocabulary import Decision, Offer, Strategy

    pricer = Pricer(COUNTER, Format.MARKDOWN)
    full_cap = pricer.caps[Tier.FOCUSED]

    def placed_for_units(allocation: int) -> tuple[int, list[tuple[Tier, int]]]:
        asked: list[tuple[Tier, int]] = []

        def render(tier: Tier, cap: int) -> Rendering:
            asked.append((tier, cap))
            tokens = min(cap, 40_000)  # the whole focused tier is far larger than any room here
            lines = "".join(f"{n}│ y = {n}\n" for n in range(1, max(2, tokens // 8)))
            return Rendering(tier, lines, tokens, 1, 900, tokens < 40_000, ())

        a = Candidate("retrieval:a.py", "retrieval", "a.py", "", 1.0, "units", Tier.FOCUSED, memoised(render))
        offer = Offer("retrieval", [a], Strategy.BREADTH, depth_share=1.0, units=((a.id, 200),))
        decisions = {a.id: Decision(a.id, a.contributor, a.path, a.salience, a.salience, a.reason)}
        placed = fill("retrieval", offer, allocation, {}, pricer, decisions)
        assert [p.how for p in placed] == [Placement.UNITS]
        return placed[0].cost, asked

    units_cost, _ = placed_for_units(400)
    for spare, tried in ((MIN_UNITS_GROWTH_TOKENS // 2, False), (MIN_UNITS_GROWTH_TOKENS * 4, True)):
        cost, asked = placed_for_units(units_cost + spare)
        assert cost == units_cost
        assert ((Tier.FOCUSED, full_cap) in asked) is tried, (spare, asked)


def test_the_tail_stops_rendering_files_nothing_of_which_fits() -> None:
    """Ensure that the fill's last pass, with less room left than a section worth placing,
    learns it from each file's cheap probe (not its focused tier, the costliest render), and
    stops after MAX_TAIL_MISSES files in a row placed nothing: the room left is the same for
    the rest, and each would cost a render to learn the same."""
    from ctx_lsp.assembly.fill import MAX_TAIL_MISSES, fill
    from ctx_lsp.vocabulary import Decision, Offer, Strategy

    asked: dict[str, list[Tier]] = {}

    def make(path: str, size: int) -> Candidate:
        def render(tier: Tier, cap: int) -> Rendering:
            asked.setdefault(path, []).append(tier)
            tokens = min(cap, size)
            text = "".join(f"{n}│ def f{n}()\n" for n in range(1, max(2, tokens // 8)))
            return Rendering(tier, text, tokens, 1, 900, tokens < size, ())

        return Candidate(f"retrieval:{path}", "retrieval", path, "", 1.0, "because", Tier.FOCUSED, memoised(render))

    pricer = Pricer(COUNTER, Format.MARKDOWN)
    first = make("first.py", 1000)
    first_cost = pricer.cost(first, first.render(Tier.FOCUSED, 1000))
    asked.clear()
    tail = [make(f"t{i}.py", 2000) for i in range(MAX_TAIL_MISSES + 3)]
    offer = Offer("retrieval", [first, *tail], Strategy.DEPTH)
    decisions = {x.id: Decision(x.id, x.contributor, x.path, x.salience, x.salience, x.reason) for x in [first, *tail]}
    placed = fill("retrieval", offer, first_cost + 90, {}, pricer, decisions)
    assert [p.candidate.path for p in placed] == ["first.py"]
    tried = [c.path for c in tail if c.path in asked]
    assert tried == [f"t{i}.py" for i in range(MAX_TAIL_MISSES)]
    assert all(Tier.FOCUSED not in asked[path] for path in tried)
