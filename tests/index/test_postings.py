"""Tests for ctx_lsp/index/postings.py: the streamed image is the one the per-term dicts gave."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.index.body_terms import term_totals
from ctx_lsp.index.derived import _pack_image
from ctx_lsp.index.postings import DocRow, ImageBuilder, PostingsImage
from ctx_lsp.index.search import SearchIndex
from ctx_lsp.index.unit_postings import COUNT_CAP, UnitPostings

TERMS = [f"t{i}" for i in range(12)]


@dataclass
class _Entry:
    """What the live path reads of an indexed file."""

    abs_path: str
    path: str
    hash: str


_doc = st.builds(
    lambda symbol, kind, start, counts: (symbol, kind, start, start + 3, sum(counts.values()), counts),
    st.sampled_from(["", "a", "A.b"]),
    st.sampled_from(["file", "function", "body"]),
    st.integers(1, 50),
    st.dictionaries(st.sampled_from(TERMS), st.integers(1, 9), min_size=1, max_size=6),
)
_file = st.tuples(st.sampled_from([f"/ws/m{i}.py" for i in range(10)]), st.lists(_doc, max_size=4))
_files = st.lists(_file, max_size=8, unique_by=lambda f: f[0])


def _dict_image(index: SearchIndex, hashes: dict[str, str]) -> PostingsImage:
    """The image of an index's live documents as main packed it from its per-term dicts
    (`SearchIndex._image` before `ImageBuilder`), kept here as the reference."""
    base, dead = index._base, index._dead
    alive = [n for n in range(index._base_docs) if n not in dead]
    alive.extend(index._docs)
    renumber = array("i", [-1]) * index._next_id
    for new, old in enumerate(alive):
        renumber[old] = new
    files = list(index._paths)
    file_no = {f: i for i, f in enumerate(files)}
    terms_out: list[str] = []
    term_no: dict[str, int] = {}
    term_ends, posting_docs, posting_tfs = array("i"), array("i"), array("i")
    live = index._postings

    def put(term: str, docs: list[int], tfs: list[int]) -> None:
        if docs:
            term_no[term] = len(terms_out)
            terms_out.append(term)
            posting_docs.extend(docs)
            posting_tfs.extend(tfs)
            term_ends.append(len(posting_docs))

    if base is not None:
        lo = 0
        for t, term in enumerate(base.terms):
            hi = base.term_ends[t]
            pairs = [(renumber[d], tf) for d, tf in zip(base.posting_docs[lo:hi], base.posting_tfs[lo:hi])]
            pairs = [(d, tf) for d, tf in pairs if d >= 0]
            pairs.extend((renumber[d], tf) for d, tf in live.get(term, {}).items())
            put(term, [d for d, _ in pairs], [tf for _, tf in pairs])
            lo = hi
    for term, posting in live.items():
        if base is None or term not in index._base_terms:
            put(term, [renumber[d] for d in posting], list(posting.values()))
    doc_term_ends, doc_terms = array("i"), array("i")
    symbols, kinds = [], []
    doc_file, doc_start, doc_end, doc_length = array("i"), array("i"), array("i"), array("i")
    for old in alive:
        d = index._doc(old)
        symbols.append(d.symbol)
        kinds.append(d.kind)
        doc_file.append(file_no[d.abs_path])
        doc_start.append(d.start_line)
        doc_end.append(d.end_line)
        doc_length.append(d.length)
        if old < index._base_docs and base is not None:
            held = [base.terms[n] for n in index._base_terms_of(old)]
        else:
            held = list(index._doc_terms[old])
        doc_terms.extend(term_no[t] for t in held)
        doc_term_ends.append(len(doc_terms))
    return PostingsImage(
        files=files,
        paths=[index._paths[f] for f in files],
        hashes=[hashes[f] for f in files],
        symbols=symbols,
        kinds=kinds,
        doc_file=doc_file,
        doc_start=doc_start,
        doc_end=doc_end,
        doc_length=doc_length,
        doc_term_ends=doc_term_ends,
        doc_terms=doc_terms,
        terms=terms_out,
        term_ends=term_ends,
        posting_docs=posting_docs,
        posting_tfs=posting_tfs,
    )


def _by_dicts(base: PostingsImage | None, dropped: list[str], added: list[tuple[str, list[DocRow]]]) -> bytes:
    """The image as main built it: documents into the live per-term dicts, then packed."""
    index = SearchIndex()
    kept: list[Any] = []
    if base is not None:
        index._set_base(base)
        kept = [_Entry(f, p, h) for f, p, h in zip(base.files, base.paths, base.hashes) if f not in dropped]
        for abs_path in dropped:
            index._remove_file(abs_path)
    entries: list[Any] = [_Entry(f, f[4:], f"h-{f}") for f, _ in added]
    for entry, (_, docs) in zip(entries, added):
        index._add_file(entry, docs)
    return _pack_image(_dict_image(index, {e.abs_path: e.hash for e in [*kept, *entries]}))


def _streamed(base: PostingsImage | None, dropped: list[str], added: list[tuple[str, list[DocRow]]]) -> PostingsImage:
    builder = ImageBuilder(base, dropped=set(dropped))
    for abs_path, docs in added:
        builder.add(abs_path, abs_path[4:], f"h-{abs_path}", docs)
    image, numbers = builder.finish()
    assert numbers == {term: n for n, term in enumerate(image.terms)}
    return image


@settings(max_examples=150, deadline=None)
@given(files=_files)
def test_a_streamed_image_is_the_one_built_document_by_document(files: list[tuple[str, list[DocRow]]]) -> None:
    """Ensure that documents streamed into an empty builder give the bytes the live
    per-term dicts packed by `SearchIndex._image` gave: files, documents, terms in the
    order met, postings ascending."""
    assert _pack_image(_streamed(None, [], files)) == _by_dicts(None, [], files)


@settings(max_examples=150, deadline=None)
@given(first=_files, dropped=st.sets(st.sampled_from([f"/ws/m{i}.py" for i in range(10)])), then=_files)
def test_a_base_with_files_dropped_and_added_streams_as_the_dicts_merged(
    first: list[tuple[str, list[DocRow]]], dropped: set[str], then: list[tuple[str, list[DocRow]]]
) -> None:
    """Ensure that a base image without some files (and terms left without documents),
    with files added after it, gives the bytes of the base with those documents marked
    dead and the added ones live, packed again."""
    base = _streamed(None, [], first)
    in_base = set(base.files)
    gone = sorted(dropped & in_base)
    # a file added again is dropped from the base first (a changed file)
    added = [(f, docs) for f, docs in then if f not in in_base or f in dropped]
    assert _pack_image(_streamed(base, gone, added)) == _by_dicts(base, gone, added)


@settings(max_examples=100, deadline=None)
@given(
    lists=st.lists(
        st.lists(st.tuples(st.integers(0, 50), st.integers(0, COUNT_CAP - 1)), min_size=1, max_size=5),
        max_size=8,
    )
)
def test_term_totals_sum_each_terms_unit_counts(lists: list[list[tuple[int, int]]]) -> None:
    """Ensure that the totals summed in C are each term's counts over its postings."""
    terms = [f"t{i:02}" for i in range(len(lists))]
    post = array("i", [unit * COUNT_CAP + count for postings in lists for unit, count in postings])
    ends = array("i")
    for postings in lists:
        ends.append((ends[-1] if ends else 0) + len(postings))
    found = UnitPostings((), array("i"), array("i"), terms, ends, post, [], array("i"), array("i"))
    assert term_totals(found) == {t: sum(c for _, c in postings) for t, postings in zip(terms, lists)}


_steps = st.lists(
    st.tuples(st.sampled_from([f"/ws/m{i}.py" for i in range(10)]), st.none() | st.lists(_doc, max_size=3))
)


@settings(max_examples=150, deadline=None)
@given(first=_files, steps=_steps)
def test_a_fold_packs_what_the_dicts_held(first: list[tuple[str, list[DocRow]]], steps: list) -> None:
    """Ensure that folding the live part into the base, after files were added, changed
    and removed on top of a base (dead base documents, live dicts emptied and made
    again), gives the bytes the per-term dicts packed, and that the index then answers
    as before."""
    index = SearchIndex()
    if len(first) > 1:
        index._set_base(_streamed(None, [], first))
    else:
        for f, docs in first:
            index._add_file(cast(Any, _Entry(f, f[4:], f"h-{f}")), docs)
    for abs_path, docs in steps:
        index._remove_file(abs_path)
        if docs is not None:
            index._add_file(cast(Any, _Entry(abs_path, abs_path[4:], f"h2-{abs_path}")), docs)
    hashes = {f: f"hash-{f}" for f in index._paths}
    expected = _pack_image(_dict_image(index, hashes))
    queries = [index.search(term, 100) for term in TERMS]
    assert _pack_image(index._fold(hashes)) == expected
    assert [index.search(term, 100) for term in TERMS] == queries


def test_a_fold_numbers_terms_as_the_live_dicts_hold_them() -> None:
    """Ensure that a term whose first document was removed keeps the number its dict's
    place gave it (before a term first met in a later document), as main numbered it."""
    index = SearchIndex()
    for name, counts in (("a", {"x": 1}), ("b", {"y": 1}), ("c", {"x": 2})):
        index._add_file(cast(Any, _Entry(f"/ws/{name}.py", f"{name}.py", name)), [("", "file", 1, 1, 1, counts)])
    index._remove_file("/ws/a.py")
    expected = _pack_image(_dict_image(index, {"/ws/b.py": "b", "/ws/c.py": "c"}))
    image = index._fold()
    assert image.terms == ["x", "y"]
    assert _pack_image(image) == expected


@dataclass
class _Changed(_Entry):
    """An entry with its documents (what `_documents` derives of it, here given)."""

    docs: list[DocRow]


def _apply(index: SearchIndex, changes: list[tuple[str, list[DocRow] | None]], version: str) -> None:
    for i, (abs_path, docs) in enumerate(changes):
        if docs is None:
            index.update([abs_path], [])
        else:
            index.update([], [cast(Any, _Changed(abs_path, abs_path[4:], f"{version}{i}-{abs_path}", docs))])
        index.catch_up()


@settings(max_examples=100, deadline=None)
@given(first=_files, steps=_steps, meanwhile=_steps)
def test_a_fold_built_beside_changes_applies_them_again_on_its_base(
    first: list[tuple[str, list[DocRow]]], steps: list, meanwhile: list
) -> None:
    """Ensure that a fold built outside the lock (`SearchIndex.fold`) while changes are
    applied to the index (files added, changed, removed) swaps in a base on which those
    changes are applied again: the index then answers as one that applied every change
    under its lock; and that the fold returns the base's image only when nothing came
    meanwhile (an image kept for the next process is of a state the index was in)."""
    documents = cast(Any, lambda entry: entry.docs)
    folded, reference = SearchIndex(documents=documents), SearchIndex(documents=documents)
    for index in (folded, reference):
        index.update([], [cast(Any, _Changed(f, f[4:], f"a-{f}", docs)) for f, docs in first])
        index.catch_up()  # a base, if more than one file
        _apply(index, steps, "b")
    live = bool(folded._docs or folded._dead)  # else nothing to fold: no build, no hook
    image = folded.fold(lambda: _apply(folded, meanwhile, "c"))
    if live and meanwhile:
        assert image is None
    else:
        assert image is folded._base
    if not live:
        _apply(folded, meanwhile, "c")
    _apply(reference, meanwhile, "c")
    queries = [*TERMS, "t0 t1", "t2 t5 t7", " ".join(TERMS)]
    assert [folded.search(q, 100) for q in queries] == [reference.search(q, 100) for q in queries]
    assert len(folded) == len(reference)
