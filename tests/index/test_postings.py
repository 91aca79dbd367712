"""Tests for ctx_lsp/index/postings.py: the streamed image is the one the per-term dicts gave."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

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
    return _pack_image(index._image([*kept, *entries]))


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
