"""The workspace index: every indexed file of every workspace folder, kept current.

One object owns the state, so the server, the CLI and the tests drive it the same way:
`index()` for a full (cache-assisted) pass, `refresh()` for paths the watcher reports,
`open_document`/`change_document`/`close_document` for editor buffers, which override the
disk copy until they are closed.

Readers never take the lock: `files` is replaced, never mutated (copy on write), so a
bundle assembled in one thread sees a consistent index while the watcher updates another.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from ctx_lsp import __version__
from ctx_lsp.code.outline import outline_for
from ctx_lsp.config import Config
from ctx_lsp.errors import NotFound, OutsideWorkspace
from ctx_lsp.index.files import (
    BINARY_LANGUAGE,
    IndexedFile,
    ReadOutcome,
    analyse,
    content_hash,
    decode,
    read_and_analyse,
    read_batch,
    to_indexed,
)
from ctx_lsp.index.scan import IgnoreRules, ScannedFile, SkipReason, classify_file, scan_folder
from ctx_lsp.index.store import CACHE_DIR_NAME, IndexStore, StoredFile
from ctx_lsp.tokens import counter_for

log = logging.getLogger(__name__)

PARALLEL_MIN_FILES = 400
"""Below this many files to parse, a process pool costs more to start than it saves."""
BATCH_FILES = 64
"""Files per worker task: big enough to amortise pickling, small enough to balance load."""
MAX_AUTO_WORKERS = 4

ProgressFn = Callable[[int, int, str], None]
"""progress(done, total, message) — called from the indexing thread."""
ChangeListener = Callable[[Sequence[str], Sequence[IndexedFile]], None]
"""listener(removed_abs_paths, updated_files) — called after every index change."""


@dataclass
class Folder:
    """One workspace folder with its ignore rules and its cache."""

    root: Path
    name: str
    rules: IgnoreRules
    store: IndexStore | None = None


@dataclass
class IndexStats:
    """Counters status reports; replaced wholesale after each full pass."""

    skipped: Counter[str] = field(default_factory=Counter)
    too_large: list[str] = field(default_factory=list)
    ignored_dirs: int = 0
    problems: list[str] = field(default_factory=list)
    """Per-file problems (unreadable, unparsable), capped; the count is in `skipped`."""
    last_index_s: float = 0.0
    parsed: int = 0
    reused: int = 0


MAX_REPORTED_PROBLEMS = 50


class Workspace:
    def __init__(self, roots: Sequence[Path], config: Config):
        if not roots:
            raise ValueError("a workspace needs at least one folder")
        self.config = config
        self.folders: list[Folder] = []
        self._lock = threading.RLock()
        self.files: Mapping[str, IndexedFile] = {}
        self._overlays: dict[str, tuple[str, int]] = {}
        self._edit_times: dict[str, float] = {}
        self._listeners: list[ChangeListener] = []
        self.stats = IndexStats()
        self.indexing = False
        self.indexed_once = threading.Event()
        self.set_folders(roots)

    # ------------------------------------------------------------------ folders
    def set_folders(self, roots: Sequence[Path]) -> None:
        resolved = []
        for root in roots:
            r = Path(root).expanduser().resolve()
            if r not in resolved:
                resolved.append(r)
        names = [r.name or str(r) for r in resolved]
        with self._lock:
            old = {f.root: f for f in self.folders}
            self.folders = [
                old.get(r)
                or Folder(r, n, IgnoreRules(r, self.config.index.ignore, self.config.index.respect_gitignore))
                for r, n in zip(resolved, names)
            ]
            for root, folder in old.items():
                if root not in resolved and folder.store is not None:
                    folder.store.close()

    @property
    def roots(self) -> list[Path]:
        return [f.root for f in self.folders]

    def display_path(self, folder: Folder, rel: str) -> str:
        return rel if len(self.folders) == 1 else f"{folder.name}/{rel}"

    def locate(self, path: str | Path) -> tuple[Folder, str]:
        """Map a path to (folder, relative posix path); refuse anything outside the folders.

        Symlinks are resolved first, so a link pointing out of the workspace is refused too.
        """
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = self.folders[0].root / p
        try:
            real = Path(os.path.realpath(p))
        except (OSError, ValueError) as err:
            raise OutsideWorkspace(str(path)) from err
        for folder in sorted(self.folders, key=lambda f: len(str(f.root)), reverse=True):
            for candidate in (real, Path(os.path.normpath(p))):
                try:
                    rel = candidate.relative_to(folder.root)
                except ValueError:
                    continue
                if candidate is not real and not _inside(real, folder.root):
                    continue
                if rel.parts and rel.parts[0] == CACHE_DIR_NAME:
                    continue
                return folder, rel.as_posix()
        raise OutsideWorkspace(str(path))

    def subscribe(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    # ------------------------------------------------------------------ full pass
    def index(self, progress: ProgressFn | None = None, *, force: bool = False) -> IndexStats:
        """Bring the index in line with the disk; reuse the cache for unchanged files."""
        started = time.perf_counter()
        with self._lock:
            self.indexing = True
        try:
            stats = IndexStats()
            new_files: dict[str, IndexedFile] = {}
            for folder in self.folders:
                self._index_folder(folder, stats, new_files, progress, force)
            with self._lock:
                for abs_path in self._overlays:
                    if abs_path in new_files or abs_path in self.files:
                        overlay = self._overlay_entry(abs_path)
                        if overlay is not None:
                            new_files[abs_path] = overlay
                removed = [p for p in self.files if p not in new_files]
                changed = [f for p, f in new_files.items() if self.files.get(p) is not f]
                self.files = new_files
                stats.last_index_s = time.perf_counter() - started
                self.stats = stats
            self._notify(removed, changed)
            return stats
        finally:
            with self._lock:
                self.indexing = False
            self.indexed_once.set()

    def _open_store(self, folder: Folder) -> IndexStore:
        if folder.store is None:
            if self.config.index.cache:
                folder.store = IndexStore.open(folder.root, self.config.tokenizer, __version__)
            else:
                folder.store = IndexStore.memory()
        return folder.store

    def _index_folder(
        self,
        folder: Folder,
        stats: IndexStats,
        out: dict[str, IndexedFile],
        progress: ProgressFn | None,
        force: bool,
    ) -> None:
        if progress:
            progress(0, 0, f"scanning {folder.root}")
        scan = scan_folder(folder.root, folder.rules, self.config.index.max_file_bytes)
        stats.skipped.update(scan.skipped)
        stats.too_large += [self.display_path(folder, p) for p in scan.too_large]
        stats.ignored_dirs += scan.ignored_dirs
        store = self._open_store(folder)
        stored = {} if force else store.load_all()
        current = {abs_path: f for abs_path, f in self.files.items() if f.root == str(folder.root)}
        todo: list[ScannedFile] = []
        root = str(folder.root)
        total = len(scan.files)
        for sf in scan.files:
            known = current.get(sf.abs_path)
            if known is not None and known.size == sf.size and known.mtime_ns == sf.mtime_ns and not force:
                out[sf.abs_path] = known
                stats.reused += 1
                continue
            row = stored.get(sf.rel_path)
            if row is not None and row.size == sf.size and row.mtime_ns == sf.mtime_ns:
                if row.language == BINARY_LANGUAGE:
                    stats.skipped[SkipReason.BINARY] += 1
                    continue
                try:
                    out[sf.abs_path] = to_indexed(row, root, sf.abs_path, self.display_path(folder, sf.rel_path))
                    stats.reused += 1
                    continue
                except Exception as err:  # noqa: BLE001 - a bad cached row means re-parse
                    log.debug("cached outline for %s unreadable: %s", sf.rel_path, err)
            todo.append(sf)
        if progress:
            progress(total - len(todo), total, f"{len(todo)} files to parse")
        outcomes = self._read_all(todo, lambda done: progress and progress(total - len(todo) + done, total, "parsing"))
        fresh: list[StoredFile] = []
        touched: list[tuple[str, int, int]] = []
        for sf, outcome in zip(todo, outcomes):
            if outcome.row is not None and outcome.row.language == BINARY_LANGUAGE:
                fresh.append(outcome.row)
                stats.skipped[SkipReason.BINARY] += 1
                continue
            if outcome.row is None:
                stats.skipped[outcome.skip_reason or SkipReason.UNREADABLE] += 1
                if outcome.error and len(stats.problems) < MAX_REPORTED_PROBLEMS:
                    stats.problems.append(outcome.error)
                continue
            row = outcome.row
            old = stored.get(sf.rel_path)
            if old is not None and old.hash == row.hash:
                touched.append((row.rel_path, row.size, row.mtime_ns))
            else:
                fresh.append(row)
            out[sf.abs_path] = to_indexed(row, root, sf.abs_path, self.display_path(folder, sf.rel_path))
            stats.parsed += 1
        store.put_many(fresh)
        store.touch_many(touched)
        seen = {sf.rel_path for sf in scan.files}
        store.delete_many(p for p in stored if p not in seen)
        if progress:
            progress(total, total, "done")

    def _read_all(self, todo: list[ScannedFile], on_done: Callable[[int], object]) -> list[ReadOutcome]:
        encoding = self.config.tokenizer
        workers = self._worker_count(len(todo))
        jobs = [(f.abs_path, f.rel_path, f.size, f.mtime_ns) for f in todo]
        if workers <= 1:
            results = []
            for i, job in enumerate(jobs, 1):
                results.append(read_and_analyse(*job, encoding))
                if i % BATCH_FILES == 0:
                    on_done(i)
            return results
        counter_for(encoding)  # load once here: forked workers inherit it instead of each loading it
        batches = [jobs[i : i + BATCH_FILES] for i in range(0, len(jobs), BATCH_FILES)]
        results = []
        with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool:
            for batch_result in pool.map(read_batch, batches, [encoding] * len(batches)):
                results.extend(batch_result)
                on_done(len(results))
        return results

    def _worker_count(self, n_files: int) -> int:
        configured = self.config.index.workers
        if configured:
            return configured if n_files >= 2 else 1
        if n_files < PARALLEL_MIN_FILES:
            return 1
        return max(1, min(os.cpu_count() or 1, MAX_AUTO_WORKERS))

    # ------------------------------------------------------------------ incremental
    def refresh(self, paths: Iterable[str | Path]) -> tuple[list[str], list[IndexedFile]]:
        """Re-check the given paths (files or directories) against disk; for the watcher.

        Returns (removed, updated). A `.gitignore` among them re-reads that folder's rules
        and re-checks its directory, since it can hide or reveal any file below it.
        """
        removed: list[str] = []
        updated: list[IndexedFile] = []
        expanded: set[str] = set()
        for raw in paths:
            try:
                folder, rel = self.locate(raw)
            except OutsideWorkspace:
                continue
            abs_path = str(folder.root / rel) if rel else str(folder.root)
            if os.path.basename(rel) == ".gitignore":
                rel_dir = os.path.dirname(rel)
                folder.rules.forget(rel_dir)
                expanded.update(self._paths_under(folder, rel_dir))
            if os.path.isdir(abs_path):
                expanded.update(self._paths_under(folder, rel))
            else:
                expanded.add(abs_path)
        for abs_path in sorted(expanded):
            result = self._refresh_one(abs_path)
            if result is None:
                continue
            if isinstance(result, str):
                removed.append(result)
            else:
                updated.append(result)
        if removed or updated:
            self._notify(removed, updated)
        return removed, updated

    def _paths_under(self, folder: Folder, rel_dir: str) -> set[str]:
        """Known files under a directory plus whatever a rescan of it finds now."""
        base = folder.root / rel_dir if rel_dir else folder.root
        prefix = str(base) + os.sep
        known = {p for p in self.files if p.startswith(prefix)}
        found: set[str] = set()
        if base.is_dir():
            scan = scan_folder(folder.root, folder.rules, self.config.index.max_file_bytes, start=rel_dir)
            found = {f.abs_path for f in scan.files}
        return known | found

    def _refresh_one(self, abs_path: str) -> str | IndexedFile | None:
        folder, rel = self.locate(abs_path)
        with self._lock:
            existing = self.files.get(abs_path)
            if abs_path in self._overlays:
                return None  # the editor buffer wins until didClose
        try:
            st = os.stat(abs_path)
        except OSError:
            st = None
        entry: IndexedFile | None = None
        if st is not None and not folder.rules.is_excluded(rel, False):
            scanned, _reason = classify_file(abs_path, rel, st, folder.root, self.config.index.max_file_bytes)
            if scanned is not None:
                if existing is not None and existing.size == st.st_size and existing.mtime_ns == st.st_mtime_ns:
                    return None
                outcome = read_and_analyse(abs_path, rel, st.st_size, st.st_mtime_ns, self.config.tokenizer)
                if outcome.row is not None and outcome.row.language != BINARY_LANGUAGE:
                    if existing is not None and existing.hash == outcome.row.hash:
                        self._open_store(folder).touch_many([(rel, outcome.row.size, outcome.row.mtime_ns)])
                        with self._lock:
                            self._replace(abs_path, _with_stat(existing, outcome.row))
                        return None
                    self._open_store(folder).put_many([outcome.row])
                    entry = to_indexed(outcome.row, str(folder.root), abs_path, self.display_path(folder, rel))
        if entry is None:
            if existing is None:
                return None
            self._open_store(folder).delete_many([rel])
            with self._lock:
                self._replace(abs_path, None)
            return abs_path
        with self._lock:
            self._replace(abs_path, entry)
        return entry

    def _replace(self, abs_path: str, entry: IndexedFile | None) -> None:
        files = dict(self.files)
        if entry is None:
            files.pop(abs_path, None)
        else:
            files[abs_path] = entry
        self.files = files

    # ------------------------------------------------------------------ editor buffers
    def open_document(self, path: str | Path, text: str, version: int, *, edited: bool = False) -> IndexedFile:
        """Track an editor buffer; `edited` marks a change (didChange), not just an open."""
        folder, rel = self.locate(path)
        abs_path = str(folder.root / rel)
        with self._lock:
            self._overlays[abs_path] = (text, version)
            if edited or abs_path not in self._edit_times:
                self._edit_times[abs_path] = time.monotonic() if edited else 0.0
            entry = self._overlay_entry(abs_path)
            assert entry is not None
            self._replace(abs_path, entry)
        self._notify([], [entry])
        return entry

    def change_document(self, path: str | Path, text: str, version: int) -> IndexedFile:
        """A didChange with the full new text (the server applies incremental edits)."""
        return self.open_document(path, text, version, edited=True)

    def buffers_by_recency(self) -> list[tuple[str, float]]:
        """Open buffers, most recently edited first; never-edited ones last (time 0)."""
        with self._lock:
            items = [(p, self._edit_times.get(p, 0.0)) for p in self._overlays]
        return sorted(items, key=lambda item: (-item[1], item[0]))

    def close_document(self, path: str | Path) -> None:
        folder, rel = self.locate(path)
        abs_path = str(folder.root / rel)
        with self._lock:
            had = self._overlays.pop(abs_path, None)
            self._edit_times.pop(abs_path, None)
            if had is not None:
                files = dict(self.files)
                files.pop(abs_path, None)  # force a re-read from disk
                self.files = files
        if had is not None:
            removed, updated = [], []
            result = self._refresh_one(abs_path)
            if isinstance(result, IndexedFile):
                updated.append(result)
            elif abs_path not in self.files:
                removed.append(abs_path)
            self._notify(removed, updated)

    def _overlay_entry(self, abs_path: str) -> IndexedFile | None:
        overlay = self._overlays.get(abs_path)
        if overlay is None:
            return None
        text, version = overlay
        folder, rel = self.locate(abs_path)
        data = text.encode("utf-8", errors="replace")
        row = analyse(rel, data, len(data), 0, counter_for(self.config.tokenizer))
        if row is None:  # an editor buffer is text by definition; treat NULs as text
            outline = outline_for(rel, data.replace(b"\x00", b" "))
            row = StoredFile(rel, len(data), 0, content_hash(data), outline.language,
                             counter_for(self.config.tokenizer).count(text), outline.line_count,
                             len(outline.symbols), False, "")
            return _overlay(to_indexed(row, str(folder.root), abs_path, self.display_path(folder, rel), outline), version)
        return _overlay(to_indexed(row, str(folder.root), abs_path, self.display_path(folder, rel)), version)

    # ------------------------------------------------------------------ reading
    def get(self, path: str | Path) -> IndexedFile:
        """The index entry for a path inside the workspace (NotFound if not indexed)."""
        folder, rel = self.locate(path)
        abs_path = str(folder.root / rel)
        entry = self.files.get(abs_path)
        if entry is None:
            raise NotFound(f"{self.display_path(folder, rel)} is not indexed (missing, ignored, binary or too large)")
        return entry

    def read_text(self, entry: IndexedFile) -> tuple[str, IndexedFile]:
        """The file's current text, and the entry that matches it.

        If the disk copy changed since it was indexed (the watcher has not caught up), the
        file is re-analysed now, so outline line numbers always match the text shown.
        """
        overlay = self._overlays.get(entry.abs_path)
        if overlay is not None:
            return overlay[0], entry
        try:
            with open(entry.abs_path, "rb") as fh:
                data = fh.read()
        except OSError as err:
            raise NotFound(f"{entry.path} could not be read: {err.strerror or err}") from err
        text, _ = decode(data)
        if content_hash(data) != entry.hash:
            refreshed = self._refresh_one(entry.abs_path)
            if isinstance(refreshed, IndexedFile):
                self._notify([], [refreshed])
                return text, refreshed
        return text, entry

    def overlay_paths(self) -> list[str]:
        return list(self._overlays)

    def _notify(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        for listener in self._listeners:
            try:
                listener(removed, updated)
            except Exception:  # noqa: BLE001 - a listener bug must not break indexing
                log.exception("index listener failed")

    def close(self) -> None:
        for folder in self.folders:
            if folder.store is not None:
                folder.store.close()
                folder.store = None

    def cache_warnings(self) -> list[str]:
        return [w for f in self.folders if f.store is not None for w in f.store.warnings]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _with_stat(entry: IndexedFile, row: StoredFile) -> IndexedFile:
    from dataclasses import replace

    return replace(entry, size=row.size, mtime_ns=row.mtime_ns)


def _overlay(entry: IndexedFile, version: int) -> IndexedFile:
    from dataclasses import replace

    return replace(entry, overlay_version=version)


def _pool_context() -> multiprocessing.context.BaseContext:
    """fork is cheapest (workers inherit the loaded encoding) but unsafe once other
    threads exist (a lock held at fork time stays held in the child); then use spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
