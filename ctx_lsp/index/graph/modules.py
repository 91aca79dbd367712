"""Module names: which dotted names a file answers to, and which files an import reaches.

Resolution depends on which other files exist, so `ModuleIndex` also remembers which
names each file's imports tried: when a file with such a name comes or goes, exactly
those importers are resolved again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

__all__ = [
    "PROBED",
    "ImportStatement",
    "ModuleIndex",
    "import_probes",
    "module_names",
    "resolve_relative",
    "stem_of",
]

PROBED = "<probes>"
"""The module of an import statement that carries its own candidates as its names: a
language whose imports name files (`LanguageSpec.import_probes`) computes them from the
importer's path when its facts are taken, as no other file changes them."""


ImportStatement = tuple[str, tuple[str, ...], bool]
"""(module as written: `a.b`, `..a`; the names a `from` import takes; whether it is a `from`
import) of one import statement; what it resolves to is decided later, against the files
there are then. A plain tuple, not a NamedTuple: `facts_for` makes one per import in the
workspace, and named tuples made it 11 % slower (~2 % of a first build; measured on click,
jinja and attrs)."""


class Rooted(Protocol):
    """What resolution needs to know of a candidate file: the workspace folder it is in."""

    @property
    def root(self) -> str: ...


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


def stem_of(modules: tuple[str, ...]) -> str:
    """Last part of a file's module name (`expressions`; the package for `__init__`)."""
    return modules[0].rpartition(".")[2] if modules else ""


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
    if module == PROBED:
        return [names]
    absolute = resolve_relative(module, package)
    if not absolute or absolute == "__future__":
        return []
    parts = absolute.split(".")
    prefixes = tuple(".".join(parts[:i]) for i in range(len(parts), 0, -1))
    if not is_from:
        return [prefixes]
    probes = [(f"{absolute}.{name}", *prefixes) for name in names if name != "*"]
    return probes or [prefixes]


def _discard(index: dict[str, set[str]], key: str, value: str) -> None:
    bucket = index.get(key)
    if bucket is not None:
        bucket.discard(value)
        if not bucket:
            del index[key]


class ModuleIndex:
    """Module name -> files, module stem -> files, and which names each importer tried."""

    def __init__(self) -> None:
        self._files: dict[str, set[str]] = {}  # dotted module name -> files answering to it
        self._probers: dict[str, set[str]] = {}  # module name -> files whose imports tried it
        self._probes: dict[str, frozenset[str]] = {}  # file -> module names its imports tried
        self.stems: dict[str, set[str]] = {}
        """Module basename -> files, so that a mentioned `expressions` finds `expressions.py`."""

    def add(self, f: str, modules: Iterable[str]) -> None:
        """Index a file under its module names (the first full pass: nobody to tell)."""
        for key in modules:
            self._files.setdefault(key, set()).add(f)

    def rename(self, f: str, old: tuple[str, ...], new: tuple[str, ...], dirty: set[str]) -> None:
        """Move f from its old module names to its new ones; the files whose imports tried
        any of those names join `dirty`, to be resolved again."""
        if old == new:
            return
        for key in old:
            _discard(self._files, key, f)
            dirty.update(self._probers.get(key, ()))
        for key in new:
            self._files.setdefault(key, set()).add(f)
            dirty.update(self._probers.get(key, ()))

    def add_stem(self, f: str, modules: tuple[str, ...]) -> None:
        self.stems.setdefault(stem_of(modules), set()).add(f)

    def discard_stem(self, f: str, modules: tuple[str, ...]) -> None:
        _discard(self.stems, stem_of(modules), f)

    def forget_importer(self, f: str) -> None:
        """Drop what a removed file's imports tried."""
        for key in self._probes.pop(f, frozenset()):
            _discard(self._probers, key, f)

    def probes_of(self, f: str) -> frozenset[str]:
        """The module names f's imports tried when last resolved (for the graph's image)."""
        return self._probes.get(f, frozenset())

    def restore_probes(self, f: str, probes: Sequence[str]) -> None:
        """Remember the names f's imports tried, as an image recorded them (f new here)."""
        if probes:
            self._probes[f] = frozenset(probes)
            for key in probes:
                self._probers.setdefault(key, set()).add(f)

    def resolve(
        self,
        f: str,
        imports: Iterable[ImportStatement],
        package: str,
        root: str,
        files: Mapping[str, Rooted],
    ) -> frozenset[str]:
        """The files f's imports reach now (never f itself); a module found in f's own
        workspace folder wins over the same module in another. Remembers the names tried."""
        probed: set[str] = set()
        targets: set[str] = set()
        for module, names, is_from in imports:
            for candidates in import_probes(module, names, is_from, package):
                for key in candidates:
                    probed.add(key)
                    found = self._files.get(key)
                    if found:
                        same_root = [g for g in found if files[g].root == root]
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
        return frozenset(targets)
