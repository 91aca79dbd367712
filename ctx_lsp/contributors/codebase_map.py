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
from ctx_lsp.code.tiers import GUTTER, INDENT, Rendering
from ctx_lsp.contributors.base import AssemblyContext
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.tokens import cut_to_tokens

NAME = "codebase_map"
MAX_MAP_FILES = 60
"""Files offered to the map; at ~60–120 tokens each this covers a 32K bundle's share."""
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


def offer(ctx: AssemblyContext, file_scores: Mapping[str, float],
          definition_scores: Mapping[str, Mapping[str, float]]) -> Offer:
    """`file_scores`: abs path → [0, 1]; `definition_scores`: abs path → qualname → score."""
    candidates = []
    ranked = sorted(file_scores.items(), key=lambda kv: (-kv[1], kv[0]))
    working = ctx.working_paths
    for abs_path, score in ranked:
        if len(candidates) >= MAX_MAP_FILES or score < MIN_FILE_SCORE:
            break
        entry = ctx.workspace.files.get(abs_path)
        if entry is None or abs_path in working or not entry.symbols:
            continue
        defs = definition_scores.get(abs_path, {})
        top = sorted(defs, key=lambda q: -defs[q])[:3]
        reason = f"graph rank {score:.2f}" + (f"; most referenced: {', '.join(top)}" if top else "")

        def rendering(tier: Tier, cap: int, entry: IndexedFile = entry, defs: Mapping[str, float] = defs) -> Rendering:
            return render_skeleton(entry, defs, DEFS_PER_FILE, ctx, cap)

        candidates.append(Candidate(
            id=f"{NAME}:{entry.path}", contributor=NAME, path=entry.path, uri=Path(abs_path).as_uri(),
            salience=score, reason=reason, tier=Tier.OUTLINE, render=memoised(rendering),
        ))
    return Offer(NAME, candidates, strategy="breadth")
