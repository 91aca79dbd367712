"""Tests for ctx_lsp/docs/sections.py: splitting text documents into doc sections."""

from __future__ import annotations

import textwrap

from hypothesis import given
from hypothesis import strategies as st

from ctx_lsp.docs.sections import (
    FENCE,
    Block,
    Kind,
    document_drafts,
    pack_blocks,
    rst_headings,
    split_blocks,
)


def _drafts(text: str, fmt: str = "markdown", **kw):
    return document_drafts(
        textwrap.dedent(text),
        label="lib README",
        path="/x/METADATA",
        display="METADATA",
        kind=Kind.README,
        fmt=fmt,
        **kw,
    )


def test_markdown_sections_by_heading() -> None:
    """Ensure that each heading becomes a section holding only its own text, titled with
    its heading path, and that text before the first heading is kept."""
    drafts = _drafts(
        """\
        Intro line.

        # Lib
        Lib does things.
        ## Install
        pip install lib
        ## Usage
        Call it.
        """
    )
    assert [d.title for d in drafts] == [
        "lib README",
        "lib README › Lib",
        "lib README › Lib › Install",
        "lib README › Lib › Usage",
    ]
    install = drafts[2]
    assert "pip install lib" in install.text and "Call it." not in install.text
    assert install.text.startswith("### lib README › Lib › Install\nSource: METADATA:5")
    assert install.line == 5


def test_first_line_offsets_source_lines() -> None:
    """Ensure that a description starting after the METADATA headers reports file lines."""
    drafts = _drafts("# A\ntext\n", first_line=10)
    assert drafts[0].line == 10 and "Source: METADATA:10" in drafts[0].text


def test_badges_are_dropped() -> None:
    """Ensure that README badge lines (only linked images) do not cost tokens."""
    drafts = _drafts(
        """\
        # Lib
        [![PyPI](https://img.shields.io/pypi/v/lib.svg)](https://pypi.org/project/lib/) ![ci](https://x/badge.svg)
        Real text with an ![inline](img.png) image.
        """
    )
    assert "shields.io" not in drafts[0].text
    assert "Real text" in drafts[0].text


def test_markdown_html_is_left_out_of_sections_and_titles() -> None:
    """Ensure that a README's HTML (a centred logo, comments, heading anchors) is not in
    its sections or their titles, while its prose and code are, at their source lines."""
    drafts = _drafts(
        """        <p align="center">
          <img src="https://example.org/logo.svg" width="35%" alt="lib" />
        </p>

        Lib in one line.

        ## Usage<a id="usage"></a>
        <!-- begin-example -->
        ```html
        <p>kept: an example</p>
        ```
        """
    )
    assert [d.title for d in drafts] == ["lib README", "lib README › Usage"]
    intro, usage = drafts
    assert "<img" not in intro.text and "<p" not in intro.text and "Lib in one line." in intro.text
    assert "<!--" not in usage.text and "<p>kept: an example</p>" in usage.text
    assert usage.line == 7


def test_rst_headings_follow_adornment_order() -> None:
    """Ensure that reStructuredText titles get levels from the order their styles appear,
    overlines included."""
    lines = textwrap.dedent(
        """\
        ======
        Title
        ======

        Intro.

        Part
        ----

        Sub
        ~~~

        Other part
        ----------
        """
    ).split("\n")
    headings = rst_headings(lines)
    assert [h.path for h in headings] == ["Title", "Title › Part", "Title › Part › Sub", "Title › Other part"]
    assert headings[0].index == 0 and headings[0].body == 3


def test_unknown_format_picks_the_richer_reading() -> None:
    """Ensure that a description without a content type is split as rst when that finds
    more headings than markdown does."""
    drafts = _drafts("Lib\n===\n\nx\n\nUse\n---\n\ny\n\nMore\n----\n\nz\n", fmt="")
    assert [d.title for d in drafts] == ["lib README › Lib", "lib README › Lib › Use", "lib README › Lib › More"]


def test_long_sections_are_split_into_parts_outside_fences() -> None:
    """Ensure that an oversized section becomes numbered parts, each with its own source
    line, and that a code block with blank lines is never split."""
    code = "```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(5)) + "\n```"
    paragraphs = [f"Paragraph {i} " + "word " * 30 for i in range(6)]
    body = "\n\n".join([*paragraphs[:3], code, *paragraphs[3:]])
    drafts = _drafts(f"# Big\n{body}\n", max_chars=400)
    assert len(drafts) > 2
    assert drafts[0].title == f"lib README › Big (1/{len(drafts)})"
    assert all(sum(1 for line in d.text.split("\n") if FENCE.match(line)) % 2 == 0 for d in drafts)
    assert drafts[1].line > drafts[0].line
    assert any("x0 = 0" in d.text and "x4 = 4" in d.text for d in drafts)


def test_oversized_code_block_is_refenced() -> None:
    """Ensure that a code block too big for one part is split into separately fenced pieces."""
    block = Block("```\n" + "\n".join(f"line {i}" for i in range(200)) + "\n```", 1)
    parts = pack_blocks([block], max_chars=300)
    assert len(parts) > 1
    for part in parts:
        for piece in part:
            lines = piece.text.split("\n")
            assert lines[0] == "```" and lines[-1] == "```"


@given(st.lists(st.text(alphabet="ab `\n", max_size=40), max_size=12), st.integers(min_value=20, max_value=200))
def test_packing_keeps_every_block_in_order(texts: list[str], max_chars: int) -> None:
    """Ensure that packing neither drops, duplicates nor reorders blocks that fit."""
    blocks = split_blocks("\n\n".join(texts).split("\n"), 1)
    small = [b for b in blocks if len(b.text) <= max_chars]
    parts = pack_blocks(small, max_chars)
    assert [b for part in parts for b in part] == small
