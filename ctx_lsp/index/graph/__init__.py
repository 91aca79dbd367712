"""The cross-file reference graph: which code files use which, ranked for a request.

Nodes are code files of every language; an edge says one file uses names another
defines, or imports it. The jobs live in one module each, imports pointing down:

- `modules`: which names (dotted modules, or the keys a language gives its files) a file
  answers to, and which files an import reaches;
- `facts`: what the graph takes from an indexed file, and its symbol tables;
- `edges`: the files and weighted edges, kept current one change at a time;
- `ranking`: global PageRank kept incrementally, plus a per-request personal part;
- `definitions`: a ranked file's score shared among its definitions;
- `calls`: callers and callees, by matching called names against visible definitions.

`ReferenceGraph` composes them behind one lock. The tuned numbers are in
`ctx_lsp/relevance.py`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from ctx_lsp.index.changes import ChangeQueue
from ctx_lsp.index.collector import collector_paused
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.graph import calls, definitions
from ctx_lsp.index.graph.calls import SymbolRef
from ctx_lsp.index.graph.edges import Edges, GraphSnapshot, facts_of, name_factor, reference_units
from ctx_lsp.index.graph.facts import in_graph
from ctx_lsp.index.graph.image import GraphImage
from ctx_lsp.index.graph.modules import module_names, resolve_relative
from ctx_lsp.index.graph.ranking import DefinitionRank, FileRank, PageRank, RankCache, RankResult, push, seeds
from ctx_lsp.relevance import DEFINITION_FILES, DEFINITIONS_PER_FILE, FILES_LISTED

log = logging.getLogger(__name__)

EXPORT_ATTEMPTS = 3
"""Exports of the graph's image (`ReferenceGraph.compact`) tried before giving up, each
made void by a change applied while it ran."""

__all__ = [
    "DefinitionRank",
    "FileRank",
    "GraphCache",
    "GraphImage",
    "GraphSnapshot",
    "RankCache",
    "RankResult",
    "ReferenceGraph",
    "SymbolRef",
    "module_names",
    "name_factor",
    "push",
    "reference_units",
    "resolve_relative",
]


class GraphCache(RankCache, Protocol):
    """Where the graph and its global rank are kept between processes (`index/derived.py`)."""

    def load_graph(self) -> GraphImage | None:
        """The stored image, if it is intact and was derived the way this version derives."""
        ...

    def save_graph(self, image: GraphImage) -> None: ...


class ReferenceGraph:
    """Files, definitions, uses and imports of a workspace, kept current with its index.

    `update` only queues (it runs on the indexing thread, which must stay fast); every
    query first applies the queue (`catch_up`). One lock guards the state, so queries from
    worker threads and updates from the watcher interleave safely. (A second, tiny lock
    guards the queue alone, so `update` never waits for a query.)
    """

    def __init__(self, cache: GraphCache | None = None) -> None:
        self._lock = threading.Lock()
        self._changes = ChangeQueue()
        self._edges = Edges()
        self._cache = cache
        self._pagerank = PageRank(cache)
        self._hashes: dict[str, str] = {}
        """The content hash of the entry each file's state was last derived from (what
        an image records: the index's own entries may be ahead of the graph)."""
        self._generation = 0
        """Bumped under the lock by everything that changes the graph: an export made
        without the lock holds if it did not move meanwhile."""
        self.from_image = False
        """The graph was restored from the cache's image (for tests and benchmarks)."""

    @property
    def global_from_cache(self) -> bool:
        """The global rank was read from the cache rather than computed (for tests)."""
        return self._pagerank.global_from_cache

    @property
    def global_visits(self) -> int:
        """Edge visits of the last global refresh (for benchmarks and tests)."""
        return self._pagerank.visits

    def update(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        """Queue index changes (a workspace listener); the next query applies them.

        Queuing keeps a full index pass cheap: the graph of thousands of files is built
        once, when first needed, not on the thread that reports the index ready.
        """
        self._changes.add(removed, updated)

    def hold_changes(self, held: bool) -> None:
        """Queries stop (or resume) applying index changes: see `ChangeQueue.held`."""
        self._changes.held = held

    def catch_up(self, force: bool = False, limit: int | None = None) -> bool:
        """Apply queued changes (at most `limit`); whether there were any."""
        pending = self._changes.drain(force, limit)
        if pending:
            first = not self._edges.facts and len(pending) > 1 and all(e is not None for e in pending.values())
            # A file's facts read its outline (from the cache, decoded): taken before the
            # lock, which a request ranking files waits for (a first pass answered
            # partially applies a chunk of files every few seconds).
            known = None if first else facts_of(pending)
            with self._lock:
                self._generation += 1
                hashes = self._hashes
                for abs_path, entry in pending.items():
                    if entry is None:
                        hashes.pop(abs_path, None)
                    else:
                        hashes[abs_path] = entry.hash
                if known is None and not self._edges.facts:
                    with collector_paused():  # millions of acyclic objects at once (`collector.py`)
                        self._first_pass(pending)
                else:
                    self._edges.apply(pending, known if known is not None else facts_of(pending))
        return bool(pending)

    def _first_pass(self, pending: Mapping[str, IndexedFile | None]) -> None:
        """A full index pass into an empty graph: restore the cache's image and apply only
        what changed since it was taken; without one, build. Either way, leave an image of
        the result for the next process, unless nothing changed or editor buffers are in
        it (images are of what is on disk)."""
        entries = {f: e for f, e in pending.items() if e is not None and in_graph(e.language)}
        image = self._cache.load_graph() if self._cache is not None else None
        left: Mapping[str, IndexedFile | None] = pending
        if image is not None:
            left = self._edges.restore(image, entries)
            self.from_image = True
        if left:
            self._edges.apply(left)
        on_disk = all(e.overlay_version is None for e in entries.values())
        if self._cache is not None and left and on_disk:
            self._cache.save_graph(self._edges.export_image({f: e.hash for f, e in entries.items()}))

    def compact(self, entries: Sequence[IndexedFile], while_building: Callable[[], None] | None = None) -> None:
        """After a full pass that was published piecewise: keep an image of the graph it
        ended with for the next process (the first pass saved one of its first files).
        `entries` are the index's files now (an image is only kept of what is on disk);
        the caller applies the queued changes first, a few at a time.

        The export reads every fact and edge (seconds on a large workspace), so it runs
        without the lock requests take. A change applied meanwhile (`_generation` moved,
        or a container it iterated changed size) makes it an image of no state the graph
        was in: it is made again, at most `EXPORT_ATTEMPTS` times, else none is kept (the
        next process derives what differs from the last image kept). `while_building` is
        called before each export (a test holds it open there)."""
        if self._cache is None or any(e.overlay_version is not None for e in entries):
            return
        for _ in range(EXPORT_ATTEMPTS):
            with self._lock:
                if not self._edges.facts:
                    return
                seen = self._generation
            if while_building is not None:
                while_building()
            try:
                graph_image = self._edges.export_image(self._hashes)
            except (RuntimeError, KeyError):  # a dict resized, or an edge to a file come since
                continue
            with self._lock:
                if self._generation == seen:
                    break
        else:
            log.info("graph image not kept: changes kept coming while it was exported")
            return
        self._cache.save_graph(graph_image)

    def warm_up(self, force: bool = False) -> None:
        """Build or restore the graph and its global rank now (~0.3 s from the cache's
        images on Django, ~1.5 s without them), rather than in the first request after a
        full index pass. `force` applies changes queries are holding (`hold_changes`)."""
        self.catch_up(force)
        with self._lock:
            if self._edges.facts:
                with collector_paused():  # a first refresh builds a row per file
                    self._pagerank.refresh(self._edges)

    def prepare_for_changes(self) -> None:
        """Build the tables only changes need (a restored graph leaves them to its first
        change: ~0.1 s on Django, seconds at 20,000 files), so that the first edit's
        bundle does not wait for them. A server calls this in a pause between requests;
        the work runs outside the lock, so a request that comes meanwhile is not held up."""
        self.catch_up()
        with self._lock:
            if self._edges.prepared:
                return
            build = self._edges.tables_for_changes()
        tables = build()
        with self._lock:
            self._generation += 1
            self._edges.install(tables)

    def __len__(self) -> int:
        self.catch_up()
        return len(self._edges.facts)

    @property
    def empty(self) -> bool:
        """No file applied yet (queued changes not counted): the next catch-up of a full
        pass restores the cache's image or builds the graph at once (`_first_pass`)."""
        return not self._edges.facts

    def __contains__(self, abs_path: object) -> bool:
        self.catch_up()
        return abs_path in self._edges.facts

    def seeds(self, personal: Mapping[str, float], mentioned: Collection[str] = ()) -> dict[str, float]:
        """Where the personal jumps of a request go (abs_path -> share, summing to 1)."""
        self.catch_up()
        with self._lock:
            return seeds(self._edges, personal, mentioned).jump

    def rank(
        self,
        personal: Mapping[str, float] | None = None,
        mentioned: Collection[str] = (),
        *,
        limit: int = FILES_LISTED,
        definition_files: int = DEFINITION_FILES,
    ) -> RankResult:
        """Rank every file for a request. `personal` maps working files (abs paths) to
        weights; `mentioned` holds identifiers from the task text."""
        self.catch_up()
        with self._lock:
            if not self._edges.facts:
                return RankResult((), {}, (), {}, {})
            self._pagerank.refresh(self._edges)
            result = self._pagerank.rank(self._edges, seeds(self._edges, personal or {}, mentioned), limit)
            if definition_files > 0:
                chosen = [fr.abs_path for fr in result.files[:definition_files]]
                ranked = definitions.rank_definitions(self._edges, result, chosen, DEFINITIONS_PER_FILE)
                result = replace(result, definitions=ranked)
            return result

    def rank_definitions(
        self, result: RankResult, abs_paths: Iterable[str], per_file: int | None = None
    ) -> tuple[DefinitionRank, ...]:
        """The definitions of the given files (all of them, or the best `per_file` of
        each), scored for the request `result` answers, best first."""
        self.catch_up()
        with self._lock:
            known = [f for f in abs_paths if f in self._edges.facts]
            return definitions.rank_definitions(self._edges, result, known, per_file)

    def callees_of(self, abs_path: str, qualname: str) -> list[SymbolRef]:
        """The symbols the given symbol calls, by called name."""
        self.catch_up()
        with self._lock:
            return calls.callees_of(self._edges, abs_path, qualname)

    def callers_of(self, name: str, abs_path: str | None = None) -> list[SymbolRef]:
        """The symbols whose calls reach `name` (a qualname or a simple name; in `abs_path`
        only, if given), by path and line."""
        self.catch_up()
        with self._lock:
            return calls.callers_of(self._edges, name, abs_path)

    def snapshot(self) -> GraphSnapshot:
        self.catch_up()
        with self._lock:
            return self._edges.snapshot()

    def edge_weight(self, a: str, b: str) -> float:
        """Weight of the edge a -> b (0 if none), in uses of one plain name."""
        self.catch_up()
        with self._lock:
            return self._edges.weight(a, b)

    def imports_of(self, abs_path: str) -> list[str]:
        """The files a file's imports resolve to, sorted."""
        self.catch_up()
        with self._lock:
            return sorted(self._edges.import_targets.get(abs_path, ()))
