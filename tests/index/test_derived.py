"""Tests for ctx_lsp/index/derived.py: search documents and the global rank kept in the
index cache, so a fresh engine on a warm cache derives neither (issue 11)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctx_lsp.engine import BundleRequest, Engine
from ctx_lsp.index.store import CACHE_DIR_NAME, DB_FILE_NAME

QUERIES = ("assemble bundle within budget", "count tokens of text", "search index")


def _engine(root: Path, cache: bool = True) -> Engine:
    engine = Engine([root], None if cache else {"index": {"cache": False}})
    engine.index()
    engine.warm_up()
    return engine


def _answers(engine: Engine) -> list[object]:
    """What requests see: search hits (with scores), file ranks and whole bundles."""
    out: list[object] = []
    for query in QUERIES:
        out.append(engine.search(query))
        out.append(engine.graph.rank(mentioned=["assemble_bundle"]).scores)
        result = engine.bundle(BundleRequest(query=query, budget=2000))
        out.append((result.text, result.total_tokens, [(s.id, s.content, s.reason) for s in result.sections]))
    return out


def _db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / CACHE_DIR_NAME / DB_FILE_NAME)


@pytest.fixture
def rebuilt(sample_workspace: Path) -> list[object]:
    """The answers of an engine that derives everything (no cache at all)."""
    engine = _engine(sample_workspace, cache=False)
    try:
        return _answers(engine)
    finally:
        engine.close()


def test_a_fresh_engine_on_a_warm_cache_derives_nothing(sample_workspace: Path, rebuilt: list[object]) -> None:
    """Ensure that a second engine reads the postings and the global rank from the cache
    the first one wrote, derives none of them, and answers exactly as a rebuild does."""
    first = _engine(sample_workspace)
    n_files = len(first.workspace.files)
    assert first.search_index.docs_built == n_files and not first.search_index.from_image
    assert first.derived.image_saved == 1 and first.derived.rank_saved == 1
    assert not first.graph.global_from_cache
    assert _answers(first) == rebuilt
    first.close()

    second = _engine(sample_workspace)
    assert second.search_index.from_image and second.search_index.docs_built == 0
    assert second.derived.image_loaded == 1 and second.derived.image_saved == 0
    assert second.graph.global_from_cache and second.derived.rank_saved == 0
    assert _answers(second) == rebuilt
    assert not second.workspace.cache_warnings()
    second.close()


def test_without_an_image_everything_is_derived_and_the_image_written(
    sample_workspace: Path, rebuilt: list[object]
) -> None:
    """Ensure that a cache without the image derives every file and writes the image."""
    _engine(sample_workspace).close()
    with _db(sample_workspace) as conn:
        conn.execute("DELETE FROM derived WHERE key='search_postings'")
    conn.close()
    engine = _engine(sample_workspace)
    assert not engine.search_index.from_image and engine.derived.image_loaded == 0
    assert engine.search_index.docs_built == len(engine.workspace.files) and engine.derived.image_saved == 1
    assert _answers(engine) == rebuilt
    engine.close()
    assert _engine(sample_workspace).search_index.from_image


def test_files_edited_added_or_removed_between_runs_are_derived_again(sample_workspace: Path) -> None:
    """Ensure that files changed on disk between two processes are derived again from the
    image's start (edited and new ones; removed ones dropped), the rest is reused, the
    answers match a rebuild, and the image is rewritten."""
    _engine(sample_workspace).close()
    path = sample_workspace / "pkg" / "tokens.py"
    path.write_text(path.read_text() + "\n\ndef zebra_quota(bundle):\n    return assemble_bundle(bundle)\n")
    (sample_workspace / "pkg" / "yak.py").write_text("def yak_shaver():\n    return 2\n")
    (sample_workspace / "notes.txt").unlink()

    engine = _engine(sample_workspace)
    assert engine.search_index.from_image and engine.derived.image_loaded == 1
    assert engine.search_index.docs_built == 2 and engine.derived.image_saved == 1
    assert not engine.graph.global_from_cache  # new call, new file: a new graph
    assert engine.search("zebra quota")[0].symbol == "zebra_quota"
    assert engine.search("yak shaver")[0].symbol == "yak_shaver"
    answers = _answers(engine)
    engine.close()
    plain = _engine(sample_workspace, cache=False)
    assert answers == _answers(plain)
    plain.close()
    # everything was rewritten: a third process derives nothing
    third = _engine(sample_workspace)
    assert third.search_index.from_image and third.search_index.docs_built == 0
    assert third.graph.global_from_cache
    third.close()


def test_altered_state_is_detected_and_derived_again(sample_workspace: Path, rebuilt: list[object]) -> None:
    """Ensure that a stored image or rank whose bytes were altered is not trusted: it is
    derived again and rewritten."""
    _engine(sample_workspace).close()
    with _db(sample_workspace) as conn:
        image = conn.execute("SELECT value FROM derived WHERE key='search_postings'").fetchone()[0]
        conn.execute("UPDATE derived SET value=? WHERE key='search_postings'", (image[:-1] + b"\x07",))
        value = conn.execute("SELECT value FROM derived WHERE key='global_rank'").fetchone()[0]
        conn.execute("UPDATE derived SET value=? WHERE key='global_rank'", (value.replace("0.", "0.9", 1),))
    conn.close()

    engine = _engine(sample_workspace)
    assert not engine.search_index.from_image and engine.derived.image_rejected == 1
    assert engine.search_index.docs_built == len(engine.workspace.files)
    assert not engine.graph.global_from_cache and engine.derived.rank_saved == 1
    assert _answers(engine) == rebuilt
    engine.close()
    again = _engine(sample_workspace)
    assert again.search_index.from_image and again.graph.global_from_cache
    again.close()


def test_a_truncated_image_is_not_read(sample_workspace: Path, rebuilt: list[object]) -> None:
    """Ensure that an image cut short (its digest rewritten to match, as a bug might) fails
    the layout checks and is derived again."""
    from ctx_lsp.index import derived

    _engine(sample_workspace).close()
    with _db(sample_workspace) as conn:
        image = conn.execute("SELECT value FROM derived WHERE key='search_postings'").fetchone()[0]
        cut = image[:-8]
        digest = derived._bytes_digest(derived.IMAGE_VERSION, cut)
        conn.execute("UPDATE derived SET value=?, digest=? WHERE key='search_postings'", (cut, digest))
    conn.close()
    engine = _engine(sample_workspace)
    assert not engine.search_index.from_image and engine.derived.image_rejected == 1
    assert _answers(engine) == rebuilt
    engine.close()


def test_an_unreadable_cache_is_derived_in_memory_with_a_warning(sample_workspace: Path, rebuilt: list[object]) -> None:
    """Ensure that an SQLite error while reading derived state is a status warning and the
    state is derived in memory, answering as a rebuild does."""
    _engine(sample_workspace).close()
    engine = Engine([sample_workspace])
    engine.index()  # the store is open; now its table goes away under it
    with _db(sample_workspace) as conn:
        conn.execute("DROP TABLE derived")
    conn.close()
    engine.warm_up()
    assert engine.search_index.docs_built == len(engine.workspace.files)
    assert not engine.graph.global_from_cache
    warnings = engine.workspace.cache_warnings()
    assert any("search postings unreadable" in w for w in warnings)
    assert any("rank unreadable" in w for w in warnings)
    assert _answers(engine) == rebuilt
    engine.close()


def test_an_edit_in_an_engine_read_from_the_cache(sample_workspace: Path) -> None:
    """Ensure that a saved edit picked up by an engine whose postings came from the image
    updates that file only and answers as a rebuild of the edited tree does; the image is
    not rewritten after an edit, and the next process derives that file again."""
    _engine(sample_workspace).close()
    engine = _engine(sample_workspace)
    assert engine.search_index.from_image
    path = sample_workspace / "pkg" / "bundle.py"
    path.write_text(
        path.read_text().replace(
            "def assemble_bundle", "def walrus_ledger() -> int:\n    return 1\n\n\ndef assemble_bundle"
        )
    )
    engine.refresh([path])
    assert engine.search("walrus ledger")[0].symbol == "walrus_ledger"
    assert engine.search_index.docs_built == 1 and engine.derived.image_saved == 0
    answers = _answers(engine)
    engine.close()
    plain = _engine(sample_workspace, cache=False)
    assert answers == _answers(plain)
    plain.close()

    fresh = _engine(sample_workspace)
    assert fresh.search_index.from_image and fresh.search_index.docs_built == 1
    assert fresh.search("walrus ledger")[0].symbol == "walrus_ledger"
    # a file taken from the image and never derived leaves no postings when it goes
    tokens = sample_workspace / "pkg" / "tokens.py"
    assert any(h.path == "pkg/tokens.py" for h in fresh.search("count tokens"))
    tokens.unlink()
    fresh.refresh([tokens])
    assert not any(h.path == "pkg/tokens.py" for h in fresh.search("count tokens"))
    answers = _answers(fresh)
    fresh.close()
    plain = _engine(sample_workspace, cache=False)
    assert answers == _answers(plain)
    plain.close()


def test_editor_buffers_are_never_written(sample_workspace: Path) -> None:
    """Ensure that an unsaved buffer's documents stay in memory: the stored image keeps
    the disk's content, so a fresh process does not see the buffer's words."""
    engine = _engine(sample_workspace)
    path = sample_workspace / "pkg" / "bundle.py"
    engine.open_document(str(path), path.read_text() + "\n\ndef unsaved_otter():\n    pass\n", 2, edited=True)
    assert engine.search("unsaved otter")[0].symbol == "unsaved_otter"
    engine.close()
    fresh = _engine(sample_workspace)
    assert fresh.search_index.from_image and fresh.search_index.docs_built == 0
    assert not any(h.symbol == "unsaved_otter" for h in fresh.search("unsaved otter"))
    fresh.close()


def test_an_image_whose_files_are_split_is_not_read() -> None:
    """Ensure that an image in which one file's documents are not numbered in a row (the
    postings keep each file's documents as one range) fails the layout checks."""
    from array import array

    from ctx_lsp.index import derived
    from ctx_lsp.index.search import PostingsImage

    def image(doc_file: list[int]) -> PostingsImage:
        n = len(doc_file)
        return PostingsImage(
            files=["/a.py", "/b.py"],
            paths=["a.py", "b.py"],
            hashes=["1", "2"],
            symbols=["f"] * n,
            kinds=["function"] * n,
            doc_file=array("i", doc_file),
            doc_start=array("i", [1] * n),
            doc_end=array("i", [1] * n),
            doc_length=array("i", [1] * n),
            doc_term_ends=array("i", range(1, n + 1)),
            doc_terms=array("i", [0] * n),
            terms=["f"],
            term_ends=array("i", [n]),
            posting_docs=array("i", range(n)),
            posting_tfs=array("i", [1] * n),
        )

    assert derived._unpack_image(derived._pack_image(image([0, 0, 1]))) == image([0, 0, 1])
    assert derived._unpack_image(derived._pack_image(image([0, 1, 0]))) is None
