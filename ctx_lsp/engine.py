"""The one facade every adapter calls: index, outline, search, bundle, status.

The LSP server, the CLI, the MCP server and the tests all go through `Engine`, so they
behave the same. It owns the workspace index, the search postings and the watcher, and
holds no pygls types: requests and results are the core's dataclasses.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ctx_lsp import __version__
from ctx_lsp.assembly.fit import Candidate, fit
from ctx_lsp.assembly.render import FORMATS
from ctx_lsp.assembly.result import BundleResult, Contribution, LineRange, Snapshot
from ctx_lsp.code.outline import Tier
from ctx_lsp.code.tiers import Rendering, render
from ctx_lsp.config import LoadedConfig, load
from ctx_lsp.errors import InvalidParam
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.scan import IgnoreRules
from ctx_lsp.index.search import SearchHit, SearchIndex
from ctx_lsp.index.watch import Watcher
from ctx_lsp.index.workspace import IndexStats, ProgressFn, Workspace
from ctx_lsp.tokens import TokenCounter, counter_for

log = logging.getLogger(__name__)

DEFAULT_BUDGET = 4000
"""DESIGN's budget for an agent with no entry in the agent table."""
DEFAULT_TIER = Tier.FOCUSED
SEARCH_CANDIDATE_FILES = 40
"""Files considered per bundle: beyond ~40, lower-ranked files never fit an 8K budget anyway."""
SEARCH_HITS = 200


@dataclass(frozen=True, slots=True)
class Focus:
    path: str
    line: int  # 0-based, as in LSP
    character: int = 0


@dataclass(frozen=True, slots=True)
class BundleRequest:
    """A validated `ctx/bundle` request (the adapters build it from raw params)."""

    query: str = ""
    agent: str = "default"
    budget: int | None = None
    tier: int | None = None
    focus: Focus | None = None
    open: tuple[str, ...] = ()
    format: str = "markdown"


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
    error: str | None
    events: int


@dataclass(frozen=True, slots=True)
class StatusReport:
    """Everything `ctx.status` and `ctx-lsp status` show."""

    version: str
    folders: tuple[str, ...]
    indexing: bool
    files_indexed: int
    files_by_language: dict[str, int]
    skipped: dict[str, int]
    too_large: tuple[str, ...]
    ignored_dirs: int
    problems: tuple[str, ...]
    symbols: int
    tokens: int  # exact, of code and markdown
    tokens_estimated: int  # chars/4 estimate of other text files
    tokenizer: str
    open_documents: int
    watcher: WatcherStatus
    cache: dict[str, Any]
    config: dict[str, Any]
    last_index: dict[str, Any]
    last_snapshot: Snapshot | None = None


@dataclass
class _Cache:
    renderings: dict[tuple[str, str, int, int, tuple[str, ...]], Rendering] = field(default_factory=dict)


class Engine:
    """Owns one workspace: index, search and (optionally) a watcher."""

    def __init__(self, roots: Sequence[Path | str], overrides: Mapping[str, Any] | None = None):
        paths = [Path(r) for r in roots]
        self.loaded: LoadedConfig = load(paths[0].resolve() if paths else None, overrides)
        self.workspace = Workspace(paths, self.loaded.config)
        self.search_index = SearchIndex()
        self.workspace.subscribe(self.search_index.update)
        self.watcher: Watcher | None = None
        self.last_snapshot: Snapshot | None = None
        self._reindex_lock = threading.Lock()

    @property
    def counter(self) -> TokenCounter:
        return counter_for(self.loaded.config.tokenizer)

    # ------------------------------------------------------------------ lifecycle
    def index(self, progress: ProgressFn | None = None, *, force: bool = False) -> IndexStats:
        with self._reindex_lock:
            return self.workspace.index(progress, force=force)

    def warm_up(self) -> None:
        """Build what the first request would otherwise wait for (search postings)."""
        self.search_index.catch_up()

    def start_watching(self, on_change=None) -> Watcher:
        if self.watcher is None:
            self.watcher = Watcher(self.workspace, on_change)
        if self.loaded.config.index.watch:
            self.watcher.start()
        return self.watcher

    def set_folders(self, roots: Sequence[Path | str]) -> None:
        self.workspace.set_folders([Path(r) for r in roots])
        if self.watcher is not None and self.watcher.state == "watching":
            self.watcher.restart()

    def reconfigure(self, overrides: Mapping[str, Any] | None) -> list[str]:
        """Apply new client settings; returns the warnings. Raises ConfigError on bad types."""
        root = self.workspace.roots[0]
        loaded = load(root, overrides)
        old = self.loaded.config
        self.loaded = loaded
        self.workspace.config = loaded.config
        if (old.index.ignore, old.index.max_file_bytes, old.tokenizer, old.index.respect_gitignore) != (
            loaded.config.index.ignore, loaded.config.index.max_file_bytes, loaded.config.tokenizer,
            loaded.config.index.respect_gitignore,
        ):
            for folder in self.workspace.folders:
                folder.rules = IgnoreRules(folder.root, loaded.config.index.ignore, loaded.config.index.respect_gitignore)
                if old.tokenizer != loaded.config.tokenizer and folder.store is not None:
                    folder.store.close()
                    folder.store = None
            self.index(force=old.tokenizer != loaded.config.tokenizer)
        return list(loaded.warnings)

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        self.workspace.close()

    # ------------------------------------------------------------------ documents
    def open_document(self, path: str, text: str, version: int) -> None:
        self.workspace.open_document(path, text, version)

    def close_document(self, path: str) -> None:
        self.workspace.close_document(path)

    # ------------------------------------------------------------------ queries
    def outline(self, path: str, tier: int = 1) -> OutlineResult:
        self.workspace.locate(path)  # refuse outside paths before waiting for anything
        self.workspace.indexed_once.wait()
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
        self.workspace.indexed_once.wait()
        return self.search_index.search(query, limit)

    def bundle(self, request: BundleRequest) -> BundleResult:
        """First assembly: working files first, then query hits, each at the richest tier that fits."""
        if request.format not in FORMATS:
            raise InvalidParam("format", f"unknown format {request.format!r}", "use 'markdown' or 'xml'")
        self.workspace.indexed_once.wait()
        started = time.perf_counter()
        budget = request.budget if request.budget is not None else DEFAULT_BUDGET
        tier = Tier(request.tier) if request.tier else DEFAULT_TIER
        counter = self.counter
        warnings: list[str] = []
        candidates: list[Candidate] = []
        seen: set[str] = set()

        working = list(request.open)
        if request.focus is not None:
            working.insert(0, request.focus.path)
        for overlay in self.workspace.overlay_paths():
            if overlay not in working:
                working.append(overlay)
        for i, path in enumerate(working):
            try:
                entry = self.workspace.get(path)
            except Exception as err:  # noqa: BLE001 - a bad working file is a warning, not a failure
                warnings.append(str(err))
                continue
            if entry.abs_path in seen:
                continue
            seen.add(entry.abs_path)
            focus_syms = _symbols_at(entry, request.focus.line + 1) if request.focus and i == 0 else ()
            why = "focus file" if focus_syms or (request.focus and i == 0) else "open in the editor"
            candidates.append(self._candidate(entry, "working_files", 1.0 - i * 0.01, why, tier, focus_syms))

        hits = self.search_index.search(request.query, SEARCH_HITS) if request.query.strip() else []
        ranked = rank_files(hits, wants_tests=_mentions_tests(request.query))
        top = ranked[0][1] if ranked else 1.0
        for abs_path, score, file_hits in ranked[:SEARCH_CANDIDATE_FILES]:
            entry = self.workspace.files.get(abs_path)
            if entry is None or abs_path in seen:
                continue
            seen.add(abs_path)
            symbols = tuple(dict.fromkeys(h.symbol for h in file_hits if h.symbol))[:5]
            terms = sorted({t for h in file_hits for t in h.matched})
            reason = f"matches {', '.join(terms[:6])}" + (f" in {', '.join(symbols[:3])}" if symbols else "")
            candidates.append(self._candidate(entry, "retrieval", score / top, reason, tier, symbols))

        title = f"Context for: {request.query.strip()}" if request.query.strip() else "Context"
        fitted = fit(candidates, budget, counter, title, request.format)
        contributions = []
        for name in ("working_files", "retrieval"):
            secs = [s for s in fitted.sections if s.contributor == name]
            contributions.append(
                Contribution(name, budget, sum(s.tokens for s in secs), len(secs),
                             sum(1 for c in fitted.condensations if any(c.startswith(s.path + ":") for s in secs)))
            )
        if not candidates:
            warnings.append("nothing matched: give a query or open files")
        snapshot = Snapshot(
            context_window_type="balanced",
            model_context_limit=None,
            output_reserve=0,
            available_budget=budget,
            total_used=fitted.total_tokens,
            utilization_pct=round(100.0 * fitted.total_tokens / budget, 1) if budget else 0.0,
            tokenizer=counter.name,
            contributions=tuple(contributions),
            condensations=tuple(fitted.condensations),
            warnings=tuple(warnings),
        )
        self.last_snapshot = snapshot
        log.debug("bundle in %.1f ms", (time.perf_counter() - started) * 1000)
        return BundleResult(
            sections=tuple(fitted.sections),
            text=fitted.text,
            total_tokens=fitted.total_tokens,
            budget=budget,
            snapshot=snapshot,
        )

    def _candidate(
        self, entry: IndexedFile, contributor: str, salience: float, reason: str, tier: Tier, focus: tuple[str, ...]
    ) -> Candidate:
        cache: dict[tuple[int, int], Rendering] = {}

        def rendering(t: Tier, cap: int) -> Rendering:
            key = (int(t), cap)
            if key not in cache:
                text, current = self.workspace.read_text(entry)
                cache[key] = render(current.path, text, current.outline, t, self.counter,
                                    focus=focus, cap_tokens=cap)
            return cache[key]

        return Candidate(
            id=f"{contributor}:{entry.path}",
            contributor=contributor,
            path=entry.path,
            uri=Path(entry.abs_path).as_uri(),
            salience=max(0.0, min(1.0, salience)),
            reason=reason,
            tier=tier,
            render=rendering,
        )

    # ------------------------------------------------------------------ status
    def status(self) -> StatusReport:
        ws = self.workspace
        files = ws.files
        by_lang = Counter(f.language for f in files.values())
        stats = ws.stats
        watcher = self.watcher
        return StatusReport(
            version=__version__,
            folders=tuple(str(r) for r in ws.roots),
            indexing=ws.indexing,
            files_indexed=len(files),
            files_by_language=dict(sorted(by_lang.items())),
            skipped=dict(sorted(stats.skipped.items())),
            too_large=tuple(stats.too_large[:50]),
            ignored_dirs=stats.ignored_dirs,
            problems=tuple(stats.problems),
            symbols=sum(f.symbols for f in files.values()),
            tokens=sum(f.tokens for f in files.values() if f.tokens_exact),
            tokens_estimated=sum(f.tokens for f in files.values() if not f.tokens_exact),
            tokenizer=self.counter.name,
            open_documents=len(ws.overlay_paths()),
            watcher=WatcherStatus(
                state=watcher.state if watcher else "off",
                error=watcher.error if watcher else None,
                events=watcher.events if watcher else 0,
            ),
            cache={
                "locations": [f.store.location for f in ws.folders if f.store is not None],
                "warnings": ws.cache_warnings(),
            },
            config={"sources": list(self.loaded.sources), "warnings": list(self.loaded.warnings)},
            last_index={
                "seconds": round(stats.last_index_s, 3),
                "parsed": stats.parsed,
                "reused": stats.reused,
            },
            last_snapshot=self.last_snapshot,
        )


TEST_FILE_FACTOR = 0.5
"""Tests match task words as well as the code they test; unless asked for, prefer the code."""
EXTRA_HIT_WEIGHT = 0.3
"""A file's further hits add 30 % each: several matching symbols beat one lucky name."""


def is_test_path(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return any(p in ("test", "tests", "testing") for p in parts[:-1]) or name.startswith("test_") or name.endswith(
        ("_test.py", "_tests.py", "conftest.py"))


def _mentions_tests(query: str) -> bool:
    return any(w in query.lower() for w in ("test", "pytest", "fixture"))


def rank_files(hits: Sequence[SearchHit], wants_tests: bool) -> list[tuple[str, float, list[SearchHit]]]:
    """Group symbol hits by file: best hit plus a share of the next ones, tests demoted."""
    by_file: dict[str, list[SearchHit]] = {}
    for hit in hits:
        by_file.setdefault(hit.abs_path, []).append(hit)
    ranked = []
    for abs_path, file_hits in by_file.items():
        scores = sorted((h.score for h in file_hits), reverse=True)
        score = scores[0] + EXTRA_HIT_WEIGHT * sum(scores[1:4])
        if not wants_tests and is_test_path(file_hits[0].path):
            score *= TEST_FILE_FACTOR
        ranked.append((abs_path, score, file_hits))
    ranked.sort(key=lambda r: (-r[1], r[2][0].path))
    return ranked


def _symbols_at(entry: IndexedFile, line: int) -> tuple[str, ...]:
    """The innermost symbol containing a 1-based line (the one under the cursor)."""
    containing = [s for s in entry.outline.symbols if s.start_line <= line <= s.end_line]
    if not containing:
        return ()
    innermost = max(containing, key=lambda s: (s.depth, s.start_line))
    return (innermost.qualname,)
