"""Lexical search over symbols and files, kept current incrementally with the index.

Documents are symbols (name, signature, first docstring line, file path, the names it
calls) and files (path, module docstring). BM25 ranks them for the identifier-aware terms of a query. Postings
are updated per changed file, never rebuilt per request: a query touches only the
postings of its own terms.

Nor are they derived again by every fresh process: a full pass into an empty index starts
from the image of the postings kept in the index cache (`index/derived.py`), derives only
the files whose path or content hash differ from the image's, and writes the image back
when it had to derive anything.
"""

from __future__ import annotations

import bisect
import heapq
import math
import threading
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ctx_lsp.code.outline import Symbol
from ctx_lsp.index.changes import ChangeQueue
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.postings import EMPTY_IMAGE, BaseLookup, DocRow, ImageBuilder, PostingsImage, base_lookup
from ctx_lsp.index.terms import count_terms, query_terms, terms
from ctx_lsp.relevance import BM25_B, BM25_K1, NAME_BOOST, PATH_BOOST


@dataclass(frozen=True, slots=True)
class SearchHit:
    path: str  # display path
    abs_path: str
    symbol: str  # qualname, "" for a file-level hit
    kind: str  # "file" | "class" | "function" | "method" | "heading"
    start_line: int
    end_line: int
    score: float
    matched: tuple[str, ...]  # the query terms this document contains


@dataclass(frozen=True, slots=True)
class _Doc:
    abs_path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    length: int


@dataclass(frozen=True, slots=True)
class _FoldSource:
    """What a fold packs, taken under the lock (`SearchIndex._snapshot`): the base and
    which of its files to drop, the live files in the order added, the live part's terms
    in the order its dicts hold them, and the live containers themselves (read while
    other threads may change them: see `SearchIndex._build_fold`)."""

    base: PostingsImage
    dropped: set[str]
    live: list[tuple[str, str]]  # (abs path, content hash)
    terms: list[str]
    postings: dict[str, dict[int, int]]
    docs: dict[int, _Doc]
    doc_terms: dict[int, tuple[str, ...]]
    by_file: dict[str, range]
    paths: dict[str, str]


def symbol_terms(sym: Symbol, path_terms: Sequence[str]) -> list[str]:
    """A symbol is found by its name, signature, docstring summary and path, and by what
    it calls: a task names the machinery a change touches (`importlib`, `echo`), which is
    often only in the bodies that use it."""
    found = terms(sym.name) * NAME_BOOST
    found += terms(f"{sym.signature} {sym.doc}")  # a space parts words: the terms of each, in turn
    found += path_terms
    if sym.calls:
        found += terms(" ".join(sym.calls))
    return found


def file_terms(entry: IndexedFile, path_terms: list[str] | None = None) -> list[str]:
    """The file's own document: its path (`path_terms`, if its terms are in hand) and its
    module docstring."""
    if path_terms is None:
        path_terms = _path_terms(entry)
    return [*path_terms * PATH_BOOST, *terms(entry.outline.docstring)]


def _path_terms(entry: IndexedFile) -> list[str]:
    return terms(entry.path.replace("/", " ").replace(".", " "))


def file_docs(entry: IndexedFile) -> list[DocRow]:
    """The documents of one file, in the order they are numbered; documents without
    terms are left out (they could never match)."""
    docs: list[DocRow] = []
    path_terms = _path_terms(entry)
    ft = file_terms(entry, path_terms)
    if ft:
        docs.append(("", "file", 1, max(entry.line_count, 1), len(ft), count_terms(ft)))
    for sym in entry.outline.symbols:
        st = symbol_terms(sym, path_terms)
        if st:
            docs.append((sym.qualname, sym.kind, sym.start_line, sym.end_line, len(st), count_terms(st)))
    return docs


FOLD_MIN_LIVE_POSTINGS = 200_000
"""Live postings (a dict entry each, ~100 bytes) past which the live part is folded into
the base (`SearchIndex.fold_due`), if they are also `FOLD_LIVE_SHARE` of the base's. Edits
never come near it; a first pass published piecewise (64 files a chunk into the live
part, `Engine._follow_pass`) does: 7,046 kernel files are ~2.9M symbol postings, all of
them live dicts until the pass ended."""
FOLD_LIVE_SHARE = 0.5
"""...of the base's postings: the base grows by half at least with each fold, so folding
re-packs each posting a few times in all, not once per chunk."""


class ImageCache(Protocol):
    """Where the postings are kept between processes (`index/derived.py`)."""

    def load_image(self) -> PostingsImage | None:
        """The stored image, if it is intact and was derived the way this version derives."""
        ...

    def save_image(self, entries: Sequence[IndexedFile], image: PostingsImage) -> None: ...


class SearchIndex:
    """BM25 postings over every indexed file's documents; call `update` on index changes.

    The documents of a file are `documents(entry)`: by default its symbols and the file
    itself (`file_docs`); the body-terms index takes one document per file of its code's
    words (`index/body_terms.py`), with its own BM25 parameters.

    Two parts (issue 11, memory). The **base** is a `PostingsImage` taken whole: flat
    arrays, a few bytes per posting instead of a dict entry each (Django: ~50 MB of
    per-term dicts -> ~12 MB). It is what a full pass ends with, read from the cache or
    derived and packed. Documents added after it (edits, buffers) go to the **live**
    part, per-term dicts numbered after the base; a base document that is removed is only
    marked dead (its postings stay until the next full pass or fold, and are skipped).
    A full pass streams its documents into the base without dicts (`ImageBuilder`); a
    live part grown large is folded into the base the same way (`_fold`). Scores and
    hits are those of one index holding exactly the live documents.

    A fold re-packs every posting: seconds on a large workspace. While a first pass is
    followed (`hold_changes`), and at its end (`compact`), it is built without the lock
    queries take, from a snapshot, and swapped in under it (`fold`).
    """

    def __init__(
        self,
        cache: ImageCache | None = None,
        documents: Callable[[IndexedFile], list[DocRow]] = file_docs,
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
    ) -> None:
        self._lock = threading.Lock()
        self._cache = cache
        self._documents = documents
        self._k1, self._b = k1, b
        self.docs_built = 0
        """Files whose documents were derived from their outline (the rest came from the
        cache's image): for tests and benchmarks."""
        self._changes = ChangeQueue()
        self._fold_lock = threading.Lock()  # one fold built at a time; queries never take it
        self._folding = False  # a fold is being built outside the lock
        self._since: dict[str, tuple[IndexedFile | None, list[DocRow] | None]] | None = None
        """While a fold is built: the files changed since its snapshot, with the documents
        applied for each (None if the index was rebuilt whole meanwhile: the fold is void)."""
        # the base: documents numbered below `_base_docs`, postings by term number
        self._base: PostingsImage | None = None
        self._base_terms: dict[str, int] = {}
        self._base_docs = 0
        self._dead: set[int] = set()  # base documents removed since
        self._dead_df: dict[int, int] = {}  # base term number -> dead documents holding it
        # the live part: documents added after the base
        self._postings: dict[str, dict[int, int]] = {}
        self._docs: dict[int, _Doc] = {}
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._live_hashes: dict[str, str] = {}  # files added since the base -> content hash, in order
        self._live_postings = 0
        # both
        self._by_file: dict[str, range] = {}  # a file's documents are numbered in a row
        self._paths: dict[str, str] = {}
        self._n_docs = 0
        self._next_id = 0
        self._total_length = 0
        self.from_image = False
        """The postings were read whole from the cache (for tests and benchmarks)."""

    def __len__(self) -> int:
        self.catch_up()
        return self._n_docs

    @property
    def empty(self) -> bool:
        """No file applied yet (queued changes not counted): the next catch-up of a full
        pass builds the whole index, from the cache's image if there is one."""
        return not self._paths

    def update(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        """Queue index changes; they are applied on the next search (or `catch_up`).

        Queuing keeps a full index pass cheap: postings for thousands of files are built
        once, when first needed, not on the thread that reports the index as ready.
        """
        self._changes.add(removed, updated)

    def hold_changes(self, held: bool) -> None:
        """Queries stop (or resume) applying index changes: see `ChangeQueue.held`."""
        self._changes.held = held

    def catch_up(self, force: bool = False, limit: int | None = None) -> bool:
        """Apply queued changes (at most `limit`); whether there were any. `force` applies
        them while queries hold them (`hold_changes`)."""
        with self._lock:  # drained and applied under one lock: batches apply in order
            pending = self._changes.drain(force, limit)
            if not pending:
                return False
            cache = self._cache
            entries = [e for e in pending.values() if e is not None]
            fresh = None
            if not self._paths and len(pending) == len(entries) > 1:  # a full pass into an empty index
                fresh = self._build_whole(cache.load_image() if cache is not None else None, pending)
                self._since = None  # a fold being built is of an index that is gone
            else:
                since = self._since
                for abs_path, entry in pending.items():
                    self._remove_file(abs_path)
                    docs = None
                    if entry is not None:
                        docs = self._documents(entry)
                        self._add_file(entry, docs)
                        self.docs_built += 1
                    if since is not None:
                        since.pop(abs_path, None)  # applied again in the order last applied
                        since[abs_path] = (entry, docs)
                # Held (a first pass followed), the follower folds, outside the lock (`fold`).
                if not self._folding and not self._changes.held and self.fold_due:
                    self._fold()
        if cache is not None and fresh is not None:
            cache.save_image(entries, fresh)
        return True

    @property
    def fold_due(self) -> bool:
        """The live part has grown past `FOLD_MIN_LIVE_POSTINGS` and `FOLD_LIVE_SHARE` of
        the base's postings: time to fold it (`fold`)."""
        base_postings = len(self._base.posting_docs) if self._base is not None else 0
        return self._live_postings >= max(FOLD_MIN_LIVE_POSTINGS, base_postings * FOLD_LIVE_SHARE)

    def compact(self, entries: Sequence[IndexedFile], while_building: Callable[[], None] | None = None) -> None:
        """After a full pass that was published piecewise (answered from a partial index
        while it ran), pack what was added since the base into a new base, and keep its
        image for the next process: `entries` are the index's files now (an image is only
        kept of what is on disk). The caller applies the queued changes first, a few at a
        time (`catch_up` with a limit): a request must not wait for thousands.

        Packed without the lock queries take (`fold`), and saved outside it; `while_building`
        is called once the snapshot is taken (a test holds the build open there)."""
        fresh = self.fold(while_building)
        if fresh is not None and self._cache is not None:
            self._cache.save_image(entries, fresh)

    def fold(self, while_building: Callable[[], None] | None = None) -> PostingsImage | None:
        """Fold the live part into a new base without holding the lock queries take:
        snapshot under the lock (a few C-level copies), build outside it (`_build_fold`:
        seconds on the kernel, where a request waited for the fold under the lock), then
        swap the new base in under the lock and apply again the changes applied since the
        snapshot (`_since`: the watcher's refreshes, a follower's chunk), so nothing is
        lost. Queries meanwhile answer from the index as it was, and then as it is.

        The base's image if the index is now exactly it (nothing came meanwhile; or
        nothing to fold, as when another fold just ran), else None (also when the index
        was rebuilt whole meanwhile, which makes the fold moot)."""
        with self._fold_lock:
            with self._lock:
                if not self._docs and not self._dead:
                    return self._base
                source = self._snapshot()
                self._folding, self._since = True, {}
            try:
                if while_building is not None:
                    while_building()
                built = self._build_fold(source)
            except BaseException:
                with self._lock:
                    self._folding, self._since = False, None
                raise
            with self._lock:
                replay = self._since
                self._folding, self._since = False, None
                if replay is None:
                    return None
                self._install(built)
                for abs_path, (entry, docs) in replay.items():
                    self._remove_file(abs_path)
                    if entry is not None and docs is not None:
                        self._add_file(entry, docs)
            return None if replay else built.image

    # ------------------------------------------------------------------ the base
    def _set_base(self, image: PostingsImage, term_numbers: dict[str, int] | None = None) -> None:
        """Make `image` the whole index: no live documents, none dead. `term_numbers` is
        its terms -> their numbers, if the caller has it already."""
        self._install(base_lookup(image, term_numbers))

    def _install(self, base: BaseLookup) -> None:
        """Make a prepared base the whole index (under the lock): assignments only."""
        self._base = base.image
        self._base_terms = base.terms
        self._base_docs = self._next_id = self._n_docs = len(base.image.symbols)
        self._dead = set()
        self._dead_df = {}
        self._postings = {}
        self._docs = {}
        self._doc_terms = {}
        self._live_hashes = {}
        self._live_postings = 0
        self._paths = base.paths
        self._by_file = base.by_file
        self._total_length = base.total_length

    def _build_whole(
        self, image: PostingsImage | None, pending: Mapping[str, IndexedFile | None]
    ) -> PostingsImage | None:
        """Make the base the index of `pending` (every entry of a full pass), streamed
        into an `ImageBuilder`: from `image` (the cache's) if there is one, deriving only
        the files whose path or content differ from its, and removing its files that are
        gone. The new image, or None if `image` was already exactly that."""
        if image is None:
            builder = ImageBuilder()
            added: Sequence[IndexedFile | None] = list(pending.values())
        else:
            self.from_image = True
            stored = {f: (path, h) for f, path, h in zip(image.files, image.paths, image.hashes)}
            left: dict[str, IndexedFile | None] = {f: None for f in image.files if f not in pending}  # gone
            for abs_path, entry in pending.items():
                if (
                    entry is None
                    or entry.overlay_version is not None
                    or stored.get(abs_path) != (entry.path, entry.hash)
                ):
                    left[abs_path] = entry
            if not left:
                self._set_base(image)
                return None
            builder = ImageBuilder(image, dropped=left)
            added = list(left.values())
        for entry in added:
            if entry is not None:
                builder.add(entry.abs_path, entry.path, entry.hash, self._documents(entry))
                self.docs_built += 1
        fresh, term_numbers = builder.finish()
        self._set_base(fresh, term_numbers)
        return fresh

    def _fold(self, hashes: Mapping[str, str] | None = None) -> PostingsImage:
        """Pack the live documents (base and live parts) into a new base under the lock
        (edits and tests; a followed pass folds outside it: `fold`) and return its image.
        `hashes` gives every file's content hash (else the base's and the live files' own)."""
        built = self._build_fold(self._snapshot(), hashes)
        self._install(built)
        return built.image

    def _snapshot(self) -> _FoldSource:
        """What `_build_fold` packs, taken under the lock: C-level copies of the lists it
        iterates; the containers it only looks up in are referred to."""
        base = self._base if self._base is not None else EMPTY_IMAGE
        dropped = set(self._live_hashes)
        dropped.update(set(base.files).difference(self._paths))
        return _FoldSource(
            base,
            dropped,
            list(self._live_hashes.items()),
            list(self._postings),
            self._postings,
            self._docs,
            self._doc_terms,
            self._by_file,
            self._paths,
        )

    def _build_fold(self, source: _FoldSource, hashes: Mapping[str, str] | None = None) -> BaseLookup:
        """The live documents of `source` (base and live parts) packed into a new base,
        numbered afresh in document order: what one index holding exactly them would have
        as its image (terms: the base's, then the live part's in the order its dicts held
        them). Streamed through an `ImageBuilder`, never all as dicts.

        Runs with or without the lock. Without it, other threads may apply changes to the
        live containers meanwhile; what it reads of a file is then still exact or the
        file is skipped: a document's number is never reused while a fold is built (only
        a new base renumbers, and none is installed meanwhile but by a whole rebuild,
        which voids the fold), its postings never change, and a file changed since the
        snapshot is applied again on top of the new base (`fold`)."""
        builder = ImageBuilder(source.base, source.dropped)
        builder.register(source.terms)
        postings, docs, doc_terms, by_file = source.postings, source.docs, source.doc_terms, source.by_file
        for abs_path, hash_ in source.live:  # in the order they were added (as `_paths`)
            rows: list[DocRow] = []
            try:
                for doc_id in by_file.get(abs_path, ()):
                    d = docs[doc_id]
                    counts = {term: postings[term][doc_id] for term in doc_terms[doc_id]}
                    rows.append((d.symbol, d.kind, d.start_line, d.end_line, d.length, counts))
                path = source.paths[abs_path]
            except KeyError:  # removed since the snapshot
                continue
            builder.add(abs_path, path, hash_, rows)
        fresh, numbers = builder.finish(hashes)
        return base_lookup(fresh, numbers)

    # ------------------------------------------------------------------ documents
    def _doc(self, doc_id: int) -> _Doc:
        if doc_id < self._base_docs and self._base is not None:
            b = self._base
            return _Doc(
                b.files[b.doc_file[doc_id]],
                b.symbols[doc_id],
                b.kinds[doc_id],
                b.doc_start[doc_id],
                b.doc_end[doc_id],
                b.doc_length[doc_id],
            )
        return self._docs[doc_id]

    def _base_terms_of(self, doc_id: int) -> array:
        """The numbers of the base terms a base document holds."""
        assert self._base is not None
        ends = self._base.doc_term_ends
        return self._base.doc_terms[ends[doc_id - 1] if doc_id else 0 : ends[doc_id]]

    def _remove_file(self, abs_path: str) -> None:
        for doc_id in self._by_file.pop(abs_path, ()):
            self._n_docs -= 1
            if doc_id < self._base_docs and self._base is not None:
                self._dead.add(doc_id)
                self._total_length -= self._base.doc_length[doc_id]
                dead_df = self._dead_df
                for t in self._base_terms_of(doc_id):
                    dead_df[t] = dead_df.get(t, 0) + 1
                continue
            doc = self._docs.pop(doc_id)
            self._total_length -= doc.length
            held = self._doc_terms.pop(doc_id)
            self._live_postings -= len(held)
            for term in held:
                posting = self._postings.get(term)
                if posting is not None:
                    posting.pop(doc_id, None)
                    if not posting:
                        del self._postings[term]
        self._paths.pop(abs_path, None)
        self._live_hashes.pop(abs_path, None)

    def _add_file(self, entry: IndexedFile, docs: Sequence[DocRow]) -> None:
        abs_path = entry.abs_path
        self._paths[abs_path] = entry.path
        self._live_hashes[abs_path] = entry.hash
        postings = self._postings
        first = self._next_id
        for symbol, kind, start, end, length, counts in docs:
            doc_id = self._next_id
            self._next_id += 1
            for term, tf in counts.items():
                posting = postings.get(term)
                if posting is None:
                    postings[term] = {doc_id: tf}
                else:
                    posting[doc_id] = tf
            self._docs[doc_id] = _Doc(abs_path, symbol, kind, start, end, length)
            self._doc_terms[doc_id] = tuple(counts)
            self._live_postings += len(counts)
            self._total_length += length
        if self._next_id > first:
            self._by_file[abs_path] = range(first, self._next_id)
            self._n_docs += self._next_id - first

    # ------------------------------------------------------------------ queries
    def _posting(self, term: str) -> tuple[int, int, int, dict[int, int] | None]:
        """(document frequency, start and end of the term's base postings, its live
        postings) of a term; (0, 0, 0, None) if no live document holds it."""
        lo = hi = df = 0
        t = self._base_terms.get(term)
        if t is not None and self._base is not None:
            ends = self._base.term_ends
            lo, hi = ends[t - 1] if t else 0, ends[t]
            df = hi - lo - self._dead_df.get(t, 0)
        live = self._postings.get(term)
        if live:
            df += len(live)
        return df, lo, hi, live

    def term_weights(self, query: str) -> dict[str, float]:
        """The query's terms that some document holds, each with its inverse document
        frequency: how much finding it says (excerpts rank a file's lines by it)."""
        self.catch_up()
        with self._lock:
            n_docs = self._n_docs
            out = {}
            for term in query_terms(query):
                df = self._posting(term)[0]
                if df:
                    out[term] = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
            return out

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Top documents for the query; ties broken by path and line for determinism."""
        self.catch_up()
        q = query_terms(query)
        with self._lock:
            n_docs = self._n_docs
            if not q or not n_docs:
                return []
            avg_len = self._total_length / n_docs
            docs = self._docs
            base = self._base
            lengths = base.doc_length if base is not None else array("i")
            pd = base.posting_docs if base is not None else array("i")
            pt = base.posting_tfs if base is not None else array("i")
            k1, b = self._k1, self._b
            slope = k1 * b / avg_len if avg_len else 0.0  # norm = tf (k1 + 1) / (tf + k1 (1 - b) + slope * length)
            floor_k = k1 * (1 - b)
            scores: dict[int, float] = {}
            get = scores.get
            postings = []
            for term in q:
                df, lo, hi, live = self._posting(term)
                if not df:
                    continue
                postings.append((term, lo, hi, live))
                lift = math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) * (k1 + 1)
                for doc_id, tf in zip(pd[lo:hi], pt[lo:hi]):
                    scores[doc_id] = get(doc_id, 0.0) + lift * tf / (tf + floor_k + slope * lengths[doc_id])
                if live:
                    for doc_id, tf in live.items():
                        scores[doc_id] = get(doc_id, 0.0) + lift * tf / (tf + floor_k + slope * docs[doc_id].length)
            dead = self._dead
            if dead:
                if len(dead) < len(scores):
                    for doc_id in dead:
                        scores.pop(doc_id, None)
                else:
                    scores = {d: s for d, s in scores.items() if d not in dead}
            if not scores:
                return []
            # Only documents scoring at least the limit-th best can rank: sort those (ties
            # at the boundary included, so the path/line tie-break stays exact), not all.
            if len(scores) > limit:
                floor = heapq.nlargest(limit, scores.values())[-1]
                candidates = [kv for kv in scores.items() if kv[1] >= floor]
            else:
                candidates = list(scores.items())
            paths = self._paths
            found = {doc_id: self._doc(doc_id) for doc_id, _ in candidates}
            ranked = sorted(
                candidates,
                key=lambda kv: (-kv[1], paths.get(found[kv[0]].abs_path, ""), found[kv[0]].start_line),
            )[:limit]
            return [
                SearchHit(
                    path=paths.get(d.abs_path, d.abs_path),
                    abs_path=d.abs_path,
                    symbol=d.symbol,
                    kind=d.kind,
                    start_line=d.start_line,
                    end_line=d.end_line,
                    score=round(score, 4),
                    matched=tuple(term for term, lo, hi, live in postings if _holds(pd, lo, hi, live, doc_id)),
                )
                for doc_id, score in ranked
                for d in (found[doc_id],)
            ]


def _holds(pd: array, lo: int, hi: int, live: Mapping[int, int] | None, doc_id: int) -> bool:
    """Whether a term's postings (base slice `lo:hi` of `pd`, and `live`) hold the document."""
    if live is not None and doc_id in live:
        return True
    i = bisect.bisect_left(pd, doc_id, lo, hi)
    return i < hi and pd[i] == doc_id
