"""working_files: what the person (or agent) is working on right now.

Candidates are the focus file, the `open` files of the request and the editor's buffers,
most recently edited first. Within each file, tier 2 shows in full the symbols that
matter: the one under the cursor with its direct callers and callees, and the ones edited
but not yet saved.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Mapping

from ctx_lsp.code.languages import CONTAINER_KINDS, language_named
from ctx_lsp.code.outline import Outline
from ctx_lsp.contributors.base import AssemblyContext, Excerpts, WorkingFile, file_candidate, precomputed
from ctx_lsp.contributors.kinds import is_test_path, mentions_tests
from ctx_lsp.contributors.unit_ranking import RankedUnit, UnitFile, rank_units, units_of
from ctx_lsp.errors import CtxError
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.relevance import (
    FOCUS_SALIENCE,
    MAX_CALL_NEIGHBOURS,
    MAX_TASK_SYMBOLS,
    MID_BUDGET_TOKENS,
    OPEN_SALIENCE,
    RECENCY_DECAY,
    RECENT_EDIT_HALF_LIFE_S,
    SMALL_BUDGET_WORKING_OUTLINE_TOKENS,
    SMALL_BUDGET_WORKING_UNIT_TOKENS,
    SMALL_BUDGET_WORKING_UNITS,
    SMALL_FILE_TOKENS,
    TASK_SYMBOL_MIN_RELATIVE_SCORE,
    WORKING_OUTLINE_TOKENS,
    WORKING_UNIT_MIN_RELATIVE_SCORE,
)
from ctx_lsp.vocabulary import BundleRequest, ContributorName, Offer, Strategy, Tier

MAX_DIFF_LINES = 20_000
"""Beyond this a buffer-vs-disk diff costs more than it tells; skip edit detection."""


def symbol_at(outline: Outline, line: int) -> str | None:
    """The innermost symbol containing a 1-based line."""
    best = None
    for s in outline.symbols:
        if s.start_line <= line <= s.end_line and (best is None or s.depth >= best.depth):
            best = s
    return best.qualname if best else None


def edited_symbols(workspace: Workspace, entry: IndexedFile, buffer_text: str) -> tuple[str, ...]:
    """Symbols whose lines differ between the editor buffer and the saved file."""
    disk = workspace.saved_text(entry)
    if disk is None:
        return ()
    old, new = disk.splitlines(), buffer_text.splitlines()
    if len(old) + len(new) > MAX_DIFF_LINES or old == new:
        return ()
    changed: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            changed.update(range(j1 + 1, max(j1 + 1, j2) + 1))
    found = []
    for line in sorted(changed):
        name = symbol_at(entry.outline, line)
        if name and name not in found:
            found.append(name)
    return tuple(found)


def resolve_working_files(ctx: AssemblyContext) -> list[WorkingFile]:
    """Focus file first, then the request's `open` files, then editor buffers by edit
    recency. A shared input: the graph rank is personalised to these files, and the map
    leaves them out. One that cannot be read is a warning, not an error."""
    request = ctx.request
    focus = (request.focus.path, request.focus.line + 1) if request.focus else None
    open_paths = request.open
    workspace = ctx.workspace
    out: list[WorkingFile] = []
    seen: set[str] = set()

    def add(path: str, salience: float, reason: str, focus_line: int | None) -> None:
        try:
            entry = workspace.get(path)
        except CtxError as err:
            ctx.warnings.append(f"working file skipped: {err}")
            return
        if entry.abs_path in seen:
            return
        seen.add(entry.abs_path)
        symbols: list[str] = []
        if focus_line is not None:
            here = symbol_at(entry.outline, focus_line)
            if here:
                symbols.append(here)
                reason = f"{reason}; cursor in {here}"
                if ctx.graph is not None:
                    near = ctx.graph.callees_of(entry.abs_path, here) + ctx.graph.callers_of(here, entry.abs_path)
                    for owner, name in near[:MAX_CALL_NEIGHBOURS]:
                        if owner == entry.abs_path and name not in symbols:
                            symbols.append(name)
        if entry.overlay_version is not None:
            text, current = workspace.read_text(entry)
            edited = edited_symbols(workspace, current, text)
            if edited:
                reason = f"{reason}; unsaved edits in {', '.join(edited[:3])}"
                symbols.extend(s for s in edited if s not in symbols)
        out.append(WorkingFile(entry, salience, reason, tuple(symbols)))

    if focus is not None:
        add(focus[0], FOCUS_SALIENCE, "focus file (under the cursor)", focus[1])
    for path in open_paths:
        add(path, OPEN_SALIENCE, "named as a working file", None)
    now = time.monotonic()
    for rank, (path, edited_at) in enumerate(workspace.buffers_by_recency()):
        age = max(0.0, now - edited_at)
        recency = 0.5 ** (age / RECENT_EDIT_HALF_LIFE_S)
        salience = OPEN_SALIENCE * (RECENCY_DECAY**rank) * (0.5 + 0.5 * recency)
        add(path, salience, "open in the editor" + (f", edited {age:.0f}s ago" if edited_at else ""), None)
    return out


def symbol_matches(ctx: AssemblyContext) -> dict[str, dict[str, float]]:
    """abs_path → {qualname: best lexical score} of the symbols the task matched."""
    out: dict[str, dict[str, float]] = {}
    for r in ctx.ranked:
        scores = out.setdefault(r.abs_path, {})
        for h in r.hits:
            if h.symbol and h.score > scores.get(h.symbol, 0.0):
                scores[h.symbol] = h.score
    return out


def task_symbols(hits: Mapping[str, float]) -> tuple[str, ...]:
    """The symbols of a working file the task names, best first: the ones whose bodies a
    file without a cursor shows at tier 2 (DESIGN: an agent must read the code it will
    change). Only those scoring near the file's best hit, and a few."""
    if not hits:
        return ()
    best = max(hits.values())
    ranked = sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple(name for name, score in ranked if score >= TASK_SYMBOL_MIN_RELATIVE_SCORE * best)[:MAX_TASK_SYMBOLS]


def task_units(
    ctx: AssemblyContext, entry: IndexedFile, hits: Mapping[str, float], weights: Mapping[str, float]
) -> list[RankedUnit]:
    """The units of a working file (without a cursor or edits) that the task's words are
    in: its best few, each at least WORKING_UNIT_MIN_RELATIVE_SCORE of the best (below
    MID_BUDGET_TOKENS only the best: the file is open, so the agent can read the rest of
    it, and a small budget's room shows more in the files it reaches). `weights` are the
    task's term weights (`SearchIndex.term_weights`), looked up once for all working files."""
    if not ctx.query.strip() or language_named(entry.language) is None:
        return []
    fu = units_of(ctx.workspace, ctx.renders.units, entry)
    if fu is None or not fu.units:
        return []
    best_hit = max(hits.values(), default=0.0) or 1.0
    ranked = rank_units(
        [(UnitFile(entry, 1.0, {k: v / best_hit for k, v in hits.items()}), fu)],
        ctx.query,
        weights,
    )
    if not ranked:
        return []
    if ctx.budget < MID_BUDGET_TOKENS:
        return ranked[:SMALL_BUDGET_WORKING_UNITS]
    floor = WORKING_UNIT_MIN_RELATIVE_SCORE * ranked[0].score
    return [u for u in ranked if u.score >= floor][:MAX_TASK_SYMBOLS]


def _methods(outline: Outline, qualname: str) -> list[str]:
    """A class's own methods, dunders aside: a task that names a class changes what its
    methods do, and their callers elsewhere change with them (`self.type.get_metavar(self)`
    when `Choice.get_metavar` gains a parameter). Callers of the class itself are
    the ones that construct it."""
    prefix = qualname + "."
    return [
        s.qualname
        for s in outline.symbols
        if s.kind not in CONTAINER_KINDS
        and s.parent == qualname
        and s.qualname.startswith(prefix)
        and not s.name.startswith("__")
    ]


def call_neighbours(ctx: AssemblyContext, matches: Mapping[str, Mapping[str, float]]) -> dict[str, tuple[str, ...]]:
    """Symbols in other files that the working files' symbols that matter (the cursor's,
    the edited ones, or the ones the task names) call or are called by: a change to a
    working file usually reaches them. A shared input: retrieval and the map keep them
    first when they outline those files."""
    if ctx.graph is None or not ctx.working:
        return {}
    tests = mentions_tests(ctx.query)
    files = ctx.workspace.files

    def shown(owner: str, here: str) -> bool:
        """Not the working file itself; and not a test: tests call everything, and unless
        the task is about them they crowd out the code a change to the working file reaches."""
        entry = files.get(owner)
        return owner != here and (tests or entry is None or not is_test_path(entry.path))

    out: dict[str, dict[str, None]] = {}
    for w in ctx.working:
        here = w.entry.abs_path
        for symbol in (w.focus_symbols or task_symbols(matches.get(here, {})))[:MAX_TASK_SYMBOLS]:
            reached = ctx.graph.callees_of(here, symbol) + ctx.graph.callers_of(symbol)
            for method in _methods(w.entry.outline, symbol):
                reached += ctx.graph.callers_of(method)
            near = [(owner, qualname) for owner, qualname in reached if shown(owner, here)]
            for owner, qualname in near[:MAX_CALL_NEIGHBOURS]:
                out.setdefault(owner, {})[qualname] = None
    return {path: tuple(names) for path, names in out.items()}


class WorkingFiles:
    """The files being worked on: whole when small (or when tier 3 is asked for and it
    fits), else outlined with the bodies that matter in full (tier 2): the cursor's symbol
    and its neighbours, the edited ones, or — with neither — the symbols the task names."""

    name = ContributorName.WORKING_FILES
    strategy = Strategy.DEPTH

    def applies(self, request: BundleRequest) -> bool:
        return True

    def offer(self, ctx: AssemblyContext) -> Offer:
        matches = ctx.hit_symbols
        weights = ctx.search.term_weights(ctx.query) if ctx.working else {}
        candidates = []
        for w in ctx.working:
            tier = ctx.tier
            hits = dict(matches.get(w.entry.abs_path, {}))
            focus = w.focus_symbols
            units = () if focus else task_units(ctx, w.entry, hits, weights)
            reason, excerpts, cap = w.reason, None, None
            if units:  # the task's units in a short outline: the room goes to what they reach
                owners = dict.fromkeys(u.unit.owner or "module code" for u in units)
                reason += f"; the task's words are in {', '.join(owners)}"
                tier = Tier.FOCUSED if ctx.tier >= Tier.FOCUSED else ctx.tier
                if ctx.budget < MID_BUDGET_TOKENS:  # the lines of it the task's words are in
                    most = SMALL_BUDGET_WORKING_UNIT_TOKENS
                    windows = [u.lines_within(most) for u in units]
                    excerpts = Excerpts.for_units([u.span for u in units], windows, weights)
                    cap = sum(min(u.cost, most) for u in units) + SMALL_BUDGET_WORKING_OUTLINE_TOKENS
                else:
                    excerpts = Excerpts.for_units([u.span for u in units])
                    cap = sum(u.cost for u in units) + WORKING_OUTLINE_TOKENS
            elif not focus and _whole_tokens(ctx, w.entry) <= SMALL_FILE_TOKENS:
                tier = ctx.max_tier if ctx.tier >= Tier.FOCUSED else ctx.tier  # small enough: whole file
            elif not focus:
                focus = task_symbols(hits)
                reason += f"; the task names {', '.join(focus[:3])}" if focus else ""
            candidates.append(
                file_candidate(
                    ctx,
                    w.entry,
                    self.name,
                    w.salience,
                    reason,
                    tier,
                    focus,
                    precomputed(hits) if hits else None,
                    excerpts=excerpts,
                    focused_cap=cap,
                )
            )
        candidates.sort(key=lambda c: (-c.salience, c.path))
        return Offer(self.name, candidates, self.strategy, whole_if_it_fits=ctx.tier == Tier.FULL)


def _whole_tokens(ctx: AssemblyContext, entry: IndexedFile) -> int:
    """The file's whole count (made on first use); one that cannot be read counts as big."""
    try:
        return ctx.workspace.whole_tokens(entry, ctx.counter)
    except CtxError:
        return SMALL_FILE_TOKENS + 1
