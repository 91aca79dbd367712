"""Tests for ctx_lsp/index/store.py: the SQLite cache survives every kind of damage."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from ctx_lsp.index.store import CACHE_DIR_NAME, DB_FILE_NAME, IndexStore, StoredFile


def _row(rel: str = "a.py", h: str = "h1") -> StoredFile:
    return StoredFile(rel, 10, 123, h, "python", 5, 2, 0, False, "[]")


def test_round_trip_and_gitignore(tmp_path: Path) -> None:
    """Ensure that rows persist across opens and the cache dir ignores itself."""
    store = IndexStore.open(tmp_path, "o200k_base", "0")
    store.put_many([_row("a.py"), _row("b.py", "h2")])
    store.touch_many([("a.py", 11, 456)])
    store.delete_many(["b.py"])
    store.close()
    again = IndexStore.open(tmp_path, "o200k_base", "0")
    rows = again.load_all()
    assert list(rows) == ["a.py"]
    assert (rows["a.py"].size, rows["a.py"].mtime_ns, rows["a.py"].hash) == (11, 456, "h1")
    assert (tmp_path / CACHE_DIR_NAME / ".gitignore").read_text().strip().endswith("*")
    assert again.warnings == []


def test_corrupt_database_is_rebuilt(tmp_path: Path) -> None:
    """Ensure that a corrupt cache file is replaced, with a warning, not an exception."""
    cache = tmp_path / CACHE_DIR_NAME
    cache.mkdir()
    (cache / DB_FILE_NAME).write_bytes(b"this is not a database" * 100)
    store = IndexStore.open(tmp_path, "o200k_base", "0")
    assert store.load_all() == {}
    store.put_many([_row()])
    assert list(store.load_all()) == ["a.py"]
    assert any("rebuilt" in w or "corrupt" in w for w in store.warnings)


def test_foreign_tokenizer_or_schema_is_rebuilt(tmp_path: Path) -> None:
    """Ensure that a cache written with another tokenizer or schema starts empty."""
    store = IndexStore.open(tmp_path, "o200k_base", "0")
    store.put_many([_row()])
    store.close()
    other = IndexStore.open(tmp_path, "cl100k_base", "0")
    assert other.load_all() == {}
    assert any("another version" in w for w in other.warnings)
    other.close()
    conn = sqlite3.connect(tmp_path / CACHE_DIR_NAME / DB_FILE_NAME)
    with conn:
        conn.execute("UPDATE meta SET value='999' WHERE key='schema'")
    conn.close()
    assert IndexStore.open(tmp_path, "cl100k_base", "0").load_all() == {}


def test_outlines_derived_another_way_are_rebuilt(tmp_path: Path) -> None:
    """Ensure that a cache whose outlines were derived by other code (another language
    layer: `versions.outlines_version`) starts empty: its rows' outlines would be stale
    until each file changed."""
    store = IndexStore.open(tmp_path, "o200k_base", "0")
    store.put_many([_row()])
    store.close()
    assert list(IndexStore.open(tmp_path, "o200k_base", "0").load_all()) == ["a.py"]
    conn = sqlite3.connect(tmp_path / CACHE_DIR_NAME / DB_FILE_NAME)
    with conn:
        conn.execute("UPDATE meta SET value='1:an older language layer' WHERE key='outlines'")
    conn.close()
    again = IndexStore.open(tmp_path, "o200k_base", "0")
    assert again.load_all() == {}
    assert any("another version" in w for w in again.warnings)


def test_locked_database_falls_back_to_memory(tmp_path: Path) -> None:
    """Ensure that a cache locked by another process is bypassed, not waited on forever."""
    IndexStore.open(tmp_path, "o200k_base", "0").close()
    holder = sqlite3.connect(tmp_path / CACHE_DIR_NAME / DB_FILE_NAME)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store = IndexStore.open(tmp_path, "o200k_base", "0")
        store.put_many([_row()])
        assert list(store.load_all()) == ["a.py"]
        assert store.location == ":memory:"
        assert any("locked" in w for w in store.warnings)
    finally:
        holder.rollback()
        holder.close()


def test_unwritable_root_uses_memory(tmp_path: Path) -> None:
    """Ensure that a workspace where .ctx-lsp cannot be created still gets a (memory) store."""
    blocker = tmp_path / CACHE_DIR_NAME
    blocker.write_text("a file where the cache dir should be")
    store = IndexStore.open(tmp_path, "o200k_base", "0")
    assert store.location == ":memory:"
    assert store.warnings


def test_a_cache_dir_that_is_a_link_out_is_refused(tmp_path: Path) -> None:
    """Ensure that a `.ctx-lsp` committed as a link out of the workspace is not written
    through: the store runs from memory and says why."""
    root, target = tmp_path / "ws", tmp_path / "elsewhere"
    root.mkdir()
    target.mkdir()
    (root / CACHE_DIR_NAME).symlink_to(target)
    store = IndexStore.open(root, "o200k_base", "0")
    store.put_many([_row()])
    assert store.location == ":memory:" and "symbolic link" in store.warnings[0]
    assert list(target.iterdir()) == []


def test_links_for_the_database_its_journal_or_gitignore_are_refused(tmp_path: Path) -> None:
    """Ensure that a link planted for the database, its WAL or shared-memory file is
    refused (SQLite would create and write them where they point), and that a dangling
    link for `.gitignore` does not make us create a file outside."""
    for name in (DB_FILE_NAME, f"{DB_FILE_NAME}-wal", f"{DB_FILE_NAME}-shm", f"{DB_FILE_NAME}-journal"):
        root, target = tmp_path / name / "ws", tmp_path / name / "target"
        (root / CACHE_DIR_NAME).mkdir(parents=True)
        (root / CACHE_DIR_NAME / name).symlink_to(target)
        store = IndexStore.open(root, "o200k_base", "0")
        store.put_many([_row()])
        assert store.location == ":memory:" and not target.exists(), name
    root, target = tmp_path / "gi" / "ws", tmp_path / "gi" / "target"
    (root / CACHE_DIR_NAME).mkdir(parents=True)
    (root / CACHE_DIR_NAME / ".gitignore").symlink_to(target)
    assert IndexStore.open(root, "o200k_base", "0").location.endswith(DB_FILE_NAME)
    assert not target.exists()


def test_new_secret_opt_ins_rebuild_the_cache(tmp_path: Path) -> None:
    """Ensure that a cache written under other secret opt-ins is not reused: its rows may
    hold files that must now be kept out."""
    store = IndexStore.open(tmp_path, "o200k_base", "0", secrets=[".env.example"])
    store.put_many([_row()])
    store.close()
    again = IndexStore.open(tmp_path, "o200k_base", "0")
    assert again.load_all() == {} and "rebuilt" in again.warnings[0]


def test_units_blobs_are_stored_compressed_and_read_back_whole(tmp_path: Path) -> None:
    """Ensure that a units blob is kept compressed in the database (the largest part of a
    kernel cache) and comes back byte for byte: from the row, by key, and when a path is
    pointed at a stored analysis whose blob the new row does not hold (`units=None`)."""
    blob = b'{"owners":[]}\0' + bytes(range(256)) * 64
    store = IndexStore.open(tmp_path, "o200k_base", "0")
    store.put_many([replace(_row("a.py"), units=blob, key="k1"), replace(_row("b.py"), key="k2")])
    store.put_many([replace(_row("c.py"), units=None, key="k1")])  # same content as a.py, lean row
    store.close()
    conn = sqlite3.connect(tmp_path / CACHE_DIR_NAME / DB_FILE_NAME)
    stored = dict(conn.execute("SELECT key, units FROM analyses").fetchall())
    conn.close()
    assert len(stored["k1"]) < len(blob) // 4 and stored["k2"] == b""
    again = IndexStore.open(tmp_path, "o200k_base", "0")
    assert again.units_of("k1") == blob and again.units_of("k2") == b"" and again.units_of("nope") == b""
    found = again.stored_analysis("k1", "d.py", 10, 1)
    assert found is not None and found.units == blob
    assert again.warnings == []


def test_a_units_blob_that_does_not_decompress_reads_as_none(tmp_path: Path) -> None:
    """Ensure that damaged stored units read as a file without units, never an exception."""
    store = IndexStore.open(tmp_path, "o200k_base", "0")
    store.put_many([replace(_row("a.py"), units=b"units", key="k1")])
    store.close()
    conn = sqlite3.connect(tmp_path / CACHE_DIR_NAME / DB_FILE_NAME)
    with conn:
        conn.execute("UPDATE analyses SET units=? WHERE key='k1'", (b"not zlib",))
    conn.close()
    again = IndexStore.open(tmp_path, "o200k_base", "0")
    assert again.units_of("k1") == b""
    found = again.stored_analysis("k1", "a.py", 10, 123)
    assert found is not None and found.units == b""
