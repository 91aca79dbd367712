"""The cross-file reference graph: which Python files use which, ranked for a request.

Nodes are Python files. File A has an edge to file B when A uses a name B defines
(weighted as Aider's repo map weighs its edges: the square root of the use count, times
factors for specific, private and common names) or when A imports B (a strong, fixed
weight). Edges live in dicts and change per changed file, in integer weight units, so any
sequence of incremental updates leaves exactly the graph a rebuild would.

Ranking is PageRank whose random walk jumps either to the request's seeds (its working
files and the files defining the identifiers it mentions) or to any file. PageRank is
linear in where the walk jumps, so the result is the blend of two parts:

- the global part, kept between requests and, after a change, corrected by pushing the
  residual the change creates (Zhang, Lofgren and Goel, "Approximate personalized
  PageRank on dynamic graphs", KDD 2016): an edit costs its neighbourhood, not a rebuild;
- the personal part, computed per request by forward push from the seeds (Andersen, Chung
  and Lang, FOCS 2006): its work is bounded by 1 / ((1 - DAMPING) x threshold) edge
  visits whatever the size of the repository. The mass it leaves unpushed is spread the
  way the global walk spreads, rather than dropped (see `PERSONAL_TOLERANCE`).

Callers and callees come from matching the simple names a symbol calls against the
definitions its file can see: its own, then those of the files it imports.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass, replace
from typing import Collection, Iterable, Iterator, Mapping, Sequence

from ctx_lsp.code.outline import Outline
from ctx_lsp.index.changes import ChangeQueue
from ctx_lsp.index.files import IndexedFile

__all__ = [
    "Definition",
    "DefinitionRank",
    "FileFacts",
    "FileRank",
    "GraphSnapshot",
    "RankResult",
    "ReferenceGraph",
    "definitions_of",
    "facts_for",
    "import_probes",
    "module_names",
    "name_factor",
    "push",
    "reference_units",
    "resolve_relative",
]

# ---------------------------------------------------------------------------- edge weights

WEIGHT_UNITS = 1000
"""Edge weights are stored as integers in thousandths. Integer sums are exact, so adding a
file's contribution and later subtracting it leaves no rounding residue: an incrementally
maintained graph equals a rebuilt one, bit for bit."""

IMPORT_EDGE_WEIGHT = 4.0
"""An import weighs as much as one plain name used 16 times (sqrt(16)): importing a module
is an explicit, unambiguous dependency, unlike a name that several files may define."""

SPECIFIC_NAME_MIN_CHARS = 8
SPECIFIC_NAME_FACTOR = 10.0
"""Long snake_case or CamelCase names (`get_queryset`, `CharField`) rarely collide by
chance, so a use is strong evidence of a dependency (Aider's repo map does the same)."""

PRIVATE_NAME_FACTOR = 0.1
"""`_names` are implementation details; a use from another file says little about what
the user of the name needs to see."""

COMMON_NAME_DEFINERS = 5
COMMON_NAME_FACTOR = 0.1
"""A name defined in more than 5 files (`get`, `save`) could mean any of them, so each of
its edges counts a tenth (Aider's threshold and factor)."""

MAX_DEFINERS = 25
"""A name defined in more than 25 files (`__init__`, `Migration`, `urlpatterns` in
Django) says nothing about which one is meant; it makes no edges. This also bounds the
work of one update: a definition touches at most 25 x (files using the name) edges."""

# ---------------------------------------------------------------------------- ranking

DAMPING = 0.85
"""Probability that the walk follows an edge rather than jumping (networkx's default,
which Aider uses)."""

PERSONAL_SHARE = 0.8
"""Share of the jumps that go to the request's seeds; the rest go to any file. The global
share keeps files far from the seeds ordered by how much the repository uses them."""

MENTIONED_SHARE = 0.5
"""Share of the seed jumps that go to files defining mentioned identifiers when there are
working files too; either kind alone takes them all."""

GLOBAL_TOLERANCE = 1e-2
"""Residual the global push may leave per file, in units of one file's own jump mass (1).
The global part orders the tail, so 1 % of an ordinary file's mass is plenty, and it keeps
the correction after an edit to ~10,000 edge visits on Django (a few ms)."""

PERSONAL_TOLERANCE = 5e-5
"""Forward-push threshold of the personal part per out-edge of the pushed file (the seeds'
jump mass is 1): the work is at most 1 / ((1 - DAMPING) x 5e-5) = 133,000 edge visits and
in practice ~10,000 on Django. In a code graph most walks soon reach hub modules (settings,
fields), so much mass is still unpushed when the threshold stops the push; it is spread as
the global walk spreads, which on Django puts 19 of the exact top 20 files in the top 20
(benchmarks/graph_bench.py)."""

FILES_LISTED = 200
"""Files `RankResult.files` lists (every file has a score in `RankResult.scores`). A map
under any budget shows far fewer (the map's 20 % of a 32K budget holds a few dozen file
outlines), and building 3,000 result objects per request would cost ~2 ms."""

DEFINITION_FILES = 20
"""Files whose definitions `rank` scores (`rank_definitions` scores others on demand):
about what an 8K-token bundle's map shows."""

DEFINITIONS_PER_FILE = 20
"""Definitions `rank` keeps per file, best first. A focused section shows the bodies of a
few; the hub files a request ranks first define hundreds (Django's fields/__init__.py:
~400), and listing them all would cost more per request than ranking the files."""

WORKING_REFERENCE_FACTOR = 50.0
"""A definition the working files use counts as much as 50 uses from elsewhere: what the
code being edited calls is what the agent must see (Aider weighs edges from the files in
the chat by 50 for the same reason)."""

UNREFERENCED_DEFINITION_SHARE = 0.05
"""A definition nobody uses still scores 5 % of its file's score: it stays ordered by its
file instead of dropping to zero with every other unused definition."""

# ---------------------------------------------------------------------------- others

DISTANCE_MIN_WEIGHT = 1.0
"""Edges lighter than one use of a plain name (only private or common names in common)
do not count for distances."""

HUB_DEGREE = 100
"""Distances reach a file with more than 100 edges (in and out: Django's settings, model
base classes, test utilities: a fifth of its files) but do not go through it. Through hubs,
a third of Django is two hops from any file and three quarters three hops; without, two
hops reach a median of 14 files, which is what "near the working files" should mean."""

MAX_CALLEE_DEFINERS = 3
"""A call that neither its file nor the files it imports define is matched against every
definition of the name only if there are at most three: beyond that it is a guess."""

PYTHON = "python"


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class Definition:
    """A name a file offers other files: a top-level function, class or constant, a
    method, or a class nested in a class (functions nested in functions are private to
    their parent and left out)."""

    qualname: str
    name: str
    kind: str  # "class" | "function" | "method" | "constant"
    line: int


@dataclass(frozen=True, slots=True, eq=False)
class FileFacts:
    """What the graph takes from one indexed file (`facts_for`). The outline's own tuples
    are shared, not copied: the index keeps the outline alive anyway.

    `imports` holds the raw statements: what they resolve to depends on which other files
    exist, so they are resolved again when those come or go.
    """

    abs_path: str
    path: str
    root: str
    modules: tuple[str, ...]  # dotted names other files may import it as
    package: str  # dotted package its relative imports start from
    defines: frozenset[str]  # names of its `Definition`s
    called: frozenset[str]  # simple names its symbols call
    references: tuple[tuple[str, int], ...]  # (name, uses in the file), from the outline
    imports: tuple[tuple[str, tuple[str, ...], bool], ...]  # (module, names, is a `from` import)
    outline: Outline


@dataclass(frozen=True, slots=True)
class FileRank:
    abs_path: str
    path: str
    score: float  # in [0, 1]


@dataclass(frozen=True, slots=True)
class DefinitionRank:
    abs_path: str
    path: str
    qualname: str
    name: str
    kind: str
    line: int
    score: float  # in [0, 1], at most its file's score
    mentioned: bool = False  # its name is one the request mentioned


@dataclass(frozen=True, slots=True, eq=False)
class RankResult:
    """Files and definitions ranked for one request, best first (ties by path, then line).

    Scores are normalised so that the best file that is not a working file scores 1;
    working files score 1 too (they are what the request is about). `mentioned_in` says
    which mentioned names made a file a seed, for the reason shown to the user.
    """

    files: tuple[FileRank, ...]  # the best `limit` files
    scores: Mapping[str, float]  # abs_path -> score, for every file of the graph
    definitions: tuple[DefinitionRank, ...]  # of the best `definition_files` files
    working: Mapping[str, float]  # working files of the graph -> weight (summing to 1)
    mentioned_in: Mapping[str, tuple[str, ...]]  # abs_path -> mentioned names it defines

    def score(self, abs_path: str) -> float:
        return self.scores.get(abs_path, 0.0)


@dataclass(frozen=True, slots=True)
class GraphSnapshot:
    """The graph's derived state as sorted tuples: graphs over the same files are equal
    exactly when their snapshots are (the tests compare incremental and rebuilt graphs)."""

    files: tuple[str, ...]
    edges: tuple[tuple[str, str, int], ...]  # (from, to, weight units)
    definers: tuple[tuple[str, tuple[str, ...]], ...]  # name -> files defining it
    imports: tuple[tuple[str, tuple[str, ...]], ...]  # file -> files its imports resolve to


# ---------------------------------------------------------------------------- pure parts


def name_factor(name: str, definers: int) -> float:
    """How much one use of `name` counts, given how many files define it (0: no edges)."""
    if definers <= 0 or definers > MAX_DEFINERS:
        return 0.0
    factor = 1.0
    core = name.lstrip("_")
    if (
        len(core) >= SPECIFIC_NAME_MIN_CHARS
        and not name.startswith("__")
        and ("_" in core or (core != core.lower() and core != core.upper()))
    ):
        factor *= SPECIFIC_NAME_FACTOR
    if name.startswith("_"):
        factor *= PRIVATE_NAME_FACTOR
    if definers > COMMON_NAME_DEFINERS:
        factor *= COMMON_NAME_FACTOR
    return factor


_TABLE_SIZE = 256
_SQRT = [math.sqrt(n) for n in range(_TABLE_SIZE)]
_SQRT_UNITS = [round(math.sqrt(n) * WEIGHT_UNITS) for n in range(_TABLE_SIZE)]
IMPORT_UNITS = round(IMPORT_EDGE_WEIGHT * WEIGHT_UNITS)


def reference_units(count: int, factor: float) -> int:
    """Weight units of `count` uses of a name: the square root damps repetition."""
    if count <= 0 or factor <= 0.0:
        return 0
    root = _SQRT[count] if count < _TABLE_SIZE else math.sqrt(count)
    return round(root * factor * WEIGHT_UNITS)


def _sqrt_units(count: int) -> int:
    return _SQRT_UNITS[count] if count < _TABLE_SIZE else round(math.sqrt(count) * WEIGHT_UNITS)


def module_names(rel_path: str) -> tuple[tuple[str, ...], str]:
    """(dotted names a file may be imported as, package its relative imports start from).

    `pkg/mod.py` is `pkg.mod` and `pkg/__init__.py` is `pkg`; under `src/` the name
    without `src.` works too, as the src layout installs it.
    """
    stem, dot, suffix = rel_path.rpartition(".")
    parts = (stem if dot and suffix in ("py", "pyi") else rel_path).split("/")
    is_init = parts[-1] == "__init__"
    if is_init:
        parts = parts[:-1]
    package = ".".join(parts if is_init else parts[:-1])
    if not parts:
        return (), package
    names = [".".join(parts)]
    if parts[0] == "src" and len(parts) > 1:
        names.append(".".join(parts[1:]))
    return tuple(names), package


def resolve_relative(module: str, package: str) -> str | None:
    """Absolute dotted name of `module` imported from `package`; None if it climbs out."""
    level = len(module) - len(module.lstrip("."))
    if level == 0:
        return module
    base = package.split(".") if package else []
    up = level - 1
    if up > len(base):
        return None
    base = base[: len(base) - up]
    rest = module[level:]
    return ".".join([*base, *rest.split(".")]) if rest else ".".join(base)


def import_probes(module: str, names: tuple[str, ...], is_from: bool, package: str) -> list[tuple[str, ...]]:
    """For each thing an import statement refers to, the module names to try, best first.

    `from a.b import c` refers to module `a.b.c` if there is one, else to `a.b` (c is a
    name in it); `import a.b.c` refers to the longest of `a.b.c`, `a.b`, `a` that exists.
    """
    absolute = resolve_relative(module, package)
    if not absolute or absolute == "__future__":
        return []
    parts = absolute.split(".")
    prefixes = tuple(".".join(parts[:i]) for i in range(len(parts), 0, -1))
    if not is_from:
        return [prefixes]
    probes = [(f"{absolute}.{name}", *prefixes) for name in names if name != "*"]
    return probes or [prefixes]


def _definition_rows(outline: Outline) -> Iterator[tuple[str, str, str, int]]:
    """(qualname, name, kind, line) of each `Definition` of an outline."""
    classes: set[str] = set()
    for sym in outline.symbols:
        if sym.kind == "class":
            classes.add(sym.qualname)
        if sym.depth == 0 or sym.parent in classes:
            yield sym.qualname, sym.name, sym.kind, sym.start_line
    for const in outline.constants:
        yield const.name, const.name, "constant", const.line


def definitions_of(outline: Outline) -> tuple[Definition, ...]:
    return tuple(Definition(*row) for row in _definition_rows(outline))


def facts_for(entry: IndexedFile) -> FileFacts | None:
    """The graph's view of one indexed file; None for anything but Python."""
    if entry.language != PYTHON:
        return None
    outline = entry.outline
    modules, package = module_names(entry.rel_path)
    return FileFacts(
        abs_path=entry.abs_path,
        path=entry.path,
        root=entry.root,
        modules=modules,
        package=package,
        defines=frozenset(row[1] for row in _definition_rows(outline)),
        called=frozenset(name for sym in outline.symbols for name in sym.calls),
        references=outline.references,
        imports=tuple(
            (imp.module, imp.names, not imp.text.startswith("import"))
            for imp in outline.imports
            if imp.module
        ),
        outline=outline,
    )


@dataclass(frozen=True, slots=True)
class _Symbols:
    """One file's symbols indexed for call matching; built on first use, per file."""

    definitions: tuple[Definition, ...]
    by_name: Mapping[str, tuple[str, ...]]  # any symbol, at any depth: name -> qualnames
    calls: Mapping[str, tuple[str, ...]]  # qualname -> names it calls
    lines: Mapping[str, int]  # qualname -> first line


def _symbols_of(outline: Outline) -> _Symbols:
    by_name: dict[str, tuple[str, ...]] = {}
    calls: dict[str, tuple[str, ...]] = {}
    lines: dict[str, int] = {}
    for sym in outline.symbols:
        lines.setdefault(sym.qualname, sym.start_line)
        known = by_name.get(sym.name, ())
        if sym.qualname not in known:
            by_name[sym.name] = (*known, sym.qualname)
        if sym.calls:
            merged = calls.get(sym.qualname)  # a name defined twice (if/else) calls both sets
            calls[sym.qualname] = sym.calls if merged is None else tuple(sorted({*merged, *sym.calls}))
    return _Symbols(definitions_of(outline), by_name, calls, lines)


Row = tuple[tuple[int, ...], tuple[float, ...]]
"""A file's out-edges as the walk sees them: target node ids (in path order) and
probabilities. The walk is the hot loop of every request, and on ids and lists it runs in
about 60 % of the time it takes on paths and dicts (measured on Django)."""

_NO_ROW: Row = ((), ())


def push(
    rows: Sequence[Row],
    p: list[float],
    r: list[float],
    start: Iterable[int],
    threshold: float,
    per_edge: bool,
) -> int:
    """Forward push from the nodes `start` until no residual exceeds the threshold;
    returns the edge visits (the work done).

    Invariant, kept by every push: p + PageRank(r) is the PageRank of the jump vector the
    residuals started as. Pushing u moves (1 - DAMPING) of its residual into p[u] and
    spreads the rest along its edges. A node without edges keeps its share and loses the
    rest (a "leaky" walk: normalised, it is PageRank whose dead ends jump as the walk
    does). With `per_edge` the threshold scales with the out-degree (Andersen-Chung-Lang),
    which bounds the work however the mass spreads. Negative residuals (corrections after
    an edit) are pushed like positive ones. Order is first in, first out, so results do
    not depend on how ids were assigned, only on the rows.
    """
    keep = 1.0 - DAMPING
    queued = bytearray(len(rows))
    todo: deque[int] = deque()
    for u in start:
        if not queued[u]:
            queued[u] = 1
            todo.append(u)
    visits = 0
    while todo:
        u = todo.popleft()
        queued[u] = 0
        ru = r[u]
        targets, probs = rows[u]
        if abs(ru) <= (threshold * len(targets) if per_edge and targets else threshold):
            continue
        r[u] = 0.0
        p[u] += keep * ru
        spread = DAMPING * ru
        visits += len(targets)
        for v, q in zip(targets, probs):
            r[v] += spread * q
            if not queued[v]:  # tested against the threshold when it comes out
                queued[v] = 1
                todo.append(v)
    return visits


def _discard(index: dict, key: object, value: object) -> None:
    bucket = index.get(key)
    if bucket is not None:
        bucket.discard(value)
        if not bucket:
            del index[key]


def _stem(facts: FileFacts) -> str:
    """Last part of a file's module name (`expressions`; the package for `__init__`)."""
    return facts.modules[0].rpartition(".")[2] if facts.modules else ""


# ---------------------------------------------------------------------------- the graph


class ReferenceGraph:
    """Files, definitions, uses and imports of a workspace, kept current with its index.

    `update` only queues (it runs on the indexing thread, which must stay fast); every
    query first applies the queue (`catch_up`). One lock guards the state, so queries from
    worker threads and updates from the watcher interleave safely. (A second, tiny lock
    guards the queue alone, so `update` never waits for a query.)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changes = ChangeQueue()
        self._facts: dict[str, FileFacts] = {}
        # names: files defining them, files using them (with counts), and what a use weighs
        self._definers: dict[str, tuple[str, ...]] = {}  # tuples: most names have one definer
        self._users: dict[str, dict[str, int]] = {}
        self._use_units: dict[str, int] = {}  # name -> sqrt units of its uses, summed over users
        self._factors: dict[str, float] = {}  # name -> name_factor, where not 0
        # weighted edges in both directions, in integer units, and changes not yet applied
        self._out: dict[str, dict[str, int]] = {}
        self._in: dict[str, dict[str, int]] = {}
        self._deltas: dict[str, dict[str, int]] = {}
        # imports: module name -> files; file -> names it tried / files they resolved to
        self._modules: dict[str, set[str]] = {}
        self._probers: dict[str, set[str]] = {}
        self._probes: dict[str, frozenset[str]] = {}
        self._import_targets: dict[str, frozenset[str]] = {}
        self._stems: dict[str, set[str]] = {}  # module basename -> files (for mentions)
        # per-file caches, dropped when the file (or a name it defines) changes
        self._symbols: dict[str, _Symbols] = {}
        self._def_weights: dict[str, tuple[tuple[str, ...], tuple[float, ...], tuple[float, ...]]] = {}
        # the walk: node ids (list positions), rows as the global state last saw them,
        # the global push state, files whose rows changed since
        self._ids: dict[str, int] = {}
        self._paths: list[str] = []  # id -> abs_path; "" for a free id
        self._free_ids: list[int] = []
        self._rows: list[Row] = []
        self._global_p: list[float] | None = None
        self._global_r: list[float] = []
        self._order: list[int] = []  # ids of all files, by display path
        self._stale_rows: set[str] = set()
        self._nodes_changed = False
        self.global_visits = 0
        """Edge visits of the last global refresh (for benchmarks and tests)."""

    # ------------------------------------------------------------------ queue
    def update(self, removed: Sequence[str], updated: Sequence[IndexedFile]) -> None:
        """Queue index changes (a workspace listener); the next query applies them.

        Queuing keeps a full index pass cheap: the graph of thousands of files is built
        once, when first needed, not on the thread that reports the index ready.
        """
        self._changes.add(removed, updated)

    def catch_up(self) -> None:
        pending = self._changes.drain()
        if not pending:
            return
        with self._lock:
            if not self._facts:
                self._build({p: f for p, e in pending.items() if e is not None and (f := facts_for(e))})
                return
            dirty: set[str] = set()
            for abs_path, entry in pending.items():
                new = facts_for(entry) if entry is not None else None
                old = self._facts.get(abs_path)
                if old is not None or new is not None:
                    self._apply(abs_path, old, new, dirty)
            for importer in sorted(dirty):
                self._resolve_imports(importer)
            self._flush()

    def warm_up(self) -> None:
        """Build the graph and its global rank now (~0.5 s + ~0.3 s for Django), rather
        than in the first request after a full index pass."""
        self.catch_up()
        with self._lock:
            if self._facts:
                self._refresh_global()

    def __len__(self) -> int:
        self.catch_up()
        return len(self._facts)

    def __contains__(self, abs_path: object) -> bool:
        self.catch_up()
        return abs_path in self._facts

    # ------------------------------------------------------------------ building
    def _build(self, facts: Mapping[str, FileFacts]) -> None:
        """The first full pass, name by name: the state adding the files one at a time
        would reach, without re-weighing a name's edges each time its definers grow."""
        self._facts = dict(facts)
        definers, users, use_units = self._definers, self._users, self._use_units
        for f, ff in self._facts.items():
            for name in ff.defines:
                definers[name] = (*definers.get(name, ()), f)
            for name, count in ff.references:
                users.setdefault(name, {})[f] = count
                use_units[name] = use_units.get(name, 0) + _sqrt_units(count)
            for key in ff.modules:
                self._modules.setdefault(key, set()).add(f)
            self._stems.setdefault(_stem(ff), set()).add(f)
        self._factors = {n: k for n, fs in definers.items() if (k := name_factor(n, len(fs)))}
        factors = self._factors
        for f, ff in self._facts.items():
            row = self._delta_row(f)
            for name, count in ff.references:
                factor = factors.get(name)
                if factor:
                    units = reference_units(count, factor)
                    for definer in definers[name]:
                        row[definer] = row.get(definer, 0) + units
        for f in sorted(self._facts):
            self._resolve_imports(f)
        self._flush()
        self._nodes_changed = True

    # ------------------------------------------------------------------ applying a change
    def _apply(self, f: str, old: FileFacts | None, new: FileFacts | None, dirty: set[str]) -> None:
        """Replace one file's contributions: O(its uses x definers + its definitions x
        users). Edge changes collect in `_deltas` until `_flush`."""
        self._symbols.pop(f, None)
        self._def_weights.pop(f, None)
        old_defs = old.defines if old else frozenset()
        new_defs = new.defines if new else frozenset()
        for name in old_defs - new_defs:  # integer sums: any order gives the same edges
            self._change_definer(name, f, add=False)
        for name in new_defs - old_defs:
            self._change_definer(name, f, add=True)
        if old is None or new is None or old.references != new.references:
            self._change_uses(f, dict(old.references) if old else {}, dict(new.references) if new else {})

        old_modules = old.modules if old else ()
        new_modules = new.modules if new else ()
        if old_modules != new_modules:
            for key in old_modules:
                _discard(self._modules, key, f)
                dirty.update(self._probers.get(key, ()))
            for key in new_modules:
                self._modules.setdefault(key, set()).add(f)
                dirty.update(self._probers.get(key, ()))
        if old is not None:
            _discard(self._stems, _stem(old), f)
        if new is not None:
            self._stems.setdefault(_stem(new), set()).add(f)

        if new is None:
            del self._facts[f]
            self._set_import_targets(f, frozenset())
            for key in self._probes.pop(f, frozenset()):
                _discard(self._probers, key, f)
            dirty.discard(f)
            self._nodes_changed = True
            return
        self._facts[f] = new
        if old is None:
            self._nodes_changed = True
        if old is None or old.imports != new.imports or old.package != new.package:
            dirty.add(f)

    def _delta_row(self, a: str) -> dict[str, int]:
        row = self._deltas.get(a)
        if row is None:
            row = self._deltas[a] = {}
        return row

    def _flush(self) -> None:
        """Apply the collected edge changes; files whose edges changed get new rows."""
        out_all, in_all = self._out, self._in
        for a, changes in self._deltas.items():
            out = out_all.get(a)
            if out is None:
                out = out_all[a] = {}
            changed = False
            for b, delta in changes.items():
                if not delta or a == b:
                    continue
                changed = True
                weight = out.get(b, 0) + delta
                incoming = in_all.get(b)
                if incoming is None:
                    incoming = in_all[b] = {}
                if weight:
                    out[b] = weight
                    incoming[a] = weight
                else:
                    del out[b]
                    del incoming[a]
                    if not incoming:
                        del in_all[b]
            if not out:
                del out_all[a]
            if changed:
                self._stale_rows.add(a)
        self._deltas.clear()

    def _name_edges(self, name: str, definers: Sequence[str], factor: float, sign: int) -> None:
        """Add (sign 1) or take out (-1) the edges from every user of `name` to `definers`."""
        if factor <= 0.0:
            return
        for user, count in self._users.get(name, {}).items():
            units = sign * reference_units(count, factor)
            row = self._delta_row(user)
            for definer in definers:
                row[definer] = row.get(definer, 0) + units

    def _change_definer(self, name: str, f: str, add: bool) -> None:
        definers = self._definers.get(name, ())
        changed = (*definers, f) if add else tuple(d for d in definers if d != f)
        before = self._factors.get(name, 0.0)
        after = name_factor(name, len(changed))
        if before == after:
            # Only f's own edges change: every user of the name gains or loses f.
            self._name_edges(name, (f,), after, 1 if add else -1)
        else:
            # Every edge of the name is re-weighed: take them all out, put them back.
            self._name_edges(name, definers, before, -1)
            self._name_edges(name, changed, after, 1)
        if after:
            self._factors[name] = after
        else:
            self._factors.pop(name, None)
        if changed:
            self._definers[name] = changed
        else:
            del self._definers[name]
        for definer in changed:
            self._def_weights.pop(definer, None)

    def _change_uses(self, f: str, old: Mapping[str, int], new: Mapping[str, int]) -> None:
        """Set f's use counts from `old` to `new`; its edges to each name's definers follow."""
        row = self._delta_row(f)
        users_all, use_units, definers_all, factors = self._users, self._use_units, self._definers, self._factors
        cached = self._def_weights
        for name in old.keys() | new.keys():
            before = old.get(name, 0)
            after = new.get(name, 0)
            if before == after:
                continue
            factor = factors.get(name)
            if factor:
                delta = reference_units(after, factor) - reference_units(before, factor)
                for definer in definers_all[name]:
                    row[definer] = row.get(definer, 0) + delta
            if cached and name in definers_all:
                for definer in definers_all[name]:
                    cached.pop(definer, None)
            use_units[name] = use_units.get(name, 0) + _sqrt_units(after) - _sqrt_units(before)
            users = users_all.get(name)
            if users is None:
                users = users_all[name] = {}
            if after:
                users[f] = after
            else:
                del users[f]
                if not users:
                    del users_all[name]
                    del use_units[name]

    def _resolve_imports(self, f: str) -> None:
        """Resolve f's imports against the files there are now; prefer its own folder."""
        facts = self._facts.get(f)
        if facts is None:
            return
        probed: set[str] = set()
        targets: set[str] = set()
        for module, names, is_from in facts.imports:
            for candidates in import_probes(module, names, is_from, facts.package):
                for key in candidates:
                    probed.add(key)
                    found = self._modules.get(key)
                    if found:
                        same_root = [g for g in found if self._facts[g].root == facts.root]
                        targets.update(same_root or found)
                        break
        targets.discard(f)
        new_probes = frozenset(probed)
        old_probes = self._probes.get(f, frozenset())
        for key in old_probes - new_probes:
            _discard(self._probers, key, f)
        for key in new_probes - old_probes:
            self._probers.setdefault(key, set()).add(f)
        if new_probes:
            self._probes[f] = new_probes
        else:
            self._probes.pop(f, None)
        self._set_import_targets(f, frozenset(targets))

    def _set_import_targets(self, f: str, targets: frozenset[str]) -> None:
        old = self._import_targets.get(f, frozenset())
        if old == targets:
            return
        row = self._delta_row(f)
        for target in old - targets:
            row[target] = row.get(target, 0) - IMPORT_UNITS
        for target in targets - old:
            row[target] = row.get(target, 0) + IMPORT_UNITS
        if targets:
            self._import_targets[f] = targets
        else:
            self._import_targets.pop(f, None)

    # ------------------------------------------------------------------ global rank
    def _row(self, f: str) -> Row:
        out = self._out.get(f)
        if not out:
            return _NO_ROW
        targets = sorted(out)
        total = sum(out.values())
        return tuple(self._ids[t] for t in targets), tuple(out[t] / total for t in targets)

    def _new_id(self, f: str) -> int:
        if self._free_ids:
            i = self._free_ids.pop()
            self._paths[i] = f
        else:
            i = len(self._paths)
            self._paths.append(f)
            self._rows.append(_NO_ROW)
            assert self._global_p is not None
            self._global_p.append(0.0)
            self._global_r.append(0.0)
        self._ids[f] = i
        return i

    def _refresh_global(self) -> None:
        """Bring the walk's rows and the global PageRank in line with the edges.

        A file whose row changed had already sent DAMPING / (1 - DAMPING) x p of mass
        along its old edges; its old targets give that back and its new ones receive it,
        and only that residual is pushed (Zhang-Lofgren-Goel). New files bring their own
        jump mass; removed files have no edges left, so what reached them goes nowhere.
        """
        if self._global_p is None:
            paths = sorted(self._facts)
            self._ids = {f: i for i, f in enumerate(paths)}
            self._paths = paths
            self._rows = [self._row(f) for f in paths]
            self._order = sorted(range(len(paths)), key=lambda i: self._facts[paths[i]].path)
            self._global_p = [0.0] * len(paths)
            self._global_r = [1.0] * len(paths)
            self._stale_rows.clear()
            self._nodes_changed = False
            self.global_visits = push(
                self._rows, self._global_p, self._global_r, self._order, GLOBAL_TOLERANCE, False
            )
            return
        if not (self._stale_rows or self._nodes_changed):
            self.global_visits = 0
            return
        p, r, rows, ids = self._global_p, self._global_r, self._rows, self._ids
        added: list[int] = []
        removed: list[str] = []
        if self._nodes_changed:
            added = [self._new_id(f) for f in sorted(self._facts) if f not in ids]
            removed = sorted(f for f in ids if f not in self._facts)
        for i in added:
            r[i] += 1.0
        touched: set[int] = set(added)
        sent_per_p = DAMPING / (1.0 - DAMPING)
        for f in sorted(self._stale_rows.union(removed)):
            row_id = ids.get(f)
            if row_id is None:  # came and went between two refreshes
                continue
            old_targets, old_probs = rows[row_id]
            new = self._row(f) if f in self._facts else _NO_ROW
            sent = sent_per_p * p[row_id]
            if sent:
                for v, q in zip(old_targets, old_probs):
                    r[v] -= sent * q
                for v, q in zip(*new):
                    r[v] += sent * q
                touched.update(old_targets)
                touched.update(new[0])
            rows[row_id] = new
        for f in removed:
            i = ids.pop(f)
            p[i] = r[i] = 0.0
            self._paths[i] = ""
            self._free_ids.append(i)
            touched.discard(i)
        if self._nodes_changed:
            self._order = sorted(ids.values(), key=lambda i: self._facts[self._paths[i]].path)
        self._stale_rows.clear()
        self._nodes_changed = False
        start = sorted(touched, key=self._paths.__getitem__)
        self.global_visits = push(rows, p, r, start, GLOBAL_TOLERANCE, False)

    # ------------------------------------------------------------------ personal rank
    def seeds(self, personal: Mapping[str, float], mentioned: Collection[str] = ()) -> dict[str, float]:
        """Where the personal jumps of a request go (abs_path -> share, summing to 1)."""
        self.catch_up()
        with self._lock:
            return self._seeds(personal, mentioned)[0]

    def _seeds(
        self, personal: Mapping[str, float], mentioned: Collection[str]
    ) -> tuple[dict[str, float], dict[str, float], dict[str, tuple[str, ...]]]:
        """(where the personal jumps go, the working files, mentioned names per seeded
        file); both weightings sum to 1.

        A mentioned name seeds the files defining it and the modules named so
        (`expressions` -> `expressions.py`), sharing one name's weight among them.
        """
        working = {f: float(w) for f, w in sorted(personal.items()) if f in self._facts and w > 0}
        total = sum(working.values())
        working = {f: w / total for f, w in working.items()}
        mention: dict[str, float] = {}
        mentioned_in: dict[str, list[str]] = {}
        for name in sorted({part for ident in mentioned for part in ident.split(".") if part}):
            files = sorted({*self._definers.get(name, ()), *self._stems.get(name, ())})
            if not files or len(files) > MAX_DEFINERS:
                continue
            for f in files:
                mention[f] = mention.get(f, 0.0) + 1.0 / len(files)
                mentioned_in.setdefault(f, []).append(name)
        share = MENTIONED_SHARE if working and mention else (1.0 if mention else 0.0)
        total = sum(mention.values())
        jump = {f: (1.0 - share) * w for f, w in working.items()}
        for f, w in mention.items():
            jump[f] = jump.get(f, 0.0) + share * w / total
        return dict(sorted(jump.items())), working, {f: tuple(ns) for f, ns in mentioned_in.items()}

    def rank(
        self,
        personal: Mapping[str, float] | None = None,
        mentioned: Collection[str] = (),
        *,
        limit: int = FILES_LISTED,
        definition_files: int = DEFINITION_FILES,
    ) -> RankResult:
        """Rank every file for a request. `personal` maps working files (abs paths) to
        weights; `mentioned` holds identifiers from the task text."""
        self.catch_up()
        personal = personal or {}
        with self._lock:
            if not self._facts:
                return RankResult((), {}, (), {}, {})
            self._refresh_global()
            assert self._global_p is not None
            jump, working, mentioned_in = self._seeds(personal, mentioned)
            n = len(self._facts)
            size = len(self._paths)
            if jump:
                p = [0.0] * size
                r = [0.0] * size
                for f, w in jump.items():
                    r[self._ids[f]] = w
                push(self._rows, p, r, [self._ids[f] for f in jump], PERSONAL_TOLERANCE, True)
                # What the push left unspread keeps its own share where it is and spreads
                # the rest the way the global walk does, rather than being dropped.
                unspread = DAMPING * sum(r)
                weight = (1.0 - PERSONAL_SHARE + PERSONAL_SHARE * unspread) / n
                final = [g * weight for g in self._global_p]
                keep = PERSONAL_SHARE * (1.0 - DAMPING)
                for i in range(size):
                    if p[i] or r[i]:
                        final[i] += PERSONAL_SHARE * p[i] + keep * r[i]
            else:
                weight = 1.0 / n
                final = [g * weight for g in self._global_p]
            working_ids = [self._ids[f] for f in working]
            for i in working_ids:
                final[i] = 0.0  # working files score 1 whatever; the best other file sets the scale
            top = max(final)
            # x / top is exactly 1 for the best file; working files were zeroed above.
            norm = [x / top for x in final] if top > 0.0 else [0.0] * size
            for i in working_ids:
                norm[i] = 1.0
            paths = self._paths
            scores = {paths[i]: norm[i] for i in self._order}
            # A stable sort of the ids in path order breaks ties by path.
            best = sorted(self._order, key=norm.__getitem__, reverse=True)[: max(limit, 0)]
            result = RankResult(
                files=tuple(FileRank(paths[i], self._facts[paths[i]].path, norm[i]) for i in best),
                scores=scores,
                definitions=(),
                working=working,
                mentioned_in=mentioned_in,
            )
            if definition_files > 0:
                chosen = [paths[i] for i in best[:definition_files]]
                definitions = self._rank_definitions(result, chosen, DEFINITIONS_PER_FILE)
                result = replace(result, definitions=definitions)
            return result

    # ------------------------------------------------------------------ definitions
    def rank_definitions(
        self, result: RankResult, abs_paths: Iterable[str], per_file: int | None = None
    ) -> tuple[DefinitionRank, ...]:
        """The definitions of the given files (all of them, or the best `per_file` of
        each), scored for the request `result` answers, best first."""
        self.catch_up()
        with self._lock:
            return self._rank_definitions(result, [f for f in abs_paths if f in self._facts], per_file)

    def _file_symbols(self, f: str) -> _Symbols:
        symbols = self._symbols.get(f)
        if symbols is None:
            symbols = self._symbols[f] = _symbols_of(self._facts[f].outline)
        return symbols

    def _definition_weights(self, f: str) -> tuple[tuple[str, ...], tuple[float, ...], tuple[float, ...]]:
        """(name, name factor, weight of the uses by other files) of each definition of f;
        cached until the file or the uses or definers of one of its names change."""
        cached = self._def_weights.get(f)
        if cached is None:
            names = tuple(d.name for d in self._file_symbols(f).definitions)
            factors = []
            static = []
            for name in names:
                factor = name_factor(name, min(len(self._definers.get(name, ())), MAX_DEFINERS))
                own = self._users.get(name, {}).get(f, 0)
                factors.append(factor)
                static.append(factor * max(self._use_units.get(name, 0) - _sqrt_units(own), 0))
            cached = self._def_weights[f] = (names, tuple(factors), tuple(static))
        return cached

    def _rank_definitions(
        self, result: RankResult, abs_paths: Sequence[str], per_file: int | None
    ) -> tuple[DefinitionRank, ...]:
        """Share each file's score among its definitions by how much they are used (by the
        working files above all): the best-used one gets the file's whole score. A
        definition the task mentions gets it too and comes first: it is what the task is
        about, used or not."""
        working_uses: dict[str, float] = {}
        for f, w in result.working.items():
            if f in self._facts:
                for name, count in self._facts[f].references:
                    working_uses[name] = working_uses.get(name, 0.0) + w * _sqrt_units(count)
        mentioned = {name for names in result.mentioned_in.values() for name in names}
        floor = UNREFERENCED_DEFINITION_SHARE
        ranked: list[DefinitionRank] = []
        for f in abs_paths:
            definitions = self._file_symbols(f).definitions
            names, factors, static = self._definition_weights(f)
            weights: Sequence[float] = static
            if working_uses and f not in result.working:
                boosts = list(map(working_uses.get, names))
                if any(boosts):
                    weights = [
                        s + WORKING_REFERENCE_FACTOR * k * u if u else s for s, k, u in zip(static, factors, boosts)
                    ]
            best = max(weights, default=0.0)
            scale = (1.0 - floor) / best if best > 0.0 else 0.0
            named = [i for i, name in enumerate(names) if name in mentioned] if mentioned else []
            chosen: Sequence[int] = range(len(names))
            if per_file is not None and per_file < len(names):
                # stable, so equal weights keep source order; mentioned names go first
                by_weight = sorted(chosen, key=weights.__getitem__, reverse=True)
                chosen = (named + [i for i in by_weight if i not in named] if named else by_weight)[:per_file]
            score = result.scores.get(f, 0.0)
            path = self._facts[f].path
            for i in chosen:
                d = definitions[i]
                if named and i in named:
                    ranked.append(DefinitionRank(f, path, d.qualname, d.name, d.kind, d.line, score, True))
                else:
                    share = floor + weights[i] * scale
                    ranked.append(DefinitionRank(f, path, d.qualname, d.name, d.kind, d.line, score * share))
        ranked.sort(key=lambda d: (-d.score, d.path, not d.mentioned, d.line, d.qualname))
        return tuple(ranked)

    # ------------------------------------------------------------------ distances
    def distances(
        self,
        from_paths: Collection[str],
        max_hops: int = 3,
        *,
        min_weight: float = DISTANCE_MIN_WEIGHT,
        hub_degree: int = HUB_DEGREE,
    ) -> dict[str, int]:
        """Hops from the nearest of `from_paths` along edges in either direction, up to
        `max_hops`, not going on through hubs (see HUB_DEGREE); files further away (or
        outside the graph) are absent."""
        self.catch_up()
        floor = round(min_weight * WEIGHT_UNITS)
        with self._lock:
            seen = {f: 0 for f in sorted(from_paths) if f in self._facts}
            frontier = list(seen)
            for hop in range(1, max_hops + 1):
                reached: list[str] = []
                for u in frontier:
                    out, incoming = self._out.get(u, {}), self._in.get(u, {})
                    if hop > 1 and len(out) + len(incoming) > hub_degree:
                        continue
                    for edges in (out, incoming):
                        for v, w in edges.items():
                            if w >= floor and v not in seen:
                                seen[v] = hop
                                reached.append(v)
                if not reached:
                    break
                frontier = reached
            return seen

    # ------------------------------------------------------------------ calls
    def _defined_as(self, f: str, name: str) -> list[str]:
        if name not in self._facts[f].defines:
            return []
        return [d.qualname for d in self._file_symbols(f).definitions if d.name == name]

    def _resolve_call(self, f: str, name: str) -> list[tuple[str, str]]:
        """Symbols a call of `name` in file f may reach: its own file's; else those of the
        files it imports (then the files those import: re-exports); else the definitions
        of the name anywhere, if there are at most MAX_CALLEE_DEFINERS of them."""
        own = self._file_symbols(f).by_name.get(name)
        if own:
            return [(f, q) for q in own]
        seen = {f}
        layer = sorted(self._import_targets.get(f, ()))
        for _ in range(2):
            found = [(g, q) for g in layer for q in self._defined_as(g, name)]
            if found:
                return found
            seen.update(layer)
            layer = sorted({h for g in layer for h in self._import_targets.get(g, ()) if h not in seen})
        definers = self._definers.get(name, ())
        if len(definers) > MAX_CALLEE_DEFINERS:
            return []
        return [(g, q) for g in sorted(definers) for q in self._defined_as(g, name)]

    def callees_of(self, abs_path: str, qualname: str) -> list[tuple[str, str]]:
        """(abs_path, qualname) of the symbols the given symbol calls, by called name."""
        self.catch_up()
        with self._lock:
            if abs_path not in self._facts:
                return []
            out: list[tuple[str, str]] = []
            for name in self._file_symbols(abs_path).calls.get(qualname, ()):
                for target in self._resolve_call(abs_path, name):
                    if target != (abs_path, qualname) and target not in out:
                        out.append(target)
            return out

    def callers_of(self, name: str, abs_path: str | None = None) -> list[tuple[str, str]]:
        """(abs_path, qualname) of the symbols whose calls reach `name`, by path and line.

        `name` is a qualname (`Model.save`: files with that symbol) or a simple name (files
        defining it); `abs_path` keeps only the symbol in that file.
        """
        self.catch_up()
        simple = name.rpartition(".")[2]
        with self._lock:
            if abs_path is not None:
                candidates = [abs_path] if abs_path in self._facts else []
            else:
                candidates = sorted(self._definers.get(simple, ()))
            if "." in name:
                targets = {f for f in candidates if name in self._file_symbols(f).lines}
            else:
                targets = {f for f in candidates if simple in self._file_symbols(f).by_name}
            if not targets:
                return []
            out = [
                (f, qualname)
                for f in sorted(g for g, facts in self._facts.items() if simple in facts.called)
                if any(g in targets for g, _ in self._resolve_call(f, simple))
                for qualname, called in self._file_symbols(f).calls.items()
                if simple in called
            ]
            out.sort(key=lambda fq: (self._facts[fq[0]].path, self._file_symbols(fq[0]).lines.get(fq[1], 0), fq[1]))
            return out

    # ------------------------------------------------------------------ inspection
    def snapshot(self) -> GraphSnapshot:
        self.catch_up()
        with self._lock:
            return GraphSnapshot(
                files=tuple(sorted(self._facts)),
                edges=tuple(sorted((a, b, w) for a, out in self._out.items() for b, w in out.items())),
                definers=tuple(sorted((n, tuple(sorted(fs))) for n, fs in self._definers.items())),
                imports=tuple(sorted((f, tuple(sorted(ts))) for f, ts in self._import_targets.items())),
            )

    def edge_weight(self, a: str, b: str) -> float:
        """Weight of the edge a -> b (0 if none), in uses of one plain name."""
        self.catch_up()
        with self._lock:
            return self._out.get(a, {}).get(b, 0) / WEIGHT_UNITS

    def imports_of(self, abs_path: str) -> list[str]:
        """The files a file's imports resolve to, sorted."""
        self.catch_up()
        with self._lock:
            return sorted(self._import_targets.get(abs_path, ()))
