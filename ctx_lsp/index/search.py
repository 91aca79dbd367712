"""Lexical search over symbols and files, kept current incrementally with the index.

Documents are symbols (name, signature, first docstring line, file path, the names it
calls) and files (path, module docstring). BM25 ranks them for the identifier-aware terms of a query. Postings
are updated per changed file, never rebuilt per request: a query touches only the
postings of its own terms.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

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


class SearchIndex:
    """BM25 postings over every indexed file's symbols; call `update` on index changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changes = ChangeQueue()
        self._postings: dict[str, dict[int, int]] = {}
        self._docs: dict[int, _Doc] = {}
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._by_file: dict[str, list[int]] = {}
        self._paths: dict[str, str] = {}
        self._next_id = 0
        self._total_length = 0

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
        pending = self._changes.drain()
        if not pending:
            return
        with self._lock:
            for abs_path, entry in pending.items():
                self._remove_file(abs_path)
                if entry is not None:
                    self._add_file(entry)

    def _remove_file(self, abs_path: str) -> None:
        for doc_id in self._by_file.pop(abs_path, ()):
            doc = self._docs.pop(doc_id)
            self._total_length -= doc.length
            for term in self._doc_terms.pop(doc_id):
                posting = self._postings.get(term)
                if posting is not None:
                    posting.pop(doc_id, None)
                    if not posting:
                        del self._postings[term]
        self._paths.pop(abs_path, None)

    def _add_doc(self, abs_path: str, symbol: str, kind: str, start: int, end: int, doc_terms: list[str]) -> None:
        if not doc_terms:
            return
        doc_id = self._next_id
        self._next_id += 1
        counts = count_terms(doc_terms)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[doc_id] = tf
        self._docs[doc_id] = _Doc(abs_path, symbol, kind, start, end, len(doc_terms))
        self._doc_terms[doc_id] = tuple(counts)
        self._by_file.setdefault(abs_path, []).append(doc_id)
        self._total_length += len(doc_terms)

    def _add_file(self, entry: IndexedFile) -> None:
        self._paths[entry.abs_path] = entry.path
        self._add_doc(entry.abs_path, "", "file", 1, max(entry.line_count, 1), file_terms(entry))
        path_terms = terms(entry.path.replace("/", " ").replace(".", " "))
        for sym in entry.outline.symbols:
            self._add_doc(
                entry.abs_path, sym.qualname, sym.kind, sym.start_line, sym.end_line, symbol_terms(sym, path_terms)
            )

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Top documents for the query; ties broken by path and line for determinism."""
        self.catch_up()
        q = query_terms(query)
        with self._lock:
            n_docs = len(self._docs)
            if not q or not n_docs:
                return []
            avg_len = self._total_length / n_docs
            scores: dict[int, float] = {}
            matched: dict[int, list[str]] = {}
            for term in q:
                posting = self._postings.get(term)
                if not posting:
                    continue
                idf = math.log(1 + (n_docs - len(posting) + 0.5) / (len(posting) + 0.5))
                for doc_id, tf in posting.items():
                    length = self._docs[doc_id].length
                    norm = tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / avg_len))
                    scores[doc_id] = scores.get(doc_id, 0.0) + idf * norm
                    matched.setdefault(doc_id, []).append(term)
            ranked = sorted(
                scores.items(),
                key=lambda kv: (-kv[1], self._paths.get(self._docs[kv[0]].abs_path, ""), self._docs[kv[0]].start_line),
            )[:limit]
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
