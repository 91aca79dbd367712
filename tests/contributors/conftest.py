"""Fixtures for contributor tests: a real engine over a workspace under tmp_path, and an
`AssemblyContext` built by the pipeline from a parsed `ctx/bundle` request, so every
contributor is asked exactly as a bundle asks it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctx_lsp.assembly import pipeline
from ctx_lsp.contributors.base import AssemblyContext, Contributor
from ctx_lsp.engine import Engine
from ctx_lsp.params import parse_bundle
from ctx_lsp.tokens import TokenCounter
from ctx_lsp.vocabulary import Candidate, Offer, Rendering, Tier
from tests.conftest import write_tree

EngineFactory = Callable[..., Engine]


@pytest.fixture
def make_engine(tmp_path: Path):
    """Build, index and warm an engine over `files` written to a fresh folder (no watcher)."""
    engines: list[Engine] = []

    def make(files: Mapping[str, str | bytes], overrides: Mapping[str, Any] | None = None) -> Engine:
        root = write_tree(tmp_path / f"ws{len(engines)}", dict(files))
        extra = dict(overrides or {})
        options = {**extra, "index": {"watch": False, **extra.get("index", {})}}
        engine = Engine([root], options)
        engines.append(engine)
        engine.index()
        engine.warm_up()
        return engine

    yield make
    for engine in engines:
        engine.close()


def uri(engine: Engine, rel: str) -> str:
    """The file URI of a workspace-relative path, as an editor sends it."""
    return (engine.roots[0] / rel).as_uri()


def context(engine: Engine, params: Mapping[str, Any]) -> AssemblyContext:
    """The context a bundle for `params` would ask its contributors with (shared inputs filled)."""
    request = parse_bundle(dict(params))
    return pipeline.prepare(request, pipeline.plan(request, engine.loaded.config), engine.bundle_sources())


def offer_of(contributor: Contributor, ctx: AssemblyContext) -> Offer:
    """The contributor's offer, checked against what every offer promises."""
    offer = contributor.offer(ctx)
    assert offer.name == contributor.name
    assert offer.strategy == contributor.strategy
    saliences = [c.salience for c in offer.candidates]
    assert saliences == sorted(saliences, reverse=True), "candidates must come best first"
    assert len({c.id for c in offer.candidates}) == len(offer.candidates)
    assert len({c.path for c in offer.candidates}) == len(offer.candidates)
    for c in offer.candidates:
        assert c.contributor == contributor.name
        assert 0.0 <= c.salience <= 1.0
        assert c.reason.strip(), f"{c.id} has no reason"
    return offer


def rendered(candidate: Candidate, tier: Tier, cap: int, counter: TokenCounter) -> Rendering:
    """A rendering, checked: real token count, within the cap, not richer than asked."""
    r = candidate.render(tier, cap)
    assert r.tokens == counter.count(r.content)
    assert r.tokens <= cap
    assert r.tier <= tier
    return r


def paths(offer: Offer) -> list[str]:
    return [c.path for c in offer.candidates]
