"""The one facade every adapter calls: index, outline, search, bundle, status.

The LSP server, the CLI, the MCP server and the tests all go through `Engine`, so they
behave the same. It owns the workspace index, the search postings and the watcher, and
holds no pygls types: requests and results are the core's dataclasses.
"""

from __future__ import annotations

import functools
import gc
import logging
import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ctx_lsp import __version__
from ctx_lsp.assembly import pipeline
from ctx_lsp.assembly.budget import plan_budget
from ctx_lsp.code.tiers import render
from ctx_lsp.config import LoadedConfig, load
from ctx_lsp.contributors.base import RenderCache
from ctx_lsp.errors import CtxError
from ctx_lsp.history.windowing import WindowResult, window_messages
from ctx_lsp.index.body_terms import body_index
from ctx_lsp.index.derived import DerivedCache
from ctx_lsp.index.files import CHARS_PER_TOKEN_ESTIMATE
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.history_loader import HistoryLoader
from ctx_lsp.index.history_signals import HistorySignals
from ctx_lsp.index.search import SearchHit, SearchIndex
from ctx_lsp.index.store import UnsafeCache, cache_file
from ctx_lsp.index.symbols import SymbolTable, lookup
from ctx_lsp.index.watch import Watcher
from ctx_lsp.index.workspace import IndexStats, ProgressFn, Refresh, Workspace
from ctx_lsp.tokens import TokenCounter, counter_for

if TYPE_CHECKING:  # imported where used: most processes (a CLI bundle) never read library docs
    from ctx_lsp.docs.library import DocsResult, LibraryDocs, LibraryMatch

from ctx_lsp.vocabulary import (
    BundleRequest,
    BundleResult,
    Explanation,
    Focus,
    LineRange,
    Snapshot,
    SymbolRequest,
    SymbolResult,
    Tier,
    WindowRequest,
)

__all__ = ["BundleRequest", "Engine", "Focus", "OutlineResult", "StatusReport", "SymbolRequest", "WindowRequest"]
"""The requests are re-exported: callers of the engine's Python API build them."""

log = logging.getLogger(__name__)

GC_YOUNG_THRESHOLD = 20_000
"""Allocations between young-generation collections once the engine is warm (see
`Engine.warm_up`); the default is 700."""


class Activity:
    """Whether requests are being answered, for background work that should wait for a
    pause (the watcher's reconcile): on 2 cores a scan in another thread takes half the
    interpreter from the requests of those moments (Django, LSP 8K: p50 30 -> 58 ms while
    the watcher's first reconcile ran)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._last_end = 0.0

    def __enter__(self) -> Activity:
        with self._lock:
            self._active += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._active -= 1
            self._last_end = time.monotonic()

    def busy(self) -> bool:
        """A request is running now (the history read steps aside while one does)."""
        with self._lock:
            return self._active > 0

    def serving(self) -> bool:
        """A request is running, or one ended less than REQUEST_PAUSE_S ago (an agent's
        requests come back to back)."""
        with self._lock:
            return self._active > 0 or time.monotonic() - self._last_end < REQUEST_PAUSE_S


REQUEST_PAUSE_S = 0.5

REQUEST_INDEX_WAIT_S = 0.5
"""How long a server's request waits for a first index before it is answered from what is
indexed so far: every request is answered within a second while a monorepo indexes."""
UNPUBLISHED_MAX_WAIT_S = 300.0
"""How long a first request waits past `index_wait_s` for a first index to publish any
file (the kernel's walk and first batches: ~3-5 s) or to end (a pass that parses fewer
than `PUBLISH_MIN_PARSED` files publishes only then: a warm start, ~15-30 s on the
kernel): answered empty only if neither came by then."""
FIRST_ANSWER_POLL_S = 0.05
CLI_INDEX_WAIT_S = 20.0
"""How long a one-shot CLI call waits for a first index before it answers from what is
indexed so far (the kernel's fresh clone: ~4 minutes to index on 2 cores)."""
CATCH_UP_INTERVAL_S = 3.0
"""While requests are answered from a partial index, how often the indexing thread brings
the search postings and the graph up to date with what it has parsed."""
CATCH_UP_CHUNK_FILES = 64
"""Files applied under one hold of a derived index's lock while a pass is answered from."""
CATCH_UP_STEP_ASIDE_MAX_S = 2.0
"""How long catching up waits, before each chunk, for requests being answered to end: on
2 cores beside the pass's workers, a request sharing the interpreter with the catch-up
got a third of it (a 7K-file kernel subtree: 2K bundles of 1.2 s of CPU took 2-10 s)."""
CATCH_UP_STEP_ASIDE_POLL_S = 0.02
INDEX_STOP_WAIT_S = 30.0
"""How long closing an engine waits for a stopped pass to put its last batches away."""

HISTORY_WAIT_S = 30.0
"""How long `wait_for_history` waits by default: the walk stops at its own 3 s budget
(`git_history.READ_BUDGET_S`), so this only bounds a stalled file system."""


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    name: str
    qualname: str
    kind: str
    signature: str
    doc: str
    range: LineRange


@dataclass(frozen=True, slots=True)
class OutlineResult:
    uri: str
    path: str
    tier: int
    tokens: int
    content: str
    truncated: bool
    symbols: tuple[SymbolInfo, ...]


@dataclass(frozen=True, slots=True)
class WatcherStatus:
    state: str
    """starting (watches not in place yet) | watching | polling (the native watcher failed) |
    stopped | failed | off"""
    error: str | None
    events: int
    reconciles: int = 0  # scans that brought the index in line after a storm or a failure
    lost_events: bool = False  # a storm or a failure may have dropped events (reconciled)


@dataclass(frozen=True, slots=True)
class StatusReport:
    """Everything `ctx.status` and `ctx-lsp status` show."""

    version: str
    folders: tuple[str, ...]
    indexing: Literal[False] | dict[str, Any]
    """false, or while a full pass runs `{done, total, phase}`: files ready so far (requests
    are answered from them), files found so far, and `scanning` | `parsing` | `starting`."""
    files_indexed: int
    files_by_language: dict[str, int]
    symbols_by_language: dict[str, int]
    syntax_errors: dict[str, int]
    """Files per language whose parse had errors: outlined from tree-sitter's recovery,
    so some of their definitions may be missing or cut."""
    skipped: dict[str, int]
    too_large: tuple[str, ...]
    ignored_dirs: int
    problems: tuple[str, ...]
    secrets: dict[str, dict[str, int]]
    """Never paths: `kept_out` counts the files left out as secrets by kind (by name or by
    content), `masked` the indexed files whose tokens are masked, by kind of token."""
    refused: dict[str, str]
    """Indexed files refused when read since the last index (path → reason): swapped for
    a link out of the workspace, a FIFO or a device, grown past the size limit."""
    symbols: int
    tokens: int
    """Exact, of the code and markdown files counted so far (a file is counted when first
    shown, not at indexing)."""
    tokens_estimated: int
    """Estimated (chars/4) for the rest: other text files, and code not counted yet."""
    tokenizer: str
    open_documents: int
    watcher: WatcherStatus
    cache: dict[str, Any]
    config: dict[str, Any]
    last_index: dict[str, Any]
    last_snapshot: Snapshot | None = None
    history: dict[str, Any] = field(default_factory=dict)
    """What the repository's history holds: `status` (commits read from which HEAD, or why
    none, or `reading…` while the first read runs in the background), `commits`, `read_s`,
    `reading`; a refused or broken repository is also under `problems`."""


def _indexing(workspace: Workspace) -> Literal[False] | dict[str, Any]:
    """Status's `indexing`: false, or how far the running pass is (not started is not done)."""
    progress = workspace.progress
    if not (progress.running or workspace.indexing):
        return False
    return {"done": progress.done, "total": progress.total, "phase": progress.phase}


def _yield_interpreter() -> None:
    time.sleep(0)  # let a waiting request take the lock (and the GIL)


class Engine:
    """Owns one workspace: index, search and (optionally) a watcher."""

    def __init__(
        self,
        roots: Sequence[Path | str],
        overrides: Mapping[str, Any] | None = None,
        *,
        history_in_background: bool = True,
    ):
        """`history_in_background=False` is for a one-shot process (the CLI's bundle): the
        history would rarely be read before its only request, and the read would take the
        interpreter from that request, so none starts unless `wait_for_history` asks; nor
        are whole files counted in the background after `warm_up`."""
        paths = [Path(r) for r in roots]
        self.loaded: LoadedConfig = load(paths[0].resolve() if paths else None, overrides)
        self.workspace = Workspace(paths, self.loaded.config)
        self.derived = DerivedCache(self.workspace.store_for)
        self.search_index = SearchIndex(self.derived)
        self.workspace.subscribe(self.search_index.update)
        self.body_index = body_index(self.derived.body_images)
        self.workspace.subscribe(self.body_index.update)
        self.watcher: Watcher | None = None
        self.last_snapshot: Snapshot | None = None
        self.last_explanation: Explanation | None = None
        self.renders = RenderCache()
        self._library_docs: LibraryDocs | None = None
        self._docs_lock = threading.Lock()
        self._docs_cache_warning = ""
        self.graph = ReferenceGraph(self.derived)
        self.workspace.subscribe(self.graph.update)
        self.symbols = SymbolTable()
        self.workspace.subscribe(self.symbols.update)
        self._answered_partial = threading.Event()
        self._partial_lock = threading.Lock()
        self._last_catch_up = 0.0
        self._published = threading.Event()
        """Set by a publish while requests are answered from a partial index."""
        """A request was answered from a partial index during the running first pass."""
        self.workspace.subscribe(self._catch_up_while_indexing)
        self._reindex_lock = threading.Lock()
        self.activity = Activity()
        self._history: HistoryLoader | None = None
        self._history_in_background = history_in_background
        self._index_thread: threading.Thread | None = None
        self.index_wait_s: float | None = None
        """How long a request waits for the first full pass before it is answered from
        the files indexed so far (None: until the pass ends; an in-process caller that
        indexed first never waits). A server sets `REQUEST_INDEX_WAIT_S`."""
        self._history_lock = threading.Lock()
        self._counting: threading.Thread | None = None
        self._stop_counting = threading.Event()
        self.on_settle_build: Callable[[str], None] | None = None
        """Called with "search", "body" or "graph" on the indexing thread while the end of
        a pass answered partially builds that image without the locks requests take
        (`_settle_piecewise`): a test holds it open to show that requests are answered."""

    @property
    def counter(self) -> TokenCounter:
        return counter_for(self.loaded.config.tokenizer)

    # ------------------------------------------------------------------ lifecycle
    def index(self, progress: ProgressFn | None = None, *, force: bool = False) -> IndexStats:
        with self._reindex_lock:
            self.workspace.partial.clear()
            self._answered_partial.clear()
            try:
                stats = self.workspace.index(progress, force=force)
                if self._answered_partial.is_set():
                    self._settle_piecewise()  # requests still hold off applying changes meanwhile
            finally:
                with self._partial_lock:  # a request setting the hold sees the pass over, or is undone here
                    self._hold_derived(False)
        if self._history_in_background:
            self.start_history()
        return stats

    def _catch_up_while_indexing(self, removed: Sequence[str], updated: Sequence[object]) -> None:
        """A workspace listener: once a request has been answered from a partial index,
        the search postings, the graph (with its rank) and the symbol table follow the
        pass on a thread of their own (`_follow_pass`), and queries hold off applying
        changes themselves: a request only ranks what is there, instead of deriving the
        files parsed since the last one. Not on the indexing thread: the pool's batches
        wait for it to consume them, and the derivation starved the workers (the kernel's
        first pass ran its two workers at a third of a core each)."""
        if self._answered_partial.is_set() and self.workspace.indexing:
            self._published.set()

    def _follow_pass(self) -> None:
        """Apply what a first pass publishes, at most every `CATCH_UP_INTERVAL_S`, until
        the pass ends (the pass's end packs and saves what was derived)."""
        workspace = self.workspace
        while workspace.indexing or not workspace.indexed_once.is_set():
            if not self._published.wait(CATCH_UP_INTERVAL_S):
                continue
            self._published.clear()
            wait = self._last_catch_up + CATCH_UP_INTERVAL_S - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                self._catch_up_derived(step_aside=True)
            except Exception:  # the next one tries again; requests still answer
                log.exception("following the first index failed")
            self._last_catch_up = time.monotonic()

    def _catch_up_derived(self, step_aside: bool = False) -> None:
        """Apply what the pass has published, a chunk at a time: requests take the same
        locks, and one holding them for seconds of derivation would make them wait."""
        pause = self._step_aside if step_aside else _yield_interpreter
        for derived in (self.search_index, self.body_index, self.graph, self.symbols):
            pause()
            if derived.empty:
                # All published so far at once: a pass that reuses most of the cache (a
                # branch switch) publishes tens of thousands of files first, restored
                # from the cache's images here rather than applied 64 at a time.
                derived.catch_up(force=True)
            while derived.catch_up(force=True, limit=CATCH_UP_CHUNK_FILES):
                pause()
        for index in (self.search_index, self.body_index):
            if index.fold_due:  # held, they leave their folds to this thread, made outside their locks
                index.fold()
        pause()
        self.graph.warm_up(force=True)  # the rank, with nothing left to apply

    def _step_aside(self) -> None:
        """Let the requests being answered finish first (at most CATCH_UP_STEP_ASIDE_MAX_S)."""
        deadline = time.monotonic() + CATCH_UP_STEP_ASIDE_MAX_S
        time.sleep(0)  # a request waiting for the lock (and the interpreter) takes it
        while self.activity.busy() and time.monotonic() < deadline:
            time.sleep(CATCH_UP_STEP_ASIDE_POLL_S)

    def _hold_derived(self, held: bool) -> None:
        for derived in (self.search_index, self.body_index, self.graph, self.symbols):
            derived.hold_changes(held)

    def _settle_piecewise(self) -> None:
        """A pass published piecewise: pack the postings built file by file and keep the
        images (postings, graph) the next process starts from.

        Requests keep answering meanwhile (on a 7K-file kernel subtree one waited 44 s
        here when this ran under their locks): queries still hold off applying changes,
        so what the pass published last is applied here a chunk at a time first; the
        images are built without the locks requests take and swapped in under them
        (`SearchIndex.fold`, `ReferenceGraph.compact`); then what came meanwhile (the
        watcher's refreshes) is applied the same way, before `index` lets requests apply
        changes again."""
        self._catch_up_derived()
        entries = list(self.workspace.files.values())
        hook = self.on_settle_build
        for name, derived in (("search", self.search_index), ("body", self.body_index), ("graph", self.graph)):
            derived.compact(entries, None if hook is None else functools.partial(hook, name))
        self._catch_up_derived()

    def warm_up(self) -> None:
        """Build what the first bundle would otherwise wait for: the search postings and the
        graph with its global rank (restored from the cache's images when they are there).

        The symbol table is left to the first `ctx/symbol`: it decodes every outline
        (~0.5 s on Django) and a bundle never reads it. Counts as a request: the history
        read started by `index` steps aside meanwhile."""
        with self.activity:
            self.search_index.catch_up()
            self.body_index.catch_up()
            self.graph.warm_up()
            _ = self.counter  # the encoding (~0.3 s): indexing no longer loads it
        self.workspace.release_units()  # the body index is built: units are read from the cache now
        # Outlines and postings are long-lived: keep them out of the collector's full passes,
        # which otherwise pause a request for ~100 ms on large workspaces.
        gc.freeze()
        # A bundle leaves ~17K container objects behind (its candidates and closures refer
        # to each other, so only the collector frees them). At the default threshold of
        # 700 that was ~24 young and 2 middle collections per bundle and a full one every
        # fifth (~43 ms each): 15 % of the CPU of 60 Django bundles, and their p95. At
        # 20,000: 6 %, and one full collection in 60 bundles.
        gc.set_threshold(GC_YOUNG_THRESHOLD, 10, 10)
        if self._history_in_background:
            self._count_in_background()

    def _count_in_background(self) -> None:
        """Count the whole files not counted yet, most-ranked first, in a worker process
        (with one core: in the pauses between requests; `index/whole_counts.py`): a
        bundle that may show a file whole needs its count, and after a cold index the
        first bundles paid for them (Django, 8K: p95 150 -> 250 ms). The cache keeps the
        counts, so this runs once per content."""
        if self._counting is not None and self._counting.is_alive():
            return
        workspace, counter = self.workspace, self.counter

        def run() -> None:
            ranks = self._file_ranks()
            entries = sorted(
                (e for e in workspace.files.values() if not e.tokens_counted),
                key=lambda e: (-ranks.get(e.abs_path, 0.0), e.abs_path),
            )
            try:
                counting = workspace.count_in_pool(entries)  # another process: the interpreter stays the requests'
                if counting is not None:
                    made = counting.finish(workspace.whole_counts.record, self._stop_counting)
                    workspace.whole_counts.learn(entries, made, counter)
                else:
                    stop = self._stop_counting
                    workspace.whole_counts.fill(entries, counter, busy=self.activity.busy, stopped=stop)
            except Exception:  # a bundle counts what it needs itself
                log.exception("counting whole files in the background failed")

        self._counting = threading.Thread(target=run, name="ctx-lsp-count", daemon=True)
        self._counting.start()

    def start_watching(self, on_change=None) -> Watcher:
        if self.watcher is None:
            self.watcher = Watcher(
                self.workspace, on_change, serving=self.activity.serving, idle_work=self.graph.prepare_for_changes
            )
        if self.loaded.config.index.watch:
            self.watcher.start()
        return self.watcher

    def set_folders(self, roots: Sequence[Path | str]) -> None:
        self.workspace.set_folders([Path(r) for r in roots])
        if self.watcher is not None and self.watcher.state in ("starting", "watching", "polling"):
            self.watcher.restart()

    def reconfigure(self, overrides: Mapping[str, Any] | None) -> list[str]:
        """Apply new client settings; returns the warnings. Raises ConfigError on bad types."""
        root = self.workspace.roots[0]
        loaded = load(root, overrides)
        self.loaded = loaded
        reindex = self.workspace.reconfigure(loaded.config)
        if reindex is not None:
            self.index(force=reindex.force)
        elif self._history_in_background:
            self.start_history()  # `history` may have been switched on
        return list(loaded.warnings)

    def index_in_background(self, wait_s: float, progress: ProgressFn | None = None) -> None:
        """Start the full pass in a thread and answer requests after at most `wait_s` from
        what is indexed by then: a one-shot call on a monorepo's fresh clone answers in
        seconds, and what it parsed stays in the cache for the next call."""
        self.index_wait_s = wait_s

        def run() -> None:
            try:
                self.index(progress)
            except Exception:
                log.exception("indexing failed")
                self.workspace.indexed_once.set()  # requests are answered, from what there is

        self._index_thread = threading.Thread(target=run, name="ctx-lsp-index", daemon=True)
        self._index_thread.start()

    def close(self) -> None:
        thread = self._index_thread
        if thread is not None and thread.is_alive():
            self.workspace.cancel_index()
            thread.join(INDEX_STOP_WAIT_S)
        self._stop_counting.set()
        if self._counting is not None:
            self._counting.join(INDEX_STOP_WAIT_S)
        if self.watcher is not None:
            self.watcher.stop()
        with self._history_lock:
            if self._history is not None:
                self._history.close()
        self.workspace.close()

    # ------------------------------------------------------------------ documents
    def open_document(self, path: str, text: str, version: int, edited: bool = False) -> None:
        entry = self.workspace.open_document(path, text, version, edited=edited)
        if not self.workspace.indexed_once.is_set():  # a first index parses it, its folder and imports first
            imports = entry.outline.imports  # `from pkg import mod` may import the module pkg/mod
            modules = [i.module for i in imports] + [f"{i.module}.{n}" for i in imports for n in i.names]
            self.workspace.priorities.note_working([entry.abs_path], modules)

    def close_document(self, path: str) -> None:
        self.workspace.close_document(path)

    def refresh(self, paths: Sequence[Path | str]) -> Refresh:
        """Re-check paths that changed on disk (the editor's didChangeWatchedFiles)."""
        return self.workspace.refresh(paths)

    @property
    def roots(self) -> list[Path]:
        return self.workspace.roots

    # ------------------------------------------------------------------ queries
    def outline(self, path: str, tier: int = 1) -> OutlineResult:
        location = self.workspace.servable(path, "uri")  # refuse outside paths and secrets before waiting
        self.workspace.priorities.note_working([location.abs_path])
        self.await_index()
        entry = self.workspace.get(path)
        text, entry = self.workspace.read_text(entry)
        r = render(entry.path, text, entry.outline, Tier(tier), self.counter)
        return OutlineResult(
            uri=Path(entry.abs_path).as_uri(),
            path=entry.path,
            tier=int(r.tier),
            tokens=r.tokens,
            content=r.content,
            truncated=r.truncated,
            symbols=tuple(
                SymbolInfo(s.name, s.qualname, s.kind, s.signature, s.doc, LineRange(s.start_line, s.end_line))
                for s in entry.outline.symbols
            ),
        )

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        return self.search_with_warnings(query, limit)[0]

    def search_with_warnings(self, query: str, limit: int = 20) -> tuple[list[SearchHit], tuple[str, ...]]:
        """ctx/search: the hits, and what the caller must know about them (answered from a
        partial index while the first one runs)."""
        self.workspace.priorities.note_task(query)
        warnings = self.await_index()
        with self.activity:
            return self.search_index.search(query, limit), warnings

    def await_index(self) -> tuple[str, ...]:
        """Wait for the first full pass, at most `index_wait_s` (None: until it ends), and
        say so when the answer must come from what is indexed so far.

        A monorepo's first index takes minutes, and an agent asks in the first seconds; a
        server answers within a second from the files ready (parsed first those the
        requests name: `IndexPriorities`), with a warning that says how far the index is.
        Once a first pass is done, later ones (a re-index) never make requests wait."""
        workspace = self.workspace
        # Once one request was answered from a partial index, the next ones do not wait:
        # the pass will not end within the wait, and every request pays it otherwise.
        wait = 0.0 if self._answered_partial.is_set() else self.index_wait_s
        if workspace.indexed_once.wait(wait):
            return ()
        # Nothing published yet (the walk, the first batches; or a pass that parses
        # little, which publishes only when it ends: a warm start reusing the cache): an
        # empty answer helps nobody, so wait for the first files or the pass's end. (A
        # warm start answered empty once the wait ran out, then followed its pass a
        # chunk at a time: on a loaded 2-core machine the kernel's next bundle timed out.)
        deadline = time.monotonic() + UNPUBLISHED_MAX_WAIT_S
        while not workspace.partial.is_set() and time.monotonic() < deadline:
            if workspace.indexed_once.wait(FIRST_ANSWER_POLL_S):
                return ()
        progress = workspace.progress
        with self._partial_lock:
            if not self._answered_partial.is_set():  # the first partial answer: derive what is there
                self._catch_up_derived()
                self._last_catch_up = time.monotonic()
                if workspace.indexing:
                    self._hold_derived(True)
                    threading.Thread(target=self._follow_pass, name="ctx-lsp-follow-index", daemon=True).start()
                self._answered_partial.set()
        return (
            f"indexing: {progress.done:,} of {progress.total:,} files ready so far ({progress.phase}); "
            "this answer holds only what is indexed so far: ask again when ctx.status says indexing is done",
        )

    def symbol(self, request: SymbolRequest) -> SymbolResult:
        """ctx/symbol: one symbol's code on demand (`index/symbols.py`). A path outside the
        workspace is refused before waiting for the index."""
        if request.path is not None:
            self.workspace.servable(request.path, "path")
            self.workspace.priorities.note_working([self.workspace.locate(request.path).abs_path])
        self.workspace.priorities.note_task(request.name.replace(".", " "))
        warnings = self.await_index()
        with self.activity:
            result = lookup(request, self.symbols, self.workspace, self.counter, self._file_ranks)
        return replace(result, warnings=warnings) if warnings else result

    def _file_ranks(self) -> Mapping[str, float]:
        """Every file's global graph rank (abs_path → [0, 1]): which of several definitions
        of a name the rest of the code leans on."""
        return self.graph.rank(limit=0, definition_files=0).scores

    def bundle(self, request: BundleRequest) -> BundleResult:
        """A budgeted bundle (the steps are in `assembly.pipeline`). The request is checked
        against the configuration before waiting for the index."""
        policy = pipeline.plan(request, self.loaded.config)
        working = []
        if request.focus is not None:
            working.append(self.workspace.servable(request.focus.path, "focus.uri").abs_path)
        for i, path in enumerate(request.open):
            working.append(self.workspace.servable(path, f"open[{i}]").abs_path)
        priorities = self.workspace.priorities
        priorities.note_working(working)
        if request.query:
            priorities.note_task(request.query)
        warnings = self.await_index()
        if warnings:
            policy = replace(policy, warnings=(*policy.warnings, *warnings))
        with self.activity:
            built = pipeline.build(request, policy, self.bundle_sources())
        self.workspace.save_counts()  # whole-file counts it made, for the next process
        self.last_snapshot = built.result.snapshot
        self.last_explanation = built.explanation
        return built.result

    def bundle_sources(self) -> pipeline.Sources:
        return pipeline.Sources(
            workspace=self.workspace,
            search=self.search_index,
            bodies=self.body_index,
            graph=self.graph,
            renders=self.renders,
            counter=self.counter,
            config=self.loaded.config,
            library_docs=lambda: self.library_docs,
            absolute=self._abs,
            history=self.history,
        )

    def history(self) -> HistorySignals | None:
        """The repository's history signals as far as they are read: None while the first
        read runs (a bundle ranks without history then), with `history = false`, or in a
        one-shot engine that was not asked to wait. Never waits; starts a read in the
        background when none was started or HEAD moved (`index/history_loader.py`)."""
        loader = self._history_loader(start=self._history_in_background)
        if loader is None:
            return None
        return loader.ready() if self._history_in_background else loader.state().signals

    def start_history(self) -> None:
        """Start reading the history in the background (after indexing); returns at once."""
        loader = self._history_loader(start=True)
        if loader is not None:
            loader.refresh()

    def wait_for_history(self, timeout: float = HISTORY_WAIT_S) -> bool:
        """Read HEAD's history if needed and wait up to `timeout` seconds for it: for a
        caller that must not rank without it (the eval measuring history, the CLI's
        `--wait-history`). True when it is ready, or history is off."""
        loader = self._history_loader(start=True)
        if loader is None:
            return True
        loader.wait(timeout)
        return not loader.state().reading

    def _history_loader(self, *, start: bool) -> HistoryLoader | None:
        """The loader for the workspace root (a new one after the root changed); None
        with `history = false`, or when none exists and `start` is false."""
        roots = self.workspace.roots
        if not self.loaded.config.history or not roots:
            return None
        root = os.path.realpath(roots[0])
        with self._history_lock:
            if self._history is not None and self._history.root != root:
                self._history.close()
                self._history = None
            if self._history is None and start:
                self._history = HistoryLoader(root, busy=self.activity.busy)
            return self._history

    # ------------------------------------------------------------------ docs & history
    @property
    def library_docs(self) -> LibraryDocs:
        """Created on first use: finding the environment costs a subprocess."""
        from ctx_lsp.docs.library import LibraryDocs

        with self._docs_lock:
            if self._library_docs is None:
                config = self.loaded.config
                root = self.workspace.roots[0]
                cache_db = None
                if config.index.cache:
                    try:
                        cache_db = cache_file(root, "docs.sqlite3")
                    except UnsafeCache as err:
                        self._docs_cache_warning = f"docs cache disabled: {err.strerror}"
                        cache_db = None
                    except OSError:
                        cache_db = None
                self._library_docs = LibraryDocs(
                    root,
                    self.counter,
                    interpreter=config.python.interpreter or None,
                    docs_folders=config.docs.folders,
                    read_roots=[*self.workspace.roots, *map(Path, self.loaded.trusted_folders)],
                    interpreter_trusted=self.loaded.trusted_interpreter,
                    require_topic=config.docs.require_topic,
                    allow_full_library=config.docs.allow_full_library,
                    cache_db=cache_db,
                )
            return self._library_docs

    def docs(
        self, library: str, topic: str | None, agent: str = "default", max_tokens: int | None = None
    ) -> DocsResult:
        """ctx/docs: a library's docs on a topic, capped at the agent's docs cap."""
        return self.library_docs.docs(library, topic, self.loaded.config.agent(agent).docs_cap, max_tokens)

    def resolve_library(self, name: str, limit: int = 10) -> list[LibraryMatch]:
        return self.library_docs.resolve(name, limit)

    def prewarm_docs(self, progress: ProgressFn | None = None) -> dict[str, Any]:
        """Parse and cache docs of the workspace's declared dependencies."""
        docs = self.library_docs
        declared = docs.declared_dependencies()
        warmed = docs.prewarm(declared, progress=progress, cap=self.loaded.config.agent("default").docs_cap)
        return {"declared": declared, "warmed": warmed}

    def window(self, request: WindowRequest) -> WindowResult:
        """ctx/window: the conversation alone, windowed at turn boundaries."""
        config = self.loaded.config
        wt = config.context_window_types[config.default_context_window_type]
        plan = plan_budget(
            budget=request.budget,
            model=request.model,
            utilization=request.utilization,
            agent_budget=config.agent("default").budget,
            output_reserve_pct=wt.output_reserve_pct,
            model_overrides=config.model_limits,
        )
        return window_messages(list(request.messages), plan.total, self.counter, summary=request.summary)

    def explain(self) -> Explanation:
        if self.last_explanation is None:
            raise CtxError("no bundle yet: ctx.explain describes the last ctx/bundle")
        return self.last_explanation

    def _abs(self, path: str) -> str:
        return self.workspace.locate(path).abs_path

    # ------------------------------------------------------------------ status
    def status(self) -> StatusReport:
        ws = self.workspace
        files = ws.files
        by_lang = Counter(f.language for f in files.values())
        symbols_by_lang: Counter[str] = Counter()
        errors_by_lang: Counter[str] = Counter()
        for f in files.values():
            if f.symbols:
                symbols_by_lang[f.language] += f.symbols
            if f.has_errors:
                errors_by_lang[f.language] += 1
        stats = ws.stats
        watcher = self.watcher
        loader = self._history_loader(start=False)
        state = loader.state() if loader is not None else None
        history = state.signals.history if state is not None and state.signals is not None else None
        history_problems = (f"history: {history.status}",) if history is not None and history.problem else ()
        if not self.loaded.config.history:
            history_status = "off (history = false)"
        elif state is None and self._history_in_background:
            history_status = "not read yet (read in the background once indexed)"
        elif state is None:
            history_status = "not read (a one-shot process reads it only when asked: bundle --wait-history)"
        else:
            history_status = state.status
        return StatusReport(
            version=__version__,
            folders=tuple(str(r) for r in ws.roots),
            indexing=_indexing(ws),
            files_indexed=len(files),
            files_by_language=dict(sorted(by_lang.items())),
            symbols_by_language=dict(sorted(symbols_by_lang.items())),
            syntax_errors=dict(sorted(errors_by_lang.items())),
            skipped=dict(sorted(stats.skipped.items())),
            too_large=tuple(stats.too_large[:50]),
            ignored_dirs=stats.ignored_dirs,
            problems=(*ws.problems(), *history_problems),
            secrets={
                "kept_out": dict(sorted(stats.secret_kinds.items())),
                "masked": dict(
                    sorted(Counter(k for f in files.values() if f.masked for k in f.masked.split(",")).items())
                ),
            },
            refused=ws.refused(),
            symbols=sum(f.symbols for f in files.values()),
            tokens=sum(f.tokens for f in files.values() if f.tokens_exact),
            tokens_estimated=sum(
                f.tokens if f.tokens_counted else math.ceil(f.size / CHARS_PER_TOKEN_ESTIMATE)
                for f in files.values()
                if not (f.tokens_exact and f.tokens_counted)
            ),
            tokenizer=self.loaded.config.tokenizer,  # the name: status must not load the encoding (~1 s)
            open_documents=len(ws.overlay_paths()),
            watcher=WatcherStatus(
                state=watcher.state if watcher else "off",
                error=watcher.error if watcher else None,
                events=watcher.events if watcher else 0,
                reconciles=watcher.reconciles if watcher else 0,
                lost_events=watcher.lost_events if watcher else False,
            ),
            cache={
                "locations": ws.cache_locations(),
                "warnings": [*ws.cache_warnings(), *filter(None, [self._docs_cache_warning])],
                "docs": self._library_docs.stats() if self._library_docs is not None else None,
            },
            config={
                "sources": list(self.loaded.sources),
                "warnings": list(self.loaded.warnings),
                # The agent table as configured (toml files and editor settings included):
                # what an editor's "bundle for agent…" picker offers.
                "agents": {
                    name: {"tier": a.tier, "budget": a.budget, "docs_cap": a.docs_cap}
                    for name, a in self.loaded.config.agents.items()
                },
            },
            last_index={
                "seconds": round(stats.last_index_s, 3),
                "parsed": stats.parsed,
                "reused": stats.reused,
                "reused_by_content": stats.by_content,
            },
            last_snapshot=self.last_snapshot,
            history={
                "status": history_status,
                "commits": len(history.commits) if history is not None else 0,
                "read_s": round(history.elapsed_s, 3) if history is not None else 0.0,
                "reading": state is not None and state.reading,
            },
        )
