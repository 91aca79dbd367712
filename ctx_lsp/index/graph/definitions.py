"""Definition ranks: each ranked file's score shared among its definitions for one request."""

from __future__ import annotations

from collections.abc import Sequence

from ctx_lsp.index.graph.edges import Edges, sqrt_units
from ctx_lsp.index.graph.ranking import DefinitionRank, RankResult
from ctx_lsp.relevance import UNREFERENCED_DEFINITION_SHARE, WORKING_REFERENCE_FACTOR

__all__ = ["rank_definitions"]


def rank_definitions(
    edges: Edges, result: RankResult, abs_paths: Sequence[str], per_file: int | None
) -> tuple[DefinitionRank, ...]:
    """Share each file's score among its definitions by how much they are used (by the
    working files above all): the best-used one gets the file's whole score. A
    definition the task mentions gets it too and comes first: it is what the task is
    about, used or not. Best first; all of a file's definitions, or its best `per_file`."""
    facts = edges.facts
    working_uses, mentioned = _request_facts(edges, result)
    floor = UNREFERENCED_DEFINITION_SHARE
    ranked: list[DefinitionRank] = []
    for f in abs_paths:
        definitions = edges.symbols(f).definitions
        names, factors, used_elsewhere = edges.definition_weights(f)
        weights: Sequence[float] = used_elsewhere
        if working_uses and f not in result.working:
            boosts = list(map(working_uses.get, names))
            if any(boosts):
                weights = [
                    s + WORKING_REFERENCE_FACTOR * k * u if u else s for s, k, u in zip(used_elsewhere, factors, boosts)
                ]
        best = max(weights, default=0.0)
        scale = (1.0 - floor) / best if best > 0.0 else 0.0
        named = [i for i, name in enumerate(names) if name in mentioned] if mentioned else []
        chosen: Sequence[int] = range(len(names))
        if per_file is not None and per_file < len(names):
            # stable, so equal weights keep source order; mentioned names go first
            by_weight = sorted(chosen, key=weights.__getitem__, reverse=True)
            chosen = (named + [i for i in by_weight if i not in named] if named else by_weight)[:per_file]
        score = result.scores.get(f, 0.0)
        path = facts[f].path
        for i in chosen:
            d = definitions[i]
            if named and i in named:
                ranked.append(DefinitionRank(f, path, d.qualname, d.name, d.kind, d.line, score, True))
            else:
                share = floor + weights[i] * scale
                ranked.append(DefinitionRank(f, path, d.qualname, d.name, d.kind, d.line, score * share))
    ranked.sort(key=lambda d: (-d.score, d.path, not d.mentioned, d.line, d.qualname))
    return tuple(ranked)


_last: list[tuple[Edges, RankResult, dict[str, float], set[str]]] = []
"""The request facts of the last (graph, result) asked about: a bundle ranks its files'
definitions one file at a time (~300 calls), and summing the working files' references
for each call cost ~8 ms of a Django bundle with an open file."""


def _request_facts(edges: Edges, result: RankResult) -> tuple[dict[str, float], set[str]]:
    """How much the working files use each name, and the names the task mentions."""
    last = _last[0] if _last else None
    if last is not None and last[0] is edges and last[1] is result:
        return last[2], last[3]
    facts = edges.facts
    working_uses: dict[str, float] = {}
    for f, w in result.working.items():
        if f in facts:
            for name, count in zip(facts[f].used, facts[f].uses):
                working_uses[name] = working_uses.get(name, 0.0) + w * sqrt_units(count)
    mentioned = {name for names in result.mentioned_in.values() for name in names}
    _last[:] = [(edges, result, working_uses, mentioned)]
    return working_uses, mentioned
