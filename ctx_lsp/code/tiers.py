"""Tier renderings of one file: outline (1), focused (2), full (3) — DESIGN: Tiers.

Everything here works from an `Outline` and the file's text: no parsing, so a bundle can
render every candidate at every tier it considers. Tiers 1 and 2 put a line-number gutter
in front of each line (` 41│ def counter_for(...)`) so an agent can cite and open code;
tier 3 is the file verbatim. Every rendering is cut to its token cap with
`tokens.cut_to_tokens`, so `tokens` is a real count and never above the cap.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ctx_lsp.code.outline import Outline, Symbol, Tier, split_lines
from ctx_lsp.tokens import TokenCounter, cut_to_tokens

__all__ = ["TIER_CAP_TOKENS", "Rendering", "render"]

TIER_CAP_TOKENS: dict[Tier, int] = {Tier.OUTLINE: 1000, Tier.FOCUSED: 5000, Tier.FULL: 20000}
"""Default caps per tier (DESIGN: Concepts → Tiers)."""

DOC_MAX_CHARS = 100
"""First docstring lines are cut here in outlines: a one-line summary, not a paragraph."""

GUTTER = "│ "
"""Between the right-aligned line number and the line; one token, unlike `: ` or `| `
inside code, it cannot be mistaken for source."""

INDENT = "    "


@dataclass(frozen=True, slots=True)
class Rendering:
    """One file at one tier, ready to put in a bundle section."""

    tier: Tier
    content: str
    tokens: int
    """Real count of `content` with the counter passed to `render`; never above the cap."""
    start_line: int
    """1-based range of the file the content covers: the whole file for outlines, the
    kept prefix for a cut tier 3, and 0..0 for an empty rendering."""
    end_line: int
    truncated: bool
    """Something was left out to fit the cap (members folded, lines cut, or — for plain
    text — everything)."""
    shown_symbols: tuple[str, ...]
    """Qualnames whose full source is in `content`: focused ones in tier 2, all in tier 3."""


class _Row(NamedTuple):
    """One content line of an outline: a file line number and what to show for it.
    A named tuple, not a frozen dataclass: outlines build thousands per render."""

    line: int
    text: str
    starts_symbol: bool = False
    member: bool = False
    """Belongs to a nested symbol (a method): folded first when the outline is too big."""
    ends: tuple[str, ...] = ()
    """Qualnames whose full source (tier 2) ends on this row."""
    source: bool = False
    """A verbatim source line (tier 2), never annotated."""


def render(
    path: str,
    text: str,
    outline: Outline,
    tier: Tier,
    counter: TokenCounter,
    *,
    focus: Collection[str] = (),
    cap_tokens: int | None = None,
) -> Rendering:
    """Render `text` (the file at `path`, outlined as `outline`) at `tier`.

    `focus` holds qualnames whose full source tier 2 shows in place of their outline
    lines; unknown names are ignored, and no focus makes tier 2 the same as tier 1.
    Plain text (and markdown without headings, or Python without anything to outline)
    is whole-or-nothing at every tier.
    """
    tier = Tier(tier)
    cap = max(0, TIER_CAP_TOKENS[tier] if cap_tokens is None else cap_tokens)
    if outline.language == "text" or (outline.language == "markdown" and not outline.symbols):
        return _whole_or_nothing(text, outline, tier, counter, cap)
    if tier == Tier.FULL:
        return _full(text, outline, counter, cap)

    lines = split_lines(text)
    if outline.language == "markdown":
        rows = _markdown_rows(outline)
    else:
        rows = _python_rows(outline, lines, keep=focus)
        if not rows:  # a script of bare statements: no outline to show, so like text
            return _whole_or_nothing(text, outline, tier, counter, cap)
    if tier == Tier.FOCUSED and focus:
        # Over the cap, shed the later (less relevant) bodies before folding the outline:
        # every signature of the file tells an agent more than a third focused body.
        wanted = list(focus)
        while True:
            result = _fit(_focus(rows, outline, lines, wanted), outline, tier, counter, cap)
            if not result.truncated or len(wanted) <= 1:
                return result
            wanted = wanted[: len(wanted) // 2]
    return _fit(rows, outline, tier, counter, cap)


# -- tier 3 and plain text ---------------------------------------------------------------


def _empty(tier: Tier) -> Rendering:
    return Rendering(tier, "", 0, 0, 0, True, ())


def _whole_or_nothing(
    text: str, outline: Outline, tier: Tier, counter: TokenCounter, cap: int
) -> Rendering:
    """DESIGN: other text is whole-or-nothing — half a config file misleads more than none."""
    cut = cut_to_tokens(text, cap, counter)  # reads only until the cap is passed
    if cut.truncated or not text:
        return _empty(tier) if text else Rendering(tier, "", 0, 0, 0, False, ())
    return Rendering(tier, text, cut.tokens, 1, outline.line_count, False, ())


def _full(text: str, outline: Outline, counter: TokenCounter, cap: int) -> Rendering:
    breaks = [s.start_line - 1 for s in outline.symbols if s.depth == 0]
    cut = cut_to_tokens(text, cap, counter, breaks=breaks)
    kept = outline.line_count - cut.omitted_lines if cut.truncated else outline.line_count
    shown = tuple(s.qualname for s in outline.symbols if s.end_line <= kept)
    if not cut.text:
        return _empty(Tier.FULL) if text else Rendering(Tier.FULL, "", 0, 0, 0, False, ())
    return Rendering(Tier.FULL, cut.text, cut.tokens, 1, kept, cut.truncated, shown)


# -- outline rows --------------------------------------------------------------------------


def _cut_doc(doc: str) -> str:
    return doc if len(doc) <= DOC_MAX_CHARS else doc[: DOC_MAX_CHARS - 1].rstrip() + "…"


def _visible(symbols: Sequence[Symbol]) -> list[bool]:
    """Tier 1 shows classes and what they hold (methods, nested classes), not functions
    defined inside functions: those are implementation, and cost tokens in every outline."""
    visible: list[bool] = []
    open_kinds: list[tuple[int, bool]] = []  # (depth, visible and a class) per open symbol
    for symbol in symbols:
        while open_kinds and open_kinds[-1][0] >= symbol.depth:
            open_kinds.pop()
        shows = not open_kinds or open_kinds[-1][1]
        visible.append(shows)
        open_kinds.append((symbol.depth, shows and symbol.kind == "class"))
    return visible


def _module_doc_line(lines: Sequence[str]) -> int:
    """Line of the module docstring: the first line that is not blank, a comment or a
    shebang (the docstring is the module's first statement)."""
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return number
    return 1


def _import_summary(outline: Outline) -> tuple[int, str] | None:
    """All imports on one line (first import's line number): `import a, b; from c import d`.

    One line because a gutter per import costs more than the imports; `__future__`
    imports are left out (they change nothing an agent reads).
    """
    parts: list[str] = []
    first_line = 0
    seen: set[tuple[int, str]] = set()
    for imp in outline.imports:
        if imp.module == "__future__" or (imp.line, imp.text) in seen:
            continue
        seen.add((imp.line, imp.text))
        first_line = first_line or imp.line
        if imp.text.startswith("import ") and parts and parts[-1].startswith("import "):
            parts[-1] += ", " + imp.text[len("import ") :]
        elif imp.text not in parts:
            parts.append(imp.text)
    return (first_line, "; ".join(parts)) if parts else None


def _header_line(symbol: Symbol, lines: Sequence[str]) -> int:
    """Line of the `def`/`class` keyword (after the decorators)."""
    last = min(symbol.body_start_line, len(lines))
    for number in range(symbol.start_line, last + 1):
        stripped = lines[number - 1].lstrip()
        if stripped.startswith(("def ", "async ", "class ", "def\t", "class\t")):
            return number
    return min(symbol.start_line + len(symbol.decorators), max(symbol.end_line, symbol.start_line))


def _symbol_rows(symbol: Symbol, lines: Sequence[str], member: bool) -> list[_Row]:
    header = _header_line(symbol, lines)
    decorator_lines = [
        number
        for number in range(symbol.start_line, min(header, len(lines) + 1))
        if lines[number - 1].lstrip().startswith("@")
    ]
    if len(decorator_lines) != len(symbol.decorators):  # comments or odd layout
        decorator_lines = [
            min(symbol.start_line + i, header) for i in range(len(symbol.decorators))
        ]
    indent = INDENT * symbol.depth
    rows = [
        _Row(number, indent + _cut_doc(decorator), False, member)
        for number, decorator in zip(decorator_lines, symbol.decorators)
    ]
    text = indent + symbol.signature + (":" if symbol.kind == "class" else "")
    if symbol.doc:
        text += "  # " + _cut_doc(symbol.doc)
    rows.append(_Row(header, text, False, member))
    rows[0] = _Row(rows[0].line, rows[0].text, True, member)
    return rows


def _python_rows(outline: Outline, lines: Sequence[str], keep: Collection[str] = ()) -> list[_Row]:
    """`keep`: qualnames never folded away (the symbols a request is about)."""
    rows: list[_Row] = []
    if outline.docstring:
        rows.append(_Row(_module_doc_line(lines), f'"""{_cut_doc(outline.docstring)}"""'))
    summary = _import_summary(outline)
    if summary is not None:
        rows.append(_Row(*summary))
    rows.extend(_Row(c.line, c.text) for c in outline.constants)
    if lines:
        for symbol, visible in zip(outline.symbols, _visible(outline.symbols)):
            if visible:
                rows.extend(_symbol_rows(symbol, lines, member=symbol.depth > 0 and symbol.qualname not in keep))
    rows.sort(key=lambda row: row.line)  # stable: a symbol's rows keep their order
    return rows


def _markdown_rows(outline: Outline) -> list[_Row]:
    return [_Row(s.start_line, s.signature, True, s.depth > 1) for s in outline.symbols]


# -- tier 2 ------------------------------------------------------------------------------


def _focus(
    rows: list[_Row], outline: Outline, lines: Sequence[str], focus: Collection[str]
) -> list[_Row]:
    """Replace the outline rows inside each focused symbol by its source lines.

    A focused symbol inside another focused one is already shown by the outer one; both
    count as shown (the last source row of a range names them in `ends`).
    """
    wanted = set(focus)
    ranges: list[tuple[int, int, list[str]]] = []  # merged (start, end, qualnames)
    for symbol in outline.symbols:  # source order, so an outer symbol comes first
        if symbol.qualname not in wanted:
            continue
        start, end = symbol.start_line, min(symbol.end_line, len(lines))
        if ranges and start <= ranges[-1][1]:
            last_start, last_end, names = ranges[-1]
            ranges[-1] = (last_start, max(last_end, end), names + [symbol.qualname])
        else:
            ranges.append((start, end, [symbol.qualname]))
    if not ranges:
        return rows

    out: list[_Row] = []
    row_iter = iter(rows)
    pending = next(row_iter, None)
    for start, end, names in ranges:
        while pending is not None and pending.line < start:
            out.append(pending)
            pending = next(row_iter, None)
        while pending is not None and pending.line <= end:  # replaced by the source
            pending = next(row_iter, None)
        out.extend(
            _Row(
                number,
                lines[number - 1],
                number == start,
                ends=tuple(names) if number == end else (),
                source=True,
            )
            for number in range(start, end + 1)
        )
    while pending is not None:
        out.append(pending)
        pending = next(row_iter, None)
    return out


# -- fitting -----------------------------------------------------------------------------


def _content(rows: Sequence[_Row], width: int) -> tuple[str, list[int]]:
    text = "".join(f"{row.line:>{width}}{GUTTER}{row.text}\n" for row in rows)
    return text, [i for i, row in enumerate(rows) if row.starts_symbol]


def _fold_members(rows: Sequence[_Row], noun: str) -> list[_Row]:
    """The outline without member rows. Each folded member is counted on the outline row
    it belongs to, the last outline row before it (its class or heading; a focused
    method's source rows in between do not change that), which then says how many."""
    out: list[_Row] = []
    hidden: dict[int, int] = {}  # index in `out` -> members folded under it
    owner = -1
    for row in rows:
        if row.member:
            if row.starts_symbol and owner >= 0:
                hidden[owner] = hidden.get(owner, 0) + 1
            continue
        out.append(row)
        if not row.source:
            owner = len(out) - 1
    for index, count in hidden.items():
        row = out[index]
        note = f"(+{count} {noun}{'' if count == 1 else 's'})"
        commented = "  # " in row.text or row.text.startswith("#")
        text = f"{row.text} {note}" if commented else f"{row.text}  # {note}"
        out[index] = row._replace(text=text)
    return out


def _fit(
    rows: list[_Row],
    outline: Outline,
    tier: Tier,
    counter: TokenCounter,
    cap: int,
) -> Rendering:
    """Cut the rows to the cap. An outline that does not fit first folds members
    (methods; deep headings): every top-level name beats the first half of the file.
    Then it is cut, preferably before a symbol."""
    width = len(str(max(outline.line_count, 1)))
    content, breaks = _content(rows, width)
    cut = cut_to_tokens(content, cap, counter, breaks=breaks)
    folded = False
    if cut.truncated and any(row.member for row in rows):
        rows = _fold_members(rows, "member" if outline.language == "python" else "subsection")
        content, breaks = _content(rows, width)
        cut = cut_to_tokens(content, cap, counter, breaks=breaks)
        folded = True
    kept = len(rows) - cut.omitted_lines if cut.truncated else len(rows)
    shown = tuple(dict.fromkeys(name for row in rows[:kept] for name in row.ends))
    if not cut.text:
        return Rendering(tier, "", 0, 0, 0, bool(rows), ())
    return Rendering(
        tier,
        cut.text,
        cut.tokens,
        1 if outline.line_count else 0,
        outline.line_count,
        cut.truncated or folded,
        shown,
    )
