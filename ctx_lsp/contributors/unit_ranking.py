"""Which code units a bundle shows: BM25F over the units of the task's best files (issue 22).

The search ranking (`retrieval.retrieve`: symbols' names, signatures, calls, paths, and
the reference graph) is good at *which files* a change touches; it does not know which of
a file's lines do. Units (`code/units.py`) are ranked here across those files, one ranking
for all of them, by the task's words in each unit's own text (BM25, length-normalised, so
a 40-line piece that mentions a word twice beats a 400-line class that mentions it three
times), with the names it declares (its owner's; module constants) and the file's path as
fields weighted above the body (as BM25F does), and multiplied by a prior: the file's
salience in the search ranking, and a bonus when the unit belongs to a symbol the search
hit or a call neighbour of the working files. The assembly then spends the room for code
on the best units, whichever file they are in, and shows each file's chosen units in line
order.

Units and the terms in each are derived when a file is indexed and kept in its cache row
(`index/unit_postings.py`), so ranking reads no text: a unit's term frequencies are
postings looked up by the task's terms. Only the first files of the search ranking are
ranked (UNIT_FILES; UNIT_FILES_LARGE_BUDGET from a large budget: `retrieval.unit_files`):
lines a change touches lie in files the ranking finds far more often than not (the
evaluation's file recall at 8K is over 95 % on Python). A term's weight is
the lower of its inverse document frequency over the workspace's symbol documents
(`SearchIndex.term_weights`) and over the units ranked: a word rare among names may be
common in bodies, and a word no symbol document holds (a body's word only) is weighed by
its rarity among the units alone. Against the symbols' weight alone (session 12, 60
instances a mode a repository): Python cold function recall at 2K/8K 67.8/85.9 ->
69.3/86.8, Rust cold line 18.4/45.2 -> 22.6/51.7; TypeScript/Go open function recall fell
by one to three instances (docs/NOTES.md, session 12).
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from ctx_lsp.code.units import CodeUnit
from ctx_lsp.errors import CtxError
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.terms import query_terms, terms
from ctx_lsp.index.unit_postings import COUNT_CAP, UnitPostings, unit_postings
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.relevance import (
    UNIT_BM25_B,
    UNIT_BM25_K1,
    UNIT_CHARS_PER_TERM,
    UNIT_CONTAINER_WEIGHT,
    UNIT_HIT_BONUS,
    UNIT_NAME_WEIGHT,
    UNIT_NEIGHBOUR_BONUS,
    UNIT_PATH_WEIGHT,
    UNIT_PRIOR_FLOOR,
)


@dataclass(slots=True)
class RankedUnit:
    """One unit of one file with its score for the task, and what it costs to show.

    Not frozen, and never changed once made: a Django bundle ranks ~500 units, and a frozen
    dataclass's `__init__` (one `object.__setattr__` a field) made them 4x slower to build,
    a third of `rank_units`' time (`benchmarks/README.md`, "Session 17")."""

    abs_path: str
    path: str
    unit: CodeUnit
    score: float
    matched: tuple[str, ...]
    cost: int
    """Estimated tokens of its lines as a bundle shows them (with the line-number gutter)."""

    @property
    def span(self) -> tuple[int, int]:
        return self.unit.start, self.unit.end

    def lines_within(self, tokens: int) -> int:
        """How many of its lines cost about `tokens`, by its estimated cost (all of them if
        it costs no more; at least WINDOW_MIN_LINES)."""
        if self.cost <= tokens:
            return self.unit.lines
        return min(self.unit.lines, max(WINDOW_MIN_LINES, self.unit.lines * tokens // self.cost))


WINDOW_MIN_LINES = 3
"""A unit shown in part shows at least three lines (a wrapped signature and the line after
it, or a line with the task's words and its neighbours)."""


@dataclass(frozen=True, slots=True)
class FileUnits:
    """A file version's units with what ranking them needs besides the task: the units and
    their terms' postings as indexed (`index/unit_postings.py`), each unit's length in
    terms (estimated from its characters), and the path's terms."""

    postings: UnitPostings
    lengths: tuple[float, ...]
    path_terms: frozenset[str]
    total_length: float
    containers: Mapping[str, tuple[int, ...]]
    """Each term of the names units' owners are nested in (`Runner` of `Runner.isolation`),
    with those units."""

    @property
    def units(self) -> tuple[CodeUnit, ...]:
        return self.postings.units


@dataclass(frozen=True, slots=True)
class UnitFile:
    """A file to rank units of, and its prior: its salience in the search ranking (0..1)
    and the symbols in it that the search hit or that neighbour the working files."""

    entry: IndexedFile
    prior: float
    hit_owners: Mapping[str, float]
    neighbours: frozenset[str] = frozenset()
    factor: float = 1.0
    """What every unit's score is multiplied by besides: TEST_FILE_FACTOR for a test file
    when the task is not about tests (a test names what it tests, word for word)."""


class UnitsCache:
    """Units of recently ranked file versions (a bundle reads ~15 files; most are the same
    from one request to the next while the task is the same)."""

    def __init__(self, max_files: int = 512):
        self.max_files = max_files
        self._items: OrderedDict[tuple, FileUnits] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> FileUnits | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: tuple, value: FileUnits) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_files:
                self._items.popitem(last=False)


def file_units(postings: UnitPostings, entry: IndexedFile) -> FileUnits:
    lengths = tuple(max(1.0, chars / UNIT_CHARS_PER_TERM) for chars in postings.chars)
    path_terms = frozenset(terms(entry.path.replace("/", " ").replace(".", " ")))
    members: dict[str, list[int]] = {}  # qualified container name -> its units
    for i, owner in enumerate(u.owner for u in postings.units):
        if "." in owner:
            members.setdefault(owner.rsplit(".", 1)[0], []).append(i)
    containers: dict[str, tuple[int, ...]] = {}
    for container, units in members.items():
        for t in container_terms(container):
            containers[t] = (*containers.get(t, ()), *units)
    return FileUnits(postings, lengths, path_terms, sum(lengths), containers)


def units_of(workspace: Workspace, cache: UnitsCache, entry: IndexedFile) -> FileUnits | None:
    """The file's units as indexed; for an entry indexed without them (an editor buffer,
    a file whose cached bytes do not read back) derived from its text, read through the
    workspace's gate (None if it cannot be read)."""
    key = (entry.abs_path, entry.hash, entry.overlay_version)
    hit = cache.get(key)
    if hit is not None:
        return hit
    current = entry
    postings = entry.unit_postings
    if postings is None:
        try:
            text, current = workspace.read_text(entry)
        except CtxError:
            return None
        postings = current.unit_postings or unit_postings(current.outline, text)
    units = file_units(postings, current)
    if current is entry:
        cache.put(key, units)
    return units


@functools.lru_cache(maxsize=1 << 14)
def container_terms(container: str) -> frozenset[str]:
    """Terms of the qualified name units' owners are nested in (`Runner` of
    `Runner.isolation`): the methods of a class share them."""
    return frozenset(terms(container))


def rank_units(
    files: Sequence[tuple[UnitFile, FileUnits]], query: str, weights: Mapping[str, float]
) -> list[RankedUnit]:
    """Every unit of `files` that holds a task word (in its text, its owner's name or its
    file's path), best first: BM25F times the file's prior.

    Each file's term frequencies are gathered per term (one dict of unit -> frequency a
    term, built from its postings in one comprehension), not per unit: a Django bundle
    ranks ~500 units of ~20 files, and this runs on every request (`benchmarks/README.md`,
    "Session 17")."""
    wanted = [t for t in dict.fromkeys(query_terms(query)) if t]
    if not wanted or not files:
        return []
    wanted_set = set(wanted)
    found: list[tuple[UnitFile, FileUnits, set[int], dict[str, dict[int, float]]]] = []
    unit_count = 0
    total_length = 0.0
    df: dict[str, int] = {}
    for uf, fu in files:
        unit_count += len(fu.units)
        total_length += fu.total_length
        tfs: dict[str, dict[int, float]] = {}  # term -> unit -> frequency (fields weighted)
        for t in wanted:
            postings = fu.postings.postings(t)
            by_unit = {p // COUNT_CAP: float(p % COUNT_CAP) for p in postings} if postings else {}
            for i in fu.postings.named(t) or ():
                by_unit[i] = by_unit.get(i, 0.0) + UNIT_NAME_WEIGHT
            if by_unit:
                tfs[t] = by_unit
        if not tfs:
            continue
        holding: set[int] = set().union(*tfs.values())  # the units holding a task word
        # A path's words say which file, not which lines: they add to units the task's
        # words are in, no others; and so does a class's name to its members.
        for t in wanted_set & fu.path_terms:
            by_unit = tfs.setdefault(t, {})
            for i in holding:
                by_unit[i] = by_unit.get(i, 0.0) + UNIT_PATH_WEIGHT
        for t in wanted:
            for i in fu.containers.get(t, ()):
                if i in holding:
                    by_unit = tfs.setdefault(t, {})
                    by_unit[i] = by_unit.get(i, 0.0) + UNIT_CONTAINER_WEIGHT
        for t, by_unit in tfs.items():
            df[t] = df.get(t, 0) + len(by_unit)
        found.append((uf, fu, holding, tfs))
    if not found:
        return []
    avg = total_length / max(1, unit_count)
    # A word's weight is its rarity among symbols or among these units, whichever is lower:
    # rare in names is not rare in bodies (`after`, `insert`), and bodies are what units are.
    own = {t: math.log(1 + (unit_count - n + 0.5) / (n + 0.5)) for t, n in df.items()}
    idf = {t: min(weights[t], own[t]) if t in weights else own[t] for t in df}
    k1, b = UNIT_BM25_K1, UNIT_BM25_B
    ranked: list[RankedUnit] = []
    for uf, fu, holding, tfs in found:
        units, lengths, costs = fu.units, fu.lengths, fu.postings.costs
        base = (UNIT_PRIOR_FLOOR + (1 - UNIT_PRIOR_FLOOR) * uf.prior) * uf.factor
        hit_owners, neighbours = uf.hit_owners, uf.neighbours
        scores = dict.fromkeys(holding, 0.0)
        matched: dict[int, list[str]] = {i: [] for i in holding}
        for t, by_unit in tfs.items():
            weight = idf[t]
            for i, tf in by_unit.items():
                scores[i] += weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / avg))
                matched[i].append(t)
        for i, score in scores.items():
            u = units[i]
            prior = base
            if u.owner in hit_owners:
                prior *= 1 + UNIT_HIT_BONUS * hit_owners[u.owner]
            if u.owner in neighbours:
                prior *= 1 + UNIT_NEIGHBOUR_BONUS
            words = tuple(sorted(matched[i]))
            ranked.append(RankedUnit(uf.entry.abs_path, uf.entry.path, u, score * prior, words, costs[i]))
    # Best first, then by path and line: two stable sorts with keys read in C.
    ranked.sort(key=attrgetter("path", "unit.start"))
    ranked.sort(key=attrgetter("score"), reverse=True)
    return ranked
