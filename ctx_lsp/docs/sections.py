"""Doc sections: the unit library docs are ranked, selected and cut in.

Every source (a package description, an `llms.txt`, a docs folder, the docstrings of a
module) becomes a list of sections, each rendered once into the exact markdown block the
result will contain. Ranking scores that block and selection adds up its real token
count, so what is chosen is what is sent.

Sections are kept small (`MAX_SECTION_CHARS`): a budget of 2,500 tokens should hold
several of them, and a long README chapter or a class with a hundred members is split
into numbered parts at blank lines, never inside a fenced code block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctx_lsp.code.markdown import outline_markdown, readable_lines
from ctx_lsp.code.outline import split_lines

__all__ = [
    "DocSection",
    "Draft",
    "Kind",
    "document_drafts",
    "pack_blocks",
    "render",
    "split_blocks",
]


class Kind:
    """Where a section came from. Also the order of the generic (no topic) ranking: a
    library's own description explains it best, its API reference least."""

    README = "readme"
    LLMS = "llms"
    GUIDE = "guide"
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"

    OVERVIEW_ORDER = (README, LLMS, GUIDE, MODULE, CLASS, FUNCTION, METHOD)


MAX_SECTION_CHARS = 2800
"""About 700 tokens of prose or code: a 2,500-token docs cap then holds three or more
sections, so one long chapter cannot crowd out every other match."""

SEPARATOR = "\n\n"
"""Between two sections of a result."""

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

_BADGE_LINE = re.compile(r"^\s*(?:\[?!\[[^\]]*\]\([^)]*\)\]?(?:\([^)]*\))?\s*)+$")
"""A line made only of (linked) images: README badges, which cost tokens and say nothing."""


@dataclass(frozen=True, slots=True)
class Draft:
    """A rendered section before its tokens are counted (counting is batched per library)."""

    title: str
    path: str
    """Absolute path of the file the section comes from."""
    line: int
    """1-based line of the section's start in `path`."""
    kind: str
    text: str
    """The markdown block exactly as a result shows it, title line included."""
    weight: float = 1.0
    """Multiplies the section's topic score (see `UNDOCUMENTED_WEIGHT`)."""


@dataclass(frozen=True, slots=True)
class DocSection:
    """One rankable, selectable block of a library's docs."""

    library: str
    version: str
    title: str
    path: str
    line: int
    kind: str
    text: str
    tokens: int
    """Real count of `text` with the library docs' counter."""
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Block:
    """Lines that must stay together (a paragraph, a fenced code block), with the 1-based
    line where they start, so each part of a split section knows its own source line."""

    text: str
    line: int


def render(title: str, source: str, body: str) -> str:
    """The one markdown shape of every section: a heading, where it came from, the body."""
    head = f"### {title}\nSource: {source}"
    return f"{head}\n\n{body}" if body.strip() else head


def is_badge_line(line: str) -> bool:
    return bool(_BADGE_LINE.match(line)) and ("](" in line)


def split_blocks(lines: Sequence[str], first_line: int) -> list[Block]:
    """Blank-line separated blocks; a fenced code block is one block even with blank
    lines inside, so no part of a split section opens a fence it does not close."""
    blocks: list[Block] = []
    current: list[str] = []
    start = first_line
    fence: str | None = None
    for offset, line in enumerate(lines):
        number = first_line + offset
        if fence is None and not line.strip():
            if current:
                blocks.append(Block("\n".join(current), start))
                current = []
            continue
        if not current:
            start = number
        current.append(line)
        match = FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip().strip(marker[0]):
                fence = None
    if current:
        blocks.append(Block("\n".join(current), start))
    return blocks


def _split_big_block(block: Block, max_chars: int) -> list[Block]:
    """Cut one oversized block into line groups; a fenced block is re-fenced per group."""
    lines = block.text.split("\n")
    opening = FENCE.match(lines[0]) if lines else None
    fenced = opening is not None and len(lines) > 2 and FENCE.match(lines[-1]) is not None
    inner = lines[1:-1] if fenced else lines
    first = block.line + 1 if fenced else block.line
    groups: list[Block] = []
    current: list[str] = []
    size = 0
    start = first
    for offset, line in enumerate(inner):
        if current and size + len(line) + 1 > max_chars:
            groups.append(Block("\n".join(current), start))
            current, size, start = [], 0, first + offset
        current.append(line)
        size += len(line) + 1
    if current:
        groups.append(Block("\n".join(current), start))
    if not fenced:
        return groups
    return [Block(f"{lines[0]}\n{g.text}\n{lines[-1]}", g.line) for g in groups]


def pack_blocks(blocks: Sequence[Block], max_chars: int = MAX_SECTION_CHARS) -> list[list[Block]]:
    """Blocks grouped in order into parts of at most `max_chars` (a part holds at least one
    block). Sizes are estimated in characters: the limit only sets the granularity of
    ranking, the real token counts come later."""
    parts: list[list[Block]] = []
    current: list[Block] = []
    size = 0
    for block in blocks:
        pieces = [block] if len(block.text) <= max_chars else _split_big_block(block, max_chars)
        for piece in pieces:
            if current and size + len(piece.text) + 2 > max_chars:
                parts.append(current)
                current, size = [], 0
            current.append(piece)
            size += len(piece.text) + 2
    if current:
        parts.append(current)
    return parts


def drafts_from_blocks(
    title: str,
    path: str,
    display: str,
    line: int,
    kind: str,
    blocks: Sequence[Block],
    max_chars: int = MAX_SECTION_CHARS,
    weight: float = 1.0,
) -> list[Draft]:
    """One draft, or numbered parts ("Title (2/3)") when the body is too long for one."""
    if not blocks:
        return [Draft(title, path, line, kind, render(title, f"{display}:{line}", ""), weight)]
    parts = pack_blocks(blocks, max_chars)
    drafts = []
    for k, part in enumerate(parts, 1):
        part_title = title if len(parts) == 1 else f"{title} ({k}/{len(parts)})"
        part_line = line if k == 1 else part[0].line
        body = "\n\n".join(b.text for b in part)
        text = render(part_title, f"{display}:{part_line}", body)
        drafts.append(Draft(part_title, path, part_line, kind, text, weight))
    return drafts


# --- text documents: markdown, reStructuredText, plain text ------------------------------

RST_UNDERLINE_CHARS = "=-`:'\"~^_*+#<>"
"""The punctuation docutils accepts for section adornments."""

_RST_ADORNMENT = re.compile(rf"^([{re.escape(RST_UNDERLINE_CHARS)}])\1{{2,}}\s*$")
"""A line of one repeated adornment character, at least three long."""

HEADING_PATH_SEPARATOR = " › "


@dataclass(frozen=True, slots=True)
class Heading:
    """Where a section of a text document starts (0-based `index`, `body` the first line
    after the heading) and its heading path ("Install › From PyPI")."""

    index: int
    body: int
    path: str


def markdown_headings(text: str) -> list[Heading]:
    """Headings found by the workspace's markdown outliner (fences and front matter aware)."""
    outline = outline_markdown(text)
    return [
        Heading(
            s.start_line - 1, s.body_start_line - 1, _readable_title(s.qualname).replace(" > ", HEADING_PATH_SEPARATOR)
        )
        for s in outline.symbols
    ]


def _readable_title(title: str) -> str:
    """A heading path without its HTML (`Usage<a id="usage"></a>`), or as it is if that
    leaves nothing."""
    return readable_lines([title])[0] or title


def rst_headings(lines: Sequence[str]) -> list[Heading]:
    """reStructuredText section titles: a title line underlined (and optionally
    overlined) with one repeated punctuation character at least as long as the title.
    Levels follow docutils: each new adornment style is one level deeper than those seen."""
    styles: list[tuple[str, bool]] = []
    found: list[tuple[int, int, int, str]] = []  # index, body, level, title
    i = 0
    while i + 1 < len(lines):
        title = lines[i].rstrip()
        under = _RST_ADORNMENT.match(lines[i + 1])
        if (
            title
            and not title[0].isspace()
            and under
            and len(lines[i + 1].rstrip()) >= len(title)
            and not _RST_ADORNMENT.match(title)
        ):
            over = i > 0 and lines[i - 1].rstrip() == lines[i + 1].rstrip()
            style = (under.group(1), over)
            if style not in styles:
                styles.append(style)
            start = i - 1 if over else i
            found.append((start, i + 2, styles.index(style) + 1, title.strip()))
            i += 2
            continue
        i += 1
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    for index, body, level, title in found:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        headings.append(Heading(index, body, HEADING_PATH_SEPARATOR.join(t for _, t in stack)))
    return headings


def document_format(name: str, content_type: str = "") -> str:
    """ "markdown" | "rst" | "text" from a content type or a file name; "" when unknown."""
    lowered = content_type.lower()
    if "markdown" in lowered:
        return "markdown"
    if "rst" in lowered:
        return "rst"
    if "plain" in lowered:
        return "text"
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if suffix in ("md", "markdown", "mdx"):
        return "markdown"
    if suffix in ("rst", "rest"):
        return "rst"
    if suffix == "txt":
        return "markdown"  # llms.txt is markdown; a plain .txt without headings loses nothing
    return ""


def _headings_for(text: str, lines: Sequence[str], fmt: str) -> list[Heading]:
    if fmt == "markdown":
        return markdown_headings(text)
    if fmt == "rst":
        return rst_headings(lines)
    if fmt == "text":
        return []
    # unknown (a METADATA description without a content type): whichever finds more
    md, rst = markdown_headings(text), rst_headings(lines)
    return rst if len(rst) > len(md) else md


def document_drafts(
    text: str,
    *,
    label: str,
    path: str,
    display: str,
    kind: str,
    fmt: str,
    first_line: int = 1,
    max_chars: int = MAX_SECTION_CHARS,
) -> list[Draft]:
    """Sections of a text document, one per heading (its own text up to the next heading
    of any level, so a parent and its children never repeat each other), plus the text
    before the first heading. `first_line` is the file line the text starts on (a package
    description starts after the METADATA headers)."""
    lines = split_lines(text)
    headings = _headings_for(text, lines, fmt)
    spans: list[tuple[str, int, int, int]] = []  # title, heading index, body start, end
    first_heading = headings[0].index if headings else len(lines)
    if any(line.strip() for line in lines[:first_heading]):
        spans.append((label, 0, 0, first_heading))
    for k, heading in enumerate(headings):
        end = headings[k + 1].index if k + 1 < len(headings) else len(lines)
        spans.append(
            (
                f"{label}{HEADING_PATH_SEPARATOR}{heading.path}" if heading.path else label,
                heading.index,
                heading.body,
                end,
            )
        )
    shown = lines if fmt == "rst" else readable_lines(lines)  # no HTML or badges, same line numbers
    drafts: list[Draft] = []
    for title, index, body, end in spans:
        cleaned = ["" if is_badge_line(line) else line for line in shown[body:end]]
        blocks = split_blocks(cleaned, first_line + body)
        if not blocks and index != body:
            continue  # a heading with nothing under it: its children carry its title
        drafts.extend(drafts_from_blocks(title, path, display, first_line + index, kind, blocks, max_chars))
    return drafts


def overview_order(kind: str) -> int:
    try:
        return Kind.OVERVIEW_ORDER.index(kind)
    except ValueError:
        return len(Kind.OVERVIEW_ORDER)
