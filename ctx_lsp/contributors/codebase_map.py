"""codebase_map: a ranked outline of the rest of the repository (Aider's repo-map idea).

Files are ranked by the reference graph, personalised towards the working files and the
identifiers the task names; each file shows only its most-referenced definitions, so a
map of many files fits where their full outlines would not. The graph is maintained
incrementally with the index; a request only personalises it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ctx_lsp.assembly.candidate import Candidate, memoised
from ctx_lsp.assembly.orchestrator import Offer
from ctx_lsp.code.outline import Symbol, Tier
from ctx_lsp.code.tiers import GUTTER, INDENT, Rendering, render
from ctx_lsp.index.graph import RankResult
from ctx_lsp.contributors.base import AssemblyContext
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.tokens import cut_to_tokens

NAME = "codebase_map"
MAX_MAP_FILES = 200
"""Files offered to the map (the graph lists its best 200): skeletons of ~60–120 tokens
each, so a large budget can map most of a mid-sized repository."""
DEFS_PER_FILE = 8
"""Definitions shown per file: the map says where things are, outlines say what they are."""
MIN_FILE_SCORE = 0.01


def _signature_line(symbol: Symbol, width: int) -> str:
    text = INDENT * symbol.depth + symbol.signature + (":" if symbol.kind == "class" else "")
    return f"{symbol.start_line:>{width}}{GUTTER}{text}"


def render_skeleton(
    entry: IndexedFile, ranked_defs: Mapping[str, float], limit: int, ctx: AssemblyContext, cap: int
) -> Rendering:
    """The file's `limit` best definitions, in line order, with line numbers."""
    symbols = [s for s in entry.outline.symbols if s.kind != "heading" or s.depth < 2]
    if not symbols:
        return Rendering(Tier.OUTLINE, "", 0, 0, 0, True, ())
    order = sorted(symbols, key=lambda s: (-ranked_defs.get(s.qualname, 0.0), s.depth, s.start_line))
    chosen = sorted(order[:limit], key=lambda s: s.start_line)
    width = len(str(entry.line_count))
    lines = [_signature_line(s, width) for s in chosen]
    if len(symbols) > len(chosen):
        lines.append(f"{'':>{width}}{GUTTER}… {len(symbols) - len(chosen)} more definitions")
    cut = cut_to_tokens("\n".join(lines) + "\n", cap, ctx.counter)
    return Rendering(Tier.OUTLINE, cut.text, cut.tokens, 1, entry.line_count, cut.truncated or
                     len(symbols) > len(chosen), ())


def offer(ctx: AssemblyContext, rank: RankResult) -> Offer:
    """Files by personalised graph rank; definitions are ranked only for files rendered."""
    candidates = []
    working = ctx.working_paths
    graph = ctx.graph
    for f in rank.files:
        if len(candidates) >= MAX_MAP_FILES or f.score < MIN_FILE_SCORE:
            break
        entry = ctx.workspace.files.get(f.abs_path)
        if entry is None or f.abs_path in working:
            continue
        mentioned = rank.mentioned_in.get(f.abs_path, ())
        reason = f"graph rank {f.score:.2f}" + (f"; defines {', '.join(mentioned[:3])}" if mentioned else "")

        def rendering(tier: Tier, cap: int, entry: IndexedFile = entry) -> Rendering:
            defs = {}
            if graph is not None and entry.symbols:
                defs = {d.qualname: d.score for d in graph.rank_definitions(rank, [entry.abs_path], DEFS_PER_FILE)}
            if tier >= Tier.FOCUSED or not entry.symbols:  # symbol-less files: imports and constants
                # The full outline, whose best-ranked definitions are never folded away.
                text, current = ctx.workspace.read_text(entry)
                full = render(current.path, text, current.outline, Tier.OUTLINE, ctx.counter, cap_tokens=cap,
                              focus=tuple(defs))
                return Rendering(tier, full.content, full.tokens, full.start_line, full.end_line,
                                 full.truncated, ())
            return render_skeleton(entry, defs, DEFS_PER_FILE, ctx, cap)

        candidates.append(Candidate(
            id=f"{NAME}:{entry.path}", contributor=NAME, path=entry.path, uri=Path(f.abs_path).as_uri(),
            salience=f.score, reason=reason, tier=Tier.FOCUSED, render=memoised(rendering),
        ))
    return Offer(NAME, candidates, strategy="breadth")
