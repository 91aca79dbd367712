"""Tests for ctx_lsp/assembly/orchestrator.py: the five passes and the budget invariant."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.assembly.adjustments import Signals
from ctx_lsp.assembly.orchestrator import assemble
from ctx_lsp.config import Config
from ctx_lsp.relevance import DEPTH_SHARE, SKELETON_TOKENS
from ctx_lsp.tokens import counter_for, cut_to_tokens
from ctx_lsp.vocabulary import Candidate, ContributorName, Format, Offer, Rendering, Strategy, Tier, memoised

COUNTER = counter_for()
CONFIG = Config()
BALANCED = CONFIG.context_window_types["balanced"]
QUIET = Signals(has_messages=True, has_working_files=True, has_query=True, top_hit_ratio=1.0)


def text_candidate(
    contributor: str, name: str, salience: float, tier_lines: dict[int, int], tier: Tier = Tier.FULL
) -> Candidate:
    """A candidate whose tier N is `tier_lines[N]` lines of distinct text."""

    def render(t: Tier, cap: int) -> Rendering:
        n = tier_lines.get(int(t), 0)
        text = "".join(f"{name} tier {int(t)} line {i} with some words\n" for i in range(n))
        cut = cut_to_tokens(text, cap, COUNTER)
        return Rendering(t, cut.text, cut.tokens, 1, max(n, 1), cut.truncated, ())

    return Candidate(
        f"{contributor}:{name}",
        contributor,
        name,
        f"file:///ws/{name}",
        salience,
        f"because {name}",
        tier,
        memoised(render),
    )


def offers(**by_contributor: list[Candidate]) -> dict[str, Offer]:
    """Offers as the contributors make them: retrieval spends DEPTH_SHARE on bodies first."""
    breadth = ("retrieval", "codebase_map")
    return {
        name: Offer(
            ContributorName(name),
            cands,
            Strategy.BREADTH if name in breadth else Strategy.DEPTH,
            depth_share=DEPTH_SHARE if name == "retrieval" else 0.0,
        )
        for name, cands in by_contributor.items()
    }


def run(offer_map, budget, policy=BALANCED, signals=QUIET, title="Context"):
    return assemble(offer_map, policy, "balanced", CONFIG.weights, budget, COUNTER, title, Format.MARKDOWN, signals)


def test_total_never_exceeds_budget_and_records_passes() -> None:
    """Ensure that a crowded bundle fits its budget and the snapshot says how."""
    wf = [text_candidate("working_files", f"w{i}.py", 1 - i / 10, {1: 5, 2: 40, 3: 120}) for i in range(3)]
    rt = [text_candidate("retrieval", f"r{i}.py", 1 - i / 20, {1: 4, 2: 30, 3: 90}, Tier.FOCUSED) for i in range(8)]
    out = run(offers(working_files=wf, retrieval=rt), 2000)
    assert out.total_tokens <= 2000 and out.total_tokens == COUNTER.count(out.text)
    assert {s.contributor for s in out.sections} == {"working_files", "retrieval"}
    assert any("nothing to contribute" in s for s in out.skipped)
    assert out.contributions and all(c.used <= c.allocated or c.allocated == 0 for c in out.contributions)
    assert all(d.outcome != "not considered" for d in out.decisions)


def test_inactive_contributor_is_skipped_and_its_share_redistributed() -> None:
    """Ensure that pass 1 skips inactive contributors and gives their share to the rest."""
    policy = copy.deepcopy(BALANCED)
    policy.contributors["retrieval"].active = False
    wf = [text_candidate("working_files", "w.py", 1.0, {1: 5, 2: 200, 3: 400})]
    rt = [text_candidate("retrieval", "r.py", 1.0, {1: 4})]
    out = run(offers(working_files=wf, retrieval=rt), 3000, policy)
    assert "retrieval: inactive in balanced" in out.skipped
    assert [s.path for s in out.sections] == ["w.py"]


def test_dynamic_adjustment_fires() -> None:
    """Ensure that pass 2 moves the conversation share to working files when none is given."""
    wf = [text_candidate("working_files", "w.py", 1.0, {1: 5, 3: 50})]
    out = run(offers(working_files=wf), 1000, signals=Signals(False, True, True, 1.0))
    assert any(a.startswith("no_conversation_to_working_files") for a in out.adjustments)


def test_surplus_goes_to_busy_contributor() -> None:
    """Ensure that pass 4 moves an idle contributor's allocation to a busy one."""
    policy = copy.deepcopy(BALANCED)
    policy.contributors["working_files"].max_pct = 0.95  # room to grow beyond its share
    wf = [text_candidate("working_files", f"w{i}.py", 1 - i / 20, {1: 3, 3: 60}) for i in range(12)]
    docs = [text_candidate("project_docs", "AGENTS.md", 1.0, {1: 1, 3: 2})]
    out = run(offers(working_files=wf, project_docs=docs), 3000, policy)
    assert any("donated" in r for r in out.reallocations)
    assert any(r.startswith("working_files received") for r in out.reallocations)


def test_condensing_steps_down_before_dropping() -> None:
    """Ensure that a candidate too big at tier 3 is shown at a lower tier, not dropped, and
    that when the lower tier leaves the budget idle, it is shown at tier 3 cut instead."""
    big = [text_candidate("working_files", "big.py", 1.0, {1: 3, 2: 20, 3: 2000})]
    out = run(offers(working_files=big), 800)
    assert [s.tier for s in out.sections] == [3] and out.total_tokens >= 0.95 * 800
    assert out.decisions[0].outcome == "in: tier 3, cut to the room that was left"
    small = run(offers(working_files=[text_candidate("working_files", "b.py", 1.0, {1: 3, 2: 20, 3: 60})]), 800)
    assert [s.tier for s in small.sections] == [3] and small.decisions[0].outcome == "in: tier 3, as asked"


def test_a_path_never_appears_twice() -> None:
    """Ensure that a file offered by two contributors is shown once, by the earlier one."""
    wf = [text_candidate("working_files", "same.py", 1.0, {1: 3, 3: 10})]
    rt = [text_candidate("retrieval", "same.py", 1.0, {1: 3, 2: 10})]
    out = run(offers(working_files=wf, retrieval=rt), 2000)
    assert [s.contributor for s in out.sections] == ["working_files"]
    assert any("already in the bundle" in d.outcome for d in out.decisions)


def test_tiny_budget_gives_empty_bundle_not_overrun() -> None:
    """Ensure that a budget smaller than any section still yields a valid, in-budget result."""
    wf = [text_candidate("working_files", "w.py", 1.0, {1: 30, 3: 300})]
    for budget in (1, 3, 10, 40):
        out = run(offers(working_files=wf), budget)
        assert out.total_tokens <= budget


@settings(max_examples=60, deadline=None)
@given(
    budget=st.integers(min_value=1, max_value=6000),
    n_work=st.integers(0, 4),
    n_ret=st.integers(0, 10),
    n_map=st.integers(0, 10),
    sizes=st.lists(st.integers(0, 300), min_size=3, max_size=3),
    profile=st.sampled_from(sorted(CONFIG.context_window_types)),
)
def test_budget_uniqueness_and_determinism(budget, n_work, n_ret, n_map, sizes, profile) -> None:
    """Ensure that for any offers and budget: total ≤ budget, no path twice, same output twice."""

    def build():
        tiers = {1: max(1, sizes[0] // 10), 2: sizes[1], 3: sizes[2]}
        return offers(
            working_files=[text_candidate("working_files", f"f{i}.py", 1 - i / 10, tiers) for i in range(n_work)],
            retrieval=[text_candidate("retrieval", f"f{i}.py", 1 - i / 30, tiers, Tier.FOCUSED) for i in range(n_ret)],
            codebase_map=[
                text_candidate("codebase_map", f"m{i}.py", 1 - i / 30, {1: 4}, Tier.OUTLINE) for i in range(n_map)
            ],
        )

    policy = CONFIG.context_window_types[profile]
    first = assemble(build(), policy, profile, CONFIG.weights, budget, COUNTER, "T", Format.MARKDOWN, QUIET)
    second = assemble(build(), policy, profile, CONFIG.weights, budget, COUNTER, "T", Format.MARKDOWN, QUIET)
    assert first.total_tokens <= budget
    assert first.total_tokens == COUNTER.count(first.text)
    paths = [s.path for s in first.sections]
    assert len(paths) == len(set(paths))
    assert first.text == second.text


def test_breadth_shows_many_skeletons_then_grows_the_best() -> None:
    """Ensure that a breadth contributor shows more files than whole outlines would allow
    (skeletons first), and spends what is left growing the best-ranked one first."""
    rt = [text_candidate("retrieval", f"r{i:02}.py", 1 - i / 20, {1: 200}, Tier.OUTLINE) for i in range(12)]
    full = rt[0].render(Tier.OUTLINE, 10**6).tokens
    budget = 3000
    out = run(offers(retrieval=rt), budget)
    shown = [s for s in out.sections if s.contributor == "retrieval"]
    assert out.total_tokens <= budget
    assert len(shown) > budget // full + 3
    assert shown[0].path == "r00.py" and shown[0].tokens == max(s.tokens for s in shown)
    assert shown[0].tokens > SKELETON_TOKENS >= shown[-1].tokens


def test_a_contributor_with_everything_shown_donates_the_rest() -> None:
    """Ensure that pass 4 takes unused budget from a contributor whose candidates are all
    shown in full (it could use no more), even above the 30 % donor line, and gives it to
    one that still has candidates waiting."""
    wf = [text_candidate("working_files", "w.py", 1.0, {1: 100, 2: 100, 3: 100})]
    rt = [text_candidate("retrieval", f"r{i:02}.py", 1 - i / 40, {1: 60}, Tier.OUTLINE) for i in range(30)]
    out = run(offers(working_files=wf, retrieval=rt), 6000)
    wf_used = next(c for c in out.contributions if c.contributor == "working_files")
    assert wf_used.used == wf_used.allocated  # gave back what it did not need
    assert any(e.startswith("working_files donated") and "unneeded" in e for e in out.reallocations)
    assert any(e.startswith("retrieval received") for e in out.reallocations)
    assert out.total_tokens <= 6000


def test_unfocused_working_files_give_the_conversation_share_to_the_map() -> None:
    """Ensure that with no conversation, the conversation share goes to working files when
    one has a cursor or edits, and to the codebase map around them when none has."""
    wf = [text_candidate("working_files", "w.py", 1.0, {1: 5, 3: 50})]
    cm = [text_candidate("codebase_map", "m.py", 0.5, {1: 5})]
    focused = run(offers(working_files=wf, codebase_map=cm), 1000, signals=Signals(False, True, True, 1.0, True))
    named = run(offers(working_files=wf, codebase_map=cm), 1000, signals=Signals(False, True, True, 1.0, False))
    assert any("share goes to working files" in a for a in focused.adjustments)
    assert any("goes to the codebase map around them" in a for a in named.adjustments)


def test_breadth_shows_the_best_bodies_before_skeletons() -> None:
    """Ensure that a breadth contributor's best hit is shown at its focused tier (the
    bodies the task hits) before the rest are outlined, and explain says so."""
    rt = [text_candidate("retrieval", f"r{i:02}.py", 1 - i / 40, {1: 60, 2: 90}, Tier.FOCUSED) for i in range(20)]
    out = run(offers(retrieval=rt), 8000)
    first = next(s for s in out.sections if s.path == "r00.py")
    assert first.tier == 2
    assert sum(1 for s in out.sections if s.contributor == "retrieval") > 5  # breadth still follows
    decision = next(d for d in out.decisions if d.id == "retrieval:r00.py")
    assert decision.included and "the bodies the task hits" in decision.outcome


def test_explain_says_breadth_not_condensing() -> None:
    """Ensure that a file outlined by breadth-first choice is not reported as condensed."""
    rt = [text_candidate("retrieval", f"r{i:02}.py", 1 - i / 40, {1: 30, 2: 400}, Tier.FOCUSED) for i in range(30)]
    out = run(offers(retrieval=rt), 4000)
    outlined = [d for d in out.decisions if d.included and d.tier == 1]
    assert outlined and all("condensed" not in d.outcome for d in outlined)
    assert all("breadth first" in d.outcome or "cut to the room" in d.outcome for d in outlined)


@settings(max_examples=40, deadline=None)
@given(
    budget=st.integers(min_value=1500, max_value=40_000),
    sizes=st.lists(st.tuples(st.integers(1, 80), st.integers(0, 400), st.integers(0, 1200)), min_size=1, max_size=12),
    n_work=st.integers(0, 3),
)
def test_no_idle_budget_when_something_is_left_out(budget, sizes, n_work) -> None:
    """Ensure that when any candidate is left out or shown below the tier it asked for,
    the bundle uses at least 95 % of its budget (and never more than all of it)."""
    wf = [
        text_candidate("working_files", f"w{i}.py", 1.0, {1: a, 2: a + b, 3: a + b + c})
        for i, (a, b, c) in enumerate(sizes[:n_work])
    ]
    rt = [
        text_candidate("retrieval", f"r{i}.py", 1 - i / 50, {1: a, 2: a + b}, Tier.FOCUSED)
        for i, (a, b, _) in enumerate(sizes[n_work:])
    ]
    out = run(offers(working_files=wf, retrieval=rt), budget)
    assert out.total_tokens <= budget
    shortfall = [
        d
        for d in out.decisions
        if not d.included or (d.tier or 0) < (3 if d.contributor == "working_files" else 2) or "cut" in d.outcome
    ]
    if shortfall:
        assert out.total_tokens >= 0.95 * budget, (out.total_tokens, budget, [d.outcome for d in shortfall][:5])


def test_idle_budget_shows_the_best_code_files_whole() -> None:
    """Ensure that the best file is shown whole when it fits the room for bodies, that
    budget nothing else can use then grows the next outlines to whole files (best first),
    that explain says which was which, and that the bundle never overruns."""
    rt = [
        text_candidate("retrieval", "best.py", 1.0, {1: 3, 2: 10, 3: 40}, Tier.FOCUSED),
        text_candidate("retrieval", "next.py", 0.8, {1: 3, 2: 10, 3: 60}, Tier.FOCUSED),
        text_candidate("retrieval", "last.py", 0.6, {1: 3, 2: 10, 3: 400}, Tier.FOCUSED),
    ]
    out = run(offers(retrieval=rt), 2000)
    tiers = {s.path: s.tier for s in out.sections}
    assert tiers == {"best.py": 3, "next.py": 3, "last.py": 2}  # last.py whole does not fit what is idle
    outcomes = {d.path: d.outcome for d in out.decisions}
    assert outcomes["best.py"] == "in: tier 3 — the whole file, as it fits the room for bodies (before breadth)"
    assert outcomes["next.py"] == "in: tier 3 — the whole file, with budget nothing else could use"
    assert any("next.py shown whole with idle budget" in r for r in out.reallocations)
    assert out.total_tokens <= 2000
