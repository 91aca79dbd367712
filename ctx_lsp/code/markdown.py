"""Markdown outlines from headings, without a markdown parser dependency.

Only what an outline needs is recognised: ATX headings (`#`..`######`), setext headings
(a paragraph line underlined with `===` or `---`), and fenced code blocks, whose lines are
never headings (a `# comment` in a shell snippet is code). A YAML front matter block at
the top is skipped so its closing `---` is not read as a setext underline.
"""

from __future__ import annotations

import re

from ctx_lsp.code.outline import Outline, Symbol, split_lines
from ctx_lsp.tokens import ellipsize

__all__ = ["outline_markdown"]

DOC_LINE_MAX_CHARS = 100
"""A section's `doc` is its first paragraph line, cut here."""

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# A line that cannot be the text of a setext heading: list items, quotes, tables,
# indented code, HTML blocks and thematic breaks start a different block.
_NOT_PARAGRAPH = re.compile(r"^(?: {4}|\t| {0,3}(?:[-*+>|<]|\d+[.)](?:\s|$)|(?:[-*_][ \t]*){3,}$))")


def _cut(text: str) -> str:
    return ellipsize(text, DOC_LINE_MAX_CHARS)


def _headings(lines: list[str]) -> tuple[list[tuple[int, int, str, int]], set[int]]:
    """(line index, level, title, body start index) of each heading, and the indexes of
    lines inside fenced code (fence lines included)."""
    headings: list[tuple[int, int, str, int]] = []
    fenced: set[int] = set()
    start = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    fence: str | None = None
    previous_is_paragraph = False
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is not None:
            fenced.add(i)
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            previous_is_paragraph = False
            continue
        match = _FENCE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            fenced.add(i)
            previous_is_paragraph = False
            continue
        match = _ATX.match(line)
        if match:
            headings.append((i, len(match.group(1)), (match.group(2) or "").strip(), i + 1))
            previous_is_paragraph = False
            continue
        if previous_is_paragraph:
            match = _SETEXT.match(line)
            if match:
                level = 1 if match.group(1)[0] == "=" else 2
                headings.append((i - 1, level, lines[i - 1].strip(), i + 1))
                previous_is_paragraph = False
                continue
        previous_is_paragraph = bool(line.strip()) and not _NOT_PARAGRAPH.match(line)
    return headings, fenced


def _first_paragraph_line(lines: list[str], fenced: set[int], start: int, stop: int) -> str:
    for i in range(start, stop):
        if i in fenced:
            continue
        text = lines[i].strip()
        if text and not text.startswith("<!--"):
            return _cut(text)
    return ""


def outline_markdown(text: str) -> Outline:
    """Headings as symbols (kind "heading", qualname "Install > From PyPI", depth =
    level - 1). A section runs to the line before the next heading of the same or a
    higher level, or to the end of the file."""
    lines = split_lines(text)
    headings, fenced = _headings(lines)
    # a section ends before the next heading of the same or a higher level: one pass
    # with a stack of the sections still open
    ends = [len(lines)] * len(headings)  # 1-based end line per heading
    open_sections: list[int] = []
    for k, (index, level, _, _) in enumerate(headings):
        while open_sections and headings[open_sections[-1]][1] >= level:
            ends[open_sections.pop()] = index  # the line before, 1-based
        open_sections.append(k)
    symbols: list[Symbol] = []
    path: list[tuple[int, str]] = []  # (level, title) of the enclosing headings
    for k, (index, level, title, body_index) in enumerate(headings):
        while path and path[-1][0] >= level:
            path.pop()
        parent = " > ".join(t for _, t in path)
        path.append((level, title))
        next_heading = headings[k + 1][0] if k + 1 < len(headings) else len(lines)
        symbols.append(
            Symbol(
                qualname=f"{parent} > {title}" if parent else title,
                name=title,
                kind="heading",
                signature=f"{'#' * level} {title}" if title else "#" * level,
                decorators=(),
                doc=_first_paragraph_line(lines, fenced, body_index, next_heading),
                start_line=index + 1,
                end_line=max(ends[k], index + 1),
                body_start_line=body_index + 1,
                depth=level - 1,
                parent=parent,
                calls=(),
            )
        )
    if symbols:
        docstring = _cut(symbols[0].name)
    else:
        docstring = next((_cut(line.strip()) for line in lines if line.strip()), "")
    return Outline(
        language="markdown",
        docstring=docstring,
        imports=(),
        constants=(),
        symbols=tuple(symbols),
        references=(),
        line_count=len(lines),
        has_errors=False,
    )
