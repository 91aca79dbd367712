"""codebase_map: a ranked outline of the rest of the repository (Aider's repo-map idea).

Files are ranked by the reference graph, personalised towards the working files and the
identifiers the task names; each file shows only its most-referenced definitions, so a
map of many files fits where their full outlines would not. The graph is maintained
incrementally with the index; a request only personalises it.
"""

from __future__ import annotations

from ctx_lsp.assembly.orchestrator import Offer
from ctx_lsp.code.outline import Tier
from ctx_lsp.contributors.base import AssemblyContext, definition_ranks, file_candidate
from ctx_lsp.index.graph import RankResult

NAME = "codebase_map"
MAX_MAP_FILES = 200
"""Files offered to the map (the graph lists its best 200), however low their rank: a
large budget maps most of a mid-sized repository, the unreferenced files last."""
DEFS_PER_FILE = 20
"""Definitions ranked per file: a map entry shows the best of them first (as many as its
room allows), then the file's other top-level names."""


def offer(ctx: AssemblyContext, rank: RankResult) -> Offer:
    """Files by personalised graph rank; definitions are ranked only for files rendered."""
    candidates = []
    working = ctx.working_paths
    for f in rank.files:
        if len(candidates) >= MAX_MAP_FILES:
            break
        entry = ctx.workspace.files.get(f.abs_path)
        if entry is None or f.abs_path in working:
            continue
        mentioned = rank.mentioned_in.get(f.abs_path, ())
        reason = f"graph rank {f.score:.2f}" + (f"; defines {', '.join(mentioned[:3])}" if mentioned else "")
        ranks = definition_ranks(ctx, rank, entry.abs_path, DEFS_PER_FILE) if entry.symbols else None
        candidates.append(file_candidate(ctx, entry, NAME, f.score, reason, Tier.OUTLINE, ranks=ranks, compact=True))
    return Offer(NAME, candidates, strategy="breadth")
