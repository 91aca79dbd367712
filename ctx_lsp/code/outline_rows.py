"""What an outline rendering shows (tiers 1 and 2), row by row, and what it keeps first.

An outline is built as rows (a line number and its text) grouped into units: what an
outline over its cap keeps or leaves out as one. Each unit carries a key that ranks it —
the request's focus, the module docstring, ranked definitions, top-level names, imports,
constants, then members breadth-first. Tier 2 swaps the rows of focused symbols for
their source lines.

Separate from `tiers.py` because this is the *what* and *in which order*: pure functions
of the outline, the file's lines, the focus and the ranks, with no token counting. The
*how much* — fitting rows to a cap with a counter — is `tiers.py`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from operator import itemgetter
from typing import NamedTuple

from ctx_lsp.code.languages import CONTAINER_KINDS, LanguageSpec, language_named
from ctx_lsp.code.markdown import readable_lines
from ctx_lsp.code.outline import Outline, Symbol
from ctx_lsp.tokens import ellipsize

DOC_MAX_CHARS = 100
"""First docstring lines are cut here in outlines: a one-line summary, not a paragraph."""

INDENT = "    "


class Row(NamedTuple):
    """One content line of an outline: a file line number and what to show for it.
    A named tuple, not a frozen dataclass: outlines build thousands per render."""

    line: int
    text: str
    starts_symbol: bool = False
    unit: int = -1
    """Index of the `Unit` the row belongs to: rows are kept or left out a unit at a time."""
    ends: tuple[str, ...] = ()
    """Qualnames whose full source (tier 2) ends on this row."""
    source: bool = False
    """A verbatim source line (tier 2), never annotated."""
    short: str = ""
    """A compact form of `text` (signature cut, no docstring) for outlines pruned to fit."""


class Unit(NamedTuple):
    """What an outline over its cap keeps or leaves out as one: a definition's rows
    (decorators and header), the import line, a constant, a focused body.

    Units are kept in `key` order (lowest first) while they fit; keeping one keeps its
    `parent` (the enclosing class or heading), so a method never shows without its class.
    """

    key: tuple
    parent: int = -1
    definition: bool = False
    """A class, function or heading: what fold notes count."""


RANK_FLOOR = 1e-9
"""Ranks at or below this are no rank at all (the symbol keeps its default place)."""
_LINE_OF = itemgetter(0)
"""A row's line number (`Row.line`), as a sort key without a Python call per row."""


# -- outline rows --------------------------------------------------------------------------


def _cut_doc(doc: str) -> str:
    return ellipsize(doc, DOC_MAX_CHARS)


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
        open_kinds.append((symbol.depth, shows and symbol.kind in CONTAINER_KINDS))
    return visible


def _module_doc_line(lines: Sequence[str], comment: str) -> int:
    """Line of the module docstring: the first line that is not blank, a comment or a
    shebang (Python's docstring is the module's first statement); in a language whose
    module doc is a comment, the first line that is not blank or a shebang."""
    hash_comments = comment.startswith("#")
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#!") and not (hash_comments and stripped.startswith("#")):
            return number
    return 1


_DOCUMENT_STYLE = LanguageSpec(name="", extensions=())
"""How an outline of no registered language reads (plain text never has rows)."""


def style_of(outline: Outline) -> LanguageSpec:
    """The outline's language, for how its rows read (comments, headers, imports)."""
    return language_named(outline.language) or _DOCUMENT_STYLE


IMPORT_LINE_MAX_CHARS = 120
"""The collapsed import line is cut to this. A module of forty imports collapsed to one
line is ~900 characters at the top of every outline, most of them names its signatures
show anyway; the modules it depends on are what says where to look next."""


def _import_summary(outline: Outline) -> tuple[int, str] | None:
    """All imports on one line (first import's line number): `import a, b; from c import d`.

    One line because a gutter per import costs more than the imports; `__future__`
    imports are left out (they change nothing an agent reads). A line over
    `IMPORT_LINE_MAX_CHARS` lists modules only (`_imported_modules`).
    """
    parts: list[str] = []
    first_line = 0
    seen: set[tuple[int, str]] = set()
    merge = style_of(outline).merge_imports
    for imp in outline.imports:
        if imp.module == "__future__" or (imp.line, imp.text) in seen:
            continue
        seen.add((imp.line, imp.text))
        first_line = first_line or imp.line
        if merge and imp.text.startswith("import ") and parts and parts[-1].startswith("import "):
            parts[-1] += ", " + imp.text[len("import ") :]
        elif imp.text not in parts:
            parts.append(imp.text)
    if not parts:
        return None
    text = "; ".join(parts)
    return first_line, text if len(text) <= IMPORT_LINE_MAX_CHARS else _imported_modules(
        outline, style_of(outline).comment
    )


def _imported_modules(outline: Outline, comment: str = "# ", limit: int = IMPORT_LINE_MAX_CHARS) -> str:
    """`# imports: ._models, ._config, httpcore, typing, …(+9 more)` within `limit`
    characters: module names without the names taken from them, the project's (relative)
    first, then other libraries, the standard library last — the ones an agent knows
    least come first, and the ones it knows best are the ones cut."""
    modules: dict[str, int] = {}
    for imp in outline.imports:
        if imp.module == "__future__":
            continue
        names = [imp.module + name for name in imp.names] if not imp.module.strip(".") else [imp.module]
        for name in names:
            root = name.split(".", 1)[0]
            modules.setdefault(name, 0 if name.startswith(".") else 2 if root in sys.stdlib_module_names else 1)
    ordered = sorted(modules, key=lambda name: modules[name])  # stable: source order within a group
    head = comment + "imports: "
    shown: list[str] = []
    for k, name in enumerate(ordered):
        rest = len(ordered) - k - 1
        tail = f", …(+{rest} more)" if rest else ""
        if len(head) + len(", ".join([*shown, name])) + len(tail) > limit:
            break
        shown.append(name)
    if not shown:
        return ellipsize(head + ", ".join(ordered), limit)
    hidden = len(ordered) - len(shown)
    return head + ", ".join(shown) + (f", …(+{hidden} more)" if hidden else "")


def _header_line(symbol: Symbol, lines: Sequence[str]) -> int:
    """Line of the `def`/`class` keyword (after the decorators)."""
    last = min(symbol.body_start_line, len(lines))
    for number in range(symbol.start_line, last + 1):
        stripped = lines[number - 1].lstrip()
        if stripped.startswith(("def ", "async ", "class ", "def\t", "class\t")):
            return number
    return min(symbol.start_line + len(symbol.decorators), max(symbol.end_line, symbol.start_line))


def _symbol_rows(symbol: Symbol, lines: Sequence[str], unit: int, style: LanguageSpec) -> list[Row]:
    header = _header_line(symbol, lines)
    decorator_lines = [
        number
        for number in range(symbol.start_line, min(header, len(lines) + 1))
        if lines[number - 1].lstrip().startswith("@")
    ]
    if len(decorator_lines) != len(symbol.decorators):  # comments or odd layout
        decorator_lines = [min(symbol.start_line + i, header) for i in range(len(symbol.decorators))]
    indent = INDENT * symbol.depth
    rows = [
        Row(number, indent + _cut_doc(decorator), False, unit)
        for number, decorator in zip(decorator_lines, symbol.decorators)
        if not decorator.startswith(style.quiet_decorators)
    ]
    colon = style.header_end if symbol.kind in CONTAINER_KINDS else ""
    text = indent + symbol.signature + colon
    short = indent + _short_signature(symbol.signature, name=symbol.name) + colon
    if symbol.doc:
        text += "  " + style.comment + _cut_doc(symbol.doc)
    rows.append(Row(header, text, False, unit, short=short))
    rows[0] = rows[0]._replace(starts_symbol=True)
    return rows


SHORT_SIGNATURE_CHARS = 40
"""Signatures longer than this are cut at a parameter in pruned outlines: where a
definition is and what it is called matters more there than its fifteenth parameter (an
agent pulls the rest with `ctx/symbol`). Measured (cold/open fn@8K, seed 0): 100 → 84.8/74.2,
60 → 85.4/75.6, 40 → 85.9/76.1, 20 → 86.6/77.0 but open line@8K 25.3 → 23.3 (a changed
`def` line shown whole counts; cut, it does not)."""


def _short_signature(signature: str, limit: int = SHORT_SIGNATURE_CHARS, name: str = "") -> str:
    """`def f(a: int, b: str, …) -> T` from a long signature; short ones unchanged. The
    parameters are the first list after the definition's `name` (a Go method's receiver
    comes before it), up to their matching `)` (Go's results may be a list too)."""
    if len(signature) <= limit:
        return signature
    at = signature.find(name) if name else -1
    open_at = _parameters_open(signature, at + len(name) if at >= 0 else 0)
    close_at = _matching_paren(signature, open_at) if open_at >= 0 else -1
    if open_at < 0 or close_at < open_at:
        return ellipsize(signature, limit)
    tail = signature[close_at + 1 :]
    if len(tail) > 40:
        tail = ""
    room = max(open_at + 1, limit - len(tail) - 4)
    cut, depth = -1, 0
    for i in range(open_at + 1, min(room, close_at)):  # the last top-level ", " in room
        ch = signature[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            cut = i
    head = signature[:cut] if cut > open_at else signature[: open_at + 1]
    joiner = ", …)" if cut > open_at else "…)"
    return head + joiner + tail


def _parameters_open(text: str, start: int) -> int:
    """The first `(` from `start` outside square brackets (`def f[T: (int, str)](x)`,
    `func (s *Stack[T]) Push(v T)`); -1 if none."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "(" and depth <= 0:
            return i
    return -1


def _matching_paren(text: str, open_at: int) -> int:
    """Index of the `)` closing the `(` at `open_at`, else the last `)`."""
    depth = 0
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return text.rfind(")")


# Unit keys: what an outline over its cap keeps first (lowest key first).
KEY_FOCUS = 0  # the symbols the request is about
KEY_MODULE_DOC = 1  # one line that says what the file is for
KEY_RANKED = 2  # definitions the request ranks (graph rank, query match), best first
KEY_TOP_LEVEL = 3  # the file's other top-level names, in source order
KEY_IMPORTS = 4
KEY_CONSTANT = 5
KEY_MEMBER = 6  # members: the first of every class, then the second of every class, …


class Shape(NamedTuple):
    """A unit of a Python outline before a request orders it: what `code_rows` needs to
    give it its key (the focus and the ranks are the request's; the rest is the file's)."""

    base_key: tuple
    """The key when the request neither focuses nor ranks the symbol."""
    parent: int = -1
    definition: bool = False
    symbol: int = -1
    """Index in `Outline.symbols` (-1: the module docstring, the imports, a constant)."""


class Layout(NamedTuple):
    """A Python outline's rows in line order and its units' shapes: the same for every
    request while the file is unchanged, so built once per file, not once per request
    (15,000 `_symbol_rows` calls per 10 Django bundles before)."""

    rows: list[Row]
    shapes: list[Shape]


def code_layout(outline: Outline, lines: Sequence[str], compact: bool = False) -> Layout:
    """The request-independent part of `code_rows`. `compact` (a repository map's)
    shows short signatures and leaves imports out."""
    rows: list[Row] = []
    shapes: list[Shape] = []
    style = style_of(outline)
    if outline.docstring:
        shapes.append(Shape((KEY_MODULE_DOC,)))
        doc = style.module_doc_format.format(_cut_doc(outline.docstring))
        rows.append(Row(_module_doc_line(lines, style.comment), doc, unit=len(shapes) - 1))
    summary = None if compact else _import_summary(outline)
    if summary is not None:
        shapes.append(Shape((KEY_IMPORTS,)))
        rows.append(Row(*summary, unit=len(shapes) - 1))
    for c in outline.constants:
        shapes.append(Shape((KEY_CONSTANT, c.line)))
        text = ellipsize(c.text, SHORT_SIGNATURE_CHARS) if compact else c.text
        rows.append(Row(c.line, text, unit=len(shapes) - 1))
    if lines:
        open_units: list[tuple[int, int]] = []  # (depth, unit) of the visible symbols enclosing this one
        ordinals: dict[int, int] = {}  # parent unit -> members seen so far
        for index, (symbol, visible) in enumerate(zip(outline.symbols, _visible(outline.symbols))):
            while open_units and open_units[-1][0] >= symbol.depth:
                open_units.pop()
            if not visible:
                continue
            parent = open_units[-1][1] if open_units else -1
            ordinal = ordinals[parent] = ordinals.get(parent, -1) + 1
            if parent < 0:
                key: tuple = (KEY_TOP_LEVEL, symbol.start_line)
            else:
                key = (KEY_MEMBER, symbol.depth, ordinal, symbol.start_line)
            shapes.append(Shape(key, parent, True, index))
            unit = len(shapes) - 1
            symbol_rows = _symbol_rows(symbol, lines, unit, style)
            if compact:
                symbol_rows = [row._replace(text=row.short) if row.short else row for row in symbol_rows]
            rows.extend(symbol_rows)
            open_units.append((symbol.depth, unit))
    rows.sort(key=_LINE_OF)  # stable: a symbol's rows keep their order
    return Layout(rows, shapes)


def code_rows(
    outline: Outline,
    lines: Sequence[str] | Callable[[], Sequence[str]],
    focus: Collection[str],
    ranks: Mapping[str, float],
    compact: bool = False,
    layout: Layout | None = None,
) -> tuple[list[Row], list[Unit]]:
    """Rows of a Python outline in line order, and their units keyed by what to keep first.
    `compact` (a repository map's) shows short signatures and leaves imports out, but for
    the focused symbols. `layout` is `code_layout(outline, lines, compact)` if the caller
    kept one; the rows returned may be its own list: never mutate them. `lines` may be a
    function giving them, called only if they are read (no layout, or focused symbols in
    a compact outline): a kept basis does not keep its lines."""
    if layout is None:
        layout = code_layout(outline, lines() if callable(lines) else lines, compact)
    focus_order = {name: i for i, name in enumerate(focus)}
    symbols = outline.symbols
    units: list[Unit] = []
    focused: list[int] = []
    for unit, shape in enumerate(layout.shapes):
        key = shape.base_key
        if shape.symbol >= 0:
            qualname = symbols[shape.symbol].qualname
            if qualname in focus_order:
                key = (KEY_FOCUS, focus_order[qualname])
                focused.append(unit)
            else:
                rank = ranks.get(qualname, 0.0)
                if rank > RANK_FLOOR:
                    key = (KEY_RANKED, -rank, symbols[shape.symbol].start_line)
        units.append(Unit(key, shape.parent, shape.definition))
    rows = layout.rows
    if compact and focused:  # the request's own symbols keep their whole signature and docstring
        source = lines() if callable(lines) else lines
        style = style_of(outline)
        whole = {unit: _symbol_rows(symbols[layout.shapes[unit].symbol], source, unit, style) for unit in focused}
        rows = [row for row in rows if row.unit not in whole]
        rows.extend(row for symbol_rows in whole.values() for row in symbol_rows)
        rows.sort(key=_LINE_OF)
    return rows, units


def markdown_rows(outline: Outline) -> tuple[list[Row], list[Unit]]:
    """One row per heading, each heading its own unit under its parent heading; a
    heading's HTML (a logo, a badge) is left out as in its section (`readable_lines`)."""
    rows: list[Row] = []
    units: list[Unit] = []
    open_units: list[tuple[int, int]] = []
    ordinals: dict[int, int] = {}
    for s in outline.symbols:
        while open_units and open_units[-1][0] >= s.depth:
            open_units.pop()
        parent = open_units[-1][1] if open_units else -1
        ordinal = ordinals[parent] = ordinals.get(parent, -1) + 1
        # Top two heading levels first (the document's shape), then deeper ones breadth-first.
        key = (KEY_TOP_LEVEL, s.start_line) if s.depth <= 1 else (KEY_MEMBER, s.depth, ordinal, s.start_line)
        units.append(Unit(key, parent, True))
        rows.append(Row(s.start_line, readable_lines([s.signature])[0] or s.signature, True, len(units) - 1))
        open_units.append((s.depth, len(units) - 1))
    return rows, units


# -- tier 2 ------------------------------------------------------------------------------


EXCERPT_MARK = "@lines "
"""Prefix of the name an excerpt's last row carries in `Row.ends` (`@lines 40-55`): no
qualname starts with it, so a renderer can tell which excerpts a fitted rendering shows
and leave them out of its `shown_symbols`."""


def excerpt_name(span: tuple[int, int]) -> str:
    return f"{EXCERPT_MARK}{span[0]}-{span[1]}"


def focused_rows(
    rows: list[Row],
    units: list[Unit],
    outline: Outline,
    lines: Sequence[str],
    focus: Collection[str],
    excerpts: Sequence[tuple[int, int]] = (),
    imports: Sequence[int] | None = None,
) -> tuple[list[Row], list[Unit]]:
    """Replace the outline rows inside each focused symbol, and inside each excerpt (a
    1-based span of lines, best first), by the source lines. `imports` is
    `import_lines(outline, lines)` if the caller kept it.

    A focused symbol inside another focused one is already shown by the outer one; both
    count as shown (the last source row of a range names them in `ends`). Each body is a
    unit of its own, kept first, inside the nearest outline unit that encloses it.

    Markdown sections are shown readable (`readable_lines`: no HTML, no badges), and
    the blank lines that leaves are shown once per run: every row has its own line number.
    """
    wanted = set(focus)
    spans: list[tuple[int, int, str, int]] = []  # (start, end, name, key order)
    for symbol in outline.symbols:  # source order, so an outer symbol comes first
        if symbol.qualname in wanted:
            spans.append((symbol.start_line, min(symbol.end_line, len(lines)), symbol.qualname, len(spans)))
    bodies = len(spans)
    for rank, (start, end) in enumerate(excerpts):  # kept after every body, best first
        if 1 <= start <= end:
            spans.append((start, min(end, len(lines)), excerpt_name((start, end)), bodies + rank))
    spans.sort(key=lambda s: (s[0], -s[1]))
    ranges: list[tuple[int, int, list[str], int]] = []  # merged (start, end, names, key order)
    for start, end, name, order in spans:
        if start > end:
            continue
        if ranges and start <= ranges[-1][1] + (1 if name.startswith(EXCERPT_MARK) else 0):
            last_start, last_end, names, last_order = ranges[-1]
            ranges[-1] = (last_start, max(last_end, end), [*names, name], min(last_order, order))
        else:
            ranges.append((start, end, [name], order))
    if not ranges:
        return rows, units
    if excerpts:  # a symbol an excerpt shows whole is shown (a code unit is often one)
        ranges = [
            (start, end, _with_whole_symbols(names, outline, start, end), order) for start, end, names, order in ranges
        ]

    markdown = outline.language == "markdown"
    shown = readable_lines(lines) if markdown else lines
    units = list(units)
    out: list[Row] = []
    row_iter = iter(rows)
    pending = next(row_iter, None)
    for start, end, names, order in ranges:
        while pending is not None and pending.line < start:
            out.append(pending)
            pending = next(row_iter, None)
        replaced: list[Row] = []
        while pending is not None and pending.line <= end:  # replaced by the source
            replaced.append(pending)
            pending = next(row_iter, None)
        # The body's unit hangs under the unit of the symbol it replaces (so its class stays).
        parent = units[replaced[0].unit].parent if replaced and replaced[0].starts_symbol else _enclosing(out, units)
        units.append(Unit((KEY_FOCUS, -1, order), parent, True))
        unit = len(units) - 1
        for gone in replaced:  # what the body shows is not folded away: never counted as hidden
            units[gone.unit] = Unit(units[gone.unit].key, units[gone.unit].parent, False)
        numbers = _without_blank_runs(shown, start, end) if markdown else range(start, end + 1)
        last = numbers[-1] if numbers else 0
        ends = tuple(names)
        out.extend(
            [
                Row(number, shown[number - 1], number == start, unit, ends if number == last else (), True)
                for number in numbers
            ]
        )
    while pending is not None:
        out.append(pending)
        pending = next(row_iter, None)
    if not markdown:
        out = _with_import_source(out, units, outline, lines, imports)
    return out, units


GAP_MARK = "⋮"
"""The row between two shown spans of source with code left out between them (issue 22:
"a one-line marker for each gap"); an outline row between them needs none."""


def with_gap_marks(rows: list[Row], lines: Sequence[str]) -> list[Row]:
    """`rows` with a GAP_MARK row wherever two source rows follow each other with lines
    that are not blank left out between them."""
    out: list[Row] = []
    last = len(lines) + 1
    previous: Row | None = None
    for row in rows:  # a plain loop: called on every fitted focused rendering, ~400 rows each
        if row.source and previous is not None and previous.source and row.line > previous.line + 1:
            for n in range(previous.line + 1, min(row.line, last)):
                if lines[n - 1].strip():
                    out.append(Row(0, GAP_MARK, False, row.unit))
                    break
        out.append(row)
        previous = row
    return out


def _with_whole_symbols(names: list[str], outline: Outline, start: int, end: int) -> list[str]:
    """`names` and every symbol lying whole within lines `start`..`end`."""
    inside = [s.qualname for s in outline.symbols if start <= s.start_line and s.end_line <= end]
    return [*names, *(q for q in inside if q not in names)] if inside else names


MAX_FOCUSED_IMPORT_LINES = 40
"""A focused file (tier 2) shows its import statements as written when they are at most
this many lines, none longer than IMPORT_LINE_MAX_CHARS: the file an agent reads bodies of
is where it adds an import, and where one was changed. Measured (seed 0, 2K/8K): line
recall cold 14.6/38.5 → 14.8/39.9, open 5.4/25.1 → 6.3/26.1; fn unchanged or up."""


def import_lines(outline: Outline, lines: Sequence[str]) -> list[int]:
    """Line numbers of the module-level import statements (continuations included)."""
    numbers: list[int] = []
    for start in sorted({imp.line for imp in outline.imports if imp.module != "__future__"}):
        if not 0 < start <= len(lines) or lines[start - 1][:1].isspace() or (numbers and start <= numbers[-1]):
            continue
        end, depth = start, 0
        while end <= len(lines):
            text = lines[end - 1]
            depth += text.count("(") + text.count("{") - text.count(")") - text.count("}")
            if depth <= 0 and not text.rstrip().endswith("\\"):
                break
            end += 1
        numbers.extend(range(start, min(end, len(lines)) + 1))
    return numbers


def _with_import_source(
    rows: list[Row], units: list[Unit], outline: Outline, lines: Sequence[str], imports: Sequence[int] | None = None
) -> list[Row]:
    """The collapsed import row replaced by the import statements' own lines (same unit)."""
    index = next((i for i, row in enumerate(rows) if row.unit >= 0 and units[row.unit].key == (KEY_IMPORTS,)), None)
    if index is None:
        return rows
    numbers = import_lines(outline, lines) if imports is None else imports
    if not numbers or len(numbers) > MAX_FOCUSED_IMPORT_LINES:
        return rows
    if any(len(lines[n - 1]) > IMPORT_LINE_MAX_CHARS for n in numbers):
        return rows  # a 900-character one-line import is waste, written or collapsed
    unit = rows[index].unit
    merged = rows[:index] + rows[index + 1 :]
    taken = {row.line for row in merged if row.source}
    first = numbers[0]
    merged += [Row(n, lines[n - 1], n == first, unit, (), True) for n in numbers if n not in taken]
    merged.sort(key=_LINE_OF)
    return merged


def _without_blank_runs(lines: Sequence[str], start: int, end: int) -> list[int]:
    """Line numbers start..end without the second and later blank lines of a run and
    without blank lines at the end; `start` is always kept (if start <= end)."""
    if start > end:
        return []
    kept = [start]
    for number in range(start + 1, end + 1):
        if lines[number - 1].strip() or lines[kept[-1] - 1].strip():
            kept.append(number)
    while len(kept) > 1 and not lines[kept[-1] - 1].strip():
        kept.pop()
    return kept


def _enclosing(rows: Sequence[Row], units: Sequence[Unit]) -> int:
    """The unit of the last outline row before a body whose symbol may enclose it."""
    for row in reversed(rows):
        if not row.source and row.unit >= 0 and units[row.unit].definition:
            return row.unit
    return -1
