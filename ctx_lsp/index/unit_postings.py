"""A file's code units and the terms in each, derived once when the file is analysed and
kept in the index cache beside its outline (issue 22).

Ranking units (`contributors/unit_ranking.py`) needs, per unit, how often each of the
task's terms occurs in it, how long it is and what it costs to show. Deriving that at
request time meant reading and splitting the text of the task's best files on every
bundle (~40 % of a bundle's time on Django, most of it for files the previous task did
not read). Here it is derived where the text is already in hand, in the indexing pass
(`files.analyse_uncounted`, in the pool's workers on a cold index), packed as one small
blob per file and stored in the file's cache row, so a warm process restores it with the
rows and a request reads no text to rank.

The blob is `packed`'s layout: per unit its span, kind, owner, whether it holds the
owner's signature, its length in characters and its cost in tokens; the file's distinct
terms (sorted) with their postings (unit, count); and the terms of the names each unit
declares (its owner's, if it holds the owner's signature; the module constants in it) with
their units. Only the layout is checked when read back: the store's schema and
`UNITS_VERSION` (the source of the modules the units and terms come from) decide whether
stored rows are used at all (`store.IndexStore.open`).
"""

from __future__ import annotations

import itertools
import operator
import struct
import sys
from array import array
from bisect import bisect_left
from collections import Counter, _count_elements  # type: ignore[attr-defined]
from dataclasses import dataclass

from ctx_lsp.code import units as units_module
from ctx_lsp.code.outline import Outline, line_starts, split_lines
from ctx_lsp.code.units import CodeUnit, code_units
from ctx_lsp.index import packed
from ctx_lsp.index import terms as terms_module
from ctx_lsp.index.terms import run_terms, terms, word_runs
from ctx_lsp.index.versions import source_digest

__all__ = ["CHARS_PER_TOKEN", "UNITS_VERSION", "UnitPostings", "pack", "unit_postings", "unit_postings_blob", "unpack"]


CHARS_PER_TOKEN = 3.2
"""Characters of code (indentation and gutter included) per o200k token, estimated: code
lines run 3–4 characters a token; the estimate errs high so that a selection fits."""

_KINDS = ("definition", "header", "module")
_STRINGS = ("owners", "terms", "names")
_ARRAYS = ("start", "end", "flags", "chars", "cost", "term_ends", "postings", "name_ends", "name_units")
COUNT_CAP = 256
"""A posting is one int, unit * COUNT_CAP + count (a count above COUNT_CAP - 1 is cut to it:
BM25's term frequency has long saturated by then); half the size of two columns."""


@dataclass(frozen=True, slots=True)
class UnitPostings:
    """One file version's units, and for each of its distinct terms the units holding it.

    `terms` is sorted; term i's postings (each unit * COUNT_CAP + count) are `post` from
    `term_ends[i-1]` (0 for the first) to `term_ends[i]`. `names` and `name_ends` /
    `name_units` are the same for the terms of the names units declare: a first unit's
    owner's, and the module constants (`Outline.constants`) a unit's lines declare, so
    that "add a global EnableX" finds the block of `Enable...` variables by name. Against
    names of owners alone (session 15, same instances): Go open 2K line 27.3 -> 28.6,
    Rust cold 8K 55.8 -> 57.1, TypeScript cold 2K 61.4 -> 62.3; no function-recall cell
    moved, Python within half a point."""

    units: tuple[CodeUnit, ...]
    chars: array
    costs: array
    terms: list[str]
    term_ends: array
    post: array
    names: list[str]
    name_ends: array
    name_units: array

    def postings(self, term: str) -> array | None:
        """The term's postings in this file (unit * COUNT_CAP + count), or None."""
        i = bisect_left(self.terms, term)
        if i == len(self.terms) or self.terms[i] != term:
            return None
        lo = self.term_ends[i - 1] if i else 0
        hi = self.term_ends[i]
        return self.post[lo:hi]

    def named(self, term: str) -> array | None:
        """The units that declare a name holding the term (see the class), or None."""
        i = bisect_left(self.names, term)
        if i == len(self.names) or self.names[i] != term:
            return None
        lo = self.name_ends[i - 1] if i else 0
        return self.name_units[lo : self.name_ends[i]]


def unit_postings(outline: Outline, text: str) -> UnitPostings:
    """The file's units and their terms: every line of a unit counts, once per occurrence
    of each term (`terms.term_counts`, the search's own split and stem).

    The per-term work is in C: each unit's runs of word characters (`terms.word_runs`),
    their terms (`terms.run_terms`, cached) counted at once, and every unit's terms with
    their postings put in term order by one stable sort (units stay ascending), which is
    the blob's layout. Counting unit by unit with a regular expression and appending each
    posting in Python was ~60 % of a cold index's per-file work on C (Linux `kernel/`).
    Terms and postings are kept in two lists, not as pairs: a million tuples a large file
    set the cyclic collector running (where it runs: the index's own process, tests)."""
    lines = split_lines(text)
    units = code_units(outline, lines)
    constants = sorted((c.line, c.name) for c in outline.constants)
    starts = line_starts(lines)
    runs = word_runs("\n".join(lines))
    gutter = len(str(max(len(lines), 1))) + 2
    sizes: list[int] = []
    costs: list[int] = []
    found: list[str] = []  # each unit's terms, unit after unit
    postings: list[int] = []  # and their postings (unit * COUNT_CAP + count)
    by_name: dict[str, list[int]] = {}
    lookup = run_terms.__getitem__
    for i, u in enumerate(units):
        begin, end = starts[u.start - 1], starts[u.end]
        size = end - begin
        sizes.append(size)
        costs.append(max(1, int((size + gutter * u.lines) / CHARS_PER_TOKEN) + 1))
        counts: dict[str, int] = {}
        _count_elements(counts, _chain(map(lookup, runs[begin:end].split())))  # a Counter's init costs more
        if counts:
            values = counts.values()
            if max(values) >= COUNT_CAP:
                values = map(min, values, itertools.repeat(COUNT_CAP - 1))  # type: ignore[assignment]
            found.extend(counts)
            postings.extend(map(operator.add, values, itertools.repeat(i * COUNT_CAP)))
        named = set(terms(u.owner.rsplit(".", 1)[-1])) if u.first and u.owner else set()
        for _, name in constants[bisect_left(constants, (u.start, "")) : bisect_left(constants, (u.end + 1, ""))]:
            named.update(terms(name))
        for term in named:
            by_name.setdefault(term, []).append(i)
    order = sorted(range(len(found)), key=found.__getitem__)  # stable: each term's units stay ascending
    per_term = Counter(map(found.__getitem__, order))
    sorted_names = sorted(by_name)
    return UnitPostings(
        units,
        int_array(sizes),
        int_array(costs),
        list(per_term),
        int_array(list(itertools.accumulate(per_term.values()))),
        int_array(list(map(postings.__getitem__, order))),
        sorted_names,
        *_flattened(by_name, sorted_names),
    )


_chain = itertools.chain.from_iterable


def int_array(values: list[int]) -> array:
    """`array("i", values)`, through `struct`: the array's own constructor converts each
    item with `PyArg_Parse` (~180 instructions an int, measured), struct in a few."""
    return array("i", struct.pack(f"{len(values)}i", *values))


def _flattened(lists: dict[str, list[int]], keys: list[str]) -> tuple[array, array]:
    """The lists in the keys' order as one array, and where each ends in it."""
    flat: list[int] = []
    ends: list[int] = []
    for key in keys:
        flat.extend(lists[key])
        ends.append(len(flat))
    return int_array(ends), int_array(flat)


def unit_postings_blob(outline: Outline, text: str) -> bytes:
    """`pack(unit_postings(...))`, or b"" for a file without units (markdown, text)."""
    found = unit_postings(outline, text)
    return pack(found) if found.units else b""


def pack(p: UnitPostings) -> bytes:
    flags = array("i", (_KINDS.index(u.kind) * 2 + int(u.first) for u in p.units))
    return packed.pack(
        {"owners": [u.owner for u in p.units], "terms": p.terms, "names": p.names},
        {
            "start": array("i", (u.start for u in p.units)),
            "end": array("i", (u.end for u in p.units)),
            "flags": flags,
            "chars": p.chars,
            "cost": p.costs,
            "term_ends": p.term_ends,
            "postings": p.post,
            "name_ends": p.name_ends,
            "name_units": p.name_units,
        },
    )


def unpack(value: bytes) -> UnitPostings | None:
    """The postings `pack` wrote, or None if the bytes do not hold to the layout.

    A file's units are unpacked on every bundle that ranks them and finds them out of the
    units cache, so the checks iterate in C (`map`, `min`, `max` over the columns), not in
    generator expressions, which were half of unpacking's time (`benchmarks/README.md`,
    "Session 17")."""
    columns = packed.unpack(value, _STRINGS, _ARRAYS)
    if columns is None:
        return None
    strings, a = columns
    n = len(strings["owners"])
    if any(len(a[k]) != n for k in ("start", "end", "flags", "chars", "cost")):
        return None
    if not _ends_hold(a["term_ends"], len(strings["terms"]), a["postings"], n * COUNT_CAP):
        return None
    if not _ends_hold(a["name_ends"], len(strings["names"]), a["name_units"], n):
        return None
    starts, ends, flags = a["start"], a["end"], a["flags"]
    if n and (min(flags) < 0 or max(flags) >= 2 * len(_KINDS) or min(starts) < 1):
        return None
    if not all(map(operator.le, starts, ends)):
        return None
    kinds = [_KINDS[f >> 1] for f in flags]
    firsts = [bool(f & 1) for f in flags]
    units = tuple(map(CodeUnit, starts, ends, strings["owners"], kinds, firsts))
    return UnitPostings(
        units,
        a["chars"],
        a["cost"],
        strings["terms"],
        a["term_ends"],
        a["postings"],
        strings["names"],
        a["name_ends"],
        a["name_units"],
    )


def _ends_hold(ends: array, count: int, targets: array, bound: int) -> bool:
    """Each list's end offsets ascend to the list's length, and each target is below `bound`."""
    if len(ends) != count or (count and ends[-1] != len(targets)) or (not count and len(targets)):
        return False
    if count and (ends[0] < 0 or not all(map(operator.le, ends, ends[1:]))):
        return False
    return not targets or (min(targets) >= 0 and max(targets) < bound)


UNITS_VERSION = f"1:{source_digest(units_module, terms_module, packed, sys.modules[__name__])}"
"""Changes when the way units or their terms are derived may have changed: the store then
rebuilds its rows (`store.IndexStore.open`), as it does for another schema."""
