"""Tests for ctx_lsp/contributors/registry.py: who contributes, in what order, and the
pipeline's promise that one failing contributor costs its sections, never the bundle."""

from __future__ import annotations

import inspect

import pytest

from ctx_lsp.config import Config
from ctx_lsp.contributors.registry import CONTRIBUTORS
from ctx_lsp.errors import CtxError, InvalidParam
from ctx_lsp.params import parse_bundle
from ctx_lsp.vocabulary import ContributorName, Offer, Strategy
from tests.conftest import SAMPLE_FILES
from tests.contributors.conftest import context, uri

PRESENTATION_ORDER = ["project_docs", "artifacts", "working_files", "retrieval", "library_docs", "codebase_map"]


def by_name(name: str):
    (contributor,) = [c for c in CONTRIBUTORS if c.name == name]
    return contributor


def test_every_contributor_but_the_conversation_is_registered_once_in_presentation_order() -> None:
    """Ensure that the registry lists each contributor exactly once, instructions first and
    the map last; the conversation is windowed separately, so it is not registered."""
    names = [c.name.value for c in CONTRIBUTORS]
    assert names == PRESENTATION_ORDER
    assert set(names) == {n.value for n in ContributorName} - {ContributorName.CONVERSATION_HISTORY.value}


@pytest.mark.parametrize("contributor", CONTRIBUTORS, ids=lambda c: c.name.value)
def test_each_contributor_satisfies_the_protocol(contributor) -> None:
    """Ensure that every registered contributor has a name, a strategy, `applies(request)`
    returning a bool and `offer(ctx)` taking just the context."""
    assert isinstance(contributor.name, ContributorName)
    assert isinstance(contributor.strategy, Strategy)
    assert isinstance(contributor.applies(parse_bundle({})), bool)
    assert list(inspect.signature(contributor.applies).parameters) == ["request"]
    assert list(inspect.signature(contributor.offer).parameters) == ["ctx"]


@pytest.mark.parametrize("contributor", CONTRIBUTORS, ids=lambda c: c.name.value)
def test_each_contributor_has_a_policy_in_every_default_window_type(contributor) -> None:
    """Ensure that a registered contributor can get a share: every default context window type
    gives it a policy and a place in the condensation order."""
    for name, window_type in Config().context_window_types.items():
        assert contributor.name.value in window_type.contributors, name
        assert contributor.name.value in window_type.condensation_order, name


def test_contributors_offer_through_the_protocol_from_one_context(make_engine) -> None:
    """Ensure that one prepared context serves every contributor, each answering an Offer under its name."""
    engine = make_engine(SAMPLE_FILES)
    ctx = context(
        engine,
        {
            "query": "assemble bundle",
            "open": [uri(engine, "pkg/tokens.py")],
            "artifacts": [{"key": "spec", "content": "Keep bundles small."}],
        },
    )
    offers = {c.name.value: c.offer(ctx) for c in CONTRIBUTORS}
    assert all(isinstance(o, Offer) and o.name.value == n for n, o in offers.items())
    assert all(offers[n].candidates for n in PRESENTATION_ORDER if n != "library_docs")


def test_bundle_sections_follow_the_presentation_order(make_engine) -> None:
    """Ensure that a bundle presents its sections grouped by contributor, in registry order."""
    engine = make_engine(SAMPLE_FILES)
    result = engine.bundle(
        parse_bundle(
            {
                "query": "assemble bundle",
                "open": [uri(engine, "pkg/tokens.py")],
                "budget": 6000,
                "artifacts": [{"key": "spec", "content": "Keep bundles small."}],
            }
        )
    )
    seen = list(dict.fromkeys(s.contributor for s in result.sections))
    assert len(seen) >= 4
    assert seen == [n for n in PRESENTATION_ORDER if n in seen]


@pytest.mark.parametrize("name", PRESENTATION_ORDER)
def test_a_failing_contributor_becomes_a_warning_and_the_bundle_still_answers(make_engine, monkeypatch, name) -> None:
    """Ensure that a contributor raising an unexpected error is left out with a warning in the
    snapshot naming it and the error, while the others still fill the bundle."""
    engine = make_engine(SAMPLE_FILES)

    def broken(ctx):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(by_name(name), "offer", broken)
    result = engine.bundle(
        parse_bundle(
            {
                "query": "assemble bundle",
                "open": [uri(engine, "pkg/tokens.py")],
                "budget": 3000,
                "artifacts": [{"key": "spec", "content": "Keep bundles small."}],
            }
        )
    )
    (warning,) = [w for w in result.snapshot.warnings if "disk on fire" in w]
    assert name in warning and "RuntimeError" in warning
    assert result.sections and all(s.contributor != name for s in result.sections)
    assert 0 < result.total_tokens <= 3000
    assert engine.last_snapshot == result.snapshot


@pytest.mark.parametrize(
    "error",
    [
        InvalidParam("docs[0].topic", "is required", "pass a topic"),
        CtxError("the request's own fault"),
    ],
)
def test_a_ctx_error_from_a_contributor_goes_back_to_the_caller(make_engine, monkeypatch, error) -> None:
    """Ensure that a CtxError (the request's own fault, which the caller can fix) is not
    swallowed into a warning but raised from the bundle as it was."""
    engine = make_engine(SAMPLE_FILES)

    def refuses(ctx):
        raise error

    monkeypatch.setattr(by_name("retrieval"), "offer", refuses)
    with pytest.raises(CtxError) as caught:
        engine.bundle(parse_bundle({"query": "assemble bundle", "budget": 3000}))
    assert caught.value is error
