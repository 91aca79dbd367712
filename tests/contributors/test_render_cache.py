"""The render cache's bounds (issue 11 memory): by count and by estimated bytes."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.code.languages.python import outline_python
from ctx_lsp.contributors.base import RenderCache, _basis_bytes, _rendering_bytes
from ctx_lsp.vocabulary import Rendering, Tier


def _rendering(chars: int, bar: bool = False) -> Rendering:
    content = ("1│ x\n" if bar else "x = 1\n") * (chars // 6)
    return Rendering(Tier.OUTLINE, content, chars // 4, 1, 1, False, ())


@given(
    ops=st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 4000), st.booleans(), st.booleans()), min_size=1, max_size=60
    ),
    max_items=st.integers(1, 8),
    max_bytes=st.integers(0, 20_000),
)
@settings(max_examples=150, deadline=None)
def test_renderings_stay_within_their_count_and_bytes(
    ops: list[tuple[int, int, bool, bool]], max_items: int, max_bytes: int
) -> None:
    """Ensure that whatever is put and read, the cache keeps at most `max_items`
    renderings of at most `max_item_bytes` in all (estimated), keeps the one just put
    when it fits alone, and its running total is the estimate of what it holds."""
    cache = RenderCache(max_items=max_items, max_item_bytes=max_bytes)
    for key, chars, bar, read in ops:
        if read:
            cache.get((key,))
            continue
        value = _rendering(chars, bar)
        cache.put((key,), value)
        kept = list(cache._items.values())
        assert cache._item_bytes == sum(map(_rendering_bytes, kept))
        assert len(kept) <= max_items and cache._item_bytes <= max_bytes
        if _rendering_bytes(value) <= max_bytes:
            assert cache.get((key,)) is value


def test_renderings_over_the_byte_bound_go_oldest_first() -> None:
    """Ensure that the byte bound evicts the least recently used renderings, not the
    ones just read."""
    size = _rendering_bytes(_rendering(1000))
    cache = RenderCache(max_item_bytes=3 * size)
    for key in "abc":
        cache.put((key,), _rendering(1000))
    cache.get(("a",))
    cache.put(("d",), _rendering(1000))
    assert set(cache._items) == {("a",), ("c",), ("d",)}


def test_bases_stay_within_their_bytes_but_the_newest_is_kept() -> None:
    """Ensure that file bases are bounded by estimated bytes too, least recently used out
    first, and that a basis bigger than the whole bound is still kept alone (the request
    rendering it holds it anyway)."""
    text = "def f():\n    return 1\n" * 200
    outline = outline_python(text.encode())
    one = 2 * sys.getsizeof(text)
    cache = RenderCache(max_basis_bytes=int(2.5 * one))
    first = cache.basis(("a",), text, outline)
    cache.basis(("b",), text, outline)
    assert cache.kept_basis(("a",), outline) is first
    cache.basis(("c",), text, outline)
    assert set(cache._bases) == {("a",), ("c",)}
    assert cache._basis_bytes == sum(map(_basis_bytes, cache._bases.values()))
    huge = "x = 1\n" * 100_000
    cache.basis(("huge",), huge, outline_python(huge.encode()))
    assert list(cache._bases) == [("huge",)]
