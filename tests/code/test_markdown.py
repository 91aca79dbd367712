"""Tests for ctx_lsp/code/markdown.py: heading outlines without a markdown parser."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.code.markdown import outline_markdown

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
