"""Bringing index entries in line with the disk: scanning, the SQLite cache, parsing.

The indexer works out what each file's entry should be and keeps the cache in step; it
never publishes an entry. The workspace applies its results, so one place swaps the
`files` mapping and tells listeners, whoever asked for the work.
"""

from __future__ import annotations

import concurrent.futures
import enum
import gc
import heapq
import logging
import multiprocessing
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from ctx_lsp import __version__
from ctx_lsp.code.outline import outline_for
from ctx_lsp.config import Config
from ctx_lsp.errors import OutsideWorkspace
from ctx_lsp.gate import Reason
from ctx_lsp.index.files import (
    UNINDEXED_LANGUAGES,
    IndexedFile,
    ReadJob,
    ReadOutcome,
    analyse_outline,
    content_hash,
    read_and_analyse,
    read_batch,
    to_indexed,
)
from ctx_lsp.index.folders import Folder, Folders, Location
from ctx_lsp.index.priorities import REST, IndexPriorities
from ctx_lsp.index.scan import ScannedFile, SkipReason, classify_file, scan_folder
from ctx_lsp.index.secret_files import PRIVATE_KEY_KIND
from ctx_lsp.index.store import IndexStore, StoredFile
from ctx_lsp.tokens import counter_for

log = logging.getLogger(__name__)

PARALLEL_MIN_FILES = 400
"""Below this many files to parse, a process pool costs more to start than it saves."""
BATCH_FILES = 64
"""Files per worker task: big enough to amortise pickling, small enough to balance load."""
MAX_AUTO_WORKERS = 4
INFLIGHT_PER_WORKER = 2
"""Batches handed to each worker ahead of time: enough to keep it busy while this process
counts and stores, few enough that a file a request names now is parsed a batch or two
later, not after every file the walk found before it."""
PUBLISH_INTERVAL_S = 1.0
"""How often a long first index hands what it has so far to the workspace, so requests
are answered from it (each publish copies the file map: ~5 ms at 85,000 files)."""
PUBLISH_MIN_PARSED = PARALLEL_MIN_FILES
"""A pass parsing fewer files than this publishes nothing before it ends."""
MAX_REPORTED_PROBLEMS = 50

ProgressFn = Callable[[int, int, str], None]
"""progress(done, total, message) — called from the indexing thread."""
PublishFn = Callable[[list[IndexedFile]], None]
"""publish(entries) — entries ready during a full pass, before it ends (indexing thread)."""


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """How far a full pass is, for status and for requests answered meanwhile. Replaced
    whole by the indexing thread, read without a lock."""

    running: bool
    done: int
    """Files whose entries are ready (reused or parsed)."""
    total: int
    """Files found so far (final once the walk is over)."""
    phase: str
    """starting | scanning (the walk is still finding files) | parsing | finishing (every file
    read; the entries are being swapped in) | done"""


@dataclass
class IndexStats:
    """Counters status reports; replaced wholesale after each full pass."""

    skipped: Counter[str] = field(default_factory=Counter)
    too_large: list[str] = field(default_factory=list)
    ignored_dirs: int = 0
    problems: list[str] = field(default_factory=list)
    """Per-file problems (unreadable, unparsable), capped; the count is in `skipped`."""
    secret_kinds: Counter[str] = field(default_factory=Counter)
    """Files kept out as secrets, by kind: by name (`secret_files.NAME_KINDS`) or by
    content (`secret_files.credential_kind`). Never by path."""
    last_index_s: float = 0.0
    parsed: int = 0
    reused: int = 0
    """Rows whose size and mtime matched the cache: not even read."""
    by_content: int = 0
    """Files read again whose content the cache had analysed (a branch switched back, a
    file touched or moved): not parsed."""


class Change(enum.Enum):
    """What one file's disk state means for its index entry."""

    UNCHANGED = "unchanged"
    RESTAMPED = "restamped"
    """Same content, new size or mtime: replace the entry quietly (listeners derive
    nothing from stat data)."""
    UPDATED = "updated"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class FileOutcome:
    abs_path: str
    change: Change
    entry: IndexedFile | None = None
    """The entry to hold from now on; set exactly for RESTAMPED and UPDATED."""
    refused: str | None = None
    """For an indexed file REMOVED because it is no longer one that may be read: why
    (`outside`, `not_a_file`, `changed`); status lists it."""


REFUSALS = frozenset({Reason.OUTSIDE, Reason.NOT_A_FILE, Reason.CHANGED, SkipReason.SYMLINK_OUTSIDE})
"""Reasons an indexed file left the index that status reports as a refusal (a file
deleted, ignored or grown too large is an ordinary change)."""


class Indexer:
    """Reads and parses files for the index, and keeps one cache per folder in step."""

    def __init__(self, folders: Folders, config: Config):
        self.config = config
        self._folders = folders
        self._stores: dict[Path, IndexStore] = {}
        self._stores_lock = threading.Lock()
        self.progress = IndexProgress(False, 0, 0, "not started")
        self.cancelled = threading.Event()
        """Set to end a running full pass early (a one-shot CLI call that has answered):
        what is parsed is kept in the cache, nothing else is read."""

    def reconfigure(self, config: Config) -> None:
        old = self.config
        if (config.tokenizer, config.index.include_secrets) != (old.tokenizer, old.index.include_secrets):
            self.close_stores()  # reopened with the new key, which rebuilds them
        self.config = config

    # ------------------------------------------------------------------ the cache
    def _store(self, folder: Folder) -> IndexStore:
        with self._stores_lock:
            store = self._stores.get(folder.root)
            if store is None:
                if self.config.index.cache:
                    store = IndexStore.open(
                        folder.root, self.config.tokenizer, __version__, secrets=self.config.index.include_secrets
                    )
                else:
                    store = IndexStore.memory()
                self._stores[folder.root] = store
            return store

    def close_stores(self, roots: Iterable[Path] | None = None) -> None:
        """Close the caches of these folders (all if None); they reopen on next use."""
        with self._stores_lock:
            for root in list(self._stores) if roots is None else roots:
                store = self._stores.pop(root, None)
                if store is not None:
                    store.close()

    def opened_store(self, root: Path | None) -> IndexStore | None:
        """The cache already opened for this folder (the first folder's for None)."""
        if root is None:
            roots = self._folders.roots
            if not roots:
                return None
            root = roots[0]
        with self._stores_lock:
            return self._stores.get(root)

    def cache_locations(self) -> list[str]:
        return [s.location for s in self._stores.values()]

    def cache_warnings(self) -> list[str]:
        return [w for s in self._stores.values() for w in s.warnings]

    # ------------------------------------------------------------------ full pass
    def index(
        self,
        current: Mapping[str, IndexedFile],
        progress: ProgressFn | None,
        *,
        force: bool,
        stale: Collection[str],
        publish: PublishFn | None = None,
        priorities: IndexPriorities | None = None,
    ) -> tuple[dict[str, IndexedFile], IndexStats]:
        """Every indexed file of every folder, reusing `current` entries and cached rows
        whose size and mtime still match, except for `stale` paths (read since, and found
        changed: their size and mtime may match by chance).

        While files are parsed, `publish` gets the entries ready so far (reused and
        parsed alike) every `PUBLISH_INTERVAL_S`, so requests can be answered from a
        partial index; files are parsed in `priorities`' order."""
        started = time.perf_counter()
        stats = IndexStats()
        out: dict[str, IndexedFile] = {}
        self.progress = IndexProgress(True, 0, 0, "scanning")
        try:
            for folder in self._folders:
                try:
                    self._index_folder(folder, current, stale, stats, out, progress, force, publish, priorities)
                except Exception as err:  # one folder's failure (a bug included) is reported, not fatal
                    log.exception("indexing %s failed", folder.root)
                    stats.problems.append(
                        f"{folder.name}: indexing stopped by {type(err).__name__}: {err}; the other folders are indexed"
                    )
        finally:  # entries not swapped in yet: the caller says when the pass is done
            self.progress = IndexProgress(True, len(out), len(out), "finishing")
        stats.last_index_s = time.perf_counter() - started
        return out, stats

    def _index_folder(
        self,
        folder: Folder,
        current: Mapping[str, IndexedFile],
        stale: Collection[str],
        stats: IndexStats,
        out: dict[str, IndexedFile],
        progress: ProgressFn | None,
        force: bool,
        publish: PublishFn | None,
        priorities: IndexPriorities | None,
    ) -> None:
        if progress:
            progress(0, 0, f"scanning {folder.root}")
        store = self._store(folder)
        stored = {} if force else store.load_all()
        units_of, outline_of = store.units_of, store.outline_of  # one bound method for every entry
        root = str(folder.root)
        reused: dict[str, IndexedFile] = {}
        parsed: dict[str, IndexedFile] = {}
        unpublished: list[IndexedFile] = []
        before = len(out)  # files of the folders indexed before this one
        found = [0]
        last_publish = [time.monotonic()]

        def maybe_publish() -> None:
            """Hand what is ready to `publish` while many files are still to parse (a pass
            that reuses cached rows, or parses a few, is done before anyone would wait)."""
            if publish is None or not unpublished or len(reading) < PUBLISH_MIN_PARSED:
                return
            now = time.monotonic()
            if now - last_publish[0] < PUBLISH_INTERVAL_S:
                return
            last_publish[0] = now
            ready = list(unpublished)
            unpublished.clear()
            publish(ready)

        def decide(sf: ScannedFile) -> None:
            """Reuse what is known about a file found by the walk, or start reading it."""
            found[0] += 1
            self.progress = IndexProgress(True, before + len(reused) + len(parsed), before + found[0], "scanning")
            if sf.abs_path not in stale:
                display = self._folders.display_path(folder, sf.rel_path)
                known = current.get(sf.abs_path)
                if (
                    known is not None
                    and not force
                    and (known.root, known.path) == (root, display)
                    and _same_stat(known, sf.size, sf.mtime_ns)
                ):
                    reused[sf.abs_path] = known
                    unpublished.append(known)
                    return
                row = stored.get(sf.rel_path)
                if row is not None and row.size == sf.size and row.mtime_ns == sf.mtime_ns:
                    if row.language in UNINDEXED_LANGUAGES:
                        _count_unindexed(stats, row)
                        return
                    try:
                        entry = reused[sf.abs_path] = to_indexed(
                            row, root, sf.abs_path, display, None, units_of, outline_of
                        )
                        unpublished.append(entry)
                        return
                    except Exception as err:
                        log.debug("cached outline for %s unreadable: %s", sf.rel_path, err)
            reading.add(self._job(folder, sf.abs_path, sf.rel_path, by_content=not force))

        def store_batch(batch: Iterable[tuple[ReadJob, ReadOutcome]]) -> None:
            """Cache a batch's rows as it comes back (the writes overlap the parsing of the
            next ones instead of following the last), and make its entries."""
            fresh: list[StoredFile] = []
            known: list[tuple[str, int, int, str]] = []
            indexed: list[tuple[ReadJob, StoredFile, bool]] = []
            for job, outcome in batch:
                row = outcome.row
                if row is None:
                    continue
                if outcome.reused is not None:  # an analysis the cache holds: point the path at it
                    known.append((row.rel_path, row.size, row.mtime_ns, row.key))
                else:
                    fresh.append(row)
                if row.language not in UNINDEXED_LANGUAGES:
                    indexed.append((job, row, outcome.reused is not None))
            written = store.put_many(fresh)
            store.put_paths(known)
            for job, row, reused_row in indexed:  # written first: an entry reads its outline from the cache
                display = self._folders.display_path(folder, job.rel_path)
                entry = to_indexed(
                    row, root, job.abs_path, display, None, units_of, outline_of if written or reused_row else None
                )
                parsed[job.abs_path] = entry
                unpublished.append(entry)
            self.progress = IndexProgress(True, before + len(reused) + reading.done, before + found[0], "parsing")
            maybe_publish()

        folder.rules.forget_all()
        with _Reading(
            self.config.index.workers,
            store_batch,
            priorities,
            self.cancelled,
            lambda job, outcome: self._reuse(store, job, outcome),
        ) as reading:
            scan = scan_folder(folder.root, folder.rules, self.config.index.max_file_bytes, on_file=decide)
            stats.skipped.update(scan.skipped)
            stats.too_large += [self._folders.display_path(folder, p) for p in scan.too_large]
            stats.ignored_dirs += scan.ignored_dirs
            stats.problems += scan.problems
            stats.secret_kinds.update(scan.secret_kinds)
            total = len(scan.files)
            to_read = len(reading)
            if progress:
                progress(total - to_read, total, f"{to_read} files to parse")

            def parsing(done: int) -> None:
                self.progress = IndexProgress(True, before + total - to_read + done, before + total, "parsing")
                if progress:
                    progress(total - to_read + done, total, "parsing")

            outcomes = reading.finish(parsing)
        todo: list[ScannedFile] = []
        for sf in scan.files:  # path order, reused entries first, as the index has always held them
            entry = reused.get(sf.abs_path)
            if entry is not None:
                out[sf.abs_path] = entry
                stats.reused += 1
            elif sf.abs_path in outcomes:
                todo.append(sf)
        for sf in todo:
            outcome = outcomes[sf.abs_path]
            row = outcome.row
            if row is not None and row.language in UNINDEXED_LANGUAGES:
                _count_unindexed(stats, row)
                continue
            if row is None:
                stats.skipped[outcome.skip_reason or SkipReason.UNREADABLE] += 1
                if outcome.error and len(stats.problems) < MAX_REPORTED_PROBLEMS:
                    stats.problems.append(outcome.error)
                continue
            out[sf.abs_path] = parsed[sf.abs_path]
            if outcome.reused is not None:
                stats.by_content += 1
            else:
                stats.parsed += 1
        seen = {sf.rel_path for sf in scan.files}
        store.delete_many(p for p in stored if p not in seen)
        if not self.cancelled.is_set():
            store.forget_unreferenced()
        if progress:
            progress(total, total, "done")

    def _job(self, folder: Folder, abs_path: str, rel_path: str, by_content: bool = True) -> ReadJob:
        """A read of one file; `by_content` lets it reuse an analysis of the same content
        (not for a forced pass, which parses everything again)."""
        store = self._store(folder)
        return ReadJob(
            abs_path,
            rel_path,
            str(folder.root),
            self.config.index.max_file_bytes,
            folder.rules.secrets.content_check(rel_path),
            "" if store.location == ":memory:" or not by_content else store.location,
        )

    def _reuse(self, store: IndexStore, job: ReadJob, outcome: ReadOutcome) -> ReadOutcome:
        """The outcome of content the cache had analysed: its stored analysis as this
        path's row (and the reason an unindexed one is kept out); analysed here after all
        if the analysis is gone since the worker looked."""
        assert outcome.reused is not None
        key, size, mtime_ns = outcome.reused
        row = store.stored_analysis(key, job.rel_path, size, mtime_ns)
        if row is None:
            return read_and_analyse(job, known=lambda _key: False)
        reason = UNINDEXED_LANGUAGES.get(row.language)
        return ReadOutcome(row, reason, reused=outcome.reused)

    # ------------------------------------------------------------------ some paths
    def refresh(
        self,
        paths: Iterable[str | Path],
        current: Mapping[str, IndexedFile],
        *,
        skip: Collection[str] = (),
        forced: Collection[str] = frozenset(),
    ) -> list[FileOutcome]:
        """Re-check paths (files or directories) against disk; the changes, in path order.

        A `.gitignore` among them re-reads that folder's rules and re-checks its directory,
        since it can hide or reveal any file below it. `skip` are paths not to touch (open
        buffers); `forced` are re-read even when their size and mtime match.
        """
        outcomes = []
        for abs_path in sorted(self._targets(paths, current)):
            if abs_path in skip:
                continue
            outcome = self._check_path(abs_path, current.get(abs_path), abs_path in forced)
            if outcome.change is not Change.UNCHANGED:
                outcomes.append(outcome)
        return outcomes

    def _targets(self, paths: Iterable[str | Path], current: Mapping[str, IndexedFile]) -> set[str]:
        targets: set[str] = set()
        for raw in paths:
            if os.path.isabs(raw) and os.path.normpath(raw) in current:
                targets.add(os.path.normpath(raw))  # a file replaced by a link: its check drops it
            try:
                location = self._folders.locate(raw)
            except OutsideWorkspace:
                continue
            folder, rel = location.folder, location.rel
            if os.path.basename(rel) == ".gitignore":
                rel_dir = os.path.dirname(rel)
                folder.rules.forget(rel_dir)
                targets |= self._paths_under(folder, rel_dir, current)
            if os.path.isdir(location.abs_path):
                targets |= self._paths_under(folder, rel, current)
            else:
                targets.add(location.abs_path)
        return targets

    def _paths_under(self, folder: Folder, rel_dir: str, current: Mapping[str, IndexedFile]) -> set[str]:
        """Known files under a directory plus whatever a rescan of it finds now."""
        base = folder.root / rel_dir if rel_dir else folder.root
        prefix = str(base) + os.sep
        known = {p for p in current if p.startswith(prefix)}
        found: set[str] = set()
        if base.is_dir():
            scan = scan_folder(folder.root, folder.rules, self.config.index.max_file_bytes, start=rel_dir)
            found = {f.abs_path for f in scan.files}
        return known | found

    def _check_path(self, abs_path: str, existing: IndexedFile | None, force: bool) -> FileOutcome:
        try:
            location = self._folders.locate(abs_path)
        except OutsideWorkspace:
            location = None
        if location is not None and location.abs_path == abs_path:
            return self.check(location, existing, force=force)
        # Now a symlink (or under one): never indexed under this path.
        if existing is None:
            return FileOutcome(abs_path, Change.UNCHANGED)
        store = self._stores.get(Path(existing.root))
        if store is not None:
            store.delete_many([existing.rel_path])
        return FileOutcome(abs_path, Change.REMOVED, refused=Reason.OUTSIDE if location is None else None)

    def check(self, location: Location, existing: IndexedFile | None, *, force: bool = False) -> FileOutcome:
        """Compare one file on disk with its entry (None if not indexed); update the cache."""
        abs_path, folder, rel = location.abs_path, location.folder, location.rel
        try:
            st = os.stat(abs_path, follow_symlinks=False)
        except OSError:
            st = None
        entry: IndexedFile | None = None
        reason: str | None = None
        if st is not None and not folder.rules.is_excluded(rel, False):
            scanned, reason = classify_file(
                abs_path, rel, st, folder.root, self.config.index.max_file_bytes, folder.rules.secrets
            )
            if scanned is not None:
                if existing is not None and _same_stat(existing, st.st_size, st.st_mtime_ns) and not force:
                    return FileOutcome(abs_path, Change.UNCHANGED)
                store = self._store(folder)
                job = self._job(folder, abs_path, rel)
                outcome = read_and_analyse(job)
                if outcome.reused is not None:
                    outcome = self._reuse(store, job, outcome)
                reason = outcome.skip_reason
                row = outcome.row
                if row is not None and row.language not in UNINDEXED_LANGUAGES:
                    written = outcome.reused is not None or store.put_many([row])
                    if outcome.reused is not None:
                        store.put_paths([(rel, row.size, row.mtime_ns, row.key)])
                    if existing is not None and existing.hash == row.hash:
                        return FileOutcome(
                            abs_path, Change.RESTAMPED, replace(existing, size=row.size, mtime_ns=row.mtime_ns)
                        )
                    display = self._folders.display_path(folder, rel)
                    outline_of = store.outline_of if written else None
                    entry = to_indexed(row, str(folder.root), abs_path, display, None, store.units_of, outline_of)
        if entry is not None:
            return FileOutcome(abs_path, Change.UPDATED, entry)
        if existing is None:
            return FileOutcome(abs_path, Change.UNCHANGED)
        self._store(folder).delete_many([rel])
        refused = (Reason.OUTSIDE if reason == SkipReason.SYMLINK_OUTSIDE else reason) if reason in REFUSALS else None
        return FileOutcome(abs_path, Change.REMOVED, refused=refused)

    # ------------------------------------------------------------------ text not from the disk scan
    def analysed(self, location: Location, data: bytes, mtime_ns: int) -> IndexedFile:
        """An entry for text that is not (yet) in the index: an editor buffer, or a file
        read for rendering that changed since it was indexed. Stored nowhere."""
        counter = counter_for(self.config.tokenizer)
        display = self._folders.display_path(location.folder, location.rel)
        root = str(location.folder.root)
        analysis = analyse_outline(location.rel, data, len(data), mtime_ns, counter, location.abs_path)
        if analysis is not None:
            row, outline = analysis
            return to_indexed(row, root, location.abs_path, display, outline)
        # Binary by content; an editor buffer is text by definition, so NULs count as text.
        outline = outline_for(location.rel, data.replace(b"\x00", b" "))
        text = data.decode("utf-8", errors="replace")
        row = StoredFile(
            location.rel,
            len(data),
            mtime_ns,
            content_hash(data),
            outline.language,
            counter.count(text),
            outline.line_count,
            len(outline.symbols),
            False,
            "",
        )
        return to_indexed(row, root, location.abs_path, display, outline)


class _Reading:
    """The files one full pass reads and analyses, started while the walk still runs.

    Jobs wait in a queue ordered by `IndexPriorities.rank` (walk order within a rank) and
    are handed out a batch at a time, at most `INFLIGHT_PER_WORKER` batches a worker
    ahead, so a file a request names now is parsed within a batch or two, not after
    everything found before it. Once enough files are waiting to pay for it
    (`PARALLEL_MIN_FILES`, or two when `index.workers` is set above one), a process pool
    starts. Nobody counts whole files' tokens: that is done when a file is first shown
    (`Workspace.whole_tokens`; ~10 MB/s of tiktoken, 100 s of the kernel's cold index on
    one core, for counts most files never need). Batches are consumed as they complete
    (`on_batch`), once the walk is over (consuming during it made the kernel's 2 s walk
    take a minute, and files a request names were queued late), so what is parsed can be
    published while the rest is. Fewer files are read in this process, best first, a
    batch at a time.
    """

    def __init__(
        self,
        configured_workers: int,
        on_batch: Callable[[list[tuple[ReadJob, ReadOutcome]]], object],
        priorities: IndexPriorities | None = None,
        cancelled: threading.Event | None = None,
        resolve: Callable[[ReadJob, ReadOutcome], ReadOutcome] | None = None,
    ):
        self._resolve = resolve
        self._cancelled = cancelled or threading.Event()
        self._configured = configured_workers
        self._on_batch = on_batch
        self._priorities = priorities
        self._version = priorities.version if priorities is not None else 0
        self._queue: list[tuple[int, int, ReadJob]] = []
        """(rank, walk order, job): a heap, best first."""
        self._added = 0
        self._pool: ProcessPoolExecutor | None = None
        self._inflight: dict[Future[list[ReadOutcome]], list[ReadJob]] = {}
        self.results: dict[str, ReadOutcome] = {}
        self.done = 0

    def __len__(self) -> int:
        return self._added

    def __enter__(self) -> _Reading:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def add(self, job: ReadJob) -> None:
        rank = self._priorities.rank(job.abs_path, job.rel_path) if self._priorities is not None else REST
        heapq.heappush(self._queue, (rank, self._added, job))
        self._added += 1
        if self._pool is None:
            workers = self._workers(self._added)
            if workers <= 1:
                return
            self._pool = ProcessPoolExecutor(workers, mp_context=pool_context(), initializer=_worker_started)
            self._limit = workers * INFLIGHT_PER_WORKER
        if len(self._queue) >= BATCH_FILES:  # results wait for `finish`: the walk stays a walk
            self._submit(full_only=True)

    def finish(self, on_done: Callable[[int], object]) -> dict[str, ReadOutcome]:
        """Every file's outcome, with exact token counts, by absolute path; `on_batch` has
        had them a batch at a time as they were ready, `on_done` the number done so far."""
        if self._pool is None:  # too few files for a pool to pay off
            while self._queue and not self._cancelled.is_set():
                self._resort()
                batch = [heapq.heappop(self._queue)[2] for _ in range(min(BATCH_FILES, len(self._queue)))]
                self._consume(batch, [read_and_analyse(job) for job in batch])
                on_done(self.done)
            return self.results
        self._submit(full_only=False)
        while self._inflight:
            self._collect()
            if self._cancelled.is_set():
                for future in self._inflight:
                    future.cancel()
                break
            self._submit(full_only=False)
            on_done(self.done)
        return self.results

    def _submit(self, *, full_only: bool) -> None:
        assert self._pool is not None
        if self._cancelled.is_set():
            return
        self._resort()
        while self._queue and len(self._inflight) < self._limit:
            if full_only and len(self._queue) < BATCH_FILES:
                return
            batch = [heapq.heappop(self._queue)[2] for _ in range(min(BATCH_FILES, len(self._queue)))]
            self._inflight[self._pool.submit(read_batch, batch)] = batch

    def _collect(self) -> None:
        """Wait for a batch, and consume every batch that is ready."""
        if not self._inflight:
            return
        ready, _ = concurrent.futures.wait(self._inflight, return_when=concurrent.futures.FIRST_COMPLETED)
        for future in ready:
            self._consume(self._inflight.pop(future), future.result())

    def _consume(self, batch: list[ReadJob], outcomes: list[ReadOutcome]) -> None:
        resolve = self._resolve
        if resolve is not None:
            outcomes = [resolve(job, o) if o.reused is not None else o for job, o in zip(batch, outcomes)]
        pairs = list(zip(batch, outcomes))
        for job, outcome in pairs:
            self.results[job.abs_path] = outcome
        self.done += len(pairs)
        self._on_batch(pairs)

    def _resort(self) -> None:
        """Rank the queue again if what the first requests read has changed since."""
        priorities = self._priorities
        if priorities is None or priorities.version == self._version:
            return
        self._version = priorities.version
        self._queue = [(priorities.rank(job.abs_path, job.rel_path), seq, job) for _, seq, job in self._queue]
        heapq.heapify(self._queue)

    def _workers(self, n_files: int) -> int:
        """Pool size once `n_files` are waiting (1: no pool, yet)."""
        if self._configured:
            return self._configured if n_files >= 2 else 1
        if n_files < PARALLEL_MIN_FILES:
            return 1
        return max(1, min(os.cpu_count() or 1, MAX_AUTO_WORKERS))


def _worker_started() -> None:
    """A pool worker lives for one pass and drops each file's objects as it goes: the
    cyclic collector only adds its scans of the millions of nodes and rows allocated
    (5–10 % of the outline work on Django)."""
    gc.disable()


def _count_unindexed(stats: IndexStats, row: StoredFile) -> None:
    """A cached or fresh row that stands for a file kept out (binary, or a secret by content)."""
    reason = UNINDEXED_LANGUAGES[row.language]
    stats.skipped[reason] += 1
    if reason == SkipReason.SECRET:
        stats.secret_kinds[row.masked or PRIVATE_KEY_KIND] += 1


def _same_stat(entry: IndexedFile, size: int, mtime_ns: int) -> bool:
    return entry.size == size and entry.mtime_ns == mtime_ns


def pool_context() -> multiprocessing.context.BaseContext:
    """fork is cheapest (workers inherit the imported modules) but unsafe once other
    threads exist (a lock held at fork time stays held in the child); then use spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
