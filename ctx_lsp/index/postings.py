"""The postings of a whole index as flat columns, and how they are built without a dict
per term.

`SearchIndex` (`index/search.py`) keeps its base as a `PostingsImage` and stores it in the
index cache (`index/derived.py`). A full pass used to derive every document into live
per-term dicts (`dict[str, dict[int, int]]`, a dict entry per posting, ~100 bytes each)
and only then pack them: on 7,046 kernel files that was +377 MB of RSS for 35 MB of image,
and freed small objects rarely give RSS back. `ImageBuilder` streams each file's documents
into append-only int arrays instead (12 bytes a posting while building) and lays the
postings out term by term with a counting sort at the end; the image is byte for byte the
one the dicts gave (`tests/index/test_postings.py`).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, filterfalse

__all__ = ["EMPTY_IMAGE", "BaseLookup", "DocRow", "ImageBuilder", "PostingsImage", "base_lookup", "file_ranges"]

DocRow = tuple[str, str, int, int, int, dict[str, int]]
"""One document of a file as the postings take it: (symbol, kind, start line, end line,
length in terms, term -> count)."""


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


class ImageBuilder:
    """An image built from a base image's kept files and then documents streamed in, file
    by file, laid out exactly as `SearchIndex` lays out its live documents:

    - files: the base's kept ones in its order, then the added ones in the order added
      (every file, with documents or not);
    - documents: the kept files' (in the base's order), then the added ones';
    - terms: the base's in its order, then new ones in the order first met (a term a
      document lists first is met first); terms no document holds any more are left out;
    - postings: by term, documents ascending; each document's terms in the order it
      lists them (its counts' order).

    While building, an added posting is a term number and a count in two int arrays, and
    a term is one entry of `term_numbers`; `finish` counts each term's postings and places
    them (a counting sort), so no per-term container is ever made.
    """

    def __init__(self, base: PostingsImage | None = None, dropped: Container[str] = ()) -> None:
        """Start from `base` without the documents of the files in `dropped`."""
        self.files: list[str] = []
        self.paths: list[str] = []
        self.hashes: list[str] = []
        self.symbols: list[str] = []
        self.kinds: list[str] = []
        self.doc_file, self.doc_start, self.doc_end, self.doc_length = array("i"), array("i"), array("i"), array("i")
        self.doc_term_ends = array("i")
        self.term_numbers: dict[str, int] = {}
        """Every term met so far -> its number while building: the base's first, numbered
        as there, then new ones as met."""
        self._terms = array("i")  # per added posting: its term number, documents in order
        self._tfs = array("i")  # ... and its count
        self._base = base
        self._kept_docs: list[range] = []  # the base's documents kept, as ranges in its order
        self._base_postings = 0  # postings in `_terms` copied from the base (the first ones)
        self._kept_count = 0  # documents copied from the base (the first ones)
        if base is not None:
            self._seed(base, dropped)

    def __len__(self) -> int:
        """Documents so far."""
        return len(self.symbols)

    def _seed(self, base: PostingsImage, dropped: Container[str]) -> None:
        self.term_numbers = {term: n for n, term in enumerate(base.terms)}
        ranges = file_ranges(base)
        ends = base.doc_term_ends
        for abs_path, path, hash_ in zip(base.files, base.paths, base.hashes):
            if abs_path in dropped:
                continue
            docs = ranges.get(abs_path)
            if docs:
                lo, hi = docs.start, docs.stop
                self._kept_docs.append(docs)
                self.symbols.extend(base.symbols[lo:hi])
                self.kinds.extend(base.kinds[lo:hi])
                self.doc_file.extend([len(self.files)] * (hi - lo))
                self.doc_start.extend(base.doc_start[lo:hi])
                self.doc_end.extend(base.doc_end[lo:hi])
                self.doc_length.extend(base.doc_length[lo:hi])
                first = ends[lo - 1] if lo else 0
                self._terms.extend(base.doc_terms[first : ends[hi - 1]])
                shift = len(self._terms) - ends[hi - 1]
                self.doc_term_ends.extend([end + shift for end in ends[lo:hi]])
            self.files.append(abs_path)
            self.paths.append(path)
            self.hashes.append(hash_)
        self._base_postings = len(self._terms)
        self._kept_count = len(self.symbols)

    def register(self, terms: Iterable[str]) -> None:
        """Number these terms next, in this order, unless already numbered (so that a
        fold numbers the live part's terms as its dicts hold them). Each must then be
        held by an added document."""
        numbers = self.term_numbers
        for term in terms:
            numbers.setdefault(term, len(numbers))

    def add(self, abs_path: str, path: str, hash_: str, docs: Sequence[DocRow]) -> None:
        """Append a file and its documents (in order)."""
        file_no = len(self.files)
        self.files.append(abs_path)
        self.paths.append(path)
        self.hashes.append(hash_)
        numbers = self.term_numbers
        known, number_of = numbers.__contains__, numbers.__getitem__
        terms_, tfs, ends = self._terms, self._tfs, self.doc_term_ends
        for symbol, kind, start, end, length, counts in docs:
            self.symbols.append(symbol)
            self.kinds.append(kind)
            self.doc_file.append(file_no)
            self.doc_start.append(start)
            self.doc_end.append(end)
            self.doc_length.append(length)
            # new terms numbered in the order the document lists them (C loops, not a
            # Python one per posting: ~1.9M postings on 7,000 kernel files' bodies)
            fresh = list(filterfalse(known, counts))
            if fresh:
                numbers.update(zip(fresh, range(len(numbers), len(numbers) + len(fresh))))
            terms_.extend(map(number_of, counts))
            tfs.extend(counts.values())
            ends.append(len(terms_))

    def finish(self, hashes: Mapping[str, str] | None = None) -> tuple[PostingsImage, dict[str, int]]:
        """The image, and its terms -> their numbers in it (what `SearchIndex` looks terms
        up by); `hashes` replaces every file's content hash. The builder is spent."""
        if hashes is not None:
            self.hashes = [hashes[f] for f in self.files]
        n_terms = len(self.term_numbers)
        cut = self._base_postings
        first_added = self._kept_count
        terms_, tfs, ends = self._terms, self._tfs, self.doc_term_ends
        # the added postings by term: a counting sort, documents visited in order so that
        # they ascend within each term
        added = memoryview(terms_)[cut:]
        df = Counter(added)
        starts = array("i", accumulate((df.get(t, 0) for t in range(n_terms)), initial=0))
        del df
        placed_docs = array("i", [0]) * len(added)
        placed_tfs = array("i", [0]) * len(added)
        free = starts[:-1]
        lo = 0
        for doc in range(first_added, len(ends)):
            hi = ends[doc] - cut
            for t, tf in zip(added[lo:hi], tfs[lo:hi]):
                p = free[t]
                free[t] = p + 1
                placed_docs[p] = doc
                placed_tfs[p] = tf
            lo = hi
        added.release()
        del free
        base = self._base
        if base is None:  # every term has postings, numbered as met
            image = self._image(list(self.term_numbers), starts[1:], placed_docs, placed_tfs, terms_)
            return image, self.term_numbers
        # a base: its kept postings (renumbered) before the added ones, term by term
        renumber = array("i", [-1]) * len(base.symbols)
        new = 0
        for docs in self._kept_docs:
            for old in docs:
                renumber[old] = new
                new += 1
        same_numbers = new == len(base.symbols) and all(map(int.__eq__, renumber, range(new)))
        term_no = array("i", [-1]) * n_terms
        terms_out: list[str] = []
        term_ends, posting_docs, posting_tfs = array("i"), array("i"), array("i")
        b_ends, b_docs, b_tfs = base.term_ends, base.posting_docs, base.posting_tfs
        n_base = len(base.terms)
        b_lo = 0
        for t, term in enumerate(self.term_numbers):
            if t < n_base:
                b_hi = b_ends[t]
                if same_numbers:  # copied in C
                    posting_docs.extend(b_docs[b_lo:b_hi])
                    posting_tfs.extend(b_tfs[b_lo:b_hi])
                else:
                    for d, tf in zip(b_docs[b_lo:b_hi], b_tfs[b_lo:b_hi]):
                        d = renumber[d]
                        if d >= 0:
                            posting_docs.append(d)
                            posting_tfs.append(tf)
                b_lo = b_hi
            a_lo, a_hi = starts[t], starts[t + 1]
            posting_docs.extend(placed_docs[a_lo:a_hi])
            posting_tfs.extend(placed_tfs[a_lo:a_hi])
            if len(posting_docs) > (term_ends[-1] if term_ends else 0):
                term_no[t] = len(terms_out)
                terms_out.append(term)
                term_ends.append(len(posting_docs))
        doc_terms = terms_ if len(terms_out) == n_terms else array("i", [term_no[t] for t in terms_])
        image = self._image(terms_out, term_ends, posting_docs, posting_tfs, doc_terms)
        return image, {term: n for n, term in enumerate(terms_out)}

    def _image(
        self, terms_out: list[str], term_ends: array, posting_docs: array, posting_tfs: array, doc_terms: array
    ) -> PostingsImage:
        return PostingsImage(
            files=self.files,
            paths=self.paths,
            hashes=self.hashes,
            symbols=self.symbols,
            kinds=self.kinds,
            doc_file=self.doc_file,
            doc_start=self.doc_start,
            doc_end=self.doc_end,
            doc_length=self.doc_length,
            doc_term_ends=self.doc_term_ends,
            doc_terms=doc_terms,
            terms=terms_out,
            term_ends=term_ends,
            posting_docs=posting_docs,
            posting_tfs=posting_tfs,
        )


def file_ranges(image: PostingsImage) -> dict[str, range]:
    """Each file's documents in an image (numbered in a row; files without any left out)."""
    out: dict[str, range] = {}
    doc_file, files = image.doc_file, image.files
    start = 0
    n = len(doc_file)
    for i in range(1, n + 1):
        if i == n or doc_file[i] != doc_file[start]:
            out[files[doc_file[start]]] = range(start, i)
            start = i
    return out


EMPTY_IMAGE = PostingsImage(
    files=[],
    paths=[],
    hashes=[],
    symbols=[],
    kinds=[],
    doc_file=array("i"),
    doc_start=array("i"),
    doc_end=array("i"),
    doc_length=array("i"),
    doc_term_ends=array("i"),
    doc_terms=array("i"),
    terms=[],
    term_ends=array("i"),
    posting_docs=array("i"),
    posting_tfs=array("i"),
)
"""An image of no files: the base a fold of an index without one starts from, so that terms
it numbered for a file that then changed are dropped like any other term no document holds."""


@dataclass(frozen=True, slots=True)
class BaseLookup:
    """A base image and what a `SearchIndex` looks it up by, all derived from the image
    alone: a fold builds it without the index's lock, and the index takes it by assignment."""

    image: PostingsImage
    terms: dict[str, int]  # term -> its number in the image
    paths: dict[str, str]  # abs path -> display path, every file of the image
    by_file: dict[str, range]
    total_length: int


def base_lookup(image: PostingsImage, term_numbers: dict[str, int] | None = None) -> BaseLookup:
    """The lookups of `image` (`term_numbers`: its terms' numbers, if the caller has them):
    a loop over every document, which a fold runs before it takes the index's lock."""
    numbers = term_numbers if term_numbers is not None else {t: n for n, t in enumerate(image.terms)}
    return BaseLookup(image, numbers, dict(zip(image.files, image.paths)), file_ranges(image), sum(image.doc_length))
