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

import heapq
import math
import threading
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ctx_lsp.code.outline import Symbol
from ctx_lsp.index.changes import ChangeQueue
from ctx_lsp.index.files import IndexedFile
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


def symbol_terms(sym: Symbol, path_terms: Sequence[str]) -> list[str]:
    """A symbol is found by its name, signature, docstring summary and path, and by what
    it calls: a task names the machinery a change touches (`importlib`, `echo`), which is
    often only in the bodies that use it."""
    name_terms = terms(sym.name)
    return [
        *name_terms * NAME_BOOST,
        *terms(sym.signature),
        *terms(sym.doc),
        *path_terms,
        *(t for call in sym.calls for t in terms(call)),
    ]


def file_terms(entry: IndexedFile) -> list[str]:
    path_terms = terms(entry.path.replace("/", " ").replace(".", " "))
    return [*path_terms * PATH_BOOST, *terms(entry.outline.docstring)]


DocRow = tuple[str, str, int, int, int, dict[str, int]]
"""One document of a file as the postings take it: (symbol, kind, start line, end line,
length in terms, term -> count)."""


def file_docs(entry: IndexedFile) -> list[DocRow]:
    """The documents of one file, in the order they are numbered; documents without
    terms are left out (they could never match)."""
    docs: list[DocRow] = []
    ft = file_terms(entry)
    if ft:
        docs.append(("", "file", 1, max(entry.line_count, 1), len(ft), count_terms(ft)))
    path_terms = terms(entry.path.replace("/", " ").replace(".", " "))
    for sym in entry.outline.symbols:
        st = symbol_terms(sym, path_terms)
        if st:
            docs.append((sym.qualname, sym.kind, sym.start_line, sym.end_line, len(st), count_terms(st)))
    return docs


@dataclass(frozen=True, slots=True)
class PostingsImage:
    """All the postings as flat columns, documents numbered from 0 in file order: what a
    whole index is stored as (`index/derived.py`), read back without a loop per term
    occurrence. Column arrays are of type "i"."""

    files: list[str]  # abs paths, every file (with documents or not)
    paths: list[str]  # their display paths
    hashes: list[str]  # their content hashes: what each file's documents were derived from
    symbols: list[str]  # per document
    kinds: list[str]
    doc_file: array  # per document: index into `files`
    doc_start: array
    doc_end: array
    doc_length: array
    doc_term_ends: array  # per document: end of its slice of `doc_terms`
    doc_terms: array  # per document: the numbers (in `terms`) of the terms it holds
    terms: list[str]
    term_ends: array  # per term: end of its slice of `posting_docs` / `posting_tfs`
    posting_docs: array  # document numbers, ascending within a term
    posting_tfs: array


class ImageCache(Protocol):
    """Where the postings are kept between processes (`index/derived.py`)."""

    def load_image(self) -> PostingsImage | None:
        """The stored image, if it is intact and was derived the way this version derives."""
        ...

    def save_image(self, entries: Sequence[IndexedFile], image: PostingsImage) -> None: ...


class SearchIndex:
    """BM25 postings over every indexed file's symbols; call `update` on index changes."""

    def __init__(self, cache: ImageCache | None = None) -> None:
        self._lock = threading.Lock()
        self._cache = cache
        self.docs_built = 0
        """Files whose documents were derived from their outline (the rest came from the
        cache's image): for tests and benchmarks."""
        self._changes = ChangeQueue()
        self._postings: dict[str, dict[int, int]] = {}
        self._docs: dict[int, _Doc] = {}
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._by_file: dict[str, list[int]] = {}
        self._paths: dict[str, str] = {}
        self._next_id = 0
        self._total_length = 0
        self._image_terms: tuple[list[str], array, array] | None = None
        """Which terms each document taken from an image holds (its `terms`,
        `doc_term_ends`, `doc_terms`): read from the arrays when a file is removed, rather
        than turned into tuples for every document at start."""
        self._image_docs = 0  # documents numbered below this came from the image
        self.from_image = False
        """The postings were read whole from the cache (for tests and benchmarks)."""

    def __len__(self) -> int:
        self.catch_up()
        return len(self._docs)

    def update(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        """Queue index changes; they are applied on the next search (or `catch_up`).

        Queuing keeps a full index pass cheap: postings for thousands of files are built
        once, when first needed, not on the thread that reports the index as ready.
        """
        self._changes.add(removed, updated)

    def catch_up(self) -> None:
        with self._lock:  # drained and applied under one lock: batches apply in order
            pending = self._changes.drain()
            if not pending:
                return
            cache = self._cache
            entries = [e for e in pending.values() if e is not None]
            whole = cache is not None and not self._paths and len(pending) == len(entries) > 1
            image = cache.load_image() if whole and cache is not None else None
            if image is not None:  # a full pass into an empty index: start from the image
                pending = self._restore(image, pending)
                self.from_image = True
            for abs_path, entry in pending.items():
                self._remove_file(abs_path)
                if entry is not None:
                    self._add_file(entry, file_docs(entry))
                    self.docs_built += 1
            fresh = self._image(entries) if whole and (image is None or pending) else None
        if cache is not None and fresh is not None:
            cache.save_image(entries, fresh)

    def _image(self, entries: Sequence[IndexedFile]) -> PostingsImage:
        hashes = {e.abs_path: e.hash for e in entries}
        files = list(self._paths)
        file_no = {f: i for i, f in enumerate(files)}
        numbers = {doc_id: n for n, doc_id in enumerate(self._docs)}  # ids ascend: order kept
        term_no = {t: n for n, t in enumerate(self._postings)}
        docs = list(self._docs.values())
        term_ends = array("i")
        posting_docs = array("i")
        posting_tfs = array("i")
        for posting in self._postings.values():
            posting_docs.extend(numbers[d] for d in posting)
            posting_tfs.extend(posting.values())
            term_ends.append(len(posting_docs))
        doc_term_ends = array("i")
        doc_terms = array("i")
        for doc_id in self._docs:
            doc_terms.extend(term_no[t] for t in self._terms_of(doc_id))
            doc_term_ends.append(len(doc_terms))
        return PostingsImage(
            files=files,
            paths=[self._paths[f] for f in files],
            hashes=[hashes[f] for f in files],
            symbols=[d.symbol for d in docs],
            kinds=[d.kind for d in docs],
            doc_file=array("i", [file_no[d.abs_path] for d in docs]),
            doc_start=array("i", [d.start_line for d in docs]),
            doc_end=array("i", [d.end_line for d in docs]),
            doc_length=array("i", [d.length for d in docs]),
            doc_term_ends=doc_term_ends,
            doc_terms=doc_terms,
            terms=list(self._postings),
            term_ends=term_ends,
            posting_docs=posting_docs,
            posting_tfs=posting_tfs,
        )

    def _restore(
        self, image: PostingsImage, pending: Mapping[str, IndexedFile | None]
    ) -> dict[str, IndexedFile | None]:
        """Take an image into an empty index; return what is left to apply: the files whose
        path or content differ from the image's (to derive again) and the image's files
        that are gone (to remove)."""
        files = image.files
        self._paths = dict(zip(files, image.paths))
        self._docs = {
            n: _Doc(files[f], sym, kind, start, end, length)
            for n, (f, sym, kind, start, end, length) in enumerate(
                zip(image.doc_file, image.symbols, image.kinds, image.doc_start, image.doc_end, image.doc_length)
            )
        }
        by_file: dict[str, list[int]] = {}
        for n, f in enumerate(image.doc_file):
            by_file.setdefault(files[f], []).append(n)
        self._by_file = by_file
        ends = image.term_ends
        pd, pt = image.posting_docs, image.posting_tfs
        self._postings = {
            term: dict(zip(pd[start:end], pt[start:end]))
            for term, start, end in zip(image.terms, [0, *ends[:-1]], ends)
        }
        self._doc_terms = {}
        self._image_terms = (image.terms, image.doc_term_ends, image.doc_terms)
        self._image_docs = self._next_id = len(self._docs)
        self._total_length = sum(image.doc_length)
        stored = {f: (path, h) for f, path, h in zip(files, image.paths, image.hashes)}
        left: dict[str, IndexedFile | None] = {f: None for f in files if f not in pending}
        for abs_path, entry in pending.items():
            same = (
                entry is not None and entry.overlay_version is None and stored.get(abs_path) == (entry.path, entry.hash)
            )
            if not same:
                left[abs_path] = entry
        return left

    def _terms_of(self, doc_id: int) -> Sequence[str]:
        """The distinct terms of a document."""
        if doc_id < self._image_docs and self._image_terms is not None:
            terms_, ends, numbers = self._image_terms
            return [terms_[n] for n in numbers[ends[doc_id - 1] if doc_id else 0 : ends[doc_id]]]
        return self._doc_terms[doc_id]

    def _remove_file(self, abs_path: str) -> None:
        for doc_id in self._by_file.pop(abs_path, ()):
            doc = self._docs.pop(doc_id)
            self._total_length -= doc.length
            for term in self._terms_of(doc_id):
                posting = self._postings.get(term)
                if posting is not None:
                    posting.pop(doc_id, None)
                    if not posting:
                        del self._postings[term]
            self._doc_terms.pop(doc_id, None)
        self._paths.pop(abs_path, None)

    def _add_file(self, entry: IndexedFile, docs: Sequence[DocRow]) -> None:
        abs_path = entry.abs_path
        self._paths[abs_path] = entry.path
        postings, doc_ids = self._postings, self._by_file.setdefault(abs_path, [])
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
            doc_ids.append(doc_id)
            self._total_length += length
        if not doc_ids:
            del self._by_file[abs_path]

    def term_weights(self, query: str) -> dict[str, float]:
        """The query's terms that some document holds, each with its inverse document
        frequency: how much finding it says (excerpts rank a file's lines by it)."""
        self.catch_up()
        with self._lock:
            n_docs = len(self._docs)
            out = {}
            for term in query_terms(query):
                posting = self._postings.get(term)
                if posting:
                    out[term] = math.log(1 + (n_docs - len(posting) + 0.5) / (len(posting) + 0.5))
            return out

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Top documents for the query; ties broken by path and line for determinism."""
        self.catch_up()
        q = query_terms(query)
        with self._lock:
            n_docs = len(self._docs)
            if not q or not n_docs:
                return []
            avg_len = self._total_length / n_docs
            docs = self._docs
            k1, b = BM25_K1, BM25_B
            slope = k1 * b / avg_len  # norm = tf (k1 + 1) / (tf + k1 (1 - b) + slope * length)
            base = k1 * (1 - b)
            scores: dict[int, float] = {}
            get = scores.get
            postings = []
            for term in q:
                posting = self._postings.get(term)
                if not posting:
                    continue
                postings.append((term, posting))
                idf = math.log(1 + (n_docs - len(posting) + 0.5) / (len(posting) + 0.5))
                lift = idf * (k1 + 1)
                for doc_id, tf in posting.items():
                    scores[doc_id] = get(doc_id, 0.0) + lift * tf / (tf + base + slope * docs[doc_id].length)
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
            ranked = sorted(
                candidates,
                key=lambda kv: (-kv[1], paths.get(docs[kv[0]].abs_path, ""), docs[kv[0]].start_line),
            )[:limit]
            matched = {doc_id: [term for term, posting in postings if doc_id in posting] for doc_id, _ in ranked}
            return [
                SearchHit(
                    path=self._paths.get(d.abs_path, d.abs_path),
                    abs_path=d.abs_path,
                    symbol=d.symbol,
                    kind=d.kind,
                    start_line=d.start_line,
                    end_line=d.end_line,
                    score=round(score, 4),
                    matched=tuple(matched[doc_id]),
                )
                for doc_id, score in ranked
                for d in (self._docs[doc_id],)
            ]
