"""The repository's history as a file-level prior on retrieval's ranking (issue 22, item 4).

One call from `retrieval.retrieve`: the search ranking in, the same ranking with history
blended in out. History only adds: a file it says nothing about keeps its score, one it
says something about moves towards 1 (`relevance.HISTORY_BLEND`), and a few files the
task's words missed enter the ranking when they changed together with the seeds or were
changed by commits whose messages match the task.
"""

from __future__ import annotations

from dataclasses import replace

from ctx_lsp.contributors.base import AssemblyContext, RankedFile
from ctx_lsp.contributors.kinds import is_test_path, mentions_tests
from ctx_lsp.index.history_signals import HistoryScore
from ctx_lsp.relevance import HISTORY_BLEND, HISTORY_NEW_FILES, HISTORY_SEED_FILES, TEST_FILE_FACTOR


def history_prior(ctx: AssemblyContext, ranked: list[RankedFile]) -> dict[str, HistoryScore]:
    """abs path → what history says, seeded with the working files, else the best lexical hits."""
    if not ctx.history:
        return {}
    if ctx.working:
        seeds = {w.entry.abs_path: w.salience for w in ctx.working}
    else:
        seeds = {r.abs_path: r.lexical for r in ranked[:HISTORY_SEED_FILES]}
    return ctx.history.prior(ctx.query, seeds, frozenset(r.abs_path for r in ranked))


def with_history(ctx: AssemblyContext, ranked: list[RankedFile]) -> list[RankedFile]:
    """`ranked` with history's prior blended in, best first."""
    prior = history_prior(ctx, ranked)
    if not prior:
        return ranked
    out = []
    for r in ranked:
        h = prior.get(r.abs_path)
        if h is None:
            out.append(r)
            continue
        gain = HISTORY_BLEND * h.score * (1 - r.score)
        out.append(replace(r, score=r.score + gain, history=h.reason, history_gain=gain))
    found = {r.abs_path for r in ranked}
    wants_tests = mentions_tests(ctx.query)
    new = []
    for abs_path, h in prior.items():
        entry = ctx.workspace.files.get(abs_path)
        if abs_path in found or entry is None:
            continue
        gain = HISTORY_BLEND * h.score * (1.0 if wants_tests or not is_test_path(entry.path) else TEST_FILE_FACTOR)
        new.append(RankedFile(abs_path, entry.path, 0.0, gain, (), h.reason, gain))
    new.sort(key=lambda r: (-r.score, r.path))
    out.extend(new[:HISTORY_NEW_FILES])
    out.sort(key=lambda r: (-r.score, r.path))
    return out
