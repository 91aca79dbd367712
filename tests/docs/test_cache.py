"""Tests for ctx_lsp/docs/cache.py: the memory + SQLite docs result cache."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctx_lsp.docs.cache import CacheKey, DocsCache

KEY = CacheKey("lib", "1.0", "stamp", "request send", 2500, "o200k_base")


def _cache(db: Path | None) -> DocsCache[dict]:
    import json

    return DocsCache(db, json.dumps, json.loads)


def test_memory_only() -> None:
    """Ensure a cache without a file works from memory."""
    cache = _cache(None)
    assert cache.get(KEY) is None
    cache.put(KEY, {"a": 1})
    assert cache.get(KEY) == {"a": 1}
    assert cache.health()["db_ok"] is False and cache.health()["db_error"] == ""


def test_every_key_field_matters(tmp_path: Path) -> None:
    """Ensure a different version, stamp, cap or tokenizer is a different entry."""
    cache = _cache(tmp_path / "c.db")
    cache.put(KEY, {"v": 1})
    for other in (
        CacheKey("lib", "1.1", "stamp", "request send", 2500, "o200k_base"),
        CacheKey("lib", "1.0", "other", "request send", 2500, "o200k_base"),
        CacheKey("lib", "1.0", "stamp", "request send", 3000, "o200k_base"),
        CacheKey("lib", "1.0", "stamp", "request send", 2500, "cl100k_base"),
    ):
        assert cache.get(other) is None


def test_persists_in_the_file(tmp_path: Path) -> None:
    """Ensure a stored result is found by a new cache on the same file."""
    db = tmp_path / "sub" / "c.db"
    first = _cache(db)
    first.put(KEY, {"v": 2})
    first.close()
    assert _cache(db).get(KEY) == {"v": 2}


def test_corrupt_file_falls_back_to_memory(tmp_path: Path) -> None:
    """Ensure a corrupt file is reported and left alone, and the cache still works."""
    db = tmp_path / "c.db"
    db.write_bytes(b"garbage" * 1000)
    cache = _cache(db)
    cache.put(KEY, {"v": 3})
    assert cache.get(KEY) == {"v": 3}
    assert cache.health()["db_ok"] is False and cache.health()["db_error"]
    assert db.read_bytes() == b"garbage" * 1000


def test_locked_file_is_not_fatal(tmp_path: Path) -> None:
    """Ensure a file locked by another process makes writes memory-only, not errors."""
    db = tmp_path / "c.db"
    _cache(db).put(CacheKey("x", "1", "", "", 1, "t"), {"v": 0})
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        cache = _cache(db)
        cache.put(KEY, {"v": 4})
        assert cache.get(KEY) == {"v": 4}
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_foreign_row_is_a_miss(tmp_path: Path) -> None:
    """Ensure a row that does not decode is treated as a miss."""
    db = tmp_path / "c.db"
    _cache(db).put(KEY, {"v": 5})
    raw = sqlite3.connect(db)
    raw.execute("UPDATE docs_results SET result = 'not json'")
    raw.commit()
    raw.close()
    assert _cache(db).get(KEY) is None
