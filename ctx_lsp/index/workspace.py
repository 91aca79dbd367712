"""The workspace index: every indexed file of every workspace folder, kept current.

One object owns the state, so the server, the CLI and the tests drive it the same way:
`index()` for a full (cache-assisted) pass, `refresh()` for paths that changed on disk,
`open_document`/`change_document`/`close_document` for editor buffers, which override the
disk copy until they are closed. It composes the folders (what is inside), the indexer
(what an entry should be) and the overlays (editor buffers), and is the only one that
changes `files` and tells listeners.

Readers never take the lock: `files` is replaced, never mutated (copy on write), so a
bundle assembled in one thread sees a consistent index while the watcher updates another.
Reading never changes the index either (see `read_text`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctx_lsp.config import Config
from ctx_lsp.errors import CtxError, InvalidParam, NotFound, OutsideWorkspace
from ctx_lsp.gate import Reason, Refused, read_head
from ctx_lsp.index.files import IndexedFile, content_hash, decode
from ctx_lsp.index.folders import Folders, Location
from ctx_lsp.index.indexer import Change, FileOutcome, Indexer, IndexProgress, IndexStats, ProgressFn
from ctx_lsp.index.overlays import Buffer, Overlays
from ctx_lsp.index.priorities import IndexPriorities
from ctx_lsp.index.secret_files import credential_kind
from ctx_lsp.index.secret_tokens import mask_tokens_text
from ctx_lsp.index.store import IndexStore
from ctx_lsp.tokens import TokenCounter

log = logging.getLogger(__name__)

__all__ = ["ChangeListener", "IndexStats", "ProgressFn", "Refresh", "Reindex", "Workspace"]

MAX_REPORTED_REFUSALS = 50
MAX_KEPT_WHOLE_COUNTS = 200_000
"""Whole-file counts kept in memory (three small objects each); dropped all at once past it."""

ChangeListener = Callable[[Sequence[str], Sequence[IndexedFile]], None]
"""listener(removed_abs_paths, updated_files) — called after every index change, on the
thread that made it; it must not call back into `index` or `refresh`."""


@dataclass(frozen=True, slots=True)
class Refresh:
    """What a refresh changed: the paths that left the index, and the new entries."""

    removed: tuple[str, ...] = ()
    updated: tuple[IndexedFile, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.updated)


@dataclass(frozen=True, slots=True)
class Reindex:
    """New settings that the index depends on; the caller runs the full pass they need."""

    force: bool
    """Parse every file again (the tokenizer changed, so every cached count is stale)."""


class Workspace:
    def __init__(self, roots: Sequence[Path], config: Config):
        if not roots:
            raise ValueError("a workspace needs at least one folder")
        self._folders = Folders(
            roots,
            config.index.ignore,
            config.index.respect_gitignore,
            config.index.include_secrets,
            config.index.max_file_bytes,
        )
        self._indexer = Indexer(self._folders, config)
        self._overlays = Overlays()
        self._lock = threading.Lock()
        """Guards replacing `files` and the stale set; held briefly, never while reading disk."""
        self._update_lock = threading.Lock()
        """Serialises full passes and refreshes: each compares disk with `files` and then
        replaces it, and listeners must hear about changes in the order they were made."""
        self._stale: set[str] = set()
        self._refused: dict[str, str] = {}
        self._big_buffers: set[str] = set()
        """Display paths whose editor buffer was refused as too large (kept in `_refused`
        across full passes: the refusal is the buffer's, not the disk's)."""
        """Indexed files refused when read since (display path → why), for status."""
        self._listeners: list[ChangeListener] = []
        self.files: Mapping[str, IndexedFile] = {}
        self.stats = IndexStats()
        self.indexing = False
        self.indexed_once = threading.Event()
        self.partial = threading.Event()
        """Set once a first pass has published entries before its end (see `_publish`)."""
        self._whole_counts: dict[tuple[str, str, str], int] = {}
        """Whole-file counts made since indexing, by (path, content hash, encoding)."""
        self._unsaved_counts: list[tuple[str, str, int]] = []
        """(folder root, analysis key, count) not yet written to the cache."""
        self.priorities = IndexPriorities()
        """What the first requests will read; a long first pass parses it first."""

    # ------------------------------------------------------------------ folders and settings
    @property
    def config(self) -> Config:
        return self._indexer.config

    @property
    def roots(self) -> list[Path]:
        return self._folders.roots

    def set_folders(self, roots: Sequence[Path]) -> None:
        """Adopt a new set of folders; `index()` then brings `files` in line with them."""
        with self._lock:
            gone = self._folders.set_roots(roots)
        self._indexer.close_stores(f.root for f in gone)

    def reconfigure(self, config: Config) -> Reindex | None:
        """Adopt new settings; says which full pass they call for (None: the index stands)."""
        old = self.config
        self._indexer.reconfigure(config)
        self._folders.max_file_bytes = config.index.max_file_bytes
        secrets_changed = old.index.include_secrets != config.index.include_secrets
        rules_changed = secrets_changed or (old.index.ignore, old.index.respect_gitignore) != (
            config.index.ignore,
            config.index.respect_gitignore,
        )
        if rules_changed:
            with self._lock:
                self._folders.set_rules(
                    config.index.ignore, config.index.respect_gitignore, config.index.include_secrets
                )
        if not rules_changed and (old.index.max_file_bytes, old.tokenizer) == (
            config.index.max_file_bytes,
            config.tokenizer,
        ):
            return None
        # New secret opt-ins: entries read under the old ones may have skipped (or need)
        # the content check, so every file is read again.
        return Reindex(force=old.tokenizer != config.tokenizer or secrets_changed)

    def locate(self, path: str | Path) -> Location:
        """Where a path lies in the workspace; OutsideWorkspace if it does not."""
        return self._folders.locate(path)

    def servable(self, path: str | Path, field: str) -> Location:
        """Where a path a request names lies, if ctx-lsp may serve it: refused with an
        InvalidParam naming the request's `field` (`uri`, `focus.uri`, `open[2]`) when it
        lies outside the workspace folders or names a secret file. Decided on the path
        with `..` and links resolved, so every spelling of a path gets the same answer."""
        try:
            location = self._folders.locate(path)
        except OutsideWorkspace as err:
            roots = ", ".join(str(r) for r in self.roots)
            raise InvalidParam(
                field,
                f"{path} is outside the workspace folders, refused (ctx-lsp only reads files inside them)",
                f"pass the URI of a file inside {roots}",
            ) from err
        pattern = self._folders.secret(location)
        if pattern is None:
            kind = self._secret_by_content(location)
            pattern = None if kind is None else f"(content) a {kind.replace('_', ' ')}"
        if pattern is not None:
            display = self._folders.display_path(location.folder, location.rel)
            raise InvalidParam(
                field,
                f"{display} holds secrets (matches {pattern!r}); ctx-lsp never reads or serves secret files",
                "leave it out; if it holds no secret, opt it in with index.include_secrets in your editor's settings",
            )
        return location

    def _secret_by_content(self, location: Location) -> str | None:
        """The kind of credential store a file a request names is, if the index does not
        hold it: the index left it out for that, and the request must be refused the same
        way as a secret by name. Read through the gate; anything unreadable is not one."""
        if not location.rel or location.abs_path in self.files:
            return None
        if not location.folder.rules.secrets.content_check(location.rel):
            return None
        try:
            data = read_head(location.abs_path, self.roots, self._folders.max_file_bytes)
        except (CtxError, OSError):
            return None
        return credential_kind(data)

    def subscribe(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    # ------------------------------------------------------------------ keeping current
    def index(self, progress: ProgressFn | None = None, *, force: bool = False) -> IndexStats:
        """Bring the index in line with the disk; reuse the cache for unchanged files."""
        with self._lock:
            self.indexing = True
            self._indexer.progress = IndexProgress(True, 0, 0, "starting")
            stale, self._stale = self._stale, set()
        try:
            with self._update_lock:
                files, stats = self._indexer.index(
                    self.files, progress, force=force, stale=stale, publish=self._publish, priorities=self.priorities
                )
                with self._lock:
                    for buffer in self._overlays.buffers():
                        abs_path = buffer.entry.abs_path
                        if abs_path in files or abs_path in self.files:
                            entry = self._placed(buffer)
                            if entry is not None:
                                files[abs_path] = entry
                    removed = [p for p in self.files if p not in files]
                    changed = [f for p, f in files.items() if self.files.get(p) is not f]
                    self.files = files
                    self.stats = stats
                    # A full pass re-reads the disk, so its refusals start over; an editor
                    # buffer refused as too large stays refused until it changes or closes.
                    self._refused = {p: r for p, r in self._refused.items() if p in self._big_buffers}
                self._notify(removed, changed)
            return stats
        finally:
            with self._lock:
                self.indexing = False
                self._indexer.progress = IndexProgress(False, len(self.files), len(self.files), "done")
            self.indexed_once.set()

    def cancel_index(self) -> None:
        """End a running full pass early and for good (the engine is closing)."""
        self._indexer.cancelled.set()

    def _publish(self, entries: Sequence[IndexedFile]) -> None:
        """Entries a long full pass has ready before it ends: added to `files` (open
        buffers win), so requests meanwhile are answered from what is indexed so far. The
        pass's final swap then changes only what was not published."""
        with self._lock:
            fresh = [e for e in entries if e.abs_path not in self._overlays]
            if not fresh:
                return
            self.files = {**self.files, **{e.abs_path: e for e in fresh}}
        self.partial.set()
        self._notify([], fresh)

    @property
    def progress(self) -> IndexProgress:
        """How far the running full pass is (`running` false when none runs)."""
        progress = self._indexer.progress
        if not progress.running and not self.indexed_once.is_set():
            return IndexProgress(True, 0, 0, "starting")
        return progress

    def refresh(self, paths: Iterable[str | Path]) -> Refresh:
        """Re-check paths (files or directories) against disk, for the watcher and the editor.

        Paths a render found changed since they were indexed are re-checked too, even
        when their size and mtime did not move. Open buffers are left alone: the editor's
        copy wins until it is closed.
        """
        with self._lock:
            stale, self._stale = self._stale, set()
        with self._update_lock:
            outcomes = self._indexer.refresh([*paths, *stale], self.files, skip=self._overlays.paths(), forced=stale)
            return self._apply(outcomes)

    def _apply(self, outcomes: Sequence[FileOutcome]) -> Refresh:
        removed: list[str] = []
        updated: list[IndexedFile] = []
        with self._lock:
            files = dict(self.files)
            for outcome in outcomes:
                if outcome.abs_path in self._overlays:
                    continue  # opened while we read the disk: the buffer wins
                if outcome.entry is None:
                    gone = files.pop(outcome.abs_path, None)
                    if gone is not None:
                        removed.append(outcome.abs_path)
                        if outcome.refused is not None:
                            self._note_refusal(gone.path, outcome.refused)
                    continue
                files[outcome.abs_path] = outcome.entry
                self._refused.pop(outcome.entry.path, None)
                if outcome.change is Change.UPDATED:
                    updated.append(outcome.entry)
            self.files = files
        result = Refresh(tuple(removed), tuple(updated))
        if result.changed:
            self._notify(result.removed, result.updated)
        return result

    def _notify(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        for listener in self._listeners:
            try:
                listener(removed, updated)
            except Exception:  # a listener bug must not break indexing
                log.exception("index listener failed")

    # ------------------------------------------------------------------ editor buffers
    def open_document(self, path: str | Path, text: str, version: int, *, edited: bool = False) -> IndexedFile:
        """Track an editor buffer; `edited` marks a change (didChange), not just an open.

        A buffer of a secret file (by name, or holding a private key) is refused with
        `Refused`: tracked, it would be searched and bundled like any working file. So is
        one over `index.max_file_bytes`, like a file of that size on disk: not analysed
        (which is what would make it slow), its earlier buffer dropped, and the refusal
        reported in status (`refused`).

        A buffer whose content is what the index already has for the file (an editor
        opening a saved file, a save without edits) reuses that entry: analysing it again
        would only repeat the work of the index."""
        location = self._folders.locate(path)
        check_content = location.folder.rules.secrets.content_check(location.rel)
        if check_content:  # as the index reads the file: its tokens never reach a bundle
            text, _ = mask_tokens_text(text)
        data = text.encode("utf-8", errors="replace")
        display = self._folders.display_path(location.folder, location.rel)
        pattern = self._folders.secret(location)
        if pattern is not None:
            raise Refused(display, Reason.SECRET, f"holds secrets (matches {pattern!r}); its buffer is not tracked")
        limit = self._folders.max_file_bytes
        if len(data) > limit:
            self._drop_buffer(location)
            with self._lock:
                self._note_refusal(display, Reason.TOO_LARGE)
                self._big_buffers.add(display)
            detail = f"is {len(data)} bytes, over index.max_file_bytes ({limit}); its buffer is not tracked"
            raise Refused(display, Reason.TOO_LARGE, detail)
        kind = credential_kind(data) if check_content else None
        if kind is not None:
            self._drop_buffer(location)
            raise Refused(
                display, Reason.SECRET, f"holds secrets (a {kind.replace('_', ' ')}); its buffer is not tracked"
            )
        known = self.files.get(location.abs_path)
        if (
            known is not None
            and (known.root, known.path) == (str(location.folder.root), display)
            and (known.hash == content_hash(data))
        ):
            analysed = known
        else:
            analysed = self._indexer.analysed(location, data, 0)
        with self._lock:
            entry = self._overlays.put(analysed, text, version, edited=edited).entry
            self.files = {**self.files, entry.abs_path: entry}
            if self._refused.get(display) == Reason.TOO_LARGE:
                del self._refused[display]
            self._big_buffers.discard(display)
        self._notify([], [entry])
        return entry

    def change_document(self, path: str | Path, text: str, version: int) -> IndexedFile:
        """A didChange with the full new text (the server applies incremental edits)."""
        return self.open_document(path, text, version, edited=True)

    def close_document(self, path: str | Path) -> None:
        """Stop tracking a buffer: the file's entry is the disk copy's again, or none."""
        location = self._folders.locate(path)
        display = self._folders.display_path(location.folder, location.rel)
        with self._lock:
            if display in self._big_buffers:  # its refusal was the buffer's: it is gone
                self._big_buffers.discard(display)
                self._refused.pop(display, None)
        self._drop_buffer(location)

    def _drop_buffer(self, location: Location) -> None:
        abs_path = location.abs_path
        with self._lock:
            buffer = self._overlays.pop(abs_path)
        if buffer is None:
            return
        outcome = self._indexer.check(location, None, force=True)
        with self._lock:
            files = dict(self.files)
            if outcome.entry is None:
                files.pop(abs_path, None)
            else:
                files[abs_path] = outcome.entry
            self.files = files
        if outcome.entry is None:
            self._notify([abs_path], [])
        else:
            self._notify([], [outcome.entry])

    def buffers_by_recency(self) -> list[tuple[str, float]]:
        """Open buffers, most recently edited first; never-edited ones last (time 0)."""
        return self._overlays.by_recency()

    def overlay_paths(self) -> list[str]:
        return self._overlays.paths()

    def _placed(self, buffer: Buffer) -> IndexedFile | None:
        """The buffer's entry under the current folders (its display path changes when a
        folder is added or removed); None once it is outside them."""
        try:
            location = self._folders.locate(buffer.entry.abs_path)
        except OutsideWorkspace:
            return None
        if (buffer.entry.root, buffer.entry.path) == (
            str(location.folder.root),
            self._folders.display_path(location.folder, location.rel),
        ):
            return buffer.entry
        analysed = self._indexer.analysed(location, buffer.text.encode("utf-8", errors="replace"), 0)
        return self._overlays.put(analysed, buffer.text, buffer.version, edited=False).entry

    # ------------------------------------------------------------------ reading
    def whole_tokens(self, entry: IndexedFile, counter: TokenCounter) -> int:
        """The exact token count of the file's whole text as indexed, counted the first
        time it is asked for and kept (here, and in the cache for the next process).

        Counting every file at indexing cost ~10 MB/s of tiktoken on the indexing core
        (the kernel: ~100 s of a cold index) for counts most files never need; a bundle
        needs them for the files it may show whole. Text not counted exactly (plain text)
        keeps its estimate. Raises NotFound if the file cannot be read."""
        if entry.tokens_counted:
            return entry.tokens
        slot = (entry.abs_path, entry.hash, counter.name)
        known = self._whole_counts.get(slot)
        if known is not None:
            return known
        text, current = self.read_text(entry)
        tokens = counter.count(text)
        if current is entry:  # the text indexed: the count holds for this version
            with self._lock:
                if len(self._whole_counts) >= MAX_KEPT_WHOLE_COUNTS:
                    self._whole_counts.clear()
                self._whole_counts[slot] = tokens
                if entry.key and entry.overlay_version is None and counter.name == self.config.tokenizer:
                    self._unsaved_counts.append((entry.root, entry.key, tokens))
        return tokens

    def release_units(self) -> None:
        """Drop the units blobs the derived indexes were built from (the cache holds them;
        a bundle reads those it ranks): ~10 KB a file that a warm engine never reads."""
        for entry in self.files.values():
            if entry.overlay_version is None:
                entry.release_units()

    def save_counts(self) -> None:
        """Write the whole-file counts made since the last call to the cache."""
        with self._lock:
            unsaved, self._unsaved_counts = self._unsaved_counts, []
        by_root: dict[str, list[tuple[str, int]]] = {}
        for root, key, tokens in unsaved:
            by_root.setdefault(root, []).append((key, tokens))
        for root, counts in by_root.items():
            store = self.store_for(root)
            if store is not None and not store.record_tokens(counts):
                with self._lock:  # an image is being written: the next call saves them
                    self._unsaved_counts.extend((root, key, tokens) for key, tokens in counts)

    def get(self, path: str | Path) -> IndexedFile:
        """The index entry for a path inside the workspace (NotFound if not indexed)."""
        location = self._folders.locate(path)
        entry = self.files.get(location.abs_path)
        if entry is None:
            display = self._folders.display_path(location.folder, location.rel)
            raise NotFound(f"{display} is not indexed (missing, ignored, binary, too large, not a file, or a secret)")
        return entry

    def read_text(self, entry: IndexedFile) -> tuple[str, IndexedFile]:
        """The file's current text, and an entry that matches it (`entry` itself if the
        text is what was indexed, so callers can tell whether a rendering may be shared).

        Reading changes nothing: a disk copy that changed since it was indexed (the watcher
        has not caught up) is analysed here, so outline line numbers match the text shown,
        but the new entry is not published: swapping entries and calling listeners in the
        middle of a render would change what the rest of the same bundle sees. The path
        is marked stale instead, and the next `refresh` or `index` re-reads it.
        """
        buffer = self._overlays.get(entry.abs_path)
        if buffer is not None:
            return buffer.text, buffer.entry
        try:
            location, data, mtime_ns = self._folders.read(entry.abs_path)
        except OSError as err:
            self._mark_stale(entry.abs_path)
            raise NotFound(f"{entry.path} could not be read: {err.strerror or err}") from err
        except OutsideWorkspace:
            self._refuse(entry, Reason.OUTSIDE)
            raise
        except Refused as err:
            self._refuse(entry, err.reason)
            raise
        except CtxError:
            self._mark_stale(entry.abs_path)
            raise
        text, _ = decode(data)
        digest = content_hash(data)
        if digest == entry.hash:
            return text, entry
        indexed = self.files.get(entry.abs_path)
        if indexed is not None and indexed.hash == digest:
            return text, indexed  # the index caught up since the caller took `entry`
        self._mark_stale(entry.abs_path)
        return text, self._indexer.analysed(location, data, mtime_ns)

    def saved_text(self, entry: IndexedFile) -> str | None:
        """The file's text on disk, whatever buffer is open over it (None if it cannot be
        read): what an editor's unsaved edits are compared with. Through the same gate as
        every other read."""
        try:
            _, data, _ = self._folders.read(entry.abs_path)
        except (OSError, CtxError):
            return None
        return decode(data)[0]

    def _mark_stale(self, abs_path: str) -> None:
        with self._lock:
            self._stale.add(abs_path)

    def _refuse(self, entry: IndexedFile, reason: str) -> None:
        """A read refused by the gate: remembered for status, and the entry re-checked
        (and dropped) by the next refresh."""
        with self._lock:
            self._stale.add(entry.abs_path)
            self._note_refusal(entry.path, reason)

    def _note_refusal(self, path: str, reason: str) -> None:
        """Remember (under the lock) why an indexed file may not be read any more. Not
        for secrets: status never names a file that holds one."""
        if reason != Reason.SECRET and (path in self._refused or len(self._refused) < MAX_REPORTED_REFUSALS):
            self._refused[path] = reason

    def problems(self) -> list[str]:
        """What status lists under `problems`: ignore patterns left out (with file, line
        and pattern), files that could not be read, a folder whose indexing failed, and
        why an index that holds no file is empty. Never silent (issue 20)."""
        found = [*self._folders.ignore_problems(), *self.stats.problems]
        empty = self.empty_reason()
        if empty is not None:
            found.append(empty)
        return found

    def empty_reason(self) -> str | None:
        """Why nothing is indexed though the folders hold files, all of them kept out;
        None while indexing, when anything is indexed, or when the folders hold nothing."""
        if self.files or self.indexing or not self.indexed_once.is_set():
            return None
        stats = self.stats
        kept_out = ", ".join(f"{n} {reason}" for reason, n in stats.skipped.most_common())
        if stats.ignored_dirs:
            kept_out += f"{', ' if kept_out else ''}{stats.ignored_dirs} ignored directories"
        if not kept_out:
            return None
        return (
            f"no file is indexed: every file in the workspace was kept out ({kept_out}); "
            "check its .gitignore files, index.ignore and index.max_file_bytes"
        )

    def refused(self) -> dict[str, str]:
        """Indexed files refused when read since the last full pass: path → reason."""
        with self._lock:
            return dict(sorted(self._refused.items()))

    # ------------------------------------------------------------------ the cache
    def cache_locations(self) -> list[str]:
        return self._indexer.cache_locations()

    def cache_warnings(self) -> list[str]:
        return self._indexer.cache_warnings()

    def store_for(self, root: str | None) -> IndexStore | None:
        """The opened cache of the folder at `root` (of the first folder for None): where
        state derived from the index is kept (`index/derived.py`)."""
        return self._indexer.opened_store(None if root is None else Path(root))

    def close(self) -> None:
        self.save_counts()
        self._indexer.close_stores()
