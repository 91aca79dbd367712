"""Markdown outlines from headings, without a markdown parser dependency.

Only what an outline needs is recognised: ATX headings (`#`..`######`), setext headings
(a paragraph line underlined with `===` or `---`), and fenced code blocks, whose lines are
never headings (a `# comment` in a shell snippet is code). A YAML front matter block at
the top is skipped so its closing `---` is not read as a setext underline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ctx_lsp.code.outline import Outline, Symbol, split_lines
from ctx_lsp.tokens import ellipsize

__all__ = ["outline_markdown", "readable_lines", "readable_markdown"]

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


# -- readable markdown: what a bundle shows of a markdown file ------------------------------

BADGE_URL = re.compile(
    r"badge|shields\.io|codecov\.io|coveralls\.io|travis-ci\.(?:org|com)|circleci\.com|appveyor\.com"
    r"|pepy\.tech|snyk\.io/test|/actions/workflows/|/workflows/[^/]+/badge",
    re.IGNORECASE,
)
"""Image URLs of status badges (CI, coverage, PyPI version, docs build, downloads). They
cost tokens in every bundle and tell an agent nothing it can act on. `badge` alone covers
badge.fury.io, badgen.net, `…/badge.svg` and readthedocs' `/badge/`."""

_HTML_TAGS = (
    "a|abbr|audio|b|big|blockquote|br|center|code|dd|del|details|div|dl|dt|em|figcaption|figure|font"
    "|h[1-6]|hr|i|iframe|img|ins|kbd|li|mark|ol|p|picture|pre|s|samp|small|source|span|strike|strong"
    "|sub|summary|sup|table|tbody|td|tfoot|th|thead|tr|tt|u|ul|video"
)
_ATTRS = r"""(?:[^<>"']|"[^"]*"|'[^']*')*"""
_TAG = re.compile(rf"</?(?:{_HTML_TAGS})(?=[\s/>]){_ATTRS}>|</?(?:{_HTML_TAGS})>", re.IGNORECASE)
"""A complete HTML tag of the elements READMEs use for layout. Only known element names:
`List<int>` or `<Response [200 OK]>` in prose are not markup."""
_TAG_OPEN = re.compile(rf"\s*<(?:{_HTML_TAGS})(?=[\s/]|$){_ATTRS}$", re.IGNORECASE)
"""What is left of a line that opens a tag whose attributes go on to the next lines
(`<img src="…"` then `width="100">`). Only at the start of what is left: `x <b y` in
prose must not hide the lines after it."""
_TAG_REST = re.compile(rf"^{_ATTRS}>")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_CODE_SPAN = re.compile(r"(`+).+?\1")
_ENTITY_SPACE = re.compile(r"&(?:nbsp|ensp|emsp|thinsp);", re.IGNORECASE)
_GAP = re.compile(r"(?<=\S)[ \t]{2,}")
"""Spaces a removed tag or badge leaves between two words (indentation is kept)."""
_IMAGE = r"!\[(?:[^\]\\]|\\.)*\](?:\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)|\[([^\]]*)\])"
_LINKED_IMAGE = re.compile(rf"\[\s*{_IMAGE}\s*\](?:\([^)]*\)|\[[^\]]*\])")
_BARE_IMAGE = re.compile(_IMAGE)
_REFERENCE = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_ONLY_LINKS = re.compile(r"^(?:\s|[|·•,;/-]|\[(?:[^\]\\]|\\.)*\](?:\([^)]*\)|\[[^\]]*\])?)*$")
"""What is left of a badge line once its badges are gone: links and separators."""


def _badge_references(lines: list[str]) -> dict[str, str]:
    """`[label]: url` definitions whose url is a badge (reference-style badges)."""
    found: dict[str, str] = {}
    for line in lines:
        if "]:" in line:
            match = _REFERENCE.match(line)
            if match and BADGE_URL.search(match.group(2)):
                found[match.group(1).strip().lower()] = match.group(2)
    return found


def _drop_badges(text: str, references: dict[str, str]) -> str:
    def badge(match: re.Match[str]) -> bool:
        url = match.group(1) or references.get((match.group(2) or "").strip().lower(), "")
        return bool(url and BADGE_URL.search(url))

    text = _LINKED_IMAGE.sub(lambda m: "" if badge(m) else m.group(0), text)
    return _BARE_IMAGE.sub(lambda m: "" if badge(m) else m.group(0), text)


def _outside_code_spans(line: str, clean: Callable[[str], str]) -> str:
    """`clean` applied to the parts of a line outside inline code: `` `<div>` `` is prose
    about HTML, not HTML."""
    if "`" not in line:
        return clean(line)
    parts: list[str] = []
    pos = 0
    for match in _CODE_SPAN.finditer(line):
        parts.append(clean(line[pos : match.start()]))
        parts.append(match.group(0))
        pos = match.end()
    parts.append(clean(line[pos:]))
    return "".join(parts)


def readable_lines(lines: Sequence[str]) -> list[str]:
    """The lines of a markdown file as a bundle shows them: HTML tags and comments and
    status badges removed, one output line per input line so line numbers still hold.

    A line that was only markup becomes empty; a line with prose keeps the prose
    (`<p align="center"><strong>HTTPX</strong> - a client</p>` → `HTTPX - a client`).
    Fenced and indented code is never touched, nor inline code.
    """
    out = list(lines)
    references = _badge_references(out) if any("]:" in line for line in out) else {}
    fence: str | None = None
    open_markup = _NOTHING_OPEN
    in_html = in_code = False
    previous_blank = True
    for i, line in enumerate(lines):
        blank = not line.strip()
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
        elif open_markup != _NOTHING_OPEN:
            out[i], open_markup = _clean_line(line, references, open_markup)
        elif (match := _FENCE.match(line)) and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
        elif line.startswith(("    ", "\t")) and not blank and (in_code or (previous_blank and not in_html)):
            in_code = True  # indented code: untouched while its lines stay indented
        else:
            in_code = in_code and blank
            in_html = in_html or bool(_HTML_START.match(line))
            out[i], open_markup = _clean_line(line, references, _NOTHING_OPEN)
        if blank:
            in_html = False
            if open_markup == _TAG_OPEN_STATE:
                open_markup = _NOTHING_OPEN  # a tag's attributes never span a blank line
        previous_blank = blank
    return out


_NOTHING_OPEN, _COMMENT_OPEN, _TAG_OPEN_STATE = 0, 1, 2
"""What a line leaves open for the next: nothing, an HTML comment, a tag's attributes."""

_HTML_START = re.compile(rf" {{0,3}}(?:</?(?:{_HTML_TAGS})(?=[\s/>]|$)|<!--)", re.IGNORECASE)
"""A line that starts an HTML block: lines indented inside it are markup, not code."""


def _clean_line(line: str, references: dict[str, str], opened: int) -> tuple[str, int]:
    """One line without markup, and what it leaves open; `opened` is what an earlier line
    left open (a comment, or a tag whose attributes go on)."""
    text = line
    if opened == _COMMENT_OPEN:
        end = text.find("-->")
        if end < 0:
            return "", _COMMENT_OPEN
        text = text[end + 3 :]
    elif opened == _TAG_OPEN_STATE:
        rest = _TAG_REST.match(text)
        if rest is None:
            return "", _TAG_OPEN_STATE
        text = text[rest.end() :]
    still_open = _NOTHING_OPEN
    if "<" in text:
        text = _outside_code_spans(_COMMENT.sub("", text), lambda part: _TAG.sub("", part))
        if "<!--" in text and "`" not in text:
            text, still_open = text[: text.index("<!--")], _COMMENT_OPEN
        elif _TAG_OPEN.match(text):
            text, still_open = "", _TAG_OPEN_STATE
    if "![" in text or "][" in text:
        without = _outside_code_spans(text, lambda part: _drop_badges(part, references))
        text = "" if without != text and _ONLY_LINKS.match(without) else without
    if references and (match := _REFERENCE.match(text)) and match.group(1).strip().lower() in references:
        text = ""  # the definition of a reference-style badge
    if "&" in text and not _ENTITY_SPACE.sub("", text).strip():
        text = ""  # `&nbsp;` spacing between badges
    if text == line:
        return line, still_open
    text = _outside_code_spans(_ENTITY_SPACE.sub(" ", text), lambda part: _GAP.sub(" ", part)).rstrip()
    if not text.strip():
        return "", still_open
    starts_in_markup = opened != _NOTHING_OPEN or line.lstrip().startswith("<")
    return (text.lstrip() if starts_in_markup else text), still_open


def readable_markdown(text: str) -> str:
    """`text` with `readable_lines` applied, line endings kept: the same lines, so a
    rendering of it covers the file's line range."""
    if "<" not in text and "![" not in text:
        return text
    pieces = text.split("\n")
    carriage = [piece.endswith("\r") for piece in pieces]
    cleaned = readable_lines([piece[:-1] if cr else piece for piece, cr in zip(pieces, carriage)])
    return "\n".join(line + "\r" if cr and line else line for line, cr in zip(cleaned, carriage))
