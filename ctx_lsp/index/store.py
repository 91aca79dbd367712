"""The index cache: one SQLite database per workspace folder, in `.ctx-lsp/`.

Two tables. `analyses` holds what a file's content yields (outline, units, token count),
keyed by content (`analysis_key`: the bytes' hash, the file's suffix, whether secrets
are masked), so it does not matter which path or branch the content came from. `files`
maps each path to its (size, mtime) and its analysis. A restart re-parses only what
changed: an unchanged (size, mtime) pair reuses the row without reading the file; a
changed one is read and hashed, and content seen before (a `touch`, a `git checkout` of
another branch and back, a file moved) reuses its analysis without parsing. Analyses no
path refers to any more are kept for a while (`UNREFERENCED_KEPT`), so switching back to
a tree seen before re-parses nothing.

The cache is an optimisation, never a source of failure: a corrupt file, a database
written by another schema or tokenizer, or one locked by another process is replaced
(or bypassed with an in-memory database) and reported as a warning.

Units blobs are stored zlib-compressed (`UNITS_ZLIB_LEVEL`): they were the largest part of
the cache (the kernel: 858 MB of 2.6 GB, about a third after compression), and are read
one file at a time, when a bundle ranks that file's units, so decompressing them costs a
request microseconds. Outlines are not: every warm start reads all of them.

Outlines are stored as JSON, never pickle: a workspace can be hostile, and a pickled
cache committed to a repository would run code when opened. For the same reason the
cache is only written inside the workspace: a `.ctx-lsp` (or a database, or its journal)
that is a symbolic link, as a cloned repository may commit one, would have SQLite create
and write files wherever it points. Such a cache is refused, not repaired (removing a
link is the user's call), and the index runs from memory with a warning in status.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import stat
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctx_lsp.index.unit_postings import UNITS_VERSION
from ctx_lsp.index.versions import outlines_version

log = logging.getLogger(__name__)

SCHEMA_VERSION = "7"
"""Bump whenever the row layout or the outline JSON changes; old caches are rebuilt.
7: units blobs zlib-compressed (6 stored them as `unit_postings.pack` wrote them)."""

UNITS_ZLIB_LEVEL = 1
"""zlib level of stored units blobs: on kernel files, level 1 keeps 35 % of the bytes at
~70 MB/s, level 6 31 % at a third of the speed; a cold index compresses every file's."""

CACHE_DIR_NAME = ".ctx-lsp"
DB_FILE_NAME = "index.sqlite3"
LOCK_TIMEOUT_S = 0.5
"""How long to wait for another process's write lock before bypassing the cache."""
DERIVED_LOCK_TIMEOUT_S = 30.0
"""How long a write of derived state waits for SQLite's write lock (it runs on a thread of
its own, which may wait; the image it writes would otherwise be derived again)."""

UNREFERENCED_KEPT_MIN = 4096
"""Analyses kept that no path refers to (the other side of a branch switch), at least..."""
UNREFERENCED_KEPT_SHARE = 4
"""...and up to one for every this many referenced ones, newest first: the cache stays
within a quarter of its size above what the tree needs."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    rel_path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    key TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS analyses (
    key TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    language TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    line_count INTEGER NOT NULL,
    symbols INTEGER NOT NULL,
    decode_replaced INTEGER NOT NULL,
    outline TEXT NOT NULL,
    masked TEXT NOT NULL,
    units BLOB NOT NULL,
    has_errors INTEGER NOT NULL,
    seen INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS derived (key TEXT PRIMARY KEY, digest TEXT NOT NULL, value TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One cached row: what the index knows about a file without reading it."""

    rel_path: str
    size: int
    mtime_ns: int
    hash: str
    language: str
    tokens: int
    line_count: int
    symbols: int
    decode_replaced: bool
    outline_json: str
    """Its outline as JSON; "" in rows read without it (`load_all`: read on use, `outline_of`)."""
    masked: str = ""
    """Kinds of token masked in its text, comma-separated (`secret_tokens.py`); "" for none.
    For a row of a file kept out as a secret by content, the kind of credential it is."""
    units: bytes | None = b""
    """Its code units and their terms (`unit_postings.pack`); b"" for a file without;
    None in rows read without them (`load_all`: read on use, `units_of`)."""
    key: str = ""
    """Its analysis's key (`analysis_key`): what the cache finds it by, whatever its path."""
    has_errors: bool = False
    """Its parse had errors (its outline is tree-sitter's recovery): status counts these
    without decoding every outline (seconds on the kernel)."""

    def __reduce__(
        self,
    ) -> tuple[
        type[StoredFile], tuple[str, int, int, str, str, int, int, int, bool, str, str, bytes | None, str, bool]
    ]:
        """Pickled as its fields in order: every row of a cold index crosses from a pool
        worker, and the dataclass default for frozen, slotted classes looks up `fields()`
        on both sides of every row (~2x the pickling CPU, measured on Django)."""
        return (
            StoredFile,
            (
                self.rel_path,
                self.size,
                self.mtime_ns,
                self.hash,
                self.language,
                self.tokens,
                self.line_count,
                self.symbols,
                self.decode_replaced,
                self.outline_json,
                self.masked,
                self.units,
                self.key,
                self.has_errors,
            ),
        )

    @property
    def analysis_key(self) -> str:
        """`key`, or for a row made without one (an editor buffer) its hash and language."""
        return self.key or f"{self.hash}:{self.language}"


def analysis_key(content_hash: str, rel_path: str, masked: bool) -> str:
    """What a file's analysis is keyed by: the hash of its bytes as read, its suffix (the
    language a path's extension picks) and whether secret tokens are masked in it (opted-
    in paths are not). The same content under another path of the same kind, on another
    branch, shares the analysis."""
    name = rel_path.rsplit("/", 1)[-1]
    suffix = name[name.rfind(".") :].lower() if "." in name[1:] else name
    return f"{content_hash}:{suffix}:{int(masked)}"


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
"""Files SQLite creates next to a database; each could be a planted link as well."""


class UnsafeCache(OSError):
    """A cache path that is not a plain file or directory of our own inside the workspace."""


def ensure_cache_dir(root: Path) -> Path:
    """Create `.ctx-lsp/` with a `.gitignore` of `*`, as other Python tool caches do.

    Raises UnsafeCache if `.ctx-lsp` is a link or not a directory, OSError if it cannot
    be created. Nothing is followed: `.gitignore` is created with O_EXCL | O_NOFOLLOW,
    so a dangling link in its place cannot make us create a file elsewhere.
    """
    cache = root / CACHE_DIR_NAME
    with contextlib.suppress(FileExistsError):
        os.mkdir(cache)
    _require(cache, stat.S_ISDIR, "a directory")
    try:
        fd = os.open(cache / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        return cache
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("# Created by ctx-lsp; the index cache is never committed.\n*\n")
    return cache


def cache_file(root: Path, name: str) -> Path:
    """The path of an SQLite cache file in `.ctx-lsp/`, once it and its journal files are
    known to be plain files (or absent). Raises UnsafeCache or OSError otherwise."""
    db_path = ensure_cache_dir(root) / name
    for suffix in ("", *SQLITE_SIDE_FILES):
        path = Path(str(db_path) + suffix)
        if os.path.lexists(path):
            _require(path, stat.S_ISREG, "a regular file")
    return db_path


def _require(path: Path, is_kind: Callable[[int], bool], kind: str) -> None:
    st = os.lstat(path)
    shown = CACHE_DIR_NAME if path.name == CACHE_DIR_NAME else f"{CACHE_DIR_NAME}/{path.name}"
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeCache(
            errno.ELOOP,
            f"{shown} is a symbolic link; the cache is only written inside the workspace (remove the link to use it)",
        )
    if not is_kind(st.st_mode):
        raise UnsafeCache(errno.EEXIST, f"{shown} is not {kind}; the cache is not written there")


class IndexStore:
    """SQLite-backed cache of indexed files for one workspace folder.

    One connection shared under a lock: the engine writes from worker threads, and SQLite
    connections must not be used concurrently.
    """

    def __init__(self, conn: sqlite3.Connection, location: str, warnings: list[str]):
        self._conn = conn
        self._lock = threading.Lock()
        self._derived_conn: sqlite3.Connection | None = None
        self._derived_lock = threading.Lock()
        self._seen = 0
        self.location = location
        self.warnings = warnings

    @classmethod
    def memory(cls, warnings: list[str] | None = None) -> IndexStore:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.executescript(_SCHEMA)
        return cls(conn, ":memory:", warnings or [])

    @classmethod
    def open(cls, root: Path, tokenizer: str, version: str, secrets: Sequence[str] = ()) -> IndexStore:
        """Open (or create, or rebuild) the cache for `root`; never raises for cache trouble.

        `secrets` are the opted-in secret globs: a cache written under other opt-ins may
        hold rows for files that are now to be kept out, so it is rebuilt."""
        warnings: list[str] = []
        try:
            db_path = cache_file(root, DB_FILE_NAME)
        except UnsafeCache as err:
            warnings.append(f"index cache disabled: {err.strerror}")
            return cls.memory(warnings)
        except OSError as err:
            warnings.append(f"index cache disabled: cannot create {CACHE_DIR_NAME}/ ({err})")
            return cls.memory(warnings)
        expected = {
            "schema": SCHEMA_VERSION,
            "units": UNITS_VERSION,
            "outlines": outlines_version(),
            "tokenizer": tokenizer,
            "include_secrets": "\n".join(secrets),
        }
        for attempt in range(2):
            try:
                conn = _connect(db_path)
                if _compatible(conn, expected, version):
                    return cls(conn, str(db_path), warnings)
                warnings.append("index cache was written by another version, tokenizer or secret opt-ins; rebuilt")
                conn.close()
            except sqlite3.OperationalError as err:
                if "locked" in str(err) or "busy" in str(err):
                    warnings.append(f"index cache is locked by another process; using memory ({err})")
                    return cls.memory(warnings)
                warnings.append(f"index cache unreadable ({err}); rebuilt")
            except sqlite3.DatabaseError as err:
                warnings.append(f"index cache corrupt ({err}); rebuilt")
            if attempt == 0:
                _remove_db(db_path)
        warnings.append("index cache could not be rebuilt; using memory")
        return cls.memory(warnings)

    def load_all(self) -> dict[str, StoredFile]:
        """Every path's row, lean: without its outline ("") or units (None), which are read
        by key when used (`outline_of`, `units_of`)."""
        with self._lock:
            try:
                rows = self._conn.execute(
                    "SELECT f.rel_path, f.size, f.mtime_ns, a.hash, a.language, a.tokens, a.line_count,"
                    " a.symbols, a.decode_replaced, a.masked, f.key, a.has_errors"
                    " FROM files f JOIN analyses a ON a.key = f.key"
                ).fetchall()
            except sqlite3.DatabaseError as err:
                self.warnings.append(f"index cache read failed ({err}); re-indexing")
                return {}
        return {
            r[0]: StoredFile(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), "", r[9], None, r[10], bool(r[11])
            )
            for r in rows
        }

    def outline_of(self, key: str) -> str | None:
        """The outline JSON stored under an analysis key (None if none, or unreadable)."""
        return self._column("outline", key)

    def units_of(self, key: str) -> bytes:
        """The units blob stored under an analysis key (b"" if none, or unreadable)."""
        value = self._column("units", key)
        return _units_read(value) if value is not None else b""

    def _stored_units(self, key: str) -> bytes:
        """The units column under `key` as stored (compressed), to copy into a new row."""
        value = self._column("units", key)
        return bytes(value) if value is not None else b""

    def _column(self, column: Literal["outline", "units"], key: str) -> Any:
        """One column of the analysis under `key`; None if there is none, or unreadable."""
        with self._lock:
            try:
                row = self._conn.execute(f"SELECT {column} FROM analyses WHERE key=?", (key,)).fetchone()
            except sqlite3.Error:
                return None
        return row[0] if row is not None else None

    def known(self, key: str) -> bool:
        """Whether an analysis is stored under `key` (content seen before)."""
        with self._lock:
            try:
                return self._conn.execute("SELECT 1 FROM analyses WHERE key=?", (key,)).fetchone() is not None
            except sqlite3.DatabaseError:
                return False

    def stored_analysis(self, key: str, rel_path: str, size: int, mtime_ns: int) -> StoredFile | None:
        """The row for `rel_path` (at this size and mtime) from the analysis stored under
        `key`, or None if there is none (any more)."""
        with self._lock:
            try:
                r = self._conn.execute(
                    "SELECT hash, language, tokens, line_count, symbols, decode_replaced, outline, masked, units,"
                    " has_errors FROM analyses WHERE key=?",
                    (key,),
                ).fetchone()
            except sqlite3.DatabaseError:
                return None
        if r is None:
            return None
        return StoredFile(
            rel_path,
            size,
            mtime_ns,
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            bool(r[5]),
            r[6],
            r[7],
            _units_read(r[8]),
            key,
            bool(r[9]),
        )

    def put_many(self, files: Iterable[StoredFile]) -> bool:
        """Store rows: each one's analysis (once per key) and its path's entry. Whether
        they were written (an entry reads its outline from here only if so)."""
        seen = self._next_seen()
        analyses: dict[str, tuple] = {}
        paths = []
        for f in files:
            key = f.analysis_key
            paths.append((f.rel_path, f.size, f.mtime_ns, key))
            analyses[key] = (
                key,
                f.hash,
                f.language,
                f.tokens,
                f.line_count,
                f.symbols,
                int(f.decode_replaced),
                f.outline_json if f.units is not None else (self.outline_of(key) or ""),  # a lean row: as stored
                f.masked,
                _units_stored(f.units) if f.units is not None else self._stored_units(key),
                int(f.has_errors),
                seen,
            )
        if not paths:
            return True
        return self._write_all(
            ("INSERT OR REPLACE INTO analyses VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", list(analyses.values())),
            ("INSERT OR REPLACE INTO files VALUES (?,?,?,?)", paths),
        )

    def put_paths(self, paths: Iterable[tuple[str, int, int, str]]) -> bool:
        """Point paths (rel_path, size, mtime, key) at analyses already stored; whether written."""
        rows = list(paths)
        if not rows:
            return True
        seen = self._next_seen()
        return self._write_all(
            ("INSERT OR REPLACE INTO files VALUES (?,?,?,?)", rows),
            ("UPDATE analyses SET seen=? WHERE key=?", [(seen, key) for *_, key in rows]),
        )

    def record_tokens(self, counts: Iterable[tuple[str, int]]) -> bool:
        """Keep whole-file token counts (analysis key, count) made since indexing; false
        (nothing written) while derived state is being written (`put_derived`): this
        write would wait for SQLite's lock holding the one a bundle reads units under,
        then fail. The caller keeps the counts for a later call."""
        if self._derived_lock.locked():
            return False
        rows = [(n, key) for key, n in counts]
        if rows:
            self._write("UPDATE analyses SET tokens=? WHERE key=?", rows)
        return True

    def _next_seen(self) -> int:
        """When analyses were last referenced: the clock, strictly increasing per store."""
        self._seen = max(time.time_ns(), self._seen + 1)
        return self._seen

    def touch_many(self, updates: Iterable[tuple[str, int, int]]) -> None:
        """Record a new (size, mtime) for rows whose content hash did not change."""
        rows = [(size, mtime, rel) for rel, size, mtime in updates]
        if rows:
            self._write("UPDATE files SET size=?, mtime_ns=? WHERE rel_path=?", rows)

    def delete_many(self, rel_paths: Iterable[str]) -> None:
        """Forget paths; their analyses stay until `forget_unreferenced` drops them."""
        rows = [(p,) for p in rel_paths]
        if rows:
            self._write("DELETE FROM files WHERE rel_path=?", rows)

    def forget_unreferenced(self) -> int:
        """Drop the analyses no path refers to beyond the newest `UNREFERENCED_KEPT_MIN`
        (or a `UNREFERENCED_KEPT_SHARE`th of the referenced ones, if more); how many."""
        with self._lock:
            try:
                with self._conn:
                    (referenced,) = self._conn.execute("SELECT count(DISTINCT key) FROM files").fetchone()
                    kept = max(UNREFERENCED_KEPT_MIN, referenced // UNREFERENCED_KEPT_SHARE)
                    cursor = self._conn.execute(
                        "DELETE FROM analyses WHERE key IN ("
                        " SELECT key FROM analyses WHERE key NOT IN (SELECT key FROM files)"
                        " ORDER BY seen DESC LIMIT -1 OFFSET ?)",
                        (kept,),
                    )
                    return cursor.rowcount
            except sqlite3.DatabaseError as err:
                log.warning("index cache: could not drop old analyses (%s)", err)
                return 0

    def clear(self) -> None:
        self._write("DELETE FROM files", [()])
        self._write("DELETE FROM analyses", [()])
        self._write("DELETE FROM derived", [()])

    # ------------------------------------------------------------------ derived state
    # What search and the graph derive from the files, so that a fresh process need not
    # derive it again. Values carry a digest (see `index/derived.py`); the store keeps
    # them, it never judges them.
    def load_derived(self, key: str) -> tuple[str, str | bytes] | None:
        """(digest, value) stored under `key`, or None; raises sqlite3.Error."""
        with self._lock:
            row = self._conn.execute("SELECT digest, value FROM derived WHERE key=?", (key,)).fetchone()
        return (row[0], row[1]) if row else None

    def put_derived(self, key: str, digest: str, value: str | bytes) -> None:
        """Keep derived state under `key`. On disk, through a connection of its own: an
        image is tens of MB (~0.4 s on an idle disk for the 7K-file kernel subtree's
        search postings, more with its checkpoint on a busy one), and the shared
        connection's lock is what a bundle reading units waits for; with WAL, reads on
        the shared connection go on while this one writes."""
        sql, row = "INSERT OR REPLACE INTO derived VALUES (?,?,?)", (key, digest, value)
        if self.location == ":memory:":
            self._write(sql, [row])
            return
        with self._derived_lock:
            try:
                if self._derived_conn is None:  # the file's schema and WAL mode are set: `open`
                    conn = sqlite3.connect(self.location, timeout=DERIVED_LOCK_TIMEOUT_S, check_same_thread=False)
                    conn.execute("PRAGMA synchronous=NORMAL")
                    self._derived_conn = conn
                with self._derived_conn:
                    self._derived_conn.execute(sql, row)
            except sqlite3.DatabaseError as err:
                self._warn_write(err)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
        with self._derived_lock:
            if self._derived_conn is not None:
                self._derived_conn.close()

    def _write(self, sql: str, rows: list[tuple]) -> None:
        if rows:
            self._write_all((sql, rows))

    def _write_all(self, *statements: tuple[str, list[tuple]]) -> bool:
        """Each statement over its rows, in one transaction; whether it was committed."""
        with self._lock:
            try:
                with self._conn:
                    for sql, rows in statements:
                        self._conn.executemany(sql, rows)
                return True
            except sqlite3.DatabaseError as err:
                self._warn_write(err)
                return False

    def _warn_write(self, err: sqlite3.DatabaseError) -> None:
        # The cache is best effort: a failed write costs a re-parse next start.
        msg = f"index cache write failed ({err})"
        if msg not in self.warnings:
            self.warnings.append(msg)
        log.warning(msg)


def _units_stored(units: bytes) -> bytes:
    """A units blob as the cache stores it: compressed (b"" stays b"": a file without)."""
    return zlib.compress(units, UNITS_ZLIB_LEVEL) if units else b""


def _units_read(stored: bytes) -> bytes:
    """A stored units blob as `unit_postings.unpack` reads it; b"" if it does not
    decompress, as for an unreadable row (`units_of`): the cache is best effort."""
    if not stored:
        return b""
    try:
        return zlib.decompress(stored)
    except zlib.error:
        return b""


def _connect(db_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(db_path), timeout=LOCK_TIMEOUT_S, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(_SCHEMA)
    return conn


def _compatible(conn: sqlite3.Connection, expected: Mapping[str, str], version: str) -> bool:
    """True if the cache was written with this schema, way of deriving units
    (`unit_postings.UNITS_VERSION`) and outlines (`versions.outlines_version`), tokenizer
    (token counts differ) and secret opt-ins."""
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if not meta:
        with conn:
            conn.executemany("INSERT INTO meta VALUES (?, ?)", [*expected.items(), ("ctx_lsp", version)])
        return True
    # Quick integrity probe: a truncated file raises here rather than mid-request.
    conn.execute("SELECT count(*) FROM files").fetchone()
    return all(meta.get(k) == v for k, v in expected.items())


def _remove_db(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            Path(str(db_path) + suffix).unlink()
        except FileNotFoundError:
            pass
        except OSError as err:
            log.warning("could not remove %s: %s", db_path, err)
