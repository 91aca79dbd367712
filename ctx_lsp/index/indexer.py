"""Bringing index entries in line with the disk: scanning, the SQLite cache, parsing.

The indexer works out what each file's entry should be and keeps the cache in step; it
never publishes an entry. The workspace applies its results, so one place swaps the
`files` mapping and tells listeners, whoever asked for the work.
"""

from __future__ import annotations

import enum
import gc
import logging
import multiprocessing
import os
import threading
import time
from collections import Counter, deque
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
    count_outcome,
    read_and_analyse,
    read_batch,
    to_indexed,
)
from ctx_lsp.index.folders import Folder, Folders, Location
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
MAX_REPORTED_PROBLEMS = 50

ProgressFn = Callable[[int, int, str], None]
"""progress(done, total, message) — called from the indexing thread."""


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
    ) -> tuple[dict[str, IndexedFile], IndexStats]:
        """Every indexed file of every folder, reusing `current` entries and cached rows
        whose size and mtime still match, except for `stale` paths (read since, and found
        changed: their size and mtime may match by chance)."""
        started = time.perf_counter()
        stats = IndexStats()
        out: dict[str, IndexedFile] = {}
        for folder in self._folders:
            try:
                self._index_folder(folder, current, stale, stats, out, progress, force)
            except Exception as err:  # one folder's failure (a bug included) is reported, not fatal
                log.exception("indexing %s failed", folder.root)
                stats.problems.append(
                    f"{folder.name}: indexing stopped by {type(err).__name__}: {err}; the other folders are indexed"
                )
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
    ) -> None:
        if progress:
            progress(0, 0, f"scanning {folder.root}")
        store = self._store(folder)
        stored = {} if force else store.load_all()
        root = str(folder.root)
        reused: dict[str, IndexedFile] = {}

        def decide(sf: ScannedFile) -> None:
            """Reuse what is known about a file found by the walk, or start reading it."""
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
                    return
                row = stored.get(sf.rel_path)
                if row is not None and row.size == sf.size and row.mtime_ns == sf.mtime_ns:
                    if row.language in UNINDEXED_LANGUAGES:
                        _count_unindexed(stats, row)
                        return
                    try:
                        reused[sf.abs_path] = to_indexed(row, root, sf.abs_path, display)
                        return
                    except Exception as err:
                        log.debug("cached outline for %s unreadable: %s", sf.rel_path, err)
            reading.add(self._job(folder, sf.abs_path, sf.rel_path))

        folder.rules.forget_all()
        with _Reading(self.config.tokenizer, self.config.index.workers) as reading:
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

            def store_batch(batch: Iterable[tuple[ReadJob, ReadOutcome]]) -> None:
                """Cache a batch's rows as it comes back: the writes overlap the parsing of
                the next ones instead of following the last."""
                fresh: list[StoredFile] = []
                touched: list[tuple[str, int, int]] = []
                for job, outcome in batch:
                    row = outcome.row
                    if row is None:
                        continue
                    old = stored.get(job.rel_path)
                    if row.language not in UNINDEXED_LANGUAGES and old is not None and old.hash == row.hash:
                        touched.append((row.rel_path, row.size, row.mtime_ns))
                    else:
                        fresh.append(row)
                store.put_many(fresh)
                store.touch_many(touched)

            outcomes = reading.finish(
                lambda done: progress and progress(total - to_read + done, total, "parsing"), store_batch
            )
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
            out[sf.abs_path] = to_indexed(row, root, sf.abs_path, self._folders.display_path(folder, sf.rel_path))
            stats.parsed += 1
        seen = {sf.rel_path for sf in scan.files}
        store.delete_many(p for p in stored if p not in seen)
        if progress:
            progress(total, total, "done")

    def _job(self, folder: Folder, abs_path: str, rel_path: str) -> ReadJob:
        return ReadJob(
            abs_path,
            rel_path,
            str(folder.root),
            self.config.index.max_file_bytes,
            folder.rules.secrets.content_check(rel_path),
        )

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
                outcome = read_and_analyse(self._job(folder, abs_path, rel), self.config.tokenizer)
                reason = outcome.skip_reason
                row = outcome.row
                if row is not None and row.language not in UNINDEXED_LANGUAGES:
                    if existing is not None and existing.hash == row.hash:
                        self._store(folder).touch_many([(rel, row.size, row.mtime_ns)])
                        return FileOutcome(
                            abs_path, Change.RESTAMPED, replace(existing, size=row.size, mtime_ns=row.mtime_ns)
                        )
                    self._store(folder).put_many([row])
                    entry = to_indexed(row, str(folder.root), abs_path, self._folders.display_path(folder, rel))
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

    Once enough files are waiting to pay for it (`PARALLEL_MIN_FILES`, or two when
    `index.workers` is set above one), a process pool starts and each batch goes to it as
    soon as it fills, so parsing overlaps the rest of the walk. Workers do not count
    tokens: this process loads the encoding while they parse (it need not be loaded before
    they fork, nor once per worker when they cannot fork) and counts each file exactly,
    once per content hash, as its batch comes back. Fewer files are read in this process,
    in order. On Django (2 cores) the workers parse ~5.2 s of CPU between them and this
    process counts ~1.3 s; with many more cores its counting would bound the pass.
    """

    def __init__(self, encoding: str, configured_workers: int):
        self._encoding = encoding
        self._configured = configured_workers
        self._jobs: list[ReadJob] = []
        self._queued = 0
        """Jobs handed to the pool so far (a prefix of `_jobs`)."""
        self._pool: ProcessPoolExecutor | None = None
        self._batches: deque[tuple[int, Future[list[ReadOutcome]]]] = deque()
        """(index of the first job, its batch's result), in the order submitted."""

    def __len__(self) -> int:
        return len(self._jobs)

    def __enter__(self) -> _Reading:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def add(self, job: ReadJob) -> None:
        self._jobs.append(job)
        if self._pool is None:
            workers = self._workers(len(self._jobs))
            if workers <= 1:
                return
            self._pool = ProcessPoolExecutor(workers, mp_context=_pool_context(), initializer=_worker_started)
        if len(self._jobs) - self._queued >= BATCH_FILES:
            self._submit()

    def finish(
        self,
        on_done: Callable[[int], object],
        on_batch: Callable[[list[tuple[ReadJob, ReadOutcome]]], object],
    ) -> dict[str, ReadOutcome]:
        """Every file's outcome, with exact token counts, by absolute path. `on_batch` gets
        them a batch at a time as they are ready, `on_done` the number done so far."""
        results: dict[str, ReadOutcome] = {}
        if self._pool is None:  # too few files for a pool to pay off
            for i, job in enumerate(self._jobs, 1):
                results[job.abs_path] = read_and_analyse(job, self._encoding)
                if i % BATCH_FILES == 0:
                    on_done(i)
            on_batch([(job, results[job.abs_path]) for job in self._jobs])
            return results
        self._submit()
        counter = counter_for(self._encoding)  # loads while the workers parse
        counted: dict[str, int] = {}
        done = 0
        while self._batches:  # popped as consumed: a batch's texts are freed once counted
            first, future = self._batches.popleft()
            batch = [
                (job, count_outcome(outcome, counter, counted))
                for job, outcome in zip(self._jobs[first:], future.result())
            ]
            for job, outcome in batch:
                results[job.abs_path] = outcome
            done += len(batch)
            on_batch(batch)
            on_done(done)
        return results

    def _submit(self) -> None:
        assert self._pool is not None
        while self._queued < len(self._jobs):
            batch = self._jobs[self._queued : self._queued + BATCH_FILES]
            self._batches.append((self._queued, self._pool.submit(read_batch, batch, None)))
            self._queued += len(batch)

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


def _pool_context() -> multiprocessing.context.BaseContext:
    """fork is cheapest (workers inherit the imported modules) but unsafe once other
    threads exist (a lock held at fork time stays held in the child); then use spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
