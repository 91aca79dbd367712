"""Tests for ctx_lsp/index/excerpts.py: the windows of a file where a task's words are."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.index.excerpts import densest_window, hot_spans, lines_with_terms
from ctx_lsp.index.terms import terms
from ctx_lsp.relevance import EXCERPT_LINES_AFTER, EXCERPT_LINES_BEFORE

FILLER = [f"value_{n} = compute(value_{n - 1})" for n in range(1, 201)]


def lines_with(marks: dict[int, str]) -> list[str]:
    lines = list(FILLER)
    for number, text in marks.items():
        lines[number - 1] = text
    return lines


def test_window_opens_above_the_densest_lines() -> None:
    """Ensure that the best window is the one holding most of the task's distinct words,
    opening a few lines above the first of them."""
    lines = lines_with({40: "charset = detect_charset(raw)", 42: "decoder = incremental(charset)", 150: "charset = 1"})
    spans = hot_spans(lines, {"charset": 2.0, "decoder": 3.0, "incremental": 3.0})
    assert spans[0][0] == 40 - EXCERPT_LINES_BEFORE
    assert spans[0][0] <= 42 <= spans[0][1] <= spans[0][0] + EXCERPT_LINES_BEFORE + EXCERPT_LINES_AFTER
    assert any(start <= 150 <= end for start, end in spans[1:])  # the weaker one comes later


def test_covered_lines_are_neither_scored_nor_shown_again() -> None:
    """Ensure that lines already shown (a body) are clipped out of windows, and words
    only inside them pick no window."""
    lines = lines_with({40: "decoder = incremental(charset)", 100: "charset = 1"})
    spans = hot_spans(lines, {"charset": 1.0, "decoder": 3.0, "incremental": 3.0}, covered=[(30, 60)])
    assert spans and all(end < 30 or start > 60 for start, end in spans)
    assert any(start <= 100 <= end for start, end in spans)


def test_no_words_no_windows() -> None:
    """Ensure that a file without any of the task's words, or a task without weights, gives none."""
    assert hot_spans(FILLER, {"charset": 1.0}) == ()
    assert hot_spans(FILLER, {}) == ()
    assert hot_spans([], {"charset": 1.0}) == ()


def test_a_word_on_every_line_does_not_pick_by_itself() -> None:
    """Ensure that a word on most lines of the file weighs little there: a rarer task word
    picks the first window even with a lower weight across the workspace."""
    lines = [f"option_{n} = Option(option_{n - 1})" for n in range(1, 201)]
    lines[120] = "prompt = ask_prompt(option_120)"
    spans = hot_spans(lines, {"option": 3.0, "prompt": 1.0})
    assert spans[0][0] <= 121 <= spans[0][1]


@settings(max_examples=60, deadline=None)
@given(
    marks=st.dictionaries(st.integers(1, 200), st.sampled_from(["alpha beta", "gamma", "beta gamma delta"])),
    covered=st.lists(st.tuples(st.integers(1, 200), st.integers(0, 40)), max_size=3),
    limit=st.integers(1, 12),
)
def test_windows_are_disjoint_in_range_and_clipped_at_covered(
    marks: dict[int, str], covered: list[tuple[int, int]], limit: int
) -> None:
    """Ensure that windows never overlap each other, stay in the file, number at most
    `limit`, and never start or end on a covered line (a body inside one is shown once by
    the rendering)."""
    spans_covered = [(start, start + length) for start, length in covered]
    weights = {"alpha": 1.0, "beta": 2.0, "gamma": 0.5, "delta": 4.0}
    spans = hot_spans(lines_with(marks), weights, covered=spans_covered, limit=limit)
    assert len(spans) <= limit
    seen: set[int] = set()
    for start, end in spans:
        assert 1 <= start <= end <= 200
        span = set(range(start, end + 1))
        assert not span & seen
        assert not any(s <= n <= e for n in (start, end) for s, e in spans_covered)
        seen |= span


def test_overlong_lines_are_never_in_a_window() -> None:
    """Ensure that a line too long to show (a hundred names imported on one line) splits
    a window instead of being shown inside it."""
    lines = lines_with({10: "from models import (" + ", ".join(f"Name{n}" for n in range(60)) + ")", 12: "charset = 1"})
    lines[7] = "charset_detect = 2"
    spans = hot_spans(lines, {"charset": 1.0, "detect": 1.0})
    assert spans and all(not start <= 10 <= end for start, end in spans)
    assert any(start <= 8 <= end for start, end in spans) and any(start <= 12 <= end for start, end in spans)


WORDS = ["entries", "entry", "parses", "parsed", "Parser", "count_tokens", "TokenCounter", "İstanbul", "ß", "x", "io"]


@settings(max_examples=80, deadline=None)
@given(
    lines=st.lists(st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join), min_size=1, max_size=20),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_the_prefilter_misses_no_line_holding_a_task_term(lines: list[str], query: list[str]) -> None:
    """Ensure that the one-pass prefilter keeps every line whose terms include a task term
    (stems, compounds and case changes that alter a string's length included)."""
    weights = {t: 1.0 for t in terms(" ".join(query))}
    if not weights:
        return
    kept = set(lines_with_terms(lines, weights))
    for number, line in enumerate(lines, 1):
        if any(t in weights for t in terms(line)):
            assert number in kept, (line, sorted(weights))


def test_the_densest_window_of_a_span_is_where_the_task_words_are() -> None:
    lines = [
        "def run(value):",
        *[f"    step_{i}(value)" for i in range(20)],
        "    if value.charset:",
        "        return fix_charset(value)",
    ]
    assert densest_window(lines, (1, 23), 4, {"charset": 1.0}) == (20, 23)
    assert densest_window(lines, (1, 23), 4, {"run": 1.0}) == (1, 4)  # the signature's words: the start
    assert densest_window(lines, (1, 23), 4, {"nowhere": 1.0}) == (1, 4)  # none: the start
    assert densest_window(lines, (5, 7), 4, {"charset": 1.0}) == (5, 7)  # no longer than asked
    (render,) = terms("render")
    words = ["def draw(view):", *[f"    surrender_{i}(view)" for i in range(10)], "    return render(view)"]
    assert densest_window(words, (1, 12), 2, {render: 1.0}) == (11, 12)  # `surrender` is not `render`


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a x", "b", "x y", ""]), min_size=1, max_size=40), st.data())
def test_a_densest_window_lies_in_its_span_and_is_the_size_asked(lines: list[str], data: st.DataObject) -> None:
    start = data.draw(st.integers(1, len(lines)))
    end = data.draw(st.integers(start, len(lines)))
    size = data.draw(st.integers(1, 50))
    lo, hi = densest_window(lines, (start, end), size, {"x": 1.0, "y": 2.0})
    assert start <= lo <= hi <= end and hi - lo + 1 == min(size, end - start + 1)
