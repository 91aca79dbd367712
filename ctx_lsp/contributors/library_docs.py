"""library_docs: dependency docs, only when the request asks (Context7-style).

One candidate per `{library, topic}` asked for. Together they never exceed the agent's
docs cap (split evenly between the libraries asked for), and the orchestrator may shrink
them further to fit the bundle: a candidate renders to whatever cap it is given.
"""

from __future__ import annotations

from ctx_lsp.contributors.base import AssemblyContext
from ctx_lsp.errors import CtxError
from ctx_lsp.vocabulary import (
    BundleRequest,
    Candidate,
    ContributorName,
    DocsRequest,
    Offer,
    Rendering,
    Strategy,
    Tier,
    memoised,
)

DOCS_SALIENCE = 1.0
"""Asked for explicitly: as salient as anything can be."""


class LibraryDocsContributor:
    """Docs of the libraries the request names, split evenly within the agent's docs cap."""

    name = ContributorName.LIBRARY_DOCS
    strategy = Strategy.DEPTH

    def applies(self, request: BundleRequest) -> bool:
        return bool(request.docs)

    def offer(self, ctx: AssemblyContext) -> Offer:
        requests = ctx.request.docs
        if not requests or ctx.library_docs is None:
            return Offer(self.name, [], self.strategy)
        docs = ctx.library_docs()
        share = max(1, ctx.docs_cap // len(requests))
        candidates = []
        for req in requests:
            # Resolve now, so a bad library or missing topic is an error of this request.
            first = docs.docs(req.library, req.topic, share)
            if not first.content:
                ctx.warnings.append(f"docs: nothing found for {req.library!r} on {req.topic!r}")
                continue

            def rendering(tier: Tier, cap: int, req: DocsRequest = req) -> Rendering:
                try:
                    result = docs.docs(req.library, req.topic, share, max_tokens=max(1, min(cap, share)))
                except CtxError:
                    return Rendering(tier, "", 0, 0, 0, True, ())
                lines = result.content.count("\n") + 1
                return Rendering(tier, result.content, result.tokens, 1, lines, result.truncated, ())

            label = f"{first.library} {first.version}".strip()
            topic = f", topic {req.topic!r}" if req.topic else ""
            candidates.append(
                Candidate(
                    id=f"{self.name}:{first.library}:{req.topic or ''}",
                    contributor=self.name,
                    path=f"docs/{first.library}" + (f"#{req.topic}" if req.topic else ""),
                    uri="",
                    salience=DOCS_SALIENCE,
                    reason=f"library docs asked for: {label}{topic}",
                    tier=Tier.FULL,
                    render=memoised(rendering),
                )
            )
        return Offer(self.name, candidates, self.strategy)
