"""library_docs: dependency docs, only when the request asks (Context7-style).

One candidate per `{library, topic}` asked for. Together they never exceed the agent's
docs cap (split evenly between the libraries asked for), and the orchestrator may shrink
them further to fit the bundle: a candidate renders to whatever cap it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ctx_lsp.assembly.candidate import Candidate, memoised
from ctx_lsp.assembly.orchestrator import Offer
from ctx_lsp.code.outline import Tier
from ctx_lsp.code.tiers import Rendering
from ctx_lsp.docs.library import LibraryDocs
from ctx_lsp.errors import CtxError

NAME = "library_docs"
DOCS_SALIENCE = 1.0
"""Asked for explicitly: as salient as anything can be."""


@dataclass(frozen=True, slots=True)
class DocsRequest:
    library: str
    topic: str | None


def offer(docs: LibraryDocs, requests: Sequence[DocsRequest], docs_cap: int, warnings: list[str]) -> Offer:
    if not requests:
        return Offer(NAME, [])
    share = max(1, docs_cap // len(requests))
    candidates = []
    for req in requests:
        # Resolve now, so a bad library or missing topic is an error of this request.
        first = docs.docs(req.library, req.topic, share)
        if not first.content:
            warnings.append(f"docs: nothing found for {req.library!r} on {req.topic!r}")
            continue

        def rendering(tier: Tier, cap: int, req: DocsRequest = req) -> Rendering:
            try:
                result = docs.docs(req.library, req.topic, share, max_tokens=max(1, min(cap, share)))
            except CtxError:
                return Rendering(tier, "", 0, 0, 0, True, ())
            lines = result.content.count("\n") + 1
            return Rendering(tier, result.content, result.tokens, 1, lines, result.truncated, ())

        label = f"{first.library} {first.version}".strip()
        candidates.append(Candidate(
            id=f"{NAME}:{first.library}:{req.topic or ''}", contributor=NAME,
            path=f"docs/{first.library}" + (f"#{req.topic}" if req.topic else ""), uri="",
            salience=DOCS_SALIENCE, reason=f"library docs asked for: {label}" + (f", topic {req.topic!r}" if req.topic else ""),
            tier=Tier.FULL, render=memoised(rendering),
        ))
    return Offer(NAME, candidates, strategy="depth")
