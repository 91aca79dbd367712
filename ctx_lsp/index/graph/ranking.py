"""Ranking files for a request: PageRank whose random walk jumps either to the request's
seeds (its working files and the files defining the identifiers it mentions) or to any file.

PageRank is linear in where the walk jumps, so the result is the blend of two parts:

- the global part, kept between requests and, after a change, corrected by pushing the
  residual the change creates (Zhang, Lofgren and Goel, "Approximate personalized
  PageRank on dynamic graphs", KDD 2016): an edit costs its neighbourhood, not a rebuild;
- the personal part, computed per request by forward push from the seeds (Andersen, Chung
  and Lang, FOCS 2006): its work is bounded by 1 / ((1 - DAMPING) x threshold) edge
  visits whatever the size of the repository. The mass it leaves unpushed is spread the
  way the global walk spreads, rather than dropped (see `PERSONAL_TOLERANCE`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from ctx_lsp.index.graph.edges import Edges
from ctx_lsp.relevance import (
    DAMPING,
    GLOBAL_TOLERANCE,
    MAX_DEFINERS,
    MENTIONED_SHARE,
    PERSONAL_SHARE,
    PERSONAL_TOLERANCE,
)

__all__ = ["DefinitionRank", "FileRank", "PageRank", "RankCache", "RankResult", "Row", "Seeds", "push", "seeds"]


@dataclass(frozen=True, slots=True)
class FileRank:
    abs_path: str
    path: str
    score: float  # in [0, 1]


@dataclass(frozen=True, slots=True)
class DefinitionRank:
    abs_path: str
    path: str
    qualname: str
    name: str
    kind: str
    line: int
    score: float  # in [0, 1], at most its file's score
    mentioned: bool = False  # its name is one the request mentioned


@dataclass(frozen=True, slots=True, eq=False)
class RankResult:
    """Files and definitions ranked for one request, best first (ties by path, then line).

    Scores are normalised so that the best file that is not a working file scores 1;
    working files score 1 too (they are what the request is about). `mentioned_in` says
    which mentioned names made a file a seed, for the reason shown to the user.
    """

    files: tuple[FileRank, ...]  # the best `limit` files
    scores: Mapping[str, float]  # abs_path -> score, for every file of the graph
    definitions: tuple[DefinitionRank, ...]  # of the best `definition_files` files
    working: Mapping[str, float]  # working files of the graph -> weight (summing to 1)
    mentioned_in: Mapping[str, tuple[str, ...]]  # abs_path -> mentioned names it defines

    def score(self, abs_path: str) -> float:
        return self.scores.get(abs_path, 0.0)


Row = tuple[tuple[int, ...], tuple[float, ...]]
"""A file's out-edges as the walk sees them: target node ids (in path order) and
probabilities. The walk is the hot loop of every request, and on ids and lists it runs in
about 60 % of the time it takes on paths and dicts (measured on Django); a plain tuple,
not a NamedTuple, because `zip(*row)` and `rows[u]` unpacking are all it needs."""

_NO_ROW: Row = ((), ())


def push(
    rows: Sequence[Row],
    p: list[float],
    r: list[float],
    start: Iterable[int],
    threshold: float,
    per_edge: bool,
) -> int:
    """Forward push from the nodes `start` until no residual exceeds the threshold;
    returns the edge visits (the work done).

    Invariant, kept by every push: p + PageRank(r) is the PageRank of the jump vector the
    residuals started as. Pushing u moves (1 - DAMPING) of its residual into p[u] and
    spreads the rest along its edges. A node without edges keeps its share and loses the
    rest (a "leaky" walk: normalised, it is PageRank whose dead ends jump as the walk
    does). With `per_edge` the threshold scales with the out-degree (Andersen-Chung-Lang),
    which bounds the work however the mass spreads. Negative residuals (corrections after
    an edit) are pushed like positive ones. Order is first in, first out, so results do
    not depend on how ids were assigned, only on the rows.
    """
    keep = 1.0 - DAMPING
    queued = bytearray(len(rows))
    todo: deque[int] = deque()
    for u in start:
        if not queued[u]:
            queued[u] = 1
            todo.append(u)
    visits = 0
    while todo:
        u = todo.popleft()
        queued[u] = 0
        ru = r[u]
        targets, probs = rows[u]
        if abs(ru) <= (threshold * len(targets) if per_edge and targets else threshold):
            continue
        r[u] = 0.0
        p[u] += keep * ru
        spread = DAMPING * ru
        visits += len(targets)
        for v, q in zip(targets, probs):
            r[v] += spread * q
            if not queued[v]:  # tested against the threshold when it comes out
                queued[v] = 1
                todo.append(v)
    return visits


class Seeds(NamedTuple):
    """Where a request's personal jumps go, and why."""

    jump: dict[str, float]  # abs_path -> share of the personal jumps, summing to 1
    working: dict[str, float]  # working files of the graph -> weight, summing to 1
    mentioned_in: dict[str, tuple[str, ...]]  # seeded file -> mentioned names it answers to


def seeds(edges: Edges, personal: Mapping[str, float], mentioned: Collection[str]) -> Seeds:
    """A mentioned name seeds the files defining it and the modules named so
    (`expressions` -> `expressions.py`), sharing one name's weight among them."""
    facts, definers, stems = edges.facts, edges.definers, edges.modules.stems
    working = {f: float(w) for f, w in sorted(personal.items()) if f in facts and w > 0}
    total = sum(working.values())
    working = {f: w / total for f, w in working.items()}
    mention: dict[str, float] = {}
    mentioned_in: dict[str, list[str]] = {}
    for name in sorted({part for ident in mentioned for part in ident.split(".") if part}):
        files = sorted({*definers.get(name, ()), *stems.get(name, ())})
        if not files or len(files) > MAX_DEFINERS:
            continue
        for f in files:
            mention[f] = mention.get(f, 0.0) + 1.0 / len(files)
            mentioned_in.setdefault(f, []).append(name)
    share = MENTIONED_SHARE if working and mention else (1.0 if mention else 0.0)
    total = sum(mention.values())
    jump = {f: (1.0 - share) * w for f, w in working.items()}
    for f, w in mention.items():
        jump[f] = jump.get(f, 0.0) + share * w / total
    return Seeds(dict(sorted(jump.items())), working, {f: tuple(ns) for f, ns in mentioned_in.items()})


class RankCache(Protocol):
    """Where the global rank is kept between processes (`index/derived.py`), under a key
    that digests everything it is computed from."""

    def rank_key(self, paths: Sequence[str], rows: Sequence[Row], order: Sequence[int]) -> str: ...

    def load_rank(self, key: str, size: int) -> tuple[list[float], list[float]] | None: ...

    def save_rank(self, key: str, p: Sequence[float], r: Sequence[float]) -> None: ...


class PageRank:
    """The walk over the graph's files: node ids, rows, and the global part of the rank,
    kept in step with the edges between requests."""

    def __init__(self, cache: RankCache | None = None) -> None:
        self._cache = cache
        self.global_from_cache = False
        """The first global rank was read from the cache, not pushed (for tests)."""
        # node ids (list positions), rows as the global state last saw them, the global
        # push state (None until the first refresh)
        self._ids: dict[str, int] = {}
        self._paths: list[str] = []  # id -> abs_path; "" for a free id
        self._free_ids: list[int] = []
        self._rows: list[Row] = []
        self._global_p: list[float] | None = None
        self._global_r: list[float] = []
        self._order: list[int] = []  # ids of all files, by display path
        self.visits = 0
        """Edge visits of the last global refresh (for benchmarks and tests)."""

    def _row(self, edges: Edges, f: str, ids_in_path_order: bool = False) -> Row:
        """f's out-edges as (target ids, probabilities), targets in path order.

        `ids_in_path_order` says every id was given in path order (the first refresh), so
        sorting by id gives the same row far faster than comparing long paths: 1.47M edges
        at 20,000 files, ~0.5 s of a warm start."""
        out = edges.out.get(f)
        if not out:
            return _NO_ROW
        ids = self._ids
        total = sum(out.values())
        if ids_in_path_order:
            # Targets are distinct, so ordering positions by id alone gives the row that
            # sorting (id, weight) pairs gave, comparing ints instead of tuples: 8M edges
            # on the kernel, ~half of a warm start's rank refresh.
            targets = list(map(ids.__getitem__, out))
            weights = list(out.values())
            order = sorted(range(len(targets)), key=targets.__getitem__)
            return tuple([targets[i] for i in order]), tuple([weights[i] / total for i in order])
        pairs = [(ids[t], out[t]) for t in sorted(out)]
        return tuple([i for i, _ in pairs]), tuple([w / total for _, w in pairs])

    def _new_id(self, f: str) -> int:
        if self._free_ids:
            i = self._free_ids.pop()
            self._paths[i] = f
        else:
            i = len(self._paths)
            self._paths.append(f)
            self._rows.append(_NO_ROW)
            assert self._global_p is not None
            self._global_p.append(0.0)
            self._global_r.append(0.0)
        self._ids[f] = i
        return i

    def refresh(self, edges: Edges) -> None:
        """Bring the walk's rows and the global PageRank in line with the edges.

        A file whose row changed had already sent DAMPING / (1 - DAMPING) x p of mass
        along its old edges; its old targets give that back and its new ones receive it,
        and only that residual is pushed (Zhang-Lofgren-Goel). New files bring their own
        jump mass; removed files have no edges left, so what reached them goes nowhere.
        """
        facts = edges.facts
        stale_rows, nodes_changed = edges.take_row_changes()
        if self._global_p is None:
            paths = sorted(facts)
            self._ids = {f: i for i, f in enumerate(paths)}
            self._paths = paths
            self._rows = [self._row(edges, f, ids_in_path_order=True) for f in paths]
            self._order = sorted(range(len(paths)), key=lambda i: facts[paths[i]].path)
            key = self._cache.rank_key(paths, self._rows, self._order) if self._cache is not None else ""
            stored = self._cache.load_rank(key, len(paths)) if self._cache is not None else None
            if stored is not None:
                self._global_p, self._global_r = stored
                self.global_from_cache = True
                self.visits = 0
                return
            self._global_p = [0.0] * len(paths)
            self._global_r = [1.0] * len(paths)
            self.visits = push(self._rows, self._global_p, self._global_r, self._order, GLOBAL_TOLERANCE, False)
            if self._cache is not None:
                self._cache.save_rank(key, self._global_p, self._global_r)
            return
        if not (stale_rows or nodes_changed):
            self.visits = 0
            return
        p, r, rows, ids = self._global_p, self._global_r, self._rows, self._ids
        added: list[int] = []
        removed: list[str] = []
        if nodes_changed:
            added = [self._new_id(f) for f in sorted(facts) if f not in ids]
            removed = sorted(f for f in ids if f not in facts)
        for i in added:
            r[i] += 1.0
        touched: set[int] = set(added)
        sent_per_p = DAMPING / (1.0 - DAMPING)
        for f in sorted(stale_rows.union(removed)):
            row_id = ids.get(f)
            if row_id is None:  # came and went between two refreshes
                continue
            old_targets, old_probs = rows[row_id]
            new = self._row(edges, f) if f in facts else _NO_ROW
            sent = sent_per_p * p[row_id]
            if sent:
                for v, q in zip(old_targets, old_probs):
                    r[v] -= sent * q
                for v, q in zip(*new):
                    r[v] += sent * q
                touched.update(old_targets)
                touched.update(new[0])
            rows[row_id] = new
        for f in removed:
            i = ids.pop(f)
            p[i] = r[i] = 0.0
            self._paths[i] = ""
            self._free_ids.append(i)
            touched.discard(i)
        if nodes_changed:
            self._order = sorted(ids.values(), key=lambda i: facts[self._paths[i]].path)
        start = sorted(touched, key=self._paths.__getitem__)
        self.visits = push(rows, p, r, start, GLOBAL_TOLERANCE, False)

    def rank(self, edges: Edges, request: Seeds, limit: int) -> RankResult:
        """Score every file for the request, listing the best `limit`; definitions are left
        to `definitions.py`. The global part must be fresh (`refresh`)."""
        assert self._global_p is not None
        jump, working, mentioned_in = request
        facts = edges.facts
        n = len(facts)
        size = len(self._paths)
        if jump:
            p = [0.0] * size
            r = [0.0] * size
            for f, w in jump.items():
                r[self._ids[f]] = w
            push(self._rows, p, r, [self._ids[f] for f in jump], PERSONAL_TOLERANCE, True)
            # What the push left unspread keeps its own share where it is and spreads
            # the rest the way the global walk does, rather than being dropped.
            unspread = DAMPING * sum(r)
            weight = (1.0 - PERSONAL_SHARE + PERSONAL_SHARE * unspread) / n
            final = [g * weight for g in self._global_p]
            keep = PERSONAL_SHARE * (1.0 - DAMPING)
            for i in range(size):
                if p[i] or r[i]:
                    final[i] += PERSONAL_SHARE * p[i] + keep * r[i]
        else:
            weight = 1.0 / n
            final = [g * weight for g in self._global_p]
        working_ids = [self._ids[f] for f in working]
        for i in working_ids:
            final[i] = 0.0  # working files score 1 whatever; the best other file sets the scale
        top = max(final)
        # x / top is exactly 1 for the best file; working files were zeroed above.
        norm = [x / top for x in final] if top > 0.0 else [0.0] * size
        for i in working_ids:
            norm[i] = 1.0
        paths = self._paths
        scores = {paths[i]: norm[i] for i in self._order}
        # A stable sort of the ids in path order breaks ties by path.
        best = sorted(self._order, key=norm.__getitem__, reverse=True)[: max(limit, 0)]
        return RankResult(
            files=tuple(FileRank(paths[i], facts[paths[i]].path, norm[i]) for i in best),
            scores=scores,
            definitions=(),
            working=working,
            mentioned_in=mentioned_in,
        )
