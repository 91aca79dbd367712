"""Row token counts kept by text, whatever the line number (`row_counts.RowCounts`, issue 11).

The identity they rest on is checked here on arbitrary text: for the line-additive
encodings a rendered row's count is its gutter's plus its text's, so a text is counted once
for every file and line number it appears at.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.code.outline_rows import Row
from ctx_lsp.code.row_counts import (
    GUTTER,
    LINE_ADDITIVE_ENCODINGS,
    PIECE_BREAK,
    RowCounts,
    _gutter,
    _row_text,
    row_counts,
)
from ctx_lsp.code.tiers import _content
from ctx_lsp.tokens import counter_for, cut_to_tokens

ROW_TEXT = st.one_of(
    st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=40),
    # what a row usually starts with: indentation, a symbol, a digit, a mark, a CR
    st.tuples(
        st.sampled_from(["", " ", "    ", "\t", "\r", "@", "#", "│", "…", "0", "9", "\u0301", "é", "'s", "(", ")"]),
        st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=20),
    ).map("".join),
)
NUMBER = st.one_of(st.just(0), st.integers(1, 9), st.integers(10, 999), st.integers(1000, 999_999))


@pytest.mark.parametrize("encoding", sorted(LINE_ADDITIVE_ENCODINGS))
@settings(max_examples=500, deadline=None)
@given(number=NUMBER, text=ROW_TEXT, extra_width=st.integers(0, 3))
def test_a_row_counts_as_its_gutter_plus_its_text(encoding: str, number: int, text: str, extra_width: int) -> None:
    """Ensure that a row as `_content` renders it is split by `_gutter` and `_row_text`
    into two parts whose counts add up to the row's, for every line number, width and
    text (CRs, marks, symbols and digits right after the gutter included)."""
    counter = counter_for(encoding)
    width = len(str(max(number, 1))) + extra_width
    row, _ = _content([Row(number, text)], width)
    assert _gutter(width, number) + _row_text(text) == row
    assert counter.count(_gutter(width, number)) + counter.count(_row_text(text)) == counter.count(row)


def test_the_gutter_splits_after_its_bar() -> None:
    """Ensure that the split point the identity was verified for is the one rendered: the
    gutter ends at the bar, the text part starts with the space after it."""
    assert GUTTER == "│ "
    assert _gutter(4, 41) == "  41│" and _gutter(3, 0) == "   │" and _row_text("x = 1") == " x = 1\n"


@pytest.mark.parametrize("encoding", sorted(LINE_ADDITIVE_ENCODINGS))
@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(NUMBER, ROW_TEXT), min_size=0, max_size=12),
    width=st.integers(1, 7),
    max_bytes=st.sampled_from([0, 200, 1 << 20]),
)
def test_shared_counts_are_the_exact_count_of_the_rows_joined(
    encoding: str, rows: list[tuple[int, str]], width: int, max_bytes: int
) -> None:
    """Ensure that `RowCounts.tokens` is the real count of the rows rendered and joined,
    asked twice (counted, then kept), however small its bound (eviction never loses a
    count a call needs)."""
    counter = counter_for(encoding)
    shared = RowCounts(counter, max_bytes=max_bytes)
    numbers, texts = [n for n, _ in rows], [t for _, t in rows]
    content, _ = _content([Row(n, t) for n, t in rows], width)
    expected = counter.count(content)
    assert shared.tokens(width, numbers, texts) == expected
    assert shared.tokens(width, numbers, texts) == expected


def test_kept_texts_stay_within_their_bound() -> None:
    """Ensure that the process-wide text counts never hold more than their byte bound,
    and keep the newer texts when full."""
    counter = counter_for("o200k_base")
    shared = RowCounts(counter, max_bytes=5_000)
    texts = [f"    value_{i} = compute({i})" for i in range(400)]
    for i in range(0, len(texts), 10):
        shared.tokens(4, list(range(i, i + 10)), texts[i : i + 10])
        assert shared._bytes <= 5_000
    assert texts[-1] in shared._texts and texts[0] not in shared._texts
    content, _ = _content([Row(1, texts[0]), Row(2, texts[1])], 4)
    assert shared.tokens(4, [1, 2], texts[:2]) == counter.count(content)


def test_texts_are_shared_across_files_and_line_numbers() -> None:
    """Ensure that a text counted at one line number of one file is not counted again at
    another number or width (the point of keeping counts by text)."""
    counter = counter_for("o200k_base")
    counted: list[str] = []

    class Recording:
        name = counter.name

        def count(self, text: str) -> int:
            return counter.count(text)

        def count_many(self, texts):
            counted.extend(texts)
            return counter.count_many(texts)

    shared = RowCounts(Recording())
    shared.tokens(3, [10], ["        return None"])
    shared.tokens(5, [12345], ["        return None"])
    assert counted.count(_row_text("        return None")) == 1


def test_only_line_additive_encodings_share_row_counts() -> None:
    """Ensure that the heuristic counter (which rounds per call, so a row's count is not
    its parts') keeps counting whole rows per file, and that one encoding has one
    process-wide cache."""
    assert row_counts(counter_for("heuristic")) is None
    for encoding in LINE_ADDITIVE_ENCODINGS:
        assert row_counts(counter_for(encoding)) is row_counts(counter_for(encoding)) is not None


@pytest.mark.parametrize("encoding", sorted(LINE_ADDITIVE_ENCODINGS))
@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(NUMBER, ROW_TEXT), min_size=1, max_size=40),
    width=st.integers(1, 6),
    cap=st.integers(0, 300),
    breaks=st.sets(st.integers(0, 39), max_size=8),
)
def test_rows_cut_by_their_counts_are_cut_like_their_text(
    encoding: str, rows: list[tuple[int, str]], width: int, cap: int, breaks: set[int]
) -> None:
    """Ensure that cutting rendered rows with their shared counts (`line_tokens`: only the
    marker tokenized) gives exactly the cut of the same text counted line by line, real
    count included."""
    counter = counter_for(encoding)
    content, _ = _content([Row(n, t) for n, t in rows], width)
    each = RowCounts(counter).each(width, [n for n, _ in rows], [t for _, t in rows])
    fast = cut_to_tokens(content, cap, counter, breaks=sorted(breaks), line_tokens=each)
    assert fast == cut_to_tokens(content, cap, counter, breaks=sorted(breaks))
    assert fast.tokens == counter.count(fast.text) and fast.tokens <= max(cap, 0)


def test_line_tokens_that_do_not_match_the_lines_are_not_used() -> None:
    """Ensure that counts for another number of lines than the text has (a row holding a
    newline) fall back to counting the text."""
    counter = counter_for("o200k_base")
    text = " 1│ a\n 2│ b\n 3│ c\n"
    assert cut_to_tokens(text, 5, counter, line_tokens=[1, 1]) == cut_to_tokens(text, 5, counter)


TEXT_PIECE = st.one_of(
    st.sampled_from(["\n", "\n\n", " \n", "\r\n", " ", "  ", "\t", "/", "//", "│", ")", ":", "'s", "\u00a0", "\x85"]),
    st.sampled_from(["\u2028", "\x1c", "\x0b", "é", "\u0301", "a", "Ab", "1", "123", "   4│ ", "```", "### x"]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
)


@pytest.mark.parametrize("encoding", sorted(LINE_ADDITIVE_ENCODINGS))
@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(TEXT_PIECE, max_size=30))
def test_a_whole_text_counts_as_the_sum_of_its_parts(encoding: str, pieces: list[str]) -> None:
    """Ensure that `RowCounts.whole` is the real count of any text (newlines, blank runs,
    slashes and whitespace of every kind at the breaks), counted, then kept."""
    counter = counter_for(encoding)
    shared = RowCounts(counter)
    text = "".join(pieces)
    assert "".join(PIECE_BREAK.split(text)) == text
    assert shared.whole(text) == counter.count(text)
    assert shared.whole(text) == counter.count(text)


def test_a_bundle_is_split_before_its_lines() -> None:
    """Ensure that a rendered outline breaks before each row (a part is counted once for
    every request that shows it), and not inside a run of blank lines or before a slash."""
    text = "## a.py\n```\n 9│ x = 1\n10│ y()\n\n\n// z\n```\n"
    assert PIECE_BREAK.split(text) == ["## a.py\n", "```\n", " 9│ x = 1\n", "10│ y()\n\n\n// z\n", "```\n"]
