"""The body-terms index: files found by the words in their code, not only in their names.

The search index (`index/search.py`) documents symbols by their names, signatures,
docstrings and calls. A change often lies in a file whose only mention of the task's words
is in its bodies: a template string, a package constant, a flag's help text, an argument
(cobra's `mousetrap` check, a shell script kept in a Rust string). The search ranking never
finds such a file, so its units are never ranked (`contributors/retrieval.best_units`),
while BM25 over every 30-line window reads every line and finds it.

Here each file with code units is one document: every term of its units with its count
over the file (`term_totals`, from the units' postings kept in the file's cache row, so
no text is read). It is a second `SearchIndex`, kept current with the index
and persisted as an image beside the symbol postings (`index/derived.py`, key
`body_postings`), so a request reads only the postings of its own terms.
"""

from __future__ import annotations

from array import array
from itertools import accumulate, chain, repeat
from operator import mod, sub

from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.search import DocRow, ImageCache, SearchIndex
from ctx_lsp.index.unit_postings import COUNT_CAP, UnitPostings
from ctx_lsp.relevance import BODY_BM25_B, BODY_BM25_K1

__all__ = ["BODY_KIND", "body_docs", "body_index", "term_totals"]

BODY_KIND = "body"
"""The kind of a body-terms document (one a file)."""


def body_docs(entry: IndexedFile) -> list[DocRow]:
    """The file's one body document, or none for a file without code units (prose, text,
    an editor buffer: its units are derived when a bundle reads it, not at indexing)."""
    postings = entry.unit_postings
    if postings is None:
        return []
    counts = term_totals(postings)
    if not counts:
        return []
    return [("", BODY_KIND, 1, max(entry.line_count, 1), sum(counts.values()), counts)]


def body_index(cache: ImageCache | None) -> SearchIndex:
    """An empty body-terms index whose whole postings are kept in `cache`."""
    return SearchIndex(cache, body_docs, k1=BODY_BM25_K1, b=BODY_BM25_B)


def term_totals(postings: UnitPostings) -> dict[str, int]:
    """Each term's count over the whole file's units (each unit's count is capped at
    COUNT_CAP - 1 in its posting).

    Summed in C: the counts' running total, read at each term's end (a Python `sum`
    over each term's slice was 7 s of the body postings of 7,000 kernel files)."""
    post, ends = postings.post, postings.term_ends
    running = array("q", accumulate(map(mod, post, repeat(COUNT_CAP)), initial=0)).__getitem__
    return dict(zip(postings.terms, map(sub, map(running, ends), chain((0,), map(running, ends)))))
