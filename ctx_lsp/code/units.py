"""Code units: the pieces of a file a bundle selects and shows (issue 22).

A bundle used to choose files and then decide, per file, which whole bodies to show. The
lines a real fix changes are often elsewhere: in the one branch of a 200-line method that
handles the case, in an import, a module constant, a class attribute. Units are the
smallest pieces worth showing on their own, aligned with the code's syntax so that each
reads as written: a short function or method whole; a long one in pieces cut at blank
lines (the first piece holds its signature and docstring); a class's own lines before its
first member (its header, docstring and attributes); and the module-level code between
definitions (imports, constants, statements) in blank-line blocks.

Every line of a file that is not blank belongs to exactly one unit (a unit neither starts
nor ends with a blank line), so a selection of units never shows a line twice. Units come from the outline
and the lines alone (no parsing), for every language the outline knows.
"""

from __future__ import annotations

import itertools
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ctx_lsp.code.languages import language_named
from ctx_lsp.code.languages.spec import CONTAINER_KINDS, LanguageSpec
from ctx_lsp.code.outline import Outline, Symbol, line_starts

UNIT_MAX_LINES = 40
"""A piece of a definition or of module code is cut at a blank line once it is this long
(or at this length if no blank line comes): about a screen, and what lexical chunk
retrieval shows well (30-line windows). Short definitions stay whole."""
UNIT_MAX_NESTING = 40
"""Containers nested deeper than this are units whole (in pieces): a generated or hostile
file can nest classes a thousand deep, and units are found by recursion."""
UNIT_LINE_MAX_CHARS = 160
"""A line longer than this is in no unit (`index/excerpts.LONG_LINE_CHARS` for windows)."""
UNIT_MIN_LINES = 6
"""A piece is not cut off shorter than this: two-line fragments of a function read badly
and cost a gap marker each."""
MODULE_UNIT_MIN_LINES = 12
"""Module code between definitions is cut at a blank line only once its piece is this long:
a run of short declarations reads together, and a fix adds a line beside its neighbours
(cobra's `var initializers`, `EnablePrefixMatching` and `EnableCommandSorting`, each a
blank-line block, were three units; a bundle showed the one the task's words hit, not the
ones beside it that the fix changed). Against 6 (session 16, same instances; ctx-lsp
line recall at 2K/8K): Go cold 27.0/66.9 -> 29.6/67.1, Go open 28.6/58.7 -> 29.7/59.1 and
function recall 64.7 -> 65.8, Rust open 8K 25.2 -> 26.6, Python cold 37.5/64.5 ->
38.2/64.8; no function-recall cell fell by more than one instance. 16 and 20 showed more
of Go cold at 2K but cost function recall (Go open 2K 64.7, TypeScript cold 2K 84.3)."""


@dataclass(frozen=True, slots=True)
class CodeUnit:
    """Lines `start`..`end` (1-based, inclusive) of one file.

    `owner` is the qualname of the innermost definition the lines belong to ("" for module
    code); `first` says the unit holds the owner's first line (its signature), so a match
    of the owner's name counts for it; `kind` is "definition" (a function or method, or a
    piece of one), "header" (a container's own lines) or "module"."""

    start: int
    end: int
    owner: str
    kind: str
    first: bool

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


def code_units(outline: Outline, lines: Sequence[str]) -> tuple[CodeUnit, ...]:
    """The file's units in line order; none for a file without code symbols (markdown,
    text) — its lines are not code units."""
    total = min(outline.line_count or len(lines), len(lines))
    if total <= 0:
        return ()
    symbols = [s for s in outline.symbols if s.kind != "heading" and 1 <= s.start_line <= total]
    if not symbols and outline.language in ("markdown", "text"):
        return ()
    children: dict[str, list[Symbol]] = {}
    top: list[Symbol] = []
    for s in symbols:
        if s.parent and s.depth > 0:
            children.setdefault(s.parent, []).append(s)
        else:
            top.append(s)
    units: list[CodeUnit] = []
    blank = list(map(operator.not_, map(str.strip, lines)))
    cuttable = _cut_points(lines, blank, language_named(outline.language))
    cuts = list(itertools.compress(range(len(cuttable)), cuttable))
    _within(1, total, "", "module", _outermost(top), children, cuts, units, 0)
    long = _long_lines(lines)
    pieces = [p for u in units for p in _without_long_lines(u, long)] if long else units
    return tuple(_trimmed(u, blank) for u in pieces if not all(blank[u.start - 1 : u.end]))


def _long_lines(lines: Sequence[str]) -> list[int]:
    """Numbers (1-based) of the lines longer than UNIT_LINE_MAX_CHARS; most files have none,
    which one `max` in C says."""
    if not lines or max(map(len, lines)) <= UNIT_LINE_MAX_CHARS:
        return []
    return [n for n, line in enumerate(lines, 1) if len(line) > UNIT_LINE_MAX_CHARS]


def _without_long_lines(u: CodeUnit, long_lines: Sequence[int]) -> list[CodeUnit]:
    """The unit, or its runs of lines between lines longer than UNIT_LINE_MAX_CHARS, which
    no unit shows: a hundred names imported on one line, generated data, a minified string
    cost more than the code around them (an outline shortens them instead). Module code
    with such a line is no unit at all: an import block of that kind is shown by the
    outline's collapsed import line, which a unit would replace."""
    long = long_lines[bisect_left(long_lines, u.start) : bisect_right(long_lines, u.end)]
    if not long:
        return [u]
    if u.kind == "module":
        return []  # imports or data: the outline's one short line says what they are
    out, start = [], u.start
    for n in [*long, u.end + 1]:
        if start < n:
            out.append(CodeUnit(start, n - 1, u.owner, u.kind, u.first and start == u.start))
        start = n + 1
    return out


def _trimmed(u: CodeUnit, blank: Sequence[bool]) -> CodeUnit:
    """The unit without blank lines at either end (they cost tokens and show nothing)."""
    start, end = u.start, u.end
    while blank[start - 1]:
        start += 1
    while blank[end - 1]:
        end -= 1
    return u if (start, end) == (u.start, u.end) else CodeUnit(start, end, u.owner, u.kind, u.first)


def _outermost(symbols: Sequence[Symbol]) -> list[Symbol]:
    """Symbols in line order, without any that lie inside an earlier one (a symbol an
    extractor lists at top level but nested in lines, e.g. an object literal's methods)."""
    out: list[Symbol] = []
    for s in sorted(symbols, key=lambda s: (s.start_line, -s.end_line)):
        if out and s.start_line <= out[-1].end_line:
            continue
        out.append(s)
    return out


def _within(
    start: int,
    end: int,
    owner: str,
    kind: str,
    inner: Sequence[Symbol],
    children: dict[str, list[Symbol]],
    cuts: Sequence[int],
    out: list[CodeUnit],
    depth: int,
) -> None:
    """Units of lines `start`..`end` holding the definitions `inner` (outermost, in line
    order): the lines between them as `kind` blocks of `owner`, each definition by
    `_definition`."""
    at = start
    for s in inner:
        s_start, s_end = max(s.start_line, at), min(s.end_line, end)
        if s_start > s_end:
            continue
        if at < s_start:
            _blocks(at, s_start - 1, owner, kind, False, cuts, out)
        _definition(s, s_start, s_end, children, cuts, out, depth)
        at = s_end + 1
    if at <= end:
        _blocks(at, end, owner, kind, False, cuts, out)


def _definition(
    s: Symbol,
    start: int,
    end: int,
    children: dict[str, list[Symbol]],
    cuts: Sequence[int],
    out: list[CodeUnit],
    depth: int,
) -> None:
    """A container's header and members; a function whole, or in pieces when long (its
    nested functions stay inside it: they read as part of it)."""
    container = s.kind in CONTAINER_KINDS and depth < UNIT_MAX_NESTING
    members = _outermost(children.get(s.qualname, ())) if container else []
    members = [m for m in members if start < m.start_line <= end]
    if not members:
        _blocks(start, end, s.qualname, "definition" if s.kind not in CONTAINER_KINDS else "header", True, cuts, out)
        return
    first_member = members[0].start_line
    _blocks(start, first_member - 1, s.qualname, "header", True, cuts, out)
    _within(first_member, end, s.qualname, "header", members, children, cuts, out, depth + 1)


def _blocks(start: int, end: int, owner: str, kind: str, first: bool, cuts: Sequence[int], out: list[CodeUnit]) -> None:
    """Lines `start`..`end` as units of at most UNIT_MAX_LINES, cut before a blank line
    that may be cut at (`cuts`: the 0-based indices i where line i + 1 may be, ascending;
    see `_cut_points`). Module and header code is cut at each after UNIT_MIN_LINES (a
    class's attributes) or MODULE_UNIT_MIN_LINES (imports, a run of constants, the next
    statement), a definition only when it is long, into pieces of about half the maximum
    or more, so that it does not shatter into short ones.

    A piece ends at the first line n (from its start p) that is followed by a cut point
    and makes it long enough, or at p + UNIT_MAX_LINES - 1 if none comes first: found by
    bisection in `cuts`, not by looking at every line (module code is most of a C file's
    lines)."""
    if start > end:
        return
    whole = kind == "definition" or first
    if whole and end - start + 1 <= UNIT_MAX_LINES:  # most definitions: one unit, no line to look at
        out.append(CodeUnit(start, end, owner, kind, first))
        return
    shortest = UNIT_MAX_LINES // 2 if whole else MODULE_UNIT_MIN_LINES if kind == "module" else UNIT_MIN_LINES
    piece_start = start
    while True:
        forced = piece_start + UNIT_MAX_LINES - 1
        at = bisect_left(cuts, piece_start + shortest - 1)
        n = cuts[at] if at < len(cuts) and cuts[at] < min(forced, end) else forced
        if n >= end or end - n < UNIT_MIN_LINES:  # the rest is too short to stand alone: keep it here
            break
        out.append(CodeUnit(piece_start, n, owner, kind, first and piece_start == start))
        piece_start = n + 1
    out.append(CodeUnit(piece_start, end, owner, kind, first and piece_start == start))


def _cut_points(lines: Sequence[str], blank: Sequence[bool], spec: LanguageSpec | None) -> list[bool]:
    """cuttable[i]: line i + 1 is blank and outside a multi-line string or block comment
    (a docstring's paragraphs are not statements: a unit cut there shows half a
    docstring): the language's `multiline_quotes`, found in one pass over the whole text
    (a file holds a few dozen delimiters and thousands of lines)."""
    cuttable = list(blank)
    pairs = spec.multiline_quotes if spec is not None else ()
    if not pairs:
        return cuttable
    closers = {o: c for o, c in pairs}
    tokens = sorted({*closers, *closers.values()}, key=len, reverse=True)
    text = "\n".join(lines)
    starts = line_starts(lines)
    closing: str | None = None
    opened_at = 0
    for at, token in _delimiters(text, tokens):
        if closing is None:
            closing = closers.get(token)
            opened_at = at
        elif token == closing:
            closing = None
            first, last = bisect_right(starts, opened_at), bisect_right(starts, at)
            cuttable[first:last] = [False] * max(0, last - first)  # lines first+1 .. last-1 (0-based first..)
    if closing is not None:  # never closed: to the end
        first = bisect_right(starts, opened_at)
        cuttable[first:] = [False] * (len(cuttable) - first)
    return cuttable


def _delimiters(text: str, tokens: Sequence[str]) -> Iterator[tuple[int, str]]:
    """(offset, token) of the delimiters in `text`, as one regular expression of the
    tokens in this order (`a|b|...`) would find them left to right (each match consumed,
    so `*/*` holds `*/` only), from `str.find` per token: a regular expression of
    alternatives tested every character of the text (~5 % of deriving a C file's units)."""
    ahead = [text.find(t) for t in tokens]  # the next occurrence of each at or after `pos`
    pos = 0
    while True:
        best = -1
        for k, token in enumerate(tokens):
            found = ahead[k]
            if 0 <= found < pos:
                found = ahead[k] = text.find(token, pos)
            if found >= 0 and (best < 0 or found < ahead[best]):
                best = k
        if best < 0:
            return
        at = ahead[best]
        yield at, tokens[best]
        pos = at + len(tokens[best])
