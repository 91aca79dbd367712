"""The graph's files and the weighted edges between them, kept current one change at a time.

File A has an edge to file B when A uses a name B defines (weighted as Aider's repo map
weighs its edges: the square root of the use count, times `name_factor`) or when A
imports B (a strong, fixed weight). Edges live in dicts and change per changed file, in
integer weight units, so any sequence of incremental updates leaves exactly the graph a
rebuild would.
"""

from __future__ import annotations

import functools
import math
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from sys import intern
from typing import NamedTuple

from ctx_lsp.code.outline import Outline
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.graph.facts import FileFacts, Symbols, Uses, config_dependents, facts_for, symbols_of
from ctx_lsp.index.graph.image import GraphImage
from ctx_lsp.index.graph.modules import ImportStatement, ModuleIndex
from ctx_lsp.relevance import (
    COMMON_NAME_DEFINERS,
    COMMON_NAME_FACTOR,
    IMPORT_EDGE_WEIGHT,
    MAX_DEFINERS,
    PRIVATE_NAME_FACTOR,
    SPECIFIC_NAME_FACTOR,
    SPECIFIC_NAME_MIN_CHARS,
)

__all__ = [
    "ChangeTables",
    "DefinitionWeights",
    "Edges",
    "GraphSnapshot",
    "RowChanges",
    "name_factor",
    "reference_units",
]

WEIGHT_UNITS = 1000
"""Edge weights are stored as integers in thousandths. Integer sums are exact, so adding a
file's contribution and later subtracting it leaves no rounding residue: an incrementally
maintained graph equals a rebuilt one, bit for bit."""

_TABLE_SIZE = 256
_SQRT = [math.sqrt(n) for n in range(_TABLE_SIZE)]
_SQRT_UNITS = [round(math.sqrt(n) * WEIGHT_UNITS) for n in range(_TABLE_SIZE)]
IMPORT_UNITS = round(IMPORT_EDGE_WEIGHT * WEIGHT_UNITS)


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


def reference_units(count: int, factor: float) -> int:
    """Weight units of `count` uses of a name: the square root damps repetition."""
    if count <= 0 or factor <= 0.0:
        return 0
    root = _SQRT[count] if count < _TABLE_SIZE else math.sqrt(count)
    return round(root * factor * WEIGHT_UNITS)


def sqrt_units(count: int) -> int:
    """Weight units of `count` uses of a plain name (factor 1)."""
    return _SQRT_UNITS[count] if count < _TABLE_SIZE else round(math.sqrt(count) * WEIGHT_UNITS)


_IMAGE_COLUMNS = tuple(f.name for f in fields(GraphImage) if f.name not in ("files", "hashes", "paths", "names"))
_NO_OUTLINE = Outline("text", "", (), (), (), (), 0, False)
"""The outline of a restored file that is gone: replaced (with its facts) before anyone reads it."""


def facts_of(pending: Mapping[str, IndexedFile | None]) -> dict[str, FileFacts | None]:
    """The graph's facts of each changed file (None for one removed, or not code)."""
    return {p: facts_for(e) if e is not None else None for p, e in pending.items()}


def _start(ends: array, i: int) -> int:
    return ends[i - 1] if i else 0


def _cut(ends: array, column: array, i: int, strings: Sequence[str]) -> tuple[str, ...]:
    """File i's slice of `column`, as the strings its ids name."""
    return tuple(map(strings.__getitem__, column[_start(ends, i) : ends[i]]))


def _stored_uses(image: GraphImage, names: Sequence[str], i: int) -> Uses:
    """File i's (used, uses, imports) as the image holds them (see `FileFacts.source`)."""
    start, end = _start(image.import_ends, i), image.import_ends[i]
    flat = image.imports[start:end].tolist()
    statements: list[ImportStatement] = []
    at = 0
    while at < len(flat):
        n = flat[at + 2]
        imported = tuple(map(names.__getitem__, flat[at + 3 : at + 3 + n]))
        statements.append((names[flat[at]], imported, bool(flat[at + 1])))
        at += 3 + n
    used = _cut(image.used_ends, image.used, i, names)
    return used, tuple(image.uses[_start(image.used_ends, i) : image.used_ends[i]]), tuple(statements)


@dataclass(frozen=True, slots=True)
class ChangeTables:
    """What only changing the graph needs (see `Edges._index_uses`)."""

    users: dict[str, dict[str, int]]
    factors: dict[str, float] | None  # None: the graph's own are kept (a build computed them)
    use_units: dict[str, int] | None  # None: the graph's own are kept (an image or a build supplied them)
    probes: dict[str, tuple[str, ...]]  # file -> module names its imports tried (a restore's)


def _change_tables(
    facts: Sequence[tuple[str, FileFacts]],
    definers: Mapping[str, tuple[str, ...]],
    restored: tuple[GraphImage, list[str]] | None,
    use_units: dict[str, int] | None,
    factors_known: bool,
) -> ChangeTables:
    """Pure: from a snapshot, so it can run beside requests (see `tables_for_changes`)."""
    users: dict[str, dict[str, int]] = {}
    for f, ff in facts:
        for name, count in zip(ff.used, ff.uses):
            users.setdefault(name, {})[f] = count
            if use_units is not None:
                use_units[name] = use_units.get(name, 0) + sqrt_units(count)
    probes: dict[str, tuple[str, ...]] = {}
    if restored is not None:
        image, names = restored
        probes = {f: _cut(image.probe_ends, image.probes, i, names) for i, f in enumerate(image.files)}
    factors = None if factors_known else {n: k for n, fs in definers.items() if (k := name_factor(n, len(fs)))}
    return ChangeTables(users, factors, use_units, probes)


@dataclass(frozen=True, slots=True)
class GraphSnapshot:
    """The graph's derived state as sorted tuples: graphs over the same files are equal
    exactly when their snapshots are (the tests compare incremental and rebuilt graphs)."""

    files: tuple[str, ...]
    edges: tuple[tuple[str, str, int], ...]  # (from, to, weight units)
    definers: tuple[tuple[str, tuple[str, ...]], ...]  # name -> files defining it
    imports: tuple[tuple[str, tuple[str, ...]], ...]  # file -> files its imports resolve to


class RowChanges(NamedTuple):
    """What changed for the walk since the ranking last looked."""

    files: set[str]  # files whose out-edges changed
    nodes_changed: bool  # files came or went


class DefinitionWeights(NamedTuple):
    """How much other files use each definition of one file, in source order."""

    names: tuple[str, ...]
    factors: tuple[float, ...]  # name_factor of each name
    used_elsewhere: tuple[float, ...]  # factor x weight units of the uses by other files


class Edges:
    """Files, the names they define and use, their imports, and the edges all that makes.

    The ranking, definition and call modules read the public attributes; only this class
    changes them. Per-file caches (`symbols`, `definition_weights`) live here because the
    changes that make them stale happen here.
    """

    def __init__(self) -> None:
        self.facts: dict[str, FileFacts] = {}
        # names: files defining them, files using them (with counts), and what a use weighs
        self.definers: dict[str, tuple[str, ...]] = {}  # tuples: most names have one definer
        self._users: dict[str, dict[str, int]] = {}  # only once `_index_uses` ran (see there)
        self._use_units: dict[str, int] = {}  # name -> sqrt units of its uses, summed over users
        self._factors: dict[str, float] = {}  # name -> name_factor, where not 0 (like `_users`)
        self.prepared = True
        """The tables only changes need (`_users`, `_factors`, the import probes) are built."""
        self._restored: tuple[GraphImage, list[str]] | None = None
        """The image this graph was restored from, until `_index_uses` has taken from it."""
        # weighted out-edges in integer units, and changes not yet applied
        self.out: dict[str, dict[str, int]] = {}
        self._deltas: dict[str, dict[str, int]] = {}
        # imports: module names and who tried them; file -> files its imports resolve to
        self.modules = ModuleIndex()
        self.import_targets: dict[str, frozenset[str]] = {}
        # per-file caches, dropped when the file (or a name it defines) changes
        self._symbols: dict[str, Symbols] = {}
        self._definition_weights: dict[str, DefinitionWeights] = {}
        # what the walk has not seen yet
        self._stale_rows: set[str] = set()
        self._nodes_changed = False

    # ------------------------------------------------------------------ applying changes
    def apply(
        self, pending: Mapping[str, IndexedFile | None], known: Mapping[str, FileFacts | None] | None = None
    ) -> None:
        """Apply index changes (an entry per added or changed file, None per removed one).
        `known` holds the changed files' facts if the caller took them already (outside
        the graph's lock: they read each outline)."""
        if known is None:
            known = facts_of(pending)
        if not self.facts:
            self._build({p: f for p, f in known.items() if f is not None})
            return
        self._index_uses()
        dirty: set[str] = set()
        for abs_path in pending:
            new = known[abs_path]
            old = self.facts.get(abs_path)
            if old is not None or new is not None:
                self._apply(abs_path, old, new, dirty)
        for abs_path, new in config_dependents(pending, self.facts).items():
            if abs_path not in pending:  # a tsconfig.json or go.mod changed: imports lead elsewhere
                self._apply(abs_path, self.facts.get(abs_path), new, dirty)
        for importer in sorted(dirty):
            self._resolve_imports(importer)
        self._flush()

    def take_row_changes(self) -> RowChanges:
        """What changed for the walk since the last call; the ranking calls this once per
        refresh and so takes responsibility for it."""
        changes = RowChanges(self._stale_rows, self._nodes_changed)
        self._stale_rows = set()
        self._nodes_changed = False
        return changes

    def _build(self, facts: Mapping[str, FileFacts]) -> None:
        """The first full pass, name by name: the state adding the files one at a time
        would reach, without re-weighing a name's edges each time its definers grow."""
        self.facts = dict(facts)
        self._index_definers()
        definers = self.definers
        factors = self._factors = {n: k for n, fs in definers.items() if (k := name_factor(n, len(fs)))}
        use_units = self._use_units = {}
        for f, ff in self.facts.items():
            row = self._delta_row(f)
            for name, count in zip(ff.used, ff.uses):
                use_units[name] = use_units.get(name, 0) + sqrt_units(count)
                factor = factors.get(name)
                if factor:
                    units = reference_units(count, factor)
                    for definer in definers[name]:
                        row[definer] = row.get(definer, 0) + units
        for f in sorted(self.facts):
            self._resolve_imports(f)
        self._flush()
        self._nodes_changed = True
        # Every name's users, which only changes need, are left to the first change or a
        # pause before it (`tables_for_changes`), as for a restored graph: a dict entry
        # per use, 93 MB of the 7,046-file kernel subset's graph.
        self.prepared = False

    def _index_definers(self) -> None:
        """The files defining every name, and module names, from the facts of an empty
        graph (what a build and a restore both start with)."""
        definers: dict[str, list[str]] = {}  # lists, then tuples: a name defined in 3,000 files
        for f, ff in self.facts.items():
            for name in ff.defines:
                found = definers.get(name)
                if found is None:
                    definers[name] = [f]
                else:
                    found.append(f)
            self.modules.add(f, ff.modules)
            self.modules.add_stem(f, ff.modules)
        self.definers = {name: tuple(files) for name, files in definers.items()}

    def _index_uses(self) -> None:
        """Every name's users and its non-zero factors, and the module names each file's
        imports tried, which only changing the graph needs (requests read `_use_units`,
        kept always). A restored graph builds them on its first change, or before it in
        a pause (`tables_for_changes`), not on its first request: 117K uses on Django,
        ~0.25 s of a warm CLI call; 1.3M uses and 290K probes at 20,000 files."""
        if not self.prepared:
            self.install(self.tables_for_changes()())

    def tables_for_changes(self) -> Callable[[], ChangeTables]:
        """What `_index_uses` builds, as a function of a snapshot of the graph taken now:
        it may run without the graph's lock (a server runs it in a pause between
        requests, rather than hold the lock for seconds on a big workspace); `install`
        then takes the result unless a change has built the tables in the meantime."""
        facts = list(self.facts.items())
        definers = dict(self.definers)
        restored = self._restored
        use_units: dict[str, int] | None = None if self._use_units else {}
        return functools.partial(_change_tables, facts, definers, restored, use_units, bool(self._factors))

    def install(self, tables: ChangeTables) -> None:
        """Take tables from `tables_for_changes` (under the graph's lock), unless a change
        came first: it built them itself, from the graph as it was then."""
        if self.prepared:
            return
        self._users = tables.users
        if tables.factors is not None:
            self._factors = tables.factors
        if tables.use_units is not None:
            self._use_units = tables.use_units
        for f, probes in tables.probes.items():
            self.modules.restore_probes(f, probes)
        self._restored = None
        self.prepared = True

    # ------------------------------------------------------------------ images
    def restore(self, image: GraphImage, entries: Mapping[str, IndexedFile]) -> dict[str, IndexedFile | None]:
        """Take an image into an empty graph; return the changes left to apply: the
        code files whose path, folder or content differ from the image's, or that came
        or went since it was taken. `entries` are the index's code files now (every
        language's: `facts.in_graph`).

        The image's files keep their stored facts and edges; a file that changed keeps
        them until the returned change replaces them (its outline is already the new one,
        which nothing reads before then)."""
        names = [intern(n) for n in image.names]
        files = image.files
        left: dict[str, IndexedFile | None] = {f: e for f, e in entries.items() if e.overlay_version is not None}
        facts: dict[str, FileFacts] = {}
        for i, f in enumerate(files):
            entry = entries.get(f)
            root = names[image.roots[i]]
            if entry is None:
                left[f] = None
            elif (entry.hash, entry.path, entry.root) != (image.hashes[i], image.paths[i], root):
                left[f] = entry
            facts[f] = FileFacts(
                path=image.paths[i],
                root=root,
                modules=_cut(image.module_ends, image.modules, i, names),
                package=names[image.packages[i]],
                defines=frozenset(_cut(image.define_ends, image.defines, i, names)),
                called=frozenset(_cut(image.called_ends, image.called, i, names)),
                outline=entry.outline if entry is not None else _NO_OUTLINE,
                source=[functools.partial(_stored_uses, image, names, i)],
            )
            targets = _cut(image.target_ends, image.targets, i, files)
            if targets:
                self.import_targets[f] = frozenset(targets)
            start, end = _start(image.out_ends, i), image.out_ends[i]
            if end > start:
                self.out[f] = dict(zip(_cut(image.out_ends, image.out_to, i, files), image.out_units[start:end]))
        for f, entry in entries.items():
            if f not in facts:
                left[f] = entry
        self.facts = facts
        self._index_definers()
        self._use_units = {name: units for name, units in zip(names, image.name_units) if units}
        self.prepared = False
        self._restored = (image, names)
        self._stale_rows = set(self.out)
        self._nodes_changed = True
        return left

    def export_image(self, hashes: Mapping[str, str]) -> GraphImage:
        """The whole graph as an image; `hashes` gives each file's content hash."""
        files = sorted(self.facts)
        index = {f: i for i, f in enumerate(files)}
        ids: dict[str, int] = {}

        def name_id(name: str) -> int:
            found = ids.get(name)
            if found is None:
                found = ids[name] = len(ids)
            return found

        columns: dict[str, array] = {name: array("i") for name in _IMAGE_COLUMNS}
        for f in files:
            ff = self.facts[f]
            columns["roots"].append(name_id(ff.root))
            columns["packages"].append(name_id(ff.package))
            for ends, column, values in (
                ("module_ends", "modules", ff.modules),
                ("define_ends", "defines", sorted(ff.defines)),
                ("called_ends", "called", sorted(ff.called)),
                ("used_ends", "used", ff.used),
                ("probe_ends", "probes", sorted(self.modules.probes_of(f))),
            ):
                columns[column].extend(map(name_id, values))
                columns[ends].append(len(columns[column]))
            columns["uses"].extend(ff.uses)
            statements = columns["imports"]
            for module, imported, is_from in ff.imports:
                statements.extend((name_id(module), int(is_from), len(imported), *map(name_id, imported)))
            columns["import_ends"].append(len(statements))
            out = self.out.get(f, {})
            columns["out_to"].extend(index[g] for g in out)
            columns["out_units"].extend(out.values())
            columns["out_ends"].append(len(columns["out_to"]))
            columns["targets"].extend(sorted(index[g] for g in self.import_targets.get(f, ())))
            columns["target_ends"].append(len(columns["targets"]))
        for name in self._use_units:
            name_id(name)
        columns["name_units"].extend([self._use_units.get(name, 0) for name in ids])
        return GraphImage(
            files=files,
            hashes=[hashes[f] for f in files],
            paths=[self.facts[f].path for f in files],
            names=list(ids),
            **columns,
        )

    def _apply(self, f: str, old: FileFacts | None, new: FileFacts | None, dirty: set[str]) -> None:
        """Replace one file's contributions: O(its uses x definers + its definitions x
        users). Edge changes collect in `_deltas` until `_flush`."""
        self._symbols.pop(f, None)
        self._definition_weights.pop(f, None)
        old_defs = old.defines if old else frozenset()
        new_defs = new.defines if new else frozenset()
        for name in old_defs - new_defs:  # integer sums: any order gives the same edges
            self._change_definer(name, f, add=False)
        for name in new_defs - old_defs:
            self._change_definer(name, f, add=True)
        if old is None or new is None or (old.used, old.uses) != (new.used, new.uses):
            old_uses = dict(zip(old.used, old.uses)) if old else {}
            self._change_uses(f, old_uses, dict(zip(new.used, new.uses)) if new else {})

        self.modules.rename(f, old.modules if old else (), new.modules if new else (), dirty)
        if old is not None:
            self.modules.discard_stem(f, old.modules)
        if new is not None:
            self.modules.add_stem(f, new.modules)

        if new is None:
            del self.facts[f]
            self._set_import_targets(f, frozenset())
            self.modules.forget_importer(f)
            dirty.discard(f)
            self._nodes_changed = True
            return
        self.facts[f] = new
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
        out_all = self.out
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
                if weight:
                    out[b] = weight
                else:
                    del out[b]
            if not out:
                del out_all[a]
            if changed:
                self._stale_rows.add(a)
        self._deltas.clear()

    # ------------------------------------------------------------------ name edges
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
        definers = self.definers.get(name, ())
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
            self.definers[name] = changed
        else:
            del self.definers[name]
        for definer in changed:
            self._definition_weights.pop(definer, None)

    def _change_uses(self, f: str, old: Mapping[str, int], new: Mapping[str, int]) -> None:
        """Set f's use counts from `old` to `new`; its edges to each name's definers follow."""
        row = self._delta_row(f)
        users_all, use_units, definers_all, factors = self._users, self._use_units, self.definers, self._factors
        cached = self._definition_weights
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
            use_units[name] = use_units.get(name, 0) + sqrt_units(after) - sqrt_units(before)
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

    # ------------------------------------------------------------------ import edges
    def _resolve_imports(self, f: str) -> None:
        """Resolve f's imports against the files there are now; its import edges follow."""
        facts = self.facts.get(f)
        if facts is None:
            return
        targets = self.modules.resolve(f, facts.imports, facts.package, facts.root, self.facts)
        self._set_import_targets(f, targets)

    def _set_import_targets(self, f: str, targets: frozenset[str]) -> None:
        old = self.import_targets.get(f, frozenset())
        if old == targets:
            return
        row = self._delta_row(f)
        for target in old - targets:
            row[target] = row.get(target, 0) - IMPORT_UNITS
        for target in targets - old:
            row[target] = row.get(target, 0) + IMPORT_UNITS
        if targets:
            self.import_targets[f] = targets
        else:
            self.import_targets.pop(f, None)

    # ------------------------------------------------------------------ per-file caches
    def symbols(self, f: str) -> Symbols:
        symbols = self._symbols.get(f)
        if symbols is None:
            symbols = self._symbols[f] = symbols_of(self.facts[f].outline)
        return symbols

    def definition_weights(self, f: str) -> DefinitionWeights:
        """How much other files use each definition of f; cached until the file or the
        uses or definers of one of its names change."""
        cached = self._definition_weights.get(f)
        if cached is None:
            names = tuple(d.name for d in self.symbols(f).definitions)
            facts = self.facts[f]
            own_uses = dict(zip(facts.used, facts.uses))
            factors = []
            used_elsewhere = []
            for name in names:
                factor = name_factor(name, min(len(self.definers.get(name, ())), MAX_DEFINERS))
                own = own_uses.get(name, 0)
                factors.append(factor)
                used_elsewhere.append(factor * max(self._use_units.get(name, 0) - sqrt_units(own), 0))
            cached = DefinitionWeights(names, tuple(factors), tuple(used_elsewhere))
            self._definition_weights[f] = cached
        return cached

    # ------------------------------------------------------------------ inspection
    def weight(self, a: str, b: str) -> float:
        """Weight of the edge a -> b (0 if none), in uses of one plain name."""
        return self.out.get(a, {}).get(b, 0) / WEIGHT_UNITS

    def snapshot(self) -> GraphSnapshot:
        return GraphSnapshot(
            files=tuple(sorted(self.facts)),
            edges=tuple(sorted((a, b, w) for a, out in self.out.items() for b, w in out.items())),
            definers=tuple(sorted((n, tuple(sorted(fs))) for n, fs in self.definers.items())),
            imports=tuple(sorted((f, tuple(sorted(ts))) for f, ts in self.import_targets.items())),
        )
