"""Tier renderings of one file: outline (1), focused (2), full (3) — DESIGN: Tiers.

Everything here works from an `Outline` and the file's text: no parsing, so a bundle can
render every candidate at every tier it considers. Tiers 1 and 2 put a line-number gutter
in front of each line (` 41│ def counter_for(...)`) so an agent can cite and open code;
tier 3 is the file verbatim. Every rendering is cut to its token cap with
`tokens.cut_to_tokens`, so `tokens` is a real count and never above the cap.

What an outline shows, and which of its parts it keeps first, comes from
`outline_rows.py`; this module fits those rows to a cap (estimating with per-row counts
from `row_counts.py`, keeping whole units, whose rows and fold notes `pruning.py` builds)
and renders tier 3 and plain text.
"""

from __future__ import annotations

import functools
import weakref
from bisect import bisect_right
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from operator import itemgetter

from ctx_lsp.code.languages import language_named
from ctx_lsp.code.markdown import readable_markdown
from ctx_lsp.code.outline import Outline, split_lines
from ctx_lsp.code.outline_rows import (
    EXCERPT_MARK,
    KEY_FOCUS,
    Layout,
    Row,
    Unit,
    code_layout,
    code_rows,
    excerpt_name,
    focused_rows,
    import_lines,
    markdown_rows,
    with_gap_marks,
)
from ctx_lsp.code.pruning import FOCUS_SIGNATURE_MAX_CHARS, RowGroups, closure, pruned_rows
from ctx_lsp.code.row_counts import GUTTER, row_counts
from ctx_lsp.relevance import EXCERPT_SHARE
from ctx_lsp.tokens import TokenCounter, cut_to_tokens
from ctx_lsp.vocabulary import Rendering, Tier

__all__ = ["TIER_CAP_TOKENS", "FileBasis", "OutlineRenderer", "Rendering", "render"]

TIER_CAP_TOKENS: dict[Tier, int] = {Tier.OUTLINE: 1000, Tier.FOCUSED: 5000, Tier.FULL: 20000}
"""Default caps per tier (DESIGN: Concepts → Tiers)."""


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
    excerpts: Sequence[tuple[int, int]] = (),
) -> Rendering:
    """Render `text` (the file at `path`, outlined as `outline`) at `tier`.

    `focus` holds qualnames whose full source tier 2 shows in place of their outline
    lines, and which an outline over its cap keeps first; unknown names are ignored, and
    no focus makes tier 2 the same as tier 1. `ranks` (qualname → relevance) orders what
    an outline over its cap keeps next: the request's best definitions before the rest.
    `compact` outlines (a map's) list definitions only — short signatures, no docstrings
    or imports — so that more of a repository fits. `excerpts` are spans of lines (best
    first) tier 2 also shows as written, after the bodies, within EXCERPT_SHARE of its cap.
    Plain text (and markdown without headings, or Python without anything to outline)
    is whole-or-nothing at every tier.
    """
    renderer = OutlineRenderer(
        path, text, outline, counter, focus=focus, ranks=ranks, compact=compact, excerpts=excerpts
    )
    return renderer.render(tier, cap_tokens)


class FileBasis:
    """What rendering one file needs whatever the request asks: its text as shown, its
    lines, its outline layouts (row counts live in `RowCounts`, shared by every file,
    except for encodings that cannot count a row by its parts). A request's ranks and
    focus only reorder these, so the engine keeps a basis per file version across requests
    (issue 11: "keep prepared renderers across requests"): a new query rebuilds none of a
    hub file's outline. Safe to share between threads: every field is
    filled idempotently (two threads may both compute a value; both get the same)."""

    __slots__ = ("_imports", "_layouts", "costs", "exact", "groups", "outline", "text")

    def __init__(self, text: str, outline: Outline):
        self.text = readable_markdown(text) if outline.language == "markdown" else text  # same lines, no HTML
        self.outline = outline
        self.costs: dict[tuple[int, str], int] = {}
        """Tokens of a (line number, text) row as rendered with this file's gutter, for
        encodings outside LINE_ADDITIVE_ENCODINGS (the others count rows by their parts,
        shared between files: `RowCounts`)."""
        self.exact: dict[str, int] = {}
        """Tokens of whole fitted contents: assembly fits a file at many caps, and most
        fits keep the same rows (Django, 6 bundles: 1,783 exact counts of 290 contents)."""
        self.groups: dict[int, RowGroups] = {}
        """A layout's rows by unit, keyed by the id of the layout's row list (alive as
        long as the basis)."""
        self._layouts: dict[bool, Layout] = {}
        self._imports: list[int] | None = None

    def layouts(self) -> list[Layout]:
        return list(self._layouts.values())

    def lines(self) -> list[str]:
        """The text's lines, split again on each call: kept, they cost a basis twice its
        text (19 MB over Django's 512 kept bases, for 11 MB of text), while most renders
        of a kept basis need none (outlines come from its layouts). A renderer keeps them
        while it lives."""
        return split_lines(self.text)

    def import_lines(self, lines: Sequence[str]) -> list[int]:
        """`outline_rows.import_lines` of the file (`lines`: its lines, as the caller has
        them), found once: every focused rendering of the file shows its imports."""
        if self._imports is None:
            self._imports = import_lines(self.outline, lines)
        return self._imports

    def layout(self, compact: bool, lines: Callable[[], list[str]] | None = None) -> Layout:
        """`lines`: where to get the lines if the layout must be built (a renderer's)."""
        layout = self._layouts.get(compact)
        if layout is None:
            layout = self._layouts[compact] = code_layout(self.outline, (lines or self.lines)(), compact)
        return layout


class OutlineRenderer:
    """One file prepared to be rendered at several tiers and caps, as assembly asks (a
    skeleton, a medium outline, the whole outline, a focused tier): its outline rows are
    built once and each row's tokens counted once (per process: `RowCounts`), so fitting
    another cap costs a few sums. Arguments as for `render`."""

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
        excerpts: Sequence[tuple[int, int]] | Callable[[], Sequence[tuple[int, int]]] = (),
        excerpt_share: float = EXCERPT_SHARE,
        basis: FileBasis | None = None,
        whole_tokens: int | None = None,
    ):
        """`basis` is a `FileBasis(text, outline)` kept from an earlier request, if any;
        `whole_tokens` the text's exact count, if the index has it (tier 3 then needs no
        tokenizer pass over a file that fits)."""
        self.path = path
        self.basis = basis if basis is not None and basis.outline is outline else FileBasis(text, outline)
        self.text = self.basis.text
        self.outline = outline
        self.counter = counter
        self.focus = tuple(focus)
        self.ranks = ranks or {}
        self.compact = compact
        spec = language_named(outline.language)
        self._excerpts = excerpts if spec is not None else ()
        self.excerpt_share = excerpt_share
        """Of a focused section's cap, what its excerpts may take: EXCERPT_SHARE for the
        task's hot spans beside bodies, all of it for the code units a bundle chose."""
        self.noun = "member" if spec is not None else "subsection"
        self.comment = spec.comment if spec is not None else "# "
        """How a fold note is commented (`# (+3 members)`, `// (+3 members)`)."""
        self.width = len(str(max(outline.line_count, 1)))
        self.whole_tokens = whole_tokens
        self._rows: tuple[list[Row], list[Unit]] | None = None
        self._lines: list[str] | None = None
        self._focused: dict[tuple, tuple[list[Row], list[Unit]]] = {}
        self._needs: dict[tuple[int, int], int] = {}  # an excerpt's tokens, by its span
        self._costs = self.basis.costs
        self._shared = row_counts(counter)
        self._prefixes: dict[int, _PrefixCosts] = {}  # id(rows) -> prefix cost estimates
        self._orders: dict[int, list[int]] = {}  # id(rows) -> its units in key order
        self._groups: dict[int, RowGroups] = {}  # id(rows) -> rows by unit

    def render(self, tier: Tier, cap_tokens: int | None = None) -> Rendering:
        tier = Tier(tier)
        cap = max(0, TIER_CAP_TOKENS[tier] if cap_tokens is None else cap_tokens)
        outline, counter = self.outline, self.counter
        if outline.language == "text" or (outline.language == "markdown" and not outline.symbols):
            return _whole_or_nothing(self.text, outline, tier, counter, cap)
        if tier == Tier.FULL:
            if self.whole_tokens is not None and self.whole_tokens <= cap and self.text:
                shown = tuple(s.qualname for s in outline.symbols)
                return Rendering(Tier.FULL, self.text, self.whole_tokens, 1, outline.line_count, False, shown)
            return _full(self.text, outline, counter, cap)
        rows, units = self._outline_rows()
        if not rows:  # a script of bare statements: no outline to show, so like text
            return _whole_or_nothing(self.text, outline, tier, counter, cap)
        if tier == Tier.FOCUSED and (self.focus or (self._excerpts and self.excerpts)):
            # Over the cap, shed excerpts, then bodies, before folding the outline: every
            # signature of the file tells an agent more than one more body. Excerpts go
            # least relevant first, half at a time; then the biggest body (a 300-line
            # constructor crowds out three short methods the task names), ties by
            # relevance, the least relevant first.
            wanted, spans = self.focus, self._excerpts_within(cap)
            while True:
                key = (wanted, spans)
                focused = self._focused.get(key)
                if focused is None:
                    lines = self._split()
                    imports = self.basis.import_lines(lines) if outline.language != "markdown" else None
                    focused = self._focused[key] = focused_rows(rows, units, outline, lines, wanted, spans, imports)
                result = self._fit(*focused, tier, cap)
                names = {*wanted, *map(excerpt_name, spans)}
                if not result.truncated or names <= set(result.shown_symbols):
                    return _without_excerpts(result)  # all it wants is shown (only the outline was pruned)
                if spans:  # the least relevant go first: one at a time when there are few
                    spans = spans[: min(len(spans) - 1, max(len(spans) // 2, 3))]
                elif len(wanted) <= 1:
                    return _without_excerpts(result)
                else:
                    wanted = self._without_biggest(wanted)
        return self._fit(rows, units, tier, cap)

    @functools.cached_property
    def excerpts(self) -> tuple[tuple[int, int], ...]:
        """Computed on the first focused render: most renderers only ever outline."""
        chosen = self._excerpts() if callable(self._excerpts) else self._excerpts
        return tuple(chosen)

    def _excerpts_within(self, cap: int) -> tuple[tuple[int, int], ...]:
        """The best excerpts whose lines take at most EXCERPT_SHARE of the cap, besides the
        bodies (which the loop in `render` sheds if they do not fit): excerpts show what
        the bodies do not — an import, a constant, the branch of a long method the task's
        words are in — but the outline that names everything else comes before more of them."""
        lines, room = self._split(), int(cap * self.excerpt_share)
        excerpts: list[tuple[int, int]] = []
        needs = self._needs
        for start, end in self.excerpts:
            need = needs.get((start, end))
            if need is None:  # counted once per renderer: assembly renders its focused tier at several caps
                numbers = range(start, min(end, len(lines)) + 1)
                need = needs[start, end] = self._tokens_of(numbers, [lines[n - 1] for n in numbers])
            if need > room:
                break
            room -= need
            excerpts.append((start, end))
        return tuple(excerpts)

    def _without_biggest(self, wanted: tuple[str, ...]) -> tuple[str, ...]:
        """`wanted` less its longest body (in lines; the later one on a tie)."""
        size = {s.qualname: s.end_line - s.start_line for s in self.outline.symbols}
        drop = max(reversed(range(len(wanted))), key=lambda i: size.get(wanted[i], 0))
        return wanted[:drop] + wanted[drop + 1 :]

    def _split(self) -> list[str]:
        if self._lines is None:
            self._lines = self.basis.lines()
        return self._lines

    def _outline_rows(self) -> tuple[list[Row], list[Unit]]:
        if self._rows is None:
            if self.outline.language == "markdown":
                self._rows = markdown_rows(self.outline)
            else:
                layout = self.basis.layout(self.compact, self._split)
                self._rows = code_rows(self.outline, self._split, self.focus, self.ranks, self.compact, layout)
        return self._rows

    def _grouped(self, rows: list[Row]) -> RowGroups:
        """Each unit's rows with their positions in `rows`: pruning keeps or leaves out
        whole units, so it reads only the kept ones. Kept per rows list (a layout's in
        the basis, for every request)."""
        key = id(rows)
        shared = self.basis.groups if any(rows is layout.rows for layout in self.basis.layouts()) else self._groups
        groups = shared.get(key)
        if groups is None:
            groups = shared[key] = RowGroups(rows)
        return groups

    def _measure(self, rows: Sequence[Row]) -> tuple[int, str | None]:
        """The exact count of `rows` as `_content` joins them, and that content if counting
        built it. For encodings that never merge across a line end (each row ends in a
        newline and the next begins with its gutter) the count is the sum of the rows'
        counts, and the content is left to the caller: most outlines measured are over
        their cap and never shown. For others the whole content is counted, and the count
        kept in the basis (the last EXACT_COUNTS_KEPT)."""
        if self._shared is not None:
            return self._shared.tokens(self.width, [row.line for row in rows], [row.text for row in rows]), None
        content, _ = _content(rows, self.width)
        exact = self.basis.exact
        tokens = exact.get(content)
        if tokens is None:
            tokens = self.counter.count(content)
            if len(exact) >= EXACT_COUNTS_KEPT:
                exact.pop(next(iter(exact)), None)  # the oldest
            exact[content] = tokens
        return tokens, content

    def _tokens_of(self, numbers: Sequence[int], texts: Sequence[str]) -> int:
        """Tokens of the rows (line numbers and texts, as `_content` renders them), summed:
        exact for the rows joined when the encoding is line-additive, an estimate otherwise."""
        if self._shared is not None:
            return self._shared.tokens(self.width, numbers, texts)
        return sum(self._costs_of(list(zip(numbers, texts))))

    def _costs_of(self, keys: Sequence[tuple[int, str]]) -> list[int]:
        """Tokens of each (line number, text) row as rendered, counted once per file (for
        encodings whose rows cannot be counted by their parts)."""
        costs = self._costs
        missing = [k for k in dict.fromkeys(keys) if k not in costs]
        if missing:
            width = self.width
            lines = [f"{n:>{width}}{GUTTER}{t}\n" if n else f"{'':>{width}}{GUTTER}{t}\n" for n, t in missing]
            costs.update(zip(missing, self.counter.count_many(lines)))
        return [costs[k] for k in keys]

    def _within(self, rows: Sequence[Row], limit: int) -> bool:
        """Whether the rows' own token counts sum to at most `limit` (within a few tokens of
        the joined text's), counted a chunk at a time and only until `limit` is passed: a
        big module's focused rows over a 1K cap are not all counted to learn they do not fit."""
        total = 0
        for i in range(0, len(rows), ESTIMATE_CHUNK_ROWS):
            chunk = rows[i : i + ESTIMATE_CHUNK_ROWS]
            total += self._tokens_of([row.line for row in chunk], [row.text for row in chunk])
            if total > limit:
                return False
        return True

    def _fit(self, rows: list[Row], units: list[Unit], tier: Tier, cap: int) -> Rendering:
        """Fit the rows to the cap. An outline that does not fit keeps whole units in key
        order while they fit — the request's symbols, then its ranked definitions, then
        every top-level name, then members breadth-first — rather than the first half of
        the file. Only when not even the first unit fits is it cut, preferably before a
        symbol."""
        counter, noun = self.counter, self.noun
        outline = self.outline
        surely_over = sum(map(len, map(_TEXT_OF, rows))) > cap * MAX_CHARS_PER_TOKEN
        if len(units) <= 1 or (not surely_over and self._within(rows, cap + ESTIMATE_SLACK_TOKENS)):
            rows = self._marked(rows)
            exact, content = self._measure(rows)
            if exact <= cap:
                content = _content(rows, self.width)[0] if content is None else content
                return _outline_rendering(tier, content, exact, rows, outline, False)
            if len(units) <= 1:  # one unit over its cap: cut it, preferably before a symbol
                content, breaks = _content(rows, self.width)
                return _cut_rendering(tier, content, breaks, rows, outline, counter, cap, self.width)
        order = self._orders.get(id(rows))
        if order is None:
            present = {row.unit for row in rows}
            order = self._orders[id(rows)] = sorted(
                (u for u in range(len(units)) if u in present), key=lambda u: units[u].key
            )
        target, hi = cap, len(order) - 1
        while True:
            k, kept_rows = self._largest_prefix(rows, units, order, target, hi)
            if k == 0:
                break
            kept_rows = self._marked(kept_rows)
            exact, content = self._measure(kept_rows)
            if exact <= cap:
                content = _content(kept_rows, self.width)[0] if content is None else content
                return _outline_rendering(tier, content, exact, kept_rows, outline, True)
            target -= exact - cap  # the estimate was low: aim lower, with fewer units
            hi = k - 1
        first = pruned_rows(self._grouped(rows), units, closure(order[:1], units), noun, self.comment)
        content, breaks = _content(first, self.width)
        return _cut_rendering(tier, content, breaks, first, outline, counter, cap, self.width, pruned=True)

    def _marked(self, rows: list[Row]) -> list[Row]:
        """The rows with a gap mark between shown spans of code (not of markdown, whose
        sections are shown readable and where a gap is a heading's business)."""
        if self.outline.language == "markdown" or not any(row.source for row in rows):
            return rows
        return with_gap_marks(rows, self._split())

    def _largest_prefix(
        self, rows: list[Row], units: list[Unit], order: list[int], target: int, hi: int
    ) -> tuple[int, list[Row]]:
        """The largest k ≤ hi whose first k units (with their enclosing ones) are estimated
        to fit `target`, and their rows; (0, []) if not even one does. The estimate sums
        each unit's rows (compact, as `pruned_rows` shows them) and a fold note per class; it
        is extended only as far as a cap needs, so a skeleton of a big file counts a few
        rows, not the file."""
        prefix = self._prefixes.get(id(rows))
        if prefix is None:
            prefix = self._prefixes[id(rows)] = _PrefixCosts(self, rows, units, order)
        cumulative = prefix.up_to(target)
        k = bisect_right(cumulative, target, 0, min(hi + 1, len(cumulative))) - 1
        if k <= 0:
            return 0, []
        return k, pruned_rows(self._grouped(rows), units, closure(order[:k], units), self.noun, self.comment)


class _PrefixCosts:
    """cumulative[k]: estimated tokens of an outline pruned to its first k units, built
    lazily in unit order."""

    def __init__(self, renderer: OutlineRenderer, rows: list[Row], units: list[Unit], order: list[int]):
        # A proxy, not the renderer: the renderer keeps this object, and a cycle between
        # them left every renderer's rows and units (~3,000 objects a bundle) to the
        # cyclic collector, whose passes were ~10-15 % of a bundle's CPU.
        self.renderer: OutlineRenderer = weakref.proxy(renderer)
        self.units, self.order = units, order
        self.groups = renderer._grouped(rows)
        self.parents = {u.parent for u in units if u.definition and u.parent >= 0}
        self.kept: set[int] = set()
        self.cumulative = [0]
        self.total = FOLD_TRAILER_TOKENS

    def _tokens_of(self, unit: int) -> int:
        """Tokens of a unit's rows as `pruned_rows` shows them (compact unless the request's own)."""
        focus = self.units[unit].key[0] == KEY_FOCUS
        rows = self.groups.rows_of(unit)
        texts = [
            row.short if row.short and (not focus or len(row.text) > FOCUS_SIGNATURE_MAX_CHARS) else row.text
            for row in rows
        ]
        return self.renderer._tokens_of([row.line for row in rows], texts)

    def up_to(self, target: int) -> list[int]:
        """Extend the sums until one passes `target` (or every unit is in)."""
        units, cumulative = self.units, self.cumulative
        while len(cumulative) <= len(self.order) and cumulative[-1] <= target:
            u = self.order[len(cumulative) - 1]
            while u >= 0 and u not in self.kept:
                self.kept.add(u)
                self.total += self._tokens_of(u) + (FOLD_NOTE_TOKENS if u in self.parents else 0)
                u = units[u].parent
            cumulative.append(self.total)
        return cumulative


def _without_excerpts(result: Rendering) -> Rendering:
    """`shown_symbols` names symbols shown whole: not the excerpts' marks."""
    if not any(name.startswith(EXCERPT_MARK) for name in result.shown_symbols):
        return result
    return replace(result, shown_symbols=tuple(n for n in result.shown_symbols if not n.startswith(EXCERPT_MARK)))


_TEXT_OF = itemgetter(1)
"""A row's text (`Row.text`), read without a Python call per row."""
ESTIMATE_CHUNK_ROWS = 64
"""Rows counted at a time while checking whether an outline fits its cap."""
EXACT_COUNTS_KEPT = 32
"""Exact counts of fitted contents a file basis keeps: the caps one bundle tries for a
file give a handful of distinct contents; 32 covers several requests'."""
MAX_CHARS_PER_TOKEN = 8
"""Outline text averages ~4 characters a token; rows with more than 8 per token of the
cap cannot fit, so the whole-outline count is skipped (a skeleton of a big file)."""
FOLD_NOTE_TOKENS = 6
"""Tokens a `(+N members)` note adds to its row (estimate)."""
FOLD_TRAILER_TOKENS = 10
"""Tokens of the `… N more definitions not shown` line (estimate)."""


def _outline_rendering(
    tier: Tier, content: str, tokens: int, rows: Sequence[Row], outline: Outline, pruned: bool
) -> Rendering:
    """An outline whose rows all fit (`tokens` counted exactly on `content`)."""
    shown = tuple(dict.fromkeys(name for row in rows for name in row.ends))
    if not content:
        return Rendering(tier, "", 0, 0, 0, bool(rows), ())
    return Rendering(tier, content, tokens, 1 if outline.line_count else 0, outline.line_count, pruned, shown)


def _cut_rendering(
    tier: Tier,
    content: str,
    breaks: list[int],
    rows: Sequence[Row],
    outline: Outline,
    counter: TokenCounter,
    cap: int,
    width: int,
    pruned: bool = False,
) -> Rendering:
    """Rows that do not fit even pruned (`content`: rendered at `width`): whole lines up to
    the cap, preferably before a symbol."""
    shared = row_counts(counter)
    line_tokens = shared.each(width, [row.line for row in rows], [row.text for row in rows]) if shared else None
    cut = cut_to_tokens(content, cap, counter, breaks=breaks, line_tokens=line_tokens)
    kept = len(rows) - cut.omitted_lines if cut.truncated else len(rows)
    shown = tuple(dict.fromkeys(name for row in rows[:kept] for name in row.ends))
    if not cut.text:
        return Rendering(tier, "", 0, 0, 0, bool(rows), ())
    return Rendering(
        tier, cut.text, cut.tokens, 1 if outline.line_count else 0, outline.line_count, cut.truncated or pruned, shown
    )


ESTIMATE_SLACK_TOKENS = 16
"""Row-by-row counts may differ from the joined text's by a few tokens: within this of
the cap, count exactly before deciding an outline needs pruning."""


# -- tier 3 and plain text ---------------------------------------------------------------


def _empty(tier: Tier) -> Rendering:
    return Rendering(tier, "", 0, 0, 0, True, ())


def _whole_or_nothing(text: str, outline: Outline, tier: Tier, counter: TokenCounter, cap: int) -> Rendering:
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


# -- fitting -----------------------------------------------------------------------------


def _content(rows: Sequence[Row], width: int) -> tuple[str, list[int]]:
    text = "".join(
        f"{row.line:>{width}}{GUTTER}{row.text}\n" if row.line else f"{'':>{width}}{GUTTER}{row.text}\n" for row in rows
    )
    return text, [i for i, row in enumerate(rows) if row.starts_symbol]
