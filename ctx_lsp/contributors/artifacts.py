"""artifacts: outputs of earlier workflow steps (spec, stories, architecture, API design).

All artifacts form one section, filled in priority order within the artifact budget and
whatever the orchestrator allows; `history.artifacts` cuts at paragraph or sentence
boundaries and summarises what does not fit, never cutting mid-sentence.
"""

from __future__ import annotations

from ctx_lsp.contributors.base import AssemblyContext
from ctx_lsp.history.artifacts import fill_artifacts, render_artifacts
from ctx_lsp.vocabulary import (
    BundleRequest,
    Candidate,
    ContributorName,
    Offer,
    Rendering,
    Strategy,
    Tier,
    memoised,
)


class Artifacts:
    """Every artifact of the request in one section, within the artifact budget."""

    name = ContributorName.ARTIFACTS
    strategy = Strategy.DEPTH

    def applies(self, request: BundleRequest) -> bool:
        return bool(request.artifacts)

    def offer(self, ctx: AssemblyContext) -> Offer:
        artifacts, budget, counter = ctx.request.artifacts, ctx.artifacts_budget, ctx.counter
        if not artifacts:
            return Offer(self.name, [], self.strategy)
        keys = ", ".join(k for k, _ in artifacts)

        def rendering(tier: Tier, cap: int) -> Rendering:
            result = fill_artifacts(artifacts, max(1, min(cap, budget)), counter)
            text = render_artifacts(result)
            partial = any(p.status != "full" for p in result.pieces)
            return Rendering(tier, text, result.total_tokens, 1, text.count("\n") + 1, partial, ())

        return Offer(
            self.name,
            [
                Candidate(
                    id=f"{self.name}:all",
                    contributor=self.name,
                    path="artifacts",
                    uri="",
                    salience=1.0,
                    reason=f"prior workflow outputs: {keys}",
                    tier=Tier.FULL,
                    render=memoised(rendering),
                )
            ],
            self.strategy,
        )
