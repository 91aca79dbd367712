"""Tests for ctx_lsp/contributors/codebase_map.py, through the Contributor protocol."""

from __future__ import annotations

import textwrap

from ctx_lsp.contributors.codebase_map import CodebaseMap
from ctx_lsp.params import parse_bundle
from ctx_lsp.relevance import MAX_MAP_FILES
from ctx_lsp.vocabulary import ContributorName, Strategy, Tier
from tests.contributors.conftest import context, offer_of, paths, rendered, uri

FILES = {
    "alpha/core_a.py": textwrap.dedent(
        '''\
        """Alpha's engine."""


        def alpha_engine(x):
            """Run alpha."""
            steps = [x, x + 1, x + 2]
            return sum(steps)
        '''
    ),
    "alpha/use_a.py": "from alpha.core_a import alpha_engine\n\n\ndef run_a():\n    return alpha_engine(1)\n",
    "beta/core_b.py": "def beta_engine():\n    return 2\n",
    "beta/use_b.py": "from beta.core_b import beta_engine\n\n\ndef run_b():\n    return beta_engine()\n",
    "lonely.py": "def lonely():\n    return 3\n",
    "README.md": "# Project\n\nTwo engines.\n",
}

CONTRIBUTOR = CodebaseMap()


def test_protocol_identity() -> None:
    """Ensure that the map names itself, spends breadth first and takes part in every request."""
    assert CONTRIBUTOR.name == ContributorName.CODEBASE_MAP
    assert CONTRIBUTOR.strategy == Strategy.BREADTH
    assert CONTRIBUTOR.applies(parse_bundle({}))
    assert CONTRIBUTOR.applies(parse_bundle({"query": "alpha"}))


def test_referenced_files_rank_above_unreferenced_ones(make_engine) -> None:
    """Ensure that with nothing to personalise towards, files others use rank above files
    nobody references, and every reason gives the graph rank."""
    engine = make_engine(FILES)
    offer = offer_of(CONTRIBUTOR, context(engine, {}))
    order = paths(offer)
    assert {"alpha/core_a.py", "beta/core_b.py", "lonely.py"} <= set(order)
    assert order.index("alpha/core_a.py") < order.index("lonely.py")
    assert order.index("beta/core_b.py") < order.index("lonely.py")
    assert offer.candidates[0].salience == 1.0
    assert all(c.reason.startswith("graph rank ") for c in offer.candidates)


def test_rank_is_personalised_to_the_working_files(make_engine) -> None:
    """Ensure that the map ranks what a working file uses first: alpha's engine when working
    on alpha, beta's when working on beta."""
    engine = make_engine(FILES)
    on_alpha = offer_of(CONTRIBUTOR, context(engine, {"open": [uri(engine, "alpha/use_a.py")]}))
    on_beta = offer_of(CONTRIBUTOR, context(engine, {"open": [uri(engine, "beta/use_b.py")]}))
    assert paths(on_alpha)[0] == "alpha/core_a.py"
    assert paths(on_beta)[0] == "beta/core_b.py"
    assert paths(on_alpha).index("beta/core_b.py") > 0


def test_leaves_out_the_working_files(make_engine) -> None:
    """Ensure that working files (focus and open) are not mapped: they are shown already."""
    engine = make_engine(FILES)
    ctx = context(
        engine,
        {
            "open": [uri(engine, "alpha/use_a.py")],
            "focus": {"uri": uri(engine, "beta/use_b.py"), "position": {"line": 4}},
        },
    )
    mapped = paths(offer_of(CONTRIBUTOR, ctx))
    assert "alpha/use_a.py" not in mapped and "beta/use_b.py" not in mapped
    assert {"alpha/core_a.py", "beta/core_b.py", "lonely.py"} <= set(mapped)


def test_identifiers_the_task_names_rank_their_definer_first(make_engine) -> None:
    """Ensure that a task naming an identifier puts the file defining it first, saying so."""
    engine = make_engine(FILES)
    offer = offer_of(CONTRIBUTOR, context(engine, {"query": "why does beta_engine return 2"}))
    first = offer.candidates[0]
    assert first.path == "beta/core_b.py"
    assert "defines beta_engine" in first.reason


def test_entries_are_compact_outlines(make_engine) -> None:
    """Ensure that map entries are wanted as outlines and show definitions, not bodies."""
    engine = make_engine(FILES)
    offer = offer_of(CONTRIBUTOR, context(engine, {}))
    assert all(c.tier == Tier.OUTLINE for c in offer.candidates)
    entry = {c.path: c for c in offer.candidates}["alpha/core_a.py"]
    r = rendered(entry, Tier.OUTLINE, 1000, engine.counter)
    assert "def alpha_engine(x)" in r.content
    assert "steps = [x" not in r.content


def test_offers_at_most_the_map_file_limit(make_engine) -> None:
    """Ensure that a workspace with more files than the map may list offers MAX_MAP_FILES."""
    files = {f"mods/m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(MAX_MAP_FILES + 10)}
    engine = make_engine(files)
    assert len(offer_of(CONTRIBUTOR, context(engine, {})).candidates) == MAX_MAP_FILES


def test_tests_rank_far_down_unless_the_task_is_about_them(make_engine) -> None:
    """Ensure that a test module, which the graph ranks high because it imports everything,
    comes after the code in the map unless the task mentions tests."""
    files = {
        **FILES,
        "tests/test_alpha.py": "from alpha.core_a import alpha_engine\nfrom beta.core_b import beta_engine\n\n\n"
        "def test_engines():\n    assert alpha_engine(1) and beta_engine()\n",
    }
    engine = make_engine(files)
    params = {"open": [uri(engine, "alpha/core_a.py")], "query": "alpha engine"}

    def test_candidate(query: str):
        offer = offer_of(CONTRIBUTOR, context(engine, {**params, "query": query}))
        (test,) = [c for c in offer.candidates if c.path == "tests/test_alpha.py"]
        return test, paths(offer)

    demoted, ranked = test_candidate("alpha engine")
    assert ranked[-1] == "tests/test_alpha.py" and "a test" in demoted.reason
    wanted, _ = test_candidate("alpha engine tests")
    assert "a test" not in wanted.reason and wanted.salience > demoted.salience
