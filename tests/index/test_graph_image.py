"""Tests for the reference graph kept in the index cache (`index/graph/image.py`,
`DerivedCache.load_graph`): a fresh engine restores the graph instead of deriving it, and
the restored graph — after whatever changed between the processes — is exactly the graph a
rebuild makes (issue 11, "warm start from disk")."""

from __future__ import annotations

import functools
import shutil
import sqlite3
import tempfile
import time
from array import array
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.engine import Engine
from ctx_lsp.index import derived
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.graph import image as graph_image
from ctx_lsp.index.graph.edges import Edges
from ctx_lsp.index.store import CACHE_DIR_NAME, DB_FILE_NAME
from tests.conftest import write_tree

FILES = {
    "src/shop/__init__.py": "from .cart import Cart\n",
    "src/shop/cart.py": (
        "from shop.prices import price_of, TAX\n"
        "from . import stock\n\n\n"
        "class Cart:\n"
        "    def total(self, items):\n"
        "        return sum(price_of(i) for i in items) * TAX\n\n"
        "    def reserve(self, items):\n"
        "        return stock.take(items)\n"
    ),
    "src/shop/prices.py": "TAX = 1.2\n\n\ndef price_of(item):\n    return item.price\n",
    "src/shop/stock.py": (
        "import shop.prices\n\n\ndef take(items):\n    return [shop.prices.price_of(i) for i in items]\n"
    ),
    "src/shop/later.py": "from shop import coupons\n\n\ndef apply_coupon(cart):\n    return coupons.discount(cart)\n",
    "tests/test_cart.py": "from shop.cart import Cart\n\n\ndef test_total():\n    assert Cart().total([]) == 0\n",
    "README.md": "# Shop\n\nA cart.\n",
}


FACTS = ("path", "root", "modules", "package", "defines", "called", "used", "uses", "imports")
"""What a file's facts say (their outline aside, which is the index's)."""


def _engine(root: Path, cache: bool = True) -> Engine:
    engine = Engine([root], None if cache else {"index": {"cache": False}})
    engine.index()
    engine.warm_up()
    return engine


def _state(engine: Engine) -> dict[str, Any]:
    """Everything the graph derives, comparable between engines (outlines aside)."""
    engine.graph.catch_up()
    edges: Edges = engine.graph._edges
    edges._index_uses()  # a restored graph builds its users on its first change
    facts = {f: tuple(getattr(ff, name) for name in FACTS) for f, ff in edges.facts.items()}
    return {
        "snapshot": engine.graph.snapshot(),
        "facts": facts,
        "users": edges._users,
        "use_units": edges._use_units,
        "factors": edges._factors,
        "probes": edges.modules._probes,
        "probers": edges.modules._probers,
        "stems": edges.modules.stems,
        "rank": engine.graph.rank(mentioned=["price_of"]).scores,
    }


def _rebuilt(root: Path) -> dict[str, Any]:
    engine = _engine(root, cache=False)
    try:
        return _state(engine)
    finally:
        engine.close()


def _db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / CACHE_DIR_NAME / DB_FILE_NAME)


def test_a_fresh_engine_restores_the_graph_it_would_build(tmp_path: Path) -> None:
    """Ensure that the first engine writes the graph's image, and a second restores it,
    derives no file's facts, writes nothing, and holds exactly the rebuilt graph."""
    root = write_tree(tmp_path / "ws", FILES)
    first = _engine(root)
    assert not first.graph.from_image and first.derived.graph_saved == 1
    assert _state(first) == _rebuilt(root)
    first.close()

    second = _engine(root)
    assert second.graph.from_image and second.derived.graph_loaded == 1 and second.derived.graph_saved == 0
    second.graph.rank(mentioned=["price_of"])
    assert not second.graph._edges.prepared  # a request does not need them
    assert second.graph.imports_of(str(root / "src/shop/cart.py")) == [
        str(root / "src/shop/prices.py"),
        str(root / "src/shop/stock.py"),
    ]
    assert _state(second) == _rebuilt(root)
    second.close()


def test_changes_between_processes_are_applied_to_the_restored_graph(tmp_path: Path) -> None:
    """Ensure that files edited, added and removed between two processes are applied to the
    restored graph — including an import that now resolves because the module it tried
    arrived — the result equals a rebuild, and the image is written again."""
    root = write_tree(tmp_path / "ws", FILES)
    _engine(root).close()
    (root / "src/shop/coupons.py").write_text("def discount(cart):\n    return price_of(cart)\n")
    prices = root / "src/shop/prices.py"
    prices.write_text(prices.read_text() + "\n\ndef discount(cart):\n    return 0\n")
    (root / "tests/test_cart.py").unlink()

    engine = _engine(root)
    assert engine.graph.from_image and engine.derived.graph_saved == 1
    later = str(root / "src/shop/later.py")
    assert str(root / "src/shop/coupons.py") in engine.graph.imports_of(later)
    assert _state(engine) == _rebuilt(root)
    engine.close()

    third = _engine(root)
    assert third.graph.from_image and third.derived.graph_saved == 0
    assert _state(third) == _rebuilt(root)
    third.close()


def test_an_edit_after_a_restore_matches_a_rebuild(tmp_path: Path) -> None:
    """Ensure that a restored graph stays exact under incremental edits in the process."""
    root = write_tree(tmp_path / "ws", FILES)
    _engine(root).close()
    engine = _engine(root)
    assert engine.graph.from_image
    stock = root / "src/shop/stock.py"
    stock.write_text("from shop.cart import Cart\n\n\ndef take(items):\n    return Cart().total(items)\n")
    engine.refresh([stock])
    state, rebuilt = _state(engine), _rebuilt(root)
    # the global rank moves by pushes of the residual after an edit: equal within tolerance
    rank, rebuilt_rank = state.pop("rank"), rebuilt.pop("rank")
    assert state == rebuilt
    assert rank.keys() == rebuilt_rank.keys()
    assert all(abs(rank[f] - rebuilt_rank[f]) < 1e-3 for f in rank)
    engine.close()


def test_altered_or_malformed_images_are_rebuilt(tmp_path: Path) -> None:
    """Ensure that an image whose bytes were altered fails its digest, and one whose
    digest was rewritten to match but whose ids point nowhere fails the layout checks:
    both are built again, the same graph."""
    root = write_tree(tmp_path / "ws", FILES)
    _engine(root).close()
    expected = _rebuilt(root)
    with _db(root) as conn:
        value = conn.execute("SELECT value FROM derived WHERE key=?", (derived.GRAPH_KEY,)).fetchone()[0]
        conn.execute("UPDATE derived SET value=? WHERE key=?", (value[:-1] + b"\x07", derived.GRAPH_KEY))
    conn.close()
    engine = _engine(root)
    assert not engine.graph.from_image and engine.derived.graph_rejected == 1 and engine.derived.graph_saved == 1
    assert _state(engine) == expected
    engine.close()

    image = graph_image.unpack(value)
    assert image is not None
    broken = replace(image, out_to=array("i", [len(image.files)] * len(image.out_to)))
    packed = graph_image.pack(broken)
    with _db(root) as conn:
        digest = derived._bytes_digest(derived.GRAPH_VERSION, packed)
        conn.execute("UPDATE derived SET value=?, digest=? WHERE key=?", (packed, digest, derived.GRAPH_KEY))
    conn.close()
    engine = _engine(root)
    assert not engine.graph.from_image and engine.derived.graph_rejected == 1
    assert _state(engine) == expected
    engine.close()


def test_editor_buffers_are_never_written_into_the_image(tmp_path: Path) -> None:
    """Ensure that a graph built while an editor buffer overrides a file is not stored:
    images are of what is on disk."""
    root = write_tree(tmp_path / "ws", FILES)
    _engine(root).close()
    engine = Engine([root])
    engine.index()
    cart = root / "src/shop/cart.py"
    engine.open_document(str(cart), cart.read_text() + "\n\ndef unsaved_otter():\n    pass\n", 2, edited=True)
    engine.warm_up()
    assert engine.graph.from_image and engine.derived.graph_saved == 0
    assert "unsaved_otter" in engine.graph._edges.facts[str(cart)].defines
    engine.close()
    fresh = _engine(root)
    assert fresh.graph.from_image and "unsaved_otter" not in fresh.graph._edges.facts[str(cart)].defines
    fresh.close()


@functools.cache
def _packed_sample() -> tuple[bytes, dict[str, IndexedFile]]:
    """One real image and the entries it was taken of (built once: every example mutates
    the same bytes, as hypothesis needs to replay them)."""
    root = write_tree(Path(tempfile.mkdtemp(prefix="graph-image-")) / "ws", FILES)
    engine = _engine(root, cache=False)
    edges: Edges = engine.graph._edges
    entries = {f: e for f, e in engine.workspace.files.items() if e.language == "python"}
    packed = graph_image.pack(edges.export_image({f: e.hash for f, e in entries.items()}))
    engine.close()
    shutil.rmtree(root.parent)
    return packed, entries


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_unpack_refuses_or_restores_any_bytes(data: st.DataObject) -> None:
    """Ensure that whatever bytes are unpacked — a real image with bytes flipped, cut or
    added — the result is None or an image that restores without an error."""
    original, entries = _packed_sample()
    packed = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(packed) - 1))
        action = data.draw(st.sampled_from(["flip", "cut", "add"]))
        if action == "flip":
            packed[at] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del packed[at : at + data.draw(st.integers(1, 16))]
        else:
            packed[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    image = graph_image.unpack(bytes(packed))
    if image is not None:
        fresh = Edges()
        left = fresh.restore(image, entries)
        fresh.apply(left)


def test_the_index_command_leaves_every_derived_cache_warm(tmp_path: Path, capsys: Any) -> None:
    """Ensure that `ctx-lsp index` stores the postings, the graph and its global rank, so
    the next process derives none of them; `--files-only` stores none of them."""
    from ctx_lsp.cli import main

    root = write_tree(tmp_path / "ws", FILES)
    assert main(["index", str(root), "--quiet", "--files-only"]) == 0
    assert "derived" not in capsys.readouterr().out
    with _db(root) as conn:
        assert conn.execute("SELECT count(*) FROM derived").fetchone()[0] == 0
    conn.close()
    assert main(["index", str(root), "--quiet"]) == 0
    assert "derived the search and body-terms postings and the graph" in capsys.readouterr().out
    engine = _engine(root)
    assert engine.search_index.from_image and engine.search_index.docs_built == 0
    assert engine.graph.from_image and engine.graph.global_from_cache
    assert engine.derived.image_saved == engine.derived.graph_saved == engine.derived.rank_saved == 0
    assert _state(engine) == _rebuilt(root)
    engine.close()


def test_a_watching_engine_prepares_a_restored_graph_for_changes_in_a_pause(tmp_path: Path) -> None:
    """Ensure that a restored graph, which leaves the tables only changes need to its first
    change, gets them from the watcher once it has reconciled in a pause — so the first
    edit's bundle does not wait for them — and that the prepared graph equals a rebuild."""
    from ctx_lsp.index import watch

    root = write_tree(tmp_path / "ws", FILES)
    _engine(root).close()
    engine = _engine(root)
    assert engine.graph.from_image and not engine.graph._edges.prepared
    watcher = engine.start_watching()
    deadline = time.monotonic() + 10 + watch.RECONCILE_QUIET_MS / 1000
    while not engine.graph._edges.prepared and time.monotonic() < deadline:
        time.sleep(0.05)
    assert watcher.reconciles == 1 and engine.graph._edges.prepared and watcher.idle_work is None
    assert _state(engine) == _rebuilt(root)
    engine.close()


def test_tables_built_beside_requests_give_way_to_a_change_that_came_first(tmp_path: Path) -> None:
    """Ensure that tables built from a snapshot outside the graph's lock are dropped when a
    change was applied in the meantime (it built its own from the graph as it was), and
    that either way the graph equals a rebuild."""
    root = write_tree(tmp_path / "ws", FILES)
    _engine(root).close()
    engine = _engine(root)
    edges: Edges = engine.graph._edges
    build = edges.tables_for_changes()
    stock = root / "src/shop/stock.py"
    stock.write_text("def take(items):\n    return price_of(items)\n")
    engine.refresh([stock])
    engine.graph.catch_up()
    assert edges.prepared
    users = edges._users
    edges.install(build())  # stale: taken before the change
    assert edges._users is users
    assert _state(engine) == _rebuilt(root)
    engine.close()


POLYGLOT_FILES = {
    **FILES,
    "go.mod": "module example.com/shop\n",
    "svc/main.go": 'package main\n\nimport "example.com/shop/svc/cart"\n\nfunc main() { cart.Run() }\n',
    "svc/cart/cart.go": "package cart\n\nfunc Run() {}\n",
    "web/app.ts": 'import { price } from "./price"\nexport const total = () => price(2)\n',
    "web/price.ts": "export function price(n: number): number { return n }\n",
}


def test_a_restored_graph_of_several_languages_is_the_graph_it_would_build(tmp_path: Path) -> None:
    """Ensure that import candidates of every language (carried in the image as probed
    statements) restore to exactly the graph a rebuild gives."""
    root = write_tree(tmp_path / "ws", POLYGLOT_FILES)
    _engine(root).close()
    second = _engine(root)
    try:
        assert second.graph.from_image
        assert second.graph.imports_of(str(root / "web/app.ts")) == [str(root / "web/price.ts")]
        assert _state(second) == _rebuilt(root)
    finally:
        second.close()
