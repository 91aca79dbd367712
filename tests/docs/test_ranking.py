"""Tests for ctx_lsp/docs/ranking.py: BM25 topic ranking and cap-bounded selection."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.docs.ranking import (
    MIN_CUT_TOKENS,
    build_index,
    overview,
    rank,
    relevant,
    select,
    suggestions,
)
from ctx_lsp.docs.sections import DocSection, Kind, render
from ctx_lsp.index.terms import query_terms
from ctx_lsp.tokens import TokenCounter


def _section(
    counter: TokenCounter, title: str, body: str, kind: str = Kind.FUNCTION, weight: float = 1.0
) -> DocSection:
    text = render(title, "x.py:1", body)
    return DocSection("lib", "1", title, "/x.py", 1, kind, text, counter.count(text), weight)


def test_title_matches_rank_first(counter: TokenCounter) -> None:
    """Ensure a section named after the topic beats one mentioning it in passing."""
    sections = [
        _section(counter, "lib.other", "This also talks about requests, requests and more words here."),
        _section(counter, "lib.send_request", "Send something to the peer."),
    ]
    ranked = rank(build_index(sections), query_terms("send requests"))
    assert ranked[0][0] == 1


def test_coverage_and_weights(counter: TokenCounter) -> None:
    """Ensure sections matching every query term, and documented ones, are preferred."""
    sections = [
        _section(counter, "a", "completion completion completion"),
        _section(counter, "b", "workspace completion"),
        _section(counter, "c", "workspace completion", weight=0.5),
    ]
    ranked = [i for i, _ in rank(build_index(sections), query_terms("workspace completion"))]
    assert ranked == [1, 2, 0]


def test_source_line_is_not_indexed(counter: TokenCounter) -> None:
    """Ensure the "Source: path:line" line does not make every section match "source"."""
    sections = [_section(counter, "lib.a", "alpha"), _section(counter, "lib.b", "the source of truth")]
    assert [i for i, _ in rank(build_index(sections), query_terms("source"))] == [1]


def test_relevance_floor(counter: TokenCounter) -> None:
    """Ensure sections far below the best score are not candidates."""
    assert relevant([(0, 10.0), (1, 2.0), (2, 1.0)]) == [0, 1]
    assert relevant([]) == []


def test_overview_order(counter: TokenCounter) -> None:
    """Ensure the topicless order is description, guides, then API from the top down."""
    sections = [
        _section(counter, "lib.sub.deep", "x"),
        _section(counter, "lib.top", "x"),
        _section(counter, "lib README › Intro", "x", kind=Kind.README),
        _section(counter, "guide.md", "x", kind=Kind.GUIDE),
    ]
    assert overview(sections) == [2, 3, 1, 0]


def test_suggestions_are_public_modules_then_chapters(counter: TokenCounter) -> None:
    """Ensure that the topics offered for a topic that matched nothing are the public
    modules from the top down, then the docs' chapters (the first heading level with more
    than one heading: a README's title is not a chapter), without part numbers."""
    sections = [
        _section(counter, "lib README", "intro", kind=Kind.README),
        _section(counter, "lib README › Lib", "x", kind=Kind.README),
        _section(counter, "lib README › Lib › Install", "x", kind=Kind.README),
        _section(counter, "lib README › Lib › Usage (1/2)", "x", kind=Kind.README),
        _section(counter, "lib README › Lib › Usage (2/2)", "x", kind=Kind.README),
        _section(counter, "lib README › Lib › Usage › Deep", "x", kind=Kind.README),
        _section(counter, "lib.sub", "x", kind=Kind.MODULE),
        _section(counter, "lib", "x", kind=Kind.MODULE),
        _section(counter, "lib._private", "x", kind=Kind.MODULE),
        _section(counter, "lib.sub.Thing", "x", kind=Kind.CLASS),
    ]
    assert suggestions(sections) == ["lib", "lib.sub", "Install", "Usage"]
    assert suggestions(sections, limit=3) == ["lib", "lib.sub", "Install"]
    assert suggestions([]) == []


def test_a_section_that_does_not_fit_is_skipped(counter: TokenCounter) -> None:
    """Ensure selection skips a section too big for what is left and tries the next one."""
    big = _section(counter, "big", "word " * 400)
    small = _section(counter, "small", "tiny")
    chosen = select([big, small], [0, 1], small.tokens + 5, counter)
    assert [p.section.title for p in chosen.picked] == ["small"]
    assert chosen.truncated


def test_cut_only_with_enough_room(counter: TokenCounter) -> None:
    """Ensure the best skipped section is cut into the leftover only when at least
    MIN_CUT_TOKENS remain, at line boundaries, with any code fence closed."""
    long_body = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(300)) + "\n```"
    long = _section(counter, "long", long_body)
    chosen = select([long], [0], MIN_CUT_TOKENS + 50, counter)
    assert len(chosen.picked) == 1 and chosen.picked[0].cut
    assert chosen.content.endswith("more lines")
    assert sum(1 for line in chosen.content.split("\n") if line.startswith("```")) % 2 == 0
    assert chosen.tokens <= MIN_CUT_TOKENS + 50
    too_little = select([long], [0], MIN_CUT_TOKENS - 10, counter)
    assert too_little.picked == () and too_little.content == "" and too_little.truncated


def test_repeated_prose_is_skipped(counter: TokenCounter) -> None:
    """Ensure a sync/async pair with the same docstring is sent once."""
    doc = "Make a workspace/applyEdit request to the client and wait for it."
    pair = [
        _section(counter, "lib.apply_edit", f"```python\ndef apply_edit()\n```\n\n{doc}"),
        _section(counter, "lib.apply_edit_async", f"```python\nasync def apply_edit_async()\n```\n\n{doc}"),
    ]
    chosen = select(pair, [0, 1], 2000, counter)
    assert [p.section.title for p in chosen.picked] == ["lib.apply_edit"]
    assert not chosen.truncated


def test_preamble_counts(counter: TokenCounter) -> None:
    """Ensure a note before the sections is part of the content and of the count."""
    chosen = select([_section(counter, "a", "b")], [0], 500, counter, preamble="Note.")
    assert chosen.content.startswith("Note.\n\n### a")
    assert chosen.tokens == counter.count(chosen.content)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=120), min_size=0, max_size=12),
    cap=st.integers(min_value=1, max_value=1500),
)
def test_selection_never_exceeds_the_cap(counter: TokenCounter, sizes: list[int], cap: int) -> None:
    """Ensure that whatever the sections and cap, tokens <= cap and tokens is the real count."""
    sections = [
        _section(counter, f"s{i}", "\n".join(f"line {j} of section {i}" for j in range(n))) for i, n in enumerate(sizes)
    ]
    chosen = select(sections, list(range(len(sections))), cap, counter)
    assert chosen.tokens <= cap
    assert chosen.tokens == (counter.count(chosen.content) if chosen.content else 0)
