"""retrieval: files whose symbols match the task text.

Lexical (BM25 over identifier-aware terms of symbols, signatures, docstrings and paths)
and then blended with the reference graph, personalised to the working files and the
identifiers the task names: a file the working files import, or that defines what the
task mentions, outranks an equally worded stranger. A few files whose task words are only
in their code (the body-terms index) join them, for their units (`body_files`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from ctx_lsp.code.languages import language_named
from ctx_lsp.code.outline import Outline, Symbol
from ctx_lsp.contributors.base import AssemblyContext, Excerpts, RankedFile, definition_ranks, file_candidate
from ctx_lsp.contributors.history_prior import with_history
from ctx_lsp.contributors.kinds import is_changelog, is_test_path, mentions_tests, wants_changelog
from ctx_lsp.contributors.unit_ranking import FileUnits, RankedUnit, UnitFile, rank_units, units_of
from ctx_lsp.index.body_terms import BODY_KIND
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.search import SearchHit
from ctx_lsp.relevance import (
    BODY_FILE_PRIOR,
    BODY_FILES,
    BODY_SEARCH_HITS,
    BODY_SYMBOLS,
    DEFINITIONS_RANKED,
    DEPTH_SHARE,
    DEPTH_SHARE_WITH_WORKING_FILES,
    EXCERPT_FILES,
    EXTRA_HIT_WEIGHT,
    FOCUS_SYMBOLS,
    GRAPH_BLEND,
    LARGE_BUDGET_TOKENS,
    MAX_CANDIDATE_FILES,
    MAX_EXTRA_HITS,
    MID_BUDGET_BODY_SYMBOLS,
    MID_BUDGET_DEPTH_SHARE,
    MID_BUDGET_TOKENS,
    NAMED_HIT_RANK,
    SEARCH_HITS,
    TEST_FILE_FACTOR,
    UNIT_CALLEE_SOURCES,
    UNIT_CALLEES_NAMED,
    UNIT_FILES,
    UNIT_FILES_LARGE_BUDGET,
    units_share,
)
from ctx_lsp.vocabulary import BundleRequest, ContributorName, Offer, Strategy

log = logging.getLogger(__name__)


def rank_files(
    hits: Sequence[SearchHit], wants_tests: bool, graph_scores: Mapping[str, float] | None = None
) -> list[RankedFile]:
    """Group symbol hits by file, demote tests, blend in graph rank; best first."""
    by_file: dict[str, list[SearchHit]] = {}
    for hit in hits:
        by_file.setdefault(hit.abs_path, []).append(hit)
    grouped: list[tuple[str, float, list[SearchHit]]] = []
    for abs_path, file_hits in by_file.items():
        scores = sorted((h.score for h in file_hits), reverse=True)
        score = scores[0] + EXTRA_HIT_WEIGHT * sum(scores[1 : 1 + MAX_EXTRA_HITS])
        if not wants_tests and is_test_path(file_hits[0].path):
            score *= TEST_FILE_FACTOR
        grouped.append((abs_path, score, file_hits))
    top = max((g[1] for g in grouped), default=0.0) or 1.0
    ranked = []
    for abs_path, score, file_hits in grouped:
        lexical = score / top
        graph = (graph_scores or {}).get(abs_path, 0.0)
        final = (1 - GRAPH_BLEND) * lexical + GRAPH_BLEND * graph if graph_scores else lexical
        ranked.append(RankedFile(abs_path, file_hits[0].path, lexical, final, tuple(file_hits)))
    ranked.sort(key=lambda r: (-r.score, r.path))
    return ranked


def top_hit_ratio(ranked: Sequence[RankedFile]) -> float:
    if len(ranked) < 2 or ranked[1].lexical <= 0:
        return 1.0
    return ranked[0].lexical / ranked[1].lexical


def retrieve(ctx: AssemblyContext) -> list[RankedFile]:
    """The search ranking of files for the task (a shared input: the working files use its
    symbol matches, the adjustments its top-hit ratio). The graph blends in only when the
    request has working files or names identifiers to personalise it."""
    if not ctx.query.strip():
        return []
    graph_scores = ctx.rank.scores if ctx.rank is not None and (ctx.working or ctx.mentioned) else None
    hits = ctx.search.search(ctx.query, SEARCH_HITS)
    return with_history(ctx, rank_files(hits, mentions_tests(ctx.query), graph_scores))


class Retrieval:
    """The best files for the task's words; an outline that must be pruned keeps the
    matching symbols first, then the file's definitions ranked for the request."""

    name = ContributorName.RETRIEVAL
    strategy = Strategy.BREADTH

    def applies(self, request: BundleRequest) -> bool:
        return True

    def offer(self, ctx: AssemblyContext) -> Offer:
        candidates = []
        excerpts = Excerpts.for_task(ctx.search.term_weights(ctx.query))
        files = offered_files(ctx)
        found = body_files(ctx, {r.abs_path for _, r, _ in files})
        units = best_units(ctx, [(r, entry) for _, r, entry in files], found)
        if found:
            found, units = could_show(found, units, ctx.budget)
            files.extend((len(files) + i, r, entry) for i, (r, entry) in enumerate(found))
        spans: dict[str, list[tuple[int, RankedUnit]]] = {}  # each file's units, with their places
        for place, u in enumerate(units):
            spans.setdefault(u.abs_path, []).append((place, u))
        for rank, r, entry in files:
            symbols = tuple(dict.fromkeys(h.symbol for h in r.hits if h.symbol))[:FOCUS_SYMBOLS]
            terms = sorted({t for h in r.hits for t in h.matched})
            if any(h.kind == BODY_KIND for h in r.hits):
                reason = f"its code uses {', '.join(terms[:6])} (found by the words in its bodies)"
            else:
                reason = f"matches {', '.join(terms[:6])}" + (f" in {', '.join(symbols[:3])}" if symbols else "")
            if r.score - r.history_gain > r.lexical + 1e-9:
                near = "the working files" if ctx.working else "what the task names"
                reason += f"; near {near} in the reference graph"
            reason = f"{reason}; {r.history}" if r.history else reason
            graph_ranks = definition_ranks(ctx, ctx.rank, r.abs_path, DEFINITIONS_RANKED)
            own = spans.get(r.abs_path)
            bodies: tuple[str, ...]
            shown: Excerpts | None
            if own:
                # Its best units, in the bundle's ranking; every hit keeps its signature first
                # in the outline around them (above the graph's ranks), and then what the
                # best units call.
                reason += "; " + units_reason(own, len(units))
                callees = unit_callees(entry.outline, [u for _, u in own[:UNIT_CALLEE_SOURCES]])
                named = (*symbols, *(q for q in callees if q not in symbols))
                reason += f"; names what they call: {', '.join(callees)}" if callees else ""
                bodies, shown = (), Excerpts.for_units([u.span for _, u in own])
            else:
                # Bodies for the best few hits; the other hits' signatures are kept first in
                # the outline (above the graph's ranks), so a pruned outline still names them.
                body_count = body_symbols(ctx.budget)
                bodies, named = symbols[:body_count], symbols[body_count:]
                shown = excerpts if rank < EXCERPT_FILES and not units else None
            ranks = with_named(graph_ranks, named) if named else graph_ranks
            candidates.append(
                file_candidate(ctx, entry, self.name, r.score, reason, ctx.tier, bodies, ranks, excerpts=shown)
            )
        candidates.sort(key=lambda c: -c.salience)  # the files found by their code's words among them
        if units:
            ids = {c.path: c.id for c in candidates}
            picks = tuple((ids[u.path], u.cost) for u in units if u.path in ids)
            return Offer(
                self.name,
                candidates,
                self.strategy,
                depth_share=units_share(ctx.budget, bool(ctx.working)),
                units=picks,
            )
        # Working files already show the bodies the task names in them: less depth here.
        depth = DEPTH_SHARE_WITH_WORKING_FILES if ctx.working else depth_share(ctx.budget)
        return Offer(self.name, candidates, self.strategy, depth_share=depth)


def offered_files(ctx: AssemblyContext) -> list[tuple[int, RankedFile, IndexedFile]]:
    """The search ranking's files retrieval offers, each with its place in the ranking: the
    first MAX_CANDIDATE_FILES that are indexed, changelogs only when the task asks for one."""
    changelogs = wants_changelog(ctx.query)
    return [
        (rank, r, entry)
        for rank, r in enumerate(ctx.ranked[:MAX_CANDIDATE_FILES])
        if (entry := ctx.workspace.files.get(r.abs_path)) is not None and (changelogs or not is_changelog(entry.path))
    ]


def body_files(ctx: AssemblyContext, offered: set[str]) -> list[tuple[RankedFile, IndexedFile]]:
    """The best files by the words in their code (`index/body_terms.py`) that are not
    `offered` already and not tests, BODY_FILES at most, each with its salience
    (BODY_FILE_PRIOR times its body score over the best non-test file's)."""
    if not ctx.query.strip():
        return []
    found: list[tuple[SearchHit, IndexedFile]] = []
    for hit in ctx.bodies.search(ctx.query, BODY_SEARCH_HITS):
        entry = ctx.workspace.files.get(hit.abs_path)
        if entry is not None and not is_test_path(entry.path):
            found.append((hit, entry))
    best = max((hit.score for hit, _ in found), default=0.0) or 1.0
    out: list[tuple[RankedFile, IndexedFile]] = []
    for hit, entry in found:
        if hit.abs_path not in offered and len(out) < BODY_FILES:
            out.append((RankedFile(hit.abs_path, entry.path, 0.0, BODY_FILE_PRIOR * hit.score / best, (hit,)), entry))
    return out


def could_show(
    found: Sequence[tuple[RankedFile, IndexedFile]], units: Sequence[RankedUnit], budget: int
) -> tuple[list[tuple[RankedFile, IndexedFile]], list[RankedUnit]]:
    """The files `found` by their code's words that have a unit among the best units a
    bundle of `budget` tokens could show at all (the ranking's first units whose costs add
    up to the budget), and the units without those of the other found files: a found file
    is there for its units, and one whose units rank below that would only be an outline
    more to render and to weigh against the files the task is about."""
    shown: set[str] = set()
    spent = 0
    for u in units:
        spent += u.cost
        if spent > budget:
            break
        shown.add(u.abs_path)
    kept = [(r, entry) for r, entry in found if r.abs_path in shown]
    dropped = {r.abs_path for r, _ in found} - shown
    return kept, [u for u in units if u.abs_path not in dropped]


def best_units(
    ctx: AssemblyContext,
    files: Sequence[tuple[RankedFile, IndexedFile]],
    found: Sequence[tuple[RankedFile, IndexedFile]] = (),
) -> list[RankedUnit]:
    """The code units of the best files of the search ranking (`unit_files`) and of the
    files `found` by their code's words (`body_files`), ranked for the task (`unit_ranking`)."""
    if not ctx.query.strip():
        return []
    top = max((r.score for r, _ in files), default=0.0) or 1.0
    best_hit = max((score for hits in ctx.hit_symbols.values() for score in hits.values()), default=0.0) or 1.0
    wants_tests = mentions_tests(ctx.query)
    read: list[tuple[UnitFile, FileUnits]] = []
    for r, entry in [*files[: unit_files(ctx.budget)], *found]:
        if language_named(entry.language) is None:
            continue
        try:
            fu = units_of(ctx.workspace, ctx.renders.units, entry)
        except Exception:  # one file's units must not cost the bundle its retrieval
            log.exception("units of %s", entry.path)
            continue
        if fu is None or not fu.units:
            continue
        hits = ctx.hit_symbols.get(r.abs_path, {})
        owners = {name: score / best_hit for name, score in hits.items()}
        neighbours = frozenset(ctx.neighbours.get(r.abs_path, ()))
        factor = TEST_FILE_FACTOR if not wants_tests and is_test_path(entry.path) else 1.0
        read.append((UnitFile(entry, r.score / top, owners, neighbours, factor), fu))
    return rank_units(read, ctx.query, ctx.search.term_weights(ctx.query))


def unit_callees(outline: Outline, units: Sequence[RankedUnit]) -> list[str]:
    """Definitions of the file that the owners of its best `units` call and that those units
    do not show, in call order, UNIT_CALLEES_NAMED at most (a call names a function by its
    last part: `this.render()` calls `render`). Every file with units asks, ~20 a bundle,
    some with a thousand symbols: the symbols are scanned for the owners and then for the
    called names only, not indexed whole (that was ~2 ms of a Django bundle)."""
    wanted_owners = {u.unit.owner for u in units if u.unit.owner}
    if not wanted_owners:
        return []
    symbols = outline.symbols
    owners = {s.qualname: s for s in symbols if s.qualname in wanted_owners}
    defined = outline.names
    calls = {q: [name for c in s.calls if (name := c.rsplit(".", 1)[-1]) in defined] for q, s in owners.items()}
    called = {name for names in calls.values() for name in names}
    if not called:
        return []
    by_name: dict[str, list[Symbol]] = {}
    for s in symbols:
        if s.name in called and s.kind != "heading":
            by_name.setdefault(s.name, []).append(s)
    found: list[str] = []
    for u in units:
        owner = owners.get(u.unit.owner)
        for name in calls.get(u.unit.owner, ()):
            for s in by_name.get(name, ()):  # a name may be a constant's only
                shown = any(v.unit.start <= s.start_line <= v.unit.end for v in units)
                if s is not owner and not shown and s.qualname not in found:
                    found.append(s.qualname)
    return found[:UNIT_CALLEES_NAMED]


def units_reason(own: Sequence[tuple[int, RankedUnit]], ranked: int) -> str:
    """Explain's words for a file's units (each with its place in the whole ranking):
    which, why, and against how many."""
    shown = []
    for place, u in own[:3]:
        where = u.unit.owner or "module code"
        shown.append(f"{where} (lines {u.span[0]}-{u.span[1]}: {', '.join(u.matched[:4])}; #{place + 1})")
    more = f" and {len(own) - 3} more" if len(own) > 3 else ""
    return f"units {', '.join(shown)}{more} of {ranked} ranked units"


def unit_files(budget: int) -> int:
    """How many of the search ranking's files have their units ranked: more at a large
    budget, which has room for the units of files ranked lower (relevance.py)."""
    return UNIT_FILES_LARGE_BUDGET if budget >= LARGE_BUDGET_TOKENS else UNIT_FILES


def body_symbols(budget: int) -> int:
    """How many of a hit file's matching symbols show their bodies at tier 2: more as the
    budget allows (relevance.py has the measurements)."""
    if budget >= LARGE_BUDGET_TOKENS:
        return FOCUS_SYMBOLS
    return MID_BUDGET_BODY_SYMBOLS if budget >= MID_BUDGET_TOKENS else BODY_SYMBOLS


def depth_share(budget: int) -> float:
    """Retrieval's share for bodies before breadth, without working files."""
    return MID_BUDGET_DEPTH_SHARE if budget >= MID_BUDGET_TOKENS else DEPTH_SHARE


def with_named(ranks: Callable[[], dict[str, float]], named: Sequence[str]) -> Callable[[], dict[str, float]]:
    """`ranks` with the `named` symbols above every graph rank (≤ 1), best first."""

    def merged() -> dict[str, float]:
        out = ranks()
        for i, name in enumerate(named):
            out[name] = NAMED_HIT_RANK - i / (10 * max(1, len(named)))
        return out

    return merged
