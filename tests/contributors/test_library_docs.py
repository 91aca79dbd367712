"""Tests for ctx_lsp/contributors/library_docs.py, through the Contributor protocol, over
the real environment (pygls and tiktoken are ctx-lsp's own dependencies)."""

from __future__ import annotations

import pytest

from ctx_lsp.contributors.library_docs import LibraryDocsContributor
from ctx_lsp.errors import CtxError
from ctx_lsp.params import parse_bundle
from ctx_lsp.vocabulary import ContributorName, Strategy, Tier
from tests.conftest import SAMPLE_FILES
from tests.contributors.conftest import context, offer_of, rendered

CONTRIBUTOR = LibraryDocsContributor()

TWO_LIBRARIES = [{"library": "pygls", "topic": "custom requests"}, {"library": "tiktoken", "topic": "encoding"}]


def test_protocol_identity() -> None:
    """Ensure that library docs name themselves, spend depth first, and apply only when asked for."""
    assert CONTRIBUTOR.name == ContributorName.LIBRARY_DOCS
    assert CONTRIBUTOR.strategy == Strategy.DEPTH
    assert not CONTRIBUTOR.applies(parse_bundle({}))
    assert not CONTRIBUTOR.applies(parse_bundle({"query": "pygls custom requests", "docs": []}))
    assert CONTRIBUTOR.applies(parse_bundle({"docs": [{"library": "pygls", "topic": "features"}]}))


def test_not_asked_no_candidates(make_engine) -> None:
    """Ensure that docs are never offered unless asked for, even when the task names a library."""
    engine = make_engine(SAMPLE_FILES)
    assert offer_of(CONTRIBUTOR, context(engine, {"query": "pygls custom requests"})).candidates == []


def test_one_candidate_per_library_within_the_agents_docs_cap(make_engine) -> None:
    """Ensure that each library asked for is one candidate, and together they keep to the
    agent's docs cap, split evenly between them."""
    engine = make_engine(SAMPLE_FILES)
    ctx = context(engine, {"docs": TWO_LIBRARIES, "agent": "tester"})
    cap = engine.loaded.config.agents["tester"].docs_cap
    assert ctx.docs_cap == cap
    offer = offer_of(CONTRIBUTOR, ctx)
    assert [c.path for c in offer.candidates] == ["docs/pygls#custom requests", "docs/tiktoken#encoding"]
    renders = [rendered(c, Tier.FULL, 50_000, engine.counter) for c in offer.candidates]
    assert all(r.content for r in renders)
    assert all(r.tokens <= cap // 2 for r in renders)
    assert sum(r.tokens for r in renders) <= cap
    pygls, tiktoken = offer.candidates
    assert pygls.reason.startswith("library docs asked for: pygls") and "custom requests" in pygls.reason
    assert "tiktoken" in tiktoken.reason and "encoding" in tiktoken.reason
    assert all(c.tier == Tier.FULL and c.salience == 1.0 for c in offer.candidates)


def test_the_cap_is_the_agents_and_one_library_may_use_all_of_it(make_engine) -> None:
    """Ensure that the docs cap comes from the agent's configured entry, and that one library
    asked alone may use all of it while two share it."""
    engine = make_engine(SAMPLE_FILES, {"agents": {"scribe": {"docsCap": 400}}})
    ask = [{"library": "pygls", "topic": "custom requests"}]
    (alone,) = offer_of(CONTRIBUTOR, context(engine, {"docs": ask, "agent": "scribe"})).candidates
    assert 200 < rendered(alone, Tier.FULL, 50_000, engine.counter).tokens <= 400
    shared = offer_of(CONTRIBUTOR, context(engine, {"docs": TWO_LIBRARIES, "agent": "scribe"})).candidates
    assert all(0 < rendered(c, Tier.FULL, 50_000, engine.counter).tokens <= 200 for c in shared)


def test_rendering_shrinks_to_the_cap_it_is_given(make_engine) -> None:
    """Ensure that the orchestrator can shrink a docs section to any cap."""
    engine = make_engine(SAMPLE_FILES)
    (candidate,) = offer_of(CONTRIBUTOR, context(engine, {"docs": TWO_LIBRARIES[:1]})).candidates
    r = rendered(candidate, Tier.FULL, 200, engine.counter)
    assert 0 < r.tokens <= 200
    assert r.truncated


def test_unknown_library_is_the_requests_error(make_engine) -> None:
    """Ensure that an unknown library raises a CtxError naming it (the caller can fix it),
    and is not swallowed into a warning."""
    engine = make_engine(SAMPLE_FILES)
    ctx = context(engine, {"docs": [{"library": "no-such-library-xyz", "topic": "anything"}]})
    with pytest.raises(CtxError, match="no-such-library-xyz"):
        CONTRIBUTOR.offer(ctx)
    assert not any("no-such-library-xyz" in w for w in ctx.warnings)
    with pytest.raises(CtxError, match="no-such-library-xyz"):
        engine.bundle(parse_bundle({"docs": [{"library": "no-such-library-xyz", "topic": "anything"}]}))


def test_missing_topic_is_refused(make_engine) -> None:
    """Ensure that docs without a topic are refused with an error naming the topic field."""
    engine = make_engine(SAMPLE_FILES)
    with pytest.raises(CtxError, match="topic"):
        CONTRIBUTOR.offer(context(engine, {"docs": [{"library": "pygls"}]}))
