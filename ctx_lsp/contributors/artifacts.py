"""artifacts: outputs of earlier workflow steps (spec, stories, architecture, API design).

All artifacts form one section, filled in priority order within the artifact budget and
whatever the orchestrator allows; `history.artifacts` cuts at paragraph or sentence
boundaries and summarises what does not fit, never cutting mid-sentence.
"""

from __future__ import annotations

from typing import Sequence

from ctx_lsp.assembly.candidate import Candidate, memoised
from ctx_lsp.assembly.orchestrator import Offer
from ctx_lsp.code.outline import Tier
from ctx_lsp.code.tiers import Rendering
from ctx_lsp.history.artifacts import fill_artifacts, render_artifacts
from ctx_lsp.tokens import TokenCounter

NAME = "artifacts"


def offer(artifacts: Sequence[tuple[str, str]], budget: int, counter: TokenCounter) -> Offer:
    if not artifacts:
        return Offer(NAME, [])
    keys = ", ".join(k for k, _ in artifacts)

    def rendering(tier: Tier, cap: int) -> Rendering:
        result = fill_artifacts(artifacts, max(1, min(cap, budget)), counter)
        text = render_artifacts(result)
        partial = any(p.status != "full" for p in result.pieces)
        return Rendering(tier, text, result.total_tokens, 1, text.count("\n") + 1, partial, ())

    return Offer(NAME, [Candidate(
        id=f"{NAME}:all", contributor=NAME, path="artifacts", uri="", salience=1.0,
        reason=f"prior workflow outputs: {keys}", tier=Tier.FULL, render=memoised(rendering),
    )])
