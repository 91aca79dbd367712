"""Tests for ctx_lsp/contributors/artifacts.py, through the Contributor protocol."""

from __future__ import annotations

from ctx_lsp.contributors.artifacts import Artifacts
from ctx_lsp.params import parse_bundle
from ctx_lsp.vocabulary import ContributorName, Strategy, Tier
from tests.conftest import SAMPLE_FILES
from tests.contributors.conftest import context, offer_of, rendered

CONTRIBUTOR = Artifacts()

PARAGRAPH = "The service accepts requests over HTTP. It validates every field before storing it. " * 8
SPEC = "# Spec\n\n" + "\n\n".join([PARAGRAPH] * 4)
ARCHITECTURE = "The service is one process with a SQLite store."


def test_protocol_identity() -> None:
    """Ensure that artifacts name themselves, spend depth first, and apply only when the
    request carries artifacts."""
    assert CONTRIBUTOR.name == ContributorName.ARTIFACTS
    assert CONTRIBUTOR.strategy == Strategy.DEPTH
    assert not CONTRIBUTOR.applies(parse_bundle({}))
    assert not CONTRIBUTOR.applies(parse_bundle({"query": "spec", "artifacts": []}))
    assert CONTRIBUTOR.applies(parse_bundle({"artifacts": [{"key": "spec", "content": "Do it."}]}))


def test_no_artifacts_no_candidates(make_engine) -> None:
    """Ensure that a request without artifacts is offered none."""
    engine = make_engine(SAMPLE_FILES)
    assert offer_of(CONTRIBUTOR, context(engine, {"query": "spec"})).candidates == []


def test_all_artifacts_are_one_candidate_in_priority_order(make_engine) -> None:
    """Ensure that every artifact goes into one candidate naming them all, wanted whole, and
    that the spec comes before the architecture whatever order they were sent in."""
    engine = make_engine(SAMPLE_FILES)
    ctx = context(
        engine,
        {
            "artifacts": [
                {"key": "architecture", "content": ARCHITECTURE},
                {"key": "spec", "content": "Build a bundle service."},
            ]
        },
    )
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    assert candidate.tier == Tier.FULL
    assert candidate.salience == 1.0
    assert "architecture" in candidate.reason and "spec" in candidate.reason
    r = rendered(candidate, Tier.FULL, 4000, engine.counter)
    assert not r.truncated
    assert ARCHITECTURE in r.content and "Build a bundle service." in r.content
    assert r.content.index("Build a bundle service.") < r.content.index(ARCHITECTURE)


def test_rendering_stays_within_the_artifact_budget(make_engine) -> None:
    """Ensure that, however large the cap it is offered, the section keeps to the configured
    artifact budget: the spec cut at a sentence end, the later small artifact still whole."""
    engine = make_engine(SAMPLE_FILES, {"artifactsBudget": 300})
    assert engine.counter.count(SPEC) > 300  # the premise: the spec alone is over budget
    ctx = context(
        engine, {"artifacts": [{"key": "spec", "content": SPEC}, {"key": "architecture", "content": ARCHITECTURE}]}
    )
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    r = rendered(candidate, Tier.FULL, 50_000, engine.counter)
    assert r.tokens <= 300
    assert r.truncated
    assert ARCHITECTURE in r.content
    kept = r.content.split("### Artifact: spec", 1)[1].split("[… cut", 1)[0].strip()
    assert kept.endswith("storing it.")


def test_rendering_shrinks_to_the_cap_it_is_given(make_engine) -> None:
    """Ensure that a small cap from the orchestrator is honoured: what does not fit is named
    with its size instead of cut mid-sentence."""
    engine = make_engine(SAMPLE_FILES)
    ctx = context(engine, {"artifacts": [{"key": "spec", "content": SPEC}]})
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    r = rendered(candidate, Tier.FULL, 60, engine.counter)
    assert r.truncated
    assert "spec" in r.content and "omitted for budget" in r.content
    assert PARAGRAPH[:40] not in r.content
