"""Tests for ctx_lsp/code/markdown.py: heading outlines without a markdown parser."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.code.markdown import outline_markdown, readable_lines, readable_markdown

README = textwrap.dedent(
    """\
    ---
    title: front matter
    ---
    # Project

    Intro paragraph line.

    ## Install
    ```sh
    # not a heading: a shell comment
    pip install project
    ```
    ### From PyPI ###
    Use pip.

    ~~~python
    # also code
    ````
    ## still code
    ~~~
    ### From source
    Setext Two
    ----------
    Body of setext two.

        # indented code, not a heading
    #hashtag is not a heading

    Top Again
    =========
    - a list item
    ---
    ###### Deepest
    """
)


def test_headings_paths_and_depths() -> None:
    """Ensure that ATX and setext headings become symbols with " > " paths and depth
    level-1, skipping fenced code, indented code, hashtags and front matter."""
    o = outline_markdown(README)
    assert [(s.qualname, s.depth, s.parent) for s in o.symbols] == [
        ("Project", 0, ""),
        ("Project > Install", 1, "Project"),
        ("Project > Install > From PyPI", 2, "Project > Install"),
        ("Project > Install > From source", 2, "Project > Install"),
        ("Project > Setext Two", 1, "Project"),
        ("Top Again", 0, ""),
        ("Top Again > Deepest", 5, "Top Again"),
    ]
    assert all(s.kind == "heading" and s.calls == () and s.decorators == () for s in o.symbols)
    assert o.language == "markdown" and o.docstring == "Project"
    assert o.line_count == len(README.splitlines())


def test_signatures_lines_and_docs() -> None:
    """Ensure that signature, line range, body start and doc follow the brief."""
    lines = README.split("\n")
    o = outline_markdown(README)
    s = {x.name: x for x in o.symbols}

    def line(text: str) -> int:
        return lines.index(text) + 1

    assert s["From PyPI"].signature == "### From PyPI"
    assert s["Setext Two"].signature == "## Setext Two"
    assert s["Top Again"].signature == "# Top Again"
    project = s["Project"]
    assert project.start_line == line("# Project")
    assert project.body_start_line == line("# Project") + 1
    assert project.end_line == line("Top Again") - 1
    assert project.doc == "Intro paragraph line."
    assert s["Install"].end_line == line("Setext Two") - 1
    assert s["Install"].doc == ""  # only code before the next heading
    assert s["From PyPI"].doc == "Use pip."
    assert s["From PyPI"].end_line == line("### From source") - 1
    assert s["Setext Two"].start_line == line("Setext Two")
    assert s["Setext Two"].body_start_line == line("Setext Two") + 2
    assert s["Setext Two"].doc == "Body of setext two."
    assert s["Top Again"].end_line == o.line_count
    assert s["Deepest"].end_line == o.line_count


def test_no_headings_and_empty() -> None:
    """Ensure that text without headings has no symbols and its first line as docstring."""
    o = outline_markdown("\n\nJust a paragraph.\nMore.\n")
    assert o.symbols == () and o.docstring == "Just a paragraph." and o.line_count == 4
    empty = outline_markdown("")
    assert empty.symbols == () and empty.docstring == "" and empty.line_count == 0


def test_unclosed_fence_hides_the_rest() -> None:
    """Ensure that headings after an unclosed fence are treated as code."""
    o = outline_markdown("# A\n```\n# B\n")
    assert [s.name for s in o.symbols] == ["A"]


def test_doc_is_cut_and_crlf() -> None:
    """Ensure that long docs are cut to about 100 chars and CRLF lines are clean."""
    o = outline_markdown("# Title\r\n\r\n" + "word " * 50 + "\r\n## Next\r\n")
    title, nxt = o.symbols
    assert len(title.doc) <= 100 and title.doc.endswith("…")
    assert title.name == "Title" and nxt.signature == "## Next"
    assert title.end_line == 4 == nxt.start_line == nxt.end_line  # "## Next" is inside "# Title"


def test_atx_details() -> None:
    """Ensure that closing hashes, empty headings and up to three spaces of indent work."""
    o = outline_markdown("   ## Spaced ##\n#\n####### seven is text\n# Title # with hash\n")
    assert [s.signature for s in o.symbols] == ["## Spaced", "#", "# Title # with hash"]


@given(st.text(alphabet="#=-`~ \nab>*1.", max_size=200))
@settings(max_examples=200, deadline=None)
def test_random_markdown_ranges_are_sane(text: str) -> None:
    """Ensure that any text outlines without raising and with ranges inside the file."""
    o = outline_markdown(text)
    for s in o.symbols:
        assert 1 <= s.start_line <= s.end_line <= max(o.line_count, s.start_line)
        assert 0 <= s.depth <= 5


# --- readable markdown -----------------------------------------------------------------------

BADGED = textwrap.dedent(
    """\
    <p align="center">
      <a href="https://www.python-httpx.org/"><img width="350" src="https://example.org/butterfly.png" alt='HTTPX'></a>
    </p>

    <p align="center"><strong>HTTPX</strong> <em>- A next-generation HTTP client.</em></p>

    <p align="center">
    <a href="https://github.com/encode/httpx/actions">
        <img src="https://github.com/encode/httpx/workflows/Test%20Suite/badge.svg" alt="Test Suite">
    </a>
    </p>

    [![codecov](https://codecov.io/gh/x/y/graph/badge.svg)](https://codecov.io/gh/x/y) [![PyPI](https://img.shields.io/pypi/v/httpx.svg)](https://pypi.org/project/httpx/)
    ![Build][ci-badge] | [Docs](https://example.org/docs)
    <!-- one line comment -->
    <!--
    a comment over lines
    -->
    Install with `pip install httpx` and use `<div>` tags or List<int> freely, x <b y.
    ![diagram](docs/img/diagram.png)

    ```html
    <div align="center"><img src="https://img.shields.io/badge/x.svg"></div>
    ```

        <p>indented code stays</p>

    <img
      src="logo.png"
      width="100">
    After &nbsp;the logo.
    &nbsp;&nbsp;

    [ci-badge]: https://github.com/x/y/actions/workflows/ci.yml/badge.svg
    """
)


def test_readable_lines_drop_html_and_badges_keep_prose_and_code() -> None:
    """Ensure that HTML tags, comments and badges are removed line by line (one output line
    per input line, so line numbers hold), while prose, inline code, non-badge images,
    fenced and indented code are kept as they are."""
    lines = BADGED.split("\n")
    out = readable_lines(lines)
    assert len(out) == len(lines)
    shown = [line for line in out if line.strip()]
    assert shown == [
        "HTTPX - A next-generation HTTP client.",
        "Install with `pip install httpx` and use `<div>` tags or List<int> freely, x <b y.",
        "![diagram](docs/img/diagram.png)",
        "```html",
        '<div align="center"><img src="https://img.shields.io/badge/x.svg"></div>',
        "```",
        "    <p>indented code stays</p>",
        "After &nbsp;the logo.",
    ]
    for before, after in zip(lines, out):  # a line is kept whole, cleaned, or blanked: never moved
        assert after == before or not after or after in before or "HTTPX" in after


def test_readable_markdown_keeps_lines_and_line_endings() -> None:
    """Ensure that the text keeps its line count and CRLF endings, and that markdown with
    nothing to remove comes back as the same object (no work)."""
    text = BADGED.replace("\n", "\r\n")
    readable = readable_markdown(text)
    assert readable.count("\n") == text.count("\n")
    assert "Install with `pip install httpx`" in readable and "\r\n" in readable
    assert "badge" not in readable.replace("img.shields.io/badge/x.svg", "")
    plain = "# Title\n\nNo markup at all.\n"
    assert readable_markdown(plain) is plain


def test_unclosed_tag_in_prose_hides_nothing_after_it() -> None:
    """Ensure that a `<b` or `<a` in prose (not a tag opened for the next line) never blanks
    the lines that follow."""
    lines = ["Compare a <b c here", "next line stays", "", "<a", 'href="x">link</a> text', "after"]
    assert readable_lines(lines) == ["Compare a <b c here", "next line stays", "", "", "link text", "after"]


MARKUP = [
    "<p>",
    "</p>",
    "```",
    "    code",
    "",
    "text <b>x</b>",
    "<!--",
    "-->",
    "<img",
    ">",
    "[![b](https://img.shields.io/x)](y)",
]


@given(st.lists(st.sampled_from(MARKUP), max_size=30))
@settings(max_examples=200, deadline=None)
def test_random_markup_keeps_the_line_count(lines: list[str]) -> None:
    """Ensure that any mix of markup keeps one line per line, is stable when applied
    again, and changes only lines that had markup."""
    out = readable_lines(lines)
    assert len(out) == len(lines)
    assert readable_lines(out) == out
    assert all(not line or line == source or "<" in source for line, source in zip(out, lines))


@given(st.lists(st.sampled_from([m for m in MARKUP if m not in ("<!--", "<img")]), max_size=30))
@settings(max_examples=200, deadline=None)
def test_random_markup_leaves_fenced_lines_alone(lines: list[str]) -> None:
    """Ensure that fence lines and the lines between them are never changed (outside a
    comment or a tag left open, where they are markup)."""
    fence_open = False
    for line, source in zip(readable_lines(lines), lines):
        if fence_open or source == "```":
            assert line == source
        fence_open ^= source == "```"
