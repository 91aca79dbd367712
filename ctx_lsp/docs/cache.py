"""The docs result cache: memory first, then an optional SQLite file.

Hits must take single-digit milliseconds, so a hit is one dict lookup (memory) or one
primary-key read (SQLite, then promoted to memory). The file is only a cache: if it is
corrupt, locked or unwritable the cache keeps working in memory and says so in
`health()`; it never raises and never deletes the file (the engine may share it with
other tables).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["CacheKey", "DocsCache"]

log = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMA_VERSION = 2
"""Bumped when the stored JSON or the way sections are built changes: old rows are
dropped rather than served."""

MAX_MEMORY_RESULTS = 1024
"""Results kept in memory (least recently used go first); each is at most a docs cap of
text, so this is a few MB at worst."""

MAX_DB_RESULTS = 5000
PRUNE_EVERY_PUTS = 100
DB_TIMEOUT_S = 0.2
"""How long a write waits for a lock held by another ctx-lsp process before the cache
gives up on the file for this call."""


@dataclass(frozen=True, slots=True)
class CacheKey:
    """What makes two docs results the same. The DESIGN key is (library, version, topic,
    cap); the stamp (installed files / extra docs changed) and the tokenizer (counts
    depend on it) are added because either changes the right answer."""

    library: str
    version: str
    stamp: str
    topic: str
    cap: int
    tokenizer: str


_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS docs_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs_results (
    library TEXT NOT NULL,
    version TEXT NOT NULL,
    stamp TEXT NOT NULL,
    topic TEXT NOT NULL,
    cap INTEGER NOT NULL,
    tokenizer TEXT NOT NULL,
    result TEXT NOT NULL,
    stored_at REAL NOT NULL,
    PRIMARY KEY (library, version, stamp, topic, cap, tokenizer)
);
INSERT OR IGNORE INTO docs_meta (key, value) VALUES ('schema', '{SCHEMA_VERSION}');
"""


def _is_busy(err: sqlite3.Error) -> bool:
    """Another process holds the lock: skip this call but keep using the file."""
    return isinstance(err, sqlite3.OperationalError) and ("locked" in str(err) or "busy" in str(err))


class DocsCache(Generic[T]):
    """Results by `CacheKey`; `encode`/`decode` turn a result into the JSON text stored."""

    def __init__(self, db_path: Path | None, encode: Callable[[T], str], decode: Callable[[str], T]) -> None:
        self._memory: OrderedDict[CacheKey, T] = OrderedDict()
        self._lock = threading.Lock()
        self._db_path = db_path
        self._db: sqlite3.Connection | None = None
        self._db_opened = False
        self._encode = encode
        self._decode = decode
        self._puts = 0
        self.db_error = ""
        """The last SQLite failure; non-empty means the file is not (or no longer) used."""

    # -- memory ---------------------------------------------------------------------------

    def get(self, key: CacheKey) -> T | None:
        with self._lock:
            value = self._memory.get(key)
            if value is not None:
                self._memory.move_to_end(key)
                return value
            value = self._db_get(key)
            if value is not None:
                self._remember(key, value)
            return value

    def put(self, key: CacheKey, value: T) -> None:
        with self._lock:
            self._remember(key, value)
            self._db_put(key, value)

    def __len__(self) -> int:
        return len(self._memory)

    def _remember(self, key: CacheKey, value: T) -> None:
        self._memory[key] = value
        self._memory.move_to_end(key)
        while len(self._memory) > MAX_MEMORY_RESULTS:
            self._memory.popitem(last=False)

    # -- SQLite ---------------------------------------------------------------------------

    def health(self) -> dict[str, object]:
        return {
            "db": str(self._db_path) if self._db_path else None,
            "db_ok": self._db_path is not None and not self.db_error,
            "db_error": self.db_error,
            "memory_results": len(self._memory),
        }

    def _fail(self, action: str, err: Exception) -> None:
        """Stop using the file: the next lookups are memory-only, never an exception."""
        self.db_error = f"{action}: {err}"
        log.warning("docs cache %s: %s; continuing in memory only", self._db_path, self.db_error)
        self._close_db()

    def _close_db(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None

    def _connection(self) -> sqlite3.Connection | None:
        if self._db_opened:
            return self._db
        self._db_opened = True
        if self._db_path is None:
            return None
        try:
            self._db_path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self._db_path, timeout=DB_TIMEOUT_S, check_same_thread=False, isolation_level=None)
            self._db = db
            db.executescript(_SCHEMA)
            row = db.execute("SELECT value FROM docs_meta WHERE key = 'schema'").fetchone()
            if row is None or row[0] != str(SCHEMA_VERSION):
                db.executescript(
                    f"DELETE FROM docs_results;UPDATE docs_meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema';"
                )
        except (sqlite3.Error, OSError) as err:
            self._fail("open", err)
        return self._db

    def _db_get(self, key: CacheKey) -> T | None:
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute(
                "SELECT result FROM docs_results WHERE library = ? AND version = ? AND stamp = ?"
                " AND topic = ? AND cap = ? AND tokenizer = ?",
                (key.library, key.version, key.stamp, key.topic, key.cap, key.tokenizer),
            ).fetchone()
        except sqlite3.Error as err:
            if not _is_busy(err):
                self._fail("read", err)
            return None
        if row is None:
            return None
        try:
            return self._decode(row[0])
        except (ValueError, TypeError, KeyError):
            return None  # a row from a foreign writer: treat as a miss, it will be replaced

    def _db_put(self, key: CacheKey, value: T) -> None:
        db = self._connection()
        if db is None:
            return
        try:
            db.execute(
                "INSERT OR REPLACE INTO docs_results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.library,
                    key.version,
                    key.stamp,
                    key.topic,
                    key.cap,
                    key.tokenizer,
                    self._encode(value),
                    time.time(),
                ),
            )
            self._puts += 1
            if self._puts % PRUNE_EVERY_PUTS == 0:
                db.execute(
                    "DELETE FROM docs_results WHERE rowid NOT IN"
                    " (SELECT rowid FROM docs_results ORDER BY stored_at DESC LIMIT ?)",
                    (MAX_DB_RESULTS,),
                )
        except sqlite3.Error as err:
            if _is_busy(err):
                log.debug("docs cache %s busy; result kept in memory only", self._db_path)
                return  # another process holds the lock: skip this write, keep the file
            self._fail("write", err)

    def close(self) -> None:
        with self._lock:
            self._close_db()
