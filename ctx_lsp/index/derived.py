"""Derived state kept in the index cache, so a fresh process does not derive it again.

A warm start reads every file's outline from the cache; deriving the search postings and
the graph's global rank from those outlines used to cost most of a CLI call. Both are
stored next to the files, each under a digest of exactly what it was derived from:

- **the search postings** (`derived`, key `search_postings`, in the first folder's cache):
  one image of the whole index as flat arrays (`search.PostingsImage`), with each file's
  display path and content hash. Its digest covers `IMAGE_VERSION` (the source of
  `terms.py`, `search.py`, `postings.py` and `packed.py`, the boosts, the array layout) and every byte, so an image
  another version wrote, or whose bytes were altered, is not read. A full pass into an
  empty index starts from the image and derives again only the files whose path or hash
  differ (removing those that are gone), then rewrites the image; edits in a running
  process change the postings only (the next process re-derives the files edited since).
- **the body-terms postings** (`derived`, key `body_postings`): the same kind of image
  for the body-terms index (`index/body_terms.py`: one document a file, its code's words),
  under `BODY_IMAGE_VERSION`, which also covers how units and their terms are derived
  (`UNITS_VERSION`). Restored, brought up to date and written back the same way.
- **the global rank** (`derived`, key `global_rank`, in the first folder's cache): the
  PageRank vectors, under a digest of the walk's rows (every file and weighted edge), the
  tolerance and `RANK_VERSION`. Any change of the graph changes the digest, so a stored
  rank is only used for the very graph it was computed on.

- **the reference graph** (`derived`, key `reference_graph`, in the first folder's cache):
  one image of its facts and edges as flat arrays (`graph.image.GraphImage`), with each
  file's display path and content hash, under a digest of `GRAPH_VERSION` (the source of
  the modules that derive facts and edges, and of the tuned numbers) and every byte. Like
  the postings, a process restores it, applies only the files that differ, and writes it
  back when any did.

An SQLite error while reading is reported in status (the store's warnings) and the state
is derived in memory, as without a cache. Nothing is written for in-memory stores or for
editor buffers (their content is not the disk's).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import sqlite3
import sys
from array import array
from collections.abc import Callable, Sequence

from ctx_lsp import relevance
from ctx_lsp.code import outline
from ctx_lsp.index import body_terms, packed, postings, search, terms
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.graph import edges, facts, image, modules
from ctx_lsp.index.graph.image import GraphImage
from ctx_lsp.index.graph.ranking import Row
from ctx_lsp.index.search import PostingsImage
from ctx_lsp.index.store import IndexStore
from ctx_lsp.index.unit_postings import UNITS_VERSION
from ctx_lsp.index.versions import source_digest
from ctx_lsp.relevance import DAMPING, GLOBAL_TOLERANCE, NAME_BOOST, PATH_BOOST

log = logging.getLogger(__name__)

__all__ = ["BODY_POSTINGS_KEY", "GRAPH_KEY", "RANK_KEY", "SEARCH_VERSION", "DerivedCache", "StoredImages"]

StoreFor = Callable[[str | None], IndexStore | None]
"""The opened cache of a folder (by its root), or of the first folder for None."""


SEARCH_VERSION = f"1:{NAME_BOOST}:{PATH_BOOST}:{source_digest(terms, search, postings)}"
"""Changes when the way documents are derived may have changed; stored images then miss."""

RANK_VERSION = f"1:{DAMPING}:{GLOBAL_TOLERANCE}"
RANK_KEY = "global_rank"
POSTINGS_KEY = "search_postings"
_IMAGE_ARRAYS = (
    "doc_file",
    "doc_start",
    "doc_end",
    "doc_length",
    "doc_term_ends",
    "doc_terms",
    "term_ends",
    "posting_docs",
    "posting_tfs",
)
_IMAGE_STRINGS = ("files", "paths", "hashes", "symbols", "kinds", "terms")
IMAGE_VERSION = f"{SEARCH_VERSION}:{source_digest(packed)}:{packed.ARRAY_FORMAT}"
BODY_POSTINGS_KEY = "body_postings"
BODY_IMAGE_VERSION = f"{IMAGE_VERSION}:{UNITS_VERSION}:{source_digest(body_terms)}"
"""Changes when the body documents may be derived otherwise: their units, terms or layout."""
GRAPH_KEY = "reference_graph"
GRAPH_VERSION = f"1:{source_digest(facts, edges, modules, image, packed, relevance, outline)}:{packed.ARRAY_FORMAT}"
"""Changes when the way the graph is derived from outlines may have changed."""


def _digest(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


class DerivedCache:
    """Reads and writes derived state through the workspace's caches (see the module doc).

    Counters say what happened, for status, tests and benchmarks."""

    def __init__(self, store_for: StoreFor):
        self._store_for = store_for
        self.rank_loaded = 0
        self.rank_saved = 0
        self.symbol_images = StoredImages(self, POSTINGS_KEY, IMAGE_VERSION, "search postings")
        self.body_images = StoredImages(self, BODY_POSTINGS_KEY, BODY_IMAGE_VERSION, "body postings")
        self.graph_loaded = 0
        self.graph_rejected = 0
        self.graph_saved = 0

    def _store(self, root: str | None) -> IndexStore | None:
        store = self._store_for(root)
        if store is None or store.location == ":memory:":
            return None
        return store

    @staticmethod
    def _warn(store: IndexStore, what: str, err: Exception) -> None:
        msg = f"index cache: stored {what} unreadable ({err}); derived in memory"
        if msg not in store.warnings:
            store.warnings.append(msg)
        log.warning(msg)

    # ------------------------------------------------------------------ the whole postings
    def stored_bytes(self, key: str, what: str, version: str) -> tuple[bytes | None, bool]:
        """(the stored bytes under `key` if their digest holds for `version`, else None;
        whether stored bytes were refused)."""
        store = self._store(None)
        if store is None:
            return None, False
        try:
            row = store.load_derived(key)
        except sqlite3.Error as err:
            self._warn(store, what, err)
            return None, False
        if row is None:
            return None, False
        digest, value = row
        if not isinstance(value, bytes) or digest != _bytes_digest(version, value):
            return None, True
        return value, False

    def put_bytes(self, key: str, version: str, value: bytes) -> bool:
        store = self._store(None)
        if store is None:
            return False
        store.put_derived(key, _bytes_digest(version, value), value)
        return True

    def load_image(self) -> PostingsImage | None:
        return self.symbol_images.load_image()

    def save_image(self, entries: Sequence[IndexedFile], image: PostingsImage) -> None:
        self.symbol_images.save_image(entries, image)

    @property
    def image_loaded(self) -> int:
        return self.symbol_images.loaded

    @property
    def image_rejected(self) -> int:
        return self.symbol_images.rejected

    @property
    def image_saved(self) -> int:
        return self.symbol_images.saved

    # ------------------------------------------------------------------ the graph
    def load_graph(self) -> GraphImage | None:
        value, refused = self.stored_bytes(GRAPH_KEY, "graph", GRAPH_VERSION)
        found = image.unpack(value) if value is not None else None
        if found is None:
            self.graph_rejected += refused or value is not None
            return None
        self.graph_loaded += 1
        return found

    def save_graph(self, graph: GraphImage) -> None:
        if self.put_bytes(GRAPH_KEY, GRAPH_VERSION, image.pack(graph)):
            self.graph_saved += 1

    # ------------------------------------------------------------------ the global rank
    @staticmethod
    def rank_key(paths: Sequence[str], rows: Sequence[Row], order: Sequence[int]) -> str:
        """A digest of everything the global rank is computed from."""
        h = hashlib.blake2b(digest_size=16)
        h.update(RANK_VERSION.encode())
        h.update("\0".join(paths).encode("utf-8", "surrogatepass"))
        for targets, probs in rows:  # exact bytes of every id and probability
            h.update(len(targets).to_bytes(4, "little"))
            h.update(array("q", targets).tobytes())
            h.update(array("d", probs).tobytes())
        h.update(array("q", order).tobytes())
        return h.hexdigest()

    def load_rank(self, key: str, size: int) -> tuple[list[float], list[float]] | None:
        store = self._store(None)
        if store is None:
            return None
        try:
            row = store.load_derived(RANK_KEY)
        except sqlite3.Error as err:
            self._warn(store, "rank", err)
            return None
        if row is None or not isinstance(row[1], str) or row[0] != _digest(key, row[1]):
            return None
        try:
            p, r = json.loads(row[1])
        except (ValueError, TypeError):
            return None
        if not (isinstance(p, list) and isinstance(r, list) and len(p) == len(r) == size):
            return None
        if not all(type(x) is float for x in p) or not all(type(x) is float for x in r):
            return None
        self.rank_loaded += 1
        return p, r

    def save_rank(self, key: str, p: Sequence[float], r: Sequence[float]) -> None:
        store = self._store(None)
        if store is None:
            return
        value = json.dumps([list(p), list(r)], separators=(",", ":"))
        store.put_derived(RANK_KEY, _digest(key, value), value)
        self.rank_saved += 1


class StoredImages:
    """One kind of postings image in the cache under its key and version: the cache a
    `SearchIndex` reads its whole postings from and writes them to (`search.ImageCache`).

    Counters say what happened: whole images read back, stored ones refused, written."""

    def __init__(self, derived: DerivedCache, key: str, version: str, what: str):
        self._derived = derived
        self._key, self._version, self._what = key, version, what
        self.loaded = 0
        self.rejected = 0
        self.saved = 0

    def load_image(self) -> PostingsImage | None:
        value, refused = self._derived.stored_bytes(self._key, self._what, self._version)
        image = _unpack_image(value) if value is not None else None
        if image is None:
            self.rejected += refused or value is not None
            return None
        self.loaded += 1
        return image

    def save_image(self, entries: Sequence[IndexedFile], image: PostingsImage) -> None:
        if any(e.overlay_version is not None for e in entries):
            return  # images are of what is on disk
        if self._derived.put_bytes(self._key, self._version, _pack_image(image)):
            self.saved += 1


def _bytes_digest(key: str, value: bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(key.encode())
    h.update(b"\0")
    h.update(value)
    return h.hexdigest()


def _pack_image(image: PostingsImage) -> bytes:
    return packed.pack(
        {name: getattr(image, name) for name in _IMAGE_STRINGS}, {name: getattr(image, name) for name in _IMAGE_ARRAYS}
    )


def _unpack_image(value: bytes) -> PostingsImage | None:
    columns = packed.unpack(value, _IMAGE_STRINGS, _IMAGE_ARRAYS)
    if columns is None:
        return None
    strings, arrays = columns
    n_docs = len(strings["symbols"])
    if any(len(arrays[n]) != n_docs for n in _IMAGE_ARRAYS[:5]):
        return None
    n_terms, ends, doc_ends = len(strings["terms"]), arrays["term_ends"], arrays["doc_term_ends"]
    if len(ends) != n_terms or len(arrays["posting_docs"]) != len(arrays["posting_tfs"]):
        return None
    if len(doc_ends) != n_docs or (n_docs and doc_ends[-1] != len(arrays["doc_terms"])):
        return None
    if n_terms and ends[-1] != len(arrays["posting_docs"]):
        return None
    # The digest already vouches for every byte (only this module writes images), so the
    # checks here are of the layout; the ranges of the two big number columns are not
    # scanned (~80 ms on Django), that of the per-document file numbers is.
    doc_file = arrays["doc_file"]
    if doc_file and (min(doc_file) < 0 or max(doc_file) >= len(strings["files"])):
        return None
    runs = 1 + sum(1 for a, b in itertools.pairwise(doc_file) if a != b) if doc_file else 0
    if runs != len(set(doc_file)):  # the postings keep each file's documents as one range
        return None
    if len(strings["paths"]) != len(strings["files"]) or len(strings["hashes"]) != len(strings["files"]):
        return None
    kinds = [sys.intern(k) for k in strings["kinds"]]  # a handful of values, one per document
    return PostingsImage(
        files=strings["files"],
        paths=strings["paths"],
        hashes=strings["hashes"],
        symbols=strings["symbols"],
        kinds=kinds,
        doc_file=arrays["doc_file"],
        doc_start=arrays["doc_start"],
        doc_end=arrays["doc_end"],
        doc_length=arrays["doc_length"],
        doc_term_ends=arrays["doc_term_ends"],
        doc_terms=arrays["doc_terms"],
        terms=strings["terms"],
        term_ends=arrays["term_ends"],
        posting_docs=arrays["posting_docs"],
        posting_tfs=arrays["posting_tfs"],
    )
