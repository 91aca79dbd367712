"""Tests for ctx_lsp/contributors/retrieval.py, through the Contributor protocol."""

from __future__ import annotations

import textwrap

from ctx_lsp.contributors.retrieval import Retrieval
from ctx_lsp.params import parse_bundle
from ctx_lsp.relevance import BODY_FILES, MAX_CANDIDATE_FILES
from ctx_lsp.vocabulary import ContributorName, Strategy, Tier
from tests.conftest import SAMPLE_FILES
from tests.contributors.conftest import context, offer_of, paths, rendered, uri

TEST_FILE = textwrap.dedent(
    """\
    from pkg.bundle import assemble_bundle


    def test_assemble_bundle_keeps_sections_within_budget():
        assert assemble_bundle(["a", "b"], 100) == ["a", "b"]


    def test_assemble_bundle_stops_at_budget():
        assert assemble_bundle(["aaaa" * 50], 1) == []


    def test_assemble_bundle_empty():
        assert assemble_bundle([], 1) == []
    """
)

FILES = {**SAMPLE_FILES, "tests/test_bundle.py": TEST_FILE}

CONTRIBUTOR = Retrieval()


def test_protocol_identity() -> None:
    """Ensure that retrieval names itself, spends breadth first and takes part in every request."""
    assert CONTRIBUTOR.name == ContributorName.RETRIEVAL
    assert CONTRIBUTOR.strategy == Strategy.BREADTH
    assert CONTRIBUTOR.applies(parse_bundle({}))
    assert CONTRIBUTOR.applies(parse_bundle({"query": "assemble bundle"}))


def test_no_query_offers_nothing(make_engine) -> None:
    """Ensure that without task words there is nothing to retrieve, even with a working file."""
    engine = make_engine(FILES)
    assert offer_of(CONTRIBUTOR, context(engine, {})).candidates == []
    blank = context(engine, {"query": "   ", "open": [uri(engine, "pkg/bundle.py")]})
    assert offer_of(CONTRIBUTOR, blank).candidates == []


def test_best_match_first_with_matching_symbols_in_the_reason(make_engine) -> None:
    """Ensure that the file defining what the task names comes first, salience 1, and its
    reason names the matched terms and the matching symbol."""
    engine = make_engine(FILES)
    offer = offer_of(CONTRIBUTOR, context(engine, {"query": "assemble bundle within budget"}))
    first = offer.candidates[0]
    assert first.path == "pkg/bundle.py"
    assert first.salience == 1.0
    assert first.reason.startswith("matches ")
    assert "in assemble_bundle" in first.reason
    assert "pkg/__init__.py" not in paths(offer)  # nothing there matches the task's words


def test_test_files_demoted_unless_the_query_mentions_tests(make_engine) -> None:
    """Ensure that a test file that matches the task as well as the code ranks below the code,
    and above it once the task is about tests."""
    engine = make_engine(FILES)
    code_task = offer_of(CONTRIBUTOR, context(engine, {"query": "assemble bundle budget"}))
    order = paths(code_task)
    assert order.index("pkg/bundle.py") < order.index("tests/test_bundle.py")
    test_task = offer_of(CONTRIBUTOR, context(engine, {"query": "tests for assemble bundle budget"}))
    order = paths(test_task)
    assert order.index("tests/test_bundle.py") < order.index("pkg/bundle.py")
    demoted = {c.path: c.salience for c in code_task.candidates}["tests/test_bundle.py"]
    wanted = {c.path: c.salience for c in test_task.candidates}["tests/test_bundle.py"]
    assert demoted < wanted


def test_best_hit_rendered_at_tier_2_shows_its_matching_bodies(make_engine) -> None:
    """Ensure that a hit is wanted at the agent's tier and its tier 2 shows the matching
    symbol's body, so an agent can read the code it will change."""
    engine = make_engine(FILES)
    offer = offer_of(CONTRIBUTOR, context(engine, {"query": "assemble bundle"}))
    first = offer.candidates[0]
    assert first.tier == Tier.FOCUSED  # the default agent's tier
    r = rendered(first, Tier.FOCUSED, 4000, engine.counter)
    assert "assemble_bundle" in r.shown_symbols
    assert "used += cost" in r.content
    planner = offer_of(CONTRIBUTOR, context(engine, {"query": "assemble bundle", "agent": "planner"}))
    assert all(c.tier == Tier.OUTLINE for c in planner.candidates)


def test_working_files_pull_their_graph_neighbours_up(make_engine) -> None:
    """Ensure that with a working file the ranking blends in the reference graph: a file the
    working file imports rises, and its reason says why."""
    engine = make_engine(FILES)
    query = "assemble bundle encoding"
    alone = {c.path: c for c in offer_of(CONTRIBUTOR, context(engine, {"query": query})).candidates}
    ctx = context(engine, {"query": query, "open": [uri(engine, "pkg/bundle.py")]})
    near = {c.path: c for c in offer_of(CONTRIBUTOR, ctx).candidates}
    assert "near the working files in the reference graph" in near["pkg/tokens.py"].reason
    assert "reference graph" not in alone["pkg/tokens.py"].reason
    assert near["pkg/tokens.py"].salience > alone["pkg/tokens.py"].salience


def test_no_reason_mentions_working_files_when_there_are_none(make_engine) -> None:
    """Ensure that a reason never credits working files a request does not have (ctx.explain
    shows it to the person asking why a file is in)."""
    engine = make_engine(FILES)
    ctx = context(engine, {"query": "sections encoding"})
    assert ctx.working == []
    offer = offer_of(CONTRIBUTOR, ctx)
    assert offer.candidates
    assert all("working files" not in c.reason for c in offer.candidates)


def test_offers_at_most_the_candidate_file_limit(make_engine) -> None:
    """Ensure that a word matching many files offers at most MAX_CANDIDATE_FILES of the
    search ranking's, and BODY_FILES more found by the words in their code."""
    files = {f"mods/m{i:02d}.py": f"def frobnicate_{i}():\n    return {i}\n" for i in range(MAX_CANDIDATE_FILES + 9)}
    engine = make_engine(files)
    offer = offer_of(CONTRIBUTOR, context(engine, {"query": "frobnicate"}))
    assert len(offer.candidates) == MAX_CANDIDATE_FILES + BODY_FILES
    by_code = [c for c in offer.candidates if "found by the words in its bodies" in c.reason]
    assert len(by_code) == BODY_FILES


def test_more_bodies_and_depth_as_the_budget_grows() -> None:
    """Ensure that retrieval shows more bodies per file, and spends more on them before
    breadth, as the budget grows — never fewer."""
    from ctx_lsp.contributors.retrieval import body_symbols, depth_share

    budgets = [1000, 2000, 4000, 6000, 8000, 16000, 32000, 128000]
    bodies = [body_symbols(b) for b in budgets]
    depths = [depth_share(b) for b in budgets]
    assert bodies == sorted(bodies) and bodies[0] >= 1 and bodies[-1] > bodies[0]
    assert depths == sorted(depths) and 0 < depths[0] <= depths[-1] < 1
