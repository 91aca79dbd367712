"""Tier renderings of one file: outline (1), focused (2), full (3) — DESIGN: Tiers.

Everything here works from an `Outline` and the file's text: no parsing, so a bundle can
render every candidate at every tier it considers. Tiers 1 and 2 put a line-number gutter
in front of each line (` 41│ def counter_for(...)`) so an agent can cite and open code;
tier 3 is the file verbatim. Every rendering is cut to its token cap with
`tokens.cut_to_tokens`, so `tokens` is a real count and never above the cap.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from ctx_lsp.code.outline import Outline, Symbol, split_lines
from ctx_lsp.tokens import TokenCounter, cut_to_tokens, ellipsize
from ctx_lsp.vocabulary import Rendering, Tier

__all__ = ["TIER_CAP_TOKENS", "Rendering", "render"]

TIER_CAP_TOKENS: dict[Tier, int] = {Tier.OUTLINE: 1000, Tier.FOCUSED: 5000, Tier.FULL: 20000}
"""Default caps per tier (DESIGN: Concepts → Tiers)."""

DOC_MAX_CHARS = 100
"""First docstring lines are cut here in outlines: a one-line summary, not a paragraph."""

GUTTER = "│ "
"""Between the right-aligned line number and the line; one token, unlike `: ` or `| `
inside code, it cannot be mistaken for source."""

INDENT = "    "


class _Row(NamedTuple):
    """One content line of an outline: a file line number and what to show for it.
    A named tuple, not a frozen dataclass: outlines build thousands per render."""

    line: int
    text: str
    starts_symbol: bool = False
    unit: int = -1
    """Index of the `_Unit` the row belongs to: rows are kept or left out a unit at a time."""
    ends: tuple[str, ...] = ()
    """Qualnames whose full source (tier 2) ends on this row."""
    source: bool = False
    """A verbatim source line (tier 2), never annotated."""
    short: str = ""
    """A compact form of `text` (signature cut, no docstring) for outlines pruned to fit."""


class _Unit(NamedTuple):
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


def render(
    path: str,
    text: str,
    outline: Outline,
    tier: Tier,
    counter: TokenCounter,
    *,
    focus: Collection[str] = (),
    ranks: Mapping[str, float] | None = None,
    cap_tokens: int | None = None,
    compact: bool = False,
) -> Rendering:
    """Render `text` (the file at `path`, outlined as `outline`) at `tier`.

    `focus` holds qualnames whose full source tier 2 shows in place of their outline
    lines, and which an outline over its cap keeps first; unknown names are ignored, and
    no focus makes tier 2 the same as tier 1. `ranks` (qualname → relevance) orders what
    an outline over its cap keeps next: the request's best definitions before the rest.
    `compact` outlines (a map's) list definitions only — short signatures, no docstrings
    or imports — so that more of a repository fits.
    Plain text (and markdown without headings, or Python without anything to outline)
    is whole-or-nothing at every tier.
    """
    renderer = OutlineRenderer(path, text, outline, counter, focus=focus, ranks=ranks, compact=compact)
    return renderer.render(tier, cap_tokens)


class OutlineRenderer:
    """One file prepared to be rendered at several tiers and caps, as assembly asks (a
    skeleton, a medium outline, the whole outline, a focused tier): its outline rows are
    built once and each row's tokens counted once, so fitting another cap costs a few
    sums and one exact count. Arguments as for `render`."""

    def __init__(
        self,
        path: str,
        text: str,
        outline: Outline,
        counter: TokenCounter,
        *,
        focus: Collection[str] = (),
        ranks: Mapping[str, float] | None = None,
        compact: bool = False,
    ):
        self.path = path
        self.text = text
        self.outline = outline
        self.counter = counter
        self.focus = tuple(focus)
        self.ranks = ranks or {}
        self.compact = compact
        self.noun = "member" if outline.language == "python" else "subsection"
        self.width = len(str(max(outline.line_count, 1)))
        self._lines: list[str] | None = None
        self._rows: tuple[list[_Row], list[_Unit]] | None = None
        self._focused: dict[tuple[str, ...], tuple[list[_Row], list[_Unit]]] = {}
        self._costs: dict[tuple[int, str], int] = {}
        self._prefixes: dict[int, _PrefixCosts] = {}  # id(rows) -> prefix cost estimates

    def render(self, tier: Tier, cap_tokens: int | None = None) -> Rendering:
        tier = Tier(tier)
        cap = max(0, TIER_CAP_TOKENS[tier] if cap_tokens is None else cap_tokens)
        outline, counter = self.outline, self.counter
        if outline.language == "text" or (outline.language == "markdown" and not outline.symbols):
            return _whole_or_nothing(self.text, outline, tier, counter, cap)
        if tier == Tier.FULL:
            return _full(self.text, outline, counter, cap)
        rows, units = self._outline_rows()
        if not rows:  # a script of bare statements: no outline to show, so like text
            return _whole_or_nothing(self.text, outline, tier, counter, cap)
        if tier == Tier.FOCUSED and self.focus:
            # Over the cap, shed the later (less relevant) bodies before folding the outline:
            # every signature of the file tells an agent more than a third focused body.
            wanted = self.focus
            while True:
                focused = self._focused.get(wanted)
                if focused is None:
                    focused = self._focused[wanted] = _focus(rows, units, outline, self._split(), wanted)
                result = self._fit(*focused, tier, cap)
                if not result.truncated or len(wanted) <= 1:
                    return result
                wanted = wanted[: len(wanted) // 2]
        return self._fit(rows, units, tier, cap)

    def _split(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def _outline_rows(self) -> tuple[list[_Row], list[_Unit]]:
        if self._rows is None:
            if self.outline.language == "markdown":
                self._rows = _markdown_rows(self.outline)
            else:
                self._rows = _python_rows(self.outline, self._split(), self.focus, self.ranks, self.compact)
        return self._rows

    def _costs_of(self, keys: Sequence[tuple[int, str]]) -> list[int]:
        """Tokens of each (line number, text) row as rendered, counted once per file."""
        costs = self._costs
        missing = [k for k in dict.fromkeys(keys) if k not in costs]
        if missing:
            width = self.width
            lines = [f"{n:>{width}}{GUTTER}{t}\n" if n else f"{'':>{width}}{GUTTER}{t}\n" for n, t in missing]
            costs.update(zip(missing, self.counter.count_many(lines)))
        return [costs[k] for k in keys]

    def _estimate(self, rows: Sequence[_Row]) -> int:
        """Sum of the rows' own token counts: within a few tokens of the joined text's."""
        return sum(self._costs_of([(row.line, row.text) for row in rows]))

    def _fit(self, rows: list[_Row], units: list[_Unit], tier: Tier, cap: int) -> Rendering:
        """Fit the rows to the cap. An outline that does not fit keeps whole units in key
        order while they fit — the request's symbols, then its ranked definitions, then
        every top-level name, then members breadth-first — rather than the first half of
        the file. Only when not even the first unit fits is it cut, preferably before a
        symbol."""
        counter, noun = self.counter, self.noun
        outline = self.outline
        surely_over = sum(len(row.text) for row in rows) > cap * MAX_CHARS_PER_TOKEN
        if len(units) <= 1 or (not surely_over and self._estimate(rows) <= cap + ESTIMATE_SLACK_TOKENS):
            content, breaks = _content(rows, self.width)
            exact = counter.count(content)
            if exact <= cap:
                return _outline_rendering(tier, content, exact, rows, outline, False)
            if len(units) <= 1:  # one unit over its cap: cut it, preferably before a symbol
                return _cut_rendering(tier, content, breaks, rows, outline, counter, cap)
        present = {row.unit for row in rows}
        order = sorted((u for u in range(len(units)) if u in present), key=lambda u: units[u].key)
        target, hi = cap, len(order) - 1
        while True:
            k, kept_rows = self._largest_prefix(rows, units, order, target, hi)
            if k == 0:
                break
            content, _ = _content(kept_rows, self.width)
            exact = counter.count(content)
            if exact <= cap:
                return _outline_rendering(tier, content, exact, kept_rows, outline, True)
            target -= exact - cap  # the estimate was low: aim lower, with fewer units
            hi = k - 1
        first = _pruned(rows, units, _closure(order[:1], units), noun)
        content, breaks = _content(first, self.width)
        return _cut_rendering(tier, content, breaks, first, outline, counter, cap, pruned=True)

    def _largest_prefix(
        self, rows: list[_Row], units: list[_Unit], order: list[int], target: int, hi: int
    ) -> tuple[int, list[_Row]]:
        """The largest k ≤ hi whose first k units (with their enclosing ones) are estimated
        to fit `target`, and their rows; (0, []) if not even one does. The estimate sums
        each unit's rows (compact, as `_pruned` shows them) and a fold note per class; it
        is extended only as far as a cap needs, so a skeleton of a big file counts a few
        rows, not the file."""
        prefix = self._prefixes.get(id(rows))
        if prefix is None:
            prefix = self._prefixes[id(rows)] = _PrefixCosts(self, rows, units, order)
        cumulative = prefix.up_to(target)
        k = bisect_right(cumulative, target, 0, min(hi + 1, len(cumulative))) - 1
        if k <= 0:
            return 0, []
        return k, _pruned(rows, units, _closure(order[:k], units), self.noun)


class _PrefixCosts:
    """cumulative[k]: estimated tokens of an outline pruned to its first k units, built
    lazily in unit order."""

    def __init__(self, renderer: OutlineRenderer, rows: list[_Row], units: list[_Unit], order: list[int]):
        self.renderer, self.units, self.order = renderer, units, order
        self.rows_of: dict[int, list[tuple[int, str]]] = {}
        for row in rows:
            compact = row.short and units[row.unit].key[0] != _KEY_FOCUS
            self.rows_of.setdefault(row.unit, []).append((row.line, row.short if compact else row.text))
        self.parents = {u.parent for u in units if u.definition and u.parent >= 0}
        self.kept: set[int] = set()
        self.cumulative = [0]
        self.total = FOLD_TRAILER_TOKENS

    def up_to(self, target: int) -> list[int]:
        """Extend the sums until one passes `target` (or every unit is in)."""
        units, cumulative = self.units, self.cumulative
        while len(cumulative) <= len(self.order) and cumulative[-1] <= target:
            u = self.order[len(cumulative) - 1]
            while u >= 0 and u not in self.kept:
                self.kept.add(u)
                self.total += sum(self.renderer._costs_of(self.rows_of.get(u, []))) + (
                    FOLD_NOTE_TOKENS if u in self.parents else 0)
                u = units[u].parent
            cumulative.append(self.total)
        return cumulative


MAX_CHARS_PER_TOKEN = 8
"""Outline text averages ~4 characters a token; rows with more than 8 per token of the
cap cannot fit, so the whole-outline count is skipped (a skeleton of a big file)."""
FOLD_NOTE_TOKENS = 6
"""Tokens a `(+N members)` note adds to its row (estimate)."""
FOLD_TRAILER_TOKENS = 10
"""Tokens of the `… N more definitions not shown` line (estimate)."""
def _outline_rendering(
    tier: Tier, content: str, tokens: int, rows: Sequence[_Row], outline: Outline, pruned: bool
) -> Rendering:
    """An outline whose rows all fit (`tokens` counted exactly on `content`)."""
    shown = tuple(dict.fromkeys(name for row in rows for name in row.ends))
    if not content:
        return Rendering(tier, "", 0, 0, 0, bool(rows), ())
    return Rendering(tier, content, tokens, 1 if outline.line_count else 0, outline.line_count, pruned, shown)


def _cut_rendering(
    tier: Tier, content: str, breaks: list[int], rows: Sequence[_Row], outline: Outline,
    counter: TokenCounter, cap: int, pruned: bool = False,
) -> Rendering:
    """Rows that do not fit even pruned: whole lines up to the cap, preferably before a symbol."""
    cut = cut_to_tokens(content, cap, counter, breaks=breaks)
    kept = len(rows) - cut.omitted_lines if cut.truncated else len(rows)
    shown = tuple(dict.fromkeys(name for row in rows[:kept] for name in row.ends))
    if not cut.text:
        return Rendering(tier, "", 0, 0, 0, bool(rows), ())
    return Rendering(tier, cut.text, cut.tokens, 1 if outline.line_count else 0, outline.line_count,
                     cut.truncated or pruned, shown)


ESTIMATE_SLACK_TOKENS = 16
"""Row-by-row counts may differ from the joined text's by a few tokens: within this of
the cap, count exactly before deciding an outline needs pruning."""


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


def _symbol_rows(symbol: Symbol, lines: Sequence[str], unit: int) -> list[_Row]:
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
        _Row(number, indent + _cut_doc(decorator), False, unit)
        for number, decorator in zip(decorator_lines, symbol.decorators)
    ]
    colon = ":" if symbol.kind == "class" else ""
    text = indent + symbol.signature + colon
    short = indent + _short_signature(symbol.signature) + colon
    if symbol.doc:
        text += "  # " + _cut_doc(symbol.doc)
    rows.append(_Row(header, text, False, unit, short=short))
    rows[0] = rows[0]._replace(starts_symbol=True)
    return rows


SHORT_SIGNATURE_CHARS = 100
"""Signatures longer than this are cut at a parameter in pruned outlines: where a
definition is and what it is called matters more there than its fifteenth parameter."""


def _short_signature(signature: str, limit: int = SHORT_SIGNATURE_CHARS) -> str:
    """`def f(a: int, b: str, …) -> T` from a long signature; short ones unchanged."""
    if len(signature) <= limit:
        return signature
    open_at = signature.find("(")
    close_at = signature.rfind(")")
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


# Unit keys: what an outline over its cap keeps first (lowest key first).
_KEY_FOCUS = 0  # the symbols the request is about
_KEY_MODULE_DOC = 1  # one line that says what the file is for
_KEY_RANKED = 2  # definitions the request ranks (graph rank, query match), best first
_KEY_TOP_LEVEL = 3  # the file's other top-level names, in source order
_KEY_IMPORTS = 4
_KEY_CONSTANT = 5
_KEY_MEMBER = 6  # members: the first of every class, then the second of every class, …


def _python_rows(
    outline: Outline, lines: Sequence[str], focus: Collection[str], ranks: Mapping[str, float],
    compact: bool = False,
) -> tuple[list[_Row], list[_Unit]]:
    rows: list[_Row] = []
    units: list[_Unit] = []
    if outline.docstring:
        units.append(_Unit((_KEY_MODULE_DOC,)))
        rows.append(_Row(_module_doc_line(lines), f'"""{_cut_doc(outline.docstring)}"""', unit=len(units) - 1))
    summary = None if compact else _import_summary(outline)
    if summary is not None:
        units.append(_Unit((_KEY_IMPORTS,)))
        rows.append(_Row(*summary, unit=len(units) - 1))
    for c in outline.constants:
        units.append(_Unit((_KEY_CONSTANT, c.line)))
        text = ellipsize(c.text, SHORT_SIGNATURE_CHARS) if compact else c.text
        rows.append(_Row(c.line, text, unit=len(units) - 1))
    if lines:
        focus_order = {name: i for i, name in enumerate(focus)}
        open_units: list[tuple[int, int]] = []  # (depth, unit) of the visible symbols enclosing this one
        ordinals: dict[int, int] = {}  # parent unit -> members seen so far
        for symbol, visible in zip(outline.symbols, _visible(outline.symbols)):
            while open_units and open_units[-1][0] >= symbol.depth:
                open_units.pop()
            if not visible:
                continue
            parent = open_units[-1][1] if open_units else -1
            ordinal = ordinals[parent] = ordinals.get(parent, -1) + 1
            rank = ranks.get(symbol.qualname, 0.0)
            if symbol.qualname in focus_order:
                key: tuple = (_KEY_FOCUS, focus_order[symbol.qualname])
            elif rank > RANK_FLOOR:
                key = (_KEY_RANKED, -rank, symbol.start_line)
            elif parent < 0:
                key = (_KEY_TOP_LEVEL, symbol.start_line)
            else:
                key = (_KEY_MEMBER, symbol.depth, ordinal, symbol.start_line)
            units.append(_Unit(key, parent, True))
            unit = len(units) - 1
            symbol_rows = _symbol_rows(symbol, lines, unit)
            if compact and symbol.qualname not in focus_order:
                symbol_rows = [row._replace(text=row.short) if row.short else row for row in symbol_rows]
            rows.extend(symbol_rows)
            open_units.append((symbol.depth, unit))
    rows.sort(key=lambda row: row.line)  # stable: a symbol's rows keep their order
    return rows, units


def _markdown_rows(outline: Outline) -> tuple[list[_Row], list[_Unit]]:
    rows: list[_Row] = []
    units: list[_Unit] = []
    open_units: list[tuple[int, int]] = []
    ordinals: dict[int, int] = {}
    for s in outline.symbols:
        while open_units and open_units[-1][0] >= s.depth:
            open_units.pop()
        parent = open_units[-1][1] if open_units else -1
        ordinal = ordinals[parent] = ordinals.get(parent, -1) + 1
        # Top two heading levels first (the document's shape), then deeper ones breadth-first.
        key = (_KEY_TOP_LEVEL, s.start_line) if s.depth <= 1 else (_KEY_MEMBER, s.depth, ordinal, s.start_line)
        units.append(_Unit(key, parent, True))
        rows.append(_Row(s.start_line, s.signature, True, len(units) - 1))
        open_units.append((s.depth, len(units) - 1))
    return rows, units


# -- tier 2 ------------------------------------------------------------------------------


def _focus(
    rows: list[_Row], units: list[_Unit], outline: Outline, lines: Sequence[str], focus: Collection[str]
) -> tuple[list[_Row], list[_Unit]]:
    """Replace the outline rows inside each focused symbol by its source lines.

    A focused symbol inside another focused one is already shown by the outer one; both
    count as shown (the last source row of a range names them in `ends`). Each body is a
    unit of its own, kept first, inside the nearest outline unit that encloses it.
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
        return rows, units

    units = list(units)
    out: list[_Row] = []
    row_iter = iter(rows)
    pending = next(row_iter, None)
    for order, (start, end, names) in enumerate(ranges):
        while pending is not None and pending.line < start:
            out.append(pending)
            pending = next(row_iter, None)
        replaced: list[_Row] = []
        while pending is not None and pending.line <= end:  # replaced by the source
            replaced.append(pending)
            pending = next(row_iter, None)
        # The body's unit hangs under the unit of the symbol it replaces (so its class stays).
        parent = units[replaced[0].unit].parent if replaced and replaced[0].starts_symbol else _enclosing(out, units)
        units.append(_Unit((_KEY_FOCUS, -1, order), parent, True))
        unit = len(units) - 1
        for gone in replaced:  # what the body shows is not folded away: never counted as hidden
            units[gone.unit] = units[gone.unit]._replace(definition=False)
        out.extend(
            _Row(number, lines[number - 1], number == start, unit,
                 ends=tuple(names) if number == end else (), source=True)
            for number in range(start, end + 1)
        )
    while pending is not None:
        out.append(pending)
        pending = next(row_iter, None)
    return out, units


def _enclosing(rows: Sequence[_Row], units: Sequence[_Unit]) -> int:
    """The unit of the last outline row before a body whose symbol may enclose it."""
    for row in reversed(rows):
        if not row.source and row.unit >= 0 and units[row.unit].definition:
            return row.unit
    return -1


# -- fitting -----------------------------------------------------------------------------


def _content(rows: Sequence[_Row], width: int) -> tuple[str, list[int]]:
    text = "".join(
        f"{row.line:>{width}}{GUTTER}{row.text}\n" if row.line else f"{'':>{width}}{GUTTER}{row.text}\n"
        for row in rows
    )
    return text, [i for i, row in enumerate(rows) if row.starts_symbol]


def _closure(order: Sequence[int], units: Sequence[_Unit]) -> set[int]:
    """The first units of `order` and every unit enclosing one of them."""
    kept: set[int] = set()
    for u in order:
        while u >= 0 and u not in kept:
            kept.add(u)
            u = units[u].parent
    return kept


def _pruned(rows: Sequence[_Row], units: Sequence[_Unit], kept: set[int], noun: str) -> list[_Row]:
    """The rows of the kept units, compact (short signatures, no docstrings) but for the
    request's own symbols. A kept outline row of a symbol with left-out members
    says how many (`class Option:  # (+12 members)`); left-out top-level definitions are
    counted on a last line."""
    compact = {u for u in kept if units[u].key[0] != _KEY_FOCUS}
    hidden_under: dict[int, int] = {}
    hidden_top = 0
    for i, unit in enumerate(units):
        if i in kept or not unit.definition:
            continue
        if unit.parent < 0:
            hidden_top += 1
        elif unit.parent in kept:
            hidden_under[unit.parent] = hidden_under.get(unit.parent, 0) + 1
    out: list[_Row] = []
    last_row_of: dict[int, int] = {}  # unit -> index in `out` of its last outline row
    for row in rows:
        if row.unit in kept:
            out.append(row._replace(text=row.short) if row.short and row.unit in compact else row)
            if not row.source:
                last_row_of[row.unit] = len(out) - 1
    for unit, count in hidden_under.items():
        index = last_row_of.get(unit)
        if index is None:
            continue
        row = out[index]
        note = f"(+{count} {noun}{'' if count == 1 else 's'})"
        commented = "  # " in row.text or row.text.startswith("#")
        out[index] = row._replace(text=f"{row.text} {note}" if commented else f"{row.text}  # {note}")
    if hidden_top:
        out.append(_Row(0, f"… {hidden_top} more definition{'' if hidden_top == 1 else 's'} not shown"))
    return out
