"""The one facade every adapter calls: index, outline, search, bundle, status.

The LSP server, the CLI, the MCP server and the tests all go through `Engine`, so they
behave the same. It owns the workspace index, the search postings and the watcher, and
holds no pygls types: requests and results are the core's dataclasses.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx_lsp import __version__
from ctx_lsp.activity import Activity
from ctx_lsp.assembly import pipeline
from ctx_lsp.assembly.budget import plan_budget
from ctx_lsp.code.tiers import render
from ctx_lsp.config import LoadedConfig, load
from ctx_lsp.contributors.base import RenderCache
from ctx_lsp.errors import CtxError
from ctx_lsp.first_pass import CLI_INDEX_WAIT_S, REQUEST_INDEX_WAIT_S, FirstPass
from ctx_lsp.history.windowing import WindowResult, window_messages
from ctx_lsp.index.body_terms import body_index
from ctx_lsp.index.derived import DerivedCache
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.history_loader import HistoryLoader
from ctx_lsp.index.history_signals import HistorySignals
from ctx_lsp.index.search import SearchHit, SearchIndex
from ctx_lsp.index.store import UnsafeCache, cache_file
from ctx_lsp.index.symbols import SymbolTable, lookup
from ctx_lsp.index.watch import Watcher
from ctx_lsp.index.workspace import IndexStats, ProgressFn, Refresh, Workspace
from ctx_lsp.status import StatusReport, WatcherStatus, file_counts, indexing_state
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

__all__ = [
    "CLI_INDEX_WAIT_S",
    "REQUEST_INDEX_WAIT_S",
    "BundleRequest",
    "Engine",
    "Focus",
    "OutlineResult",
    "StatusReport",
    "SymbolRequest",
    "WindowRequest",
]
"""The requests are re-exported: callers of the engine's Python API build them."""

log = logging.getLogger(__name__)

GC_YOUNG_THRESHOLD = 20_000
"""Allocations between young-generation collections once the engine is warm (see
`Engine.warm_up`); the default is 700."""


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
        self._reindex_lock = threading.Lock()
        self.activity = Activity()
        self.first_pass = FirstPass(
            self.workspace, (self.search_index, self.body_index), self.graph, self.symbols, self.activity
        )
        """How requests are answered while a first index runs (`first_pass.py`)."""
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

    @property
    def counter(self) -> TokenCounter:
        return counter_for(self.loaded.config.tokenizer)

    # ------------------------------------------------------------------ lifecycle
    def index(self, progress: ProgressFn | None = None, *, force: bool = False) -> IndexStats:
        with self._reindex_lock:
            self.first_pass.begin()
            try:
                stats = self.workspace.index(progress, force=force)
                self.first_pass.settle_if_followed()
            finally:
                self.first_pass.end()
        if self._history_in_background:
            self.start_history()
        return stats

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
        """Wait for the first full pass, at most `index_wait_s`, then answer from what is
        indexed so far (`FirstPass.await_index`); the warnings say so."""
        return self.first_pass.await_index(self.index_wait_s)

    @property
    def on_settle_build(self) -> Callable[[str], None] | None:
        """A hook a test holds the end of a partially answered pass with (`FirstPass`)."""
        return self.first_pass.on_settle_build

    @on_settle_build.setter
    def on_settle_build(self, hook: Callable[[str], None] | None) -> None:
        self.first_pass.on_settle_build = hook

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
        counts = file_counts(files.values())
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
            indexing=indexing_state(ws),
            files_indexed=len(files),
            files_by_language=counts.by_language,
            symbols_by_language=counts.symbols_by_language,
            syntax_errors=counts.syntax_errors,
            skipped=dict(sorted(stats.skipped.items())),
            too_large=tuple(stats.too_large[:50]),
            ignored_dirs=stats.ignored_dirs,
            problems=(*ws.problems(), *history_problems),
            secrets={
                "kept_out": dict(sorted(stats.secret_kinds.items())),
                "masked": counts.masked,
            },
            refused=ws.refused(),
            symbols=counts.symbols,
            tokens=counts.tokens,
            tokens_estimated=counts.tokens_estimated,
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
