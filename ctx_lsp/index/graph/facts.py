"""What the graph takes from one indexed file, and the per-file symbol tables built from it."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from sys import intern

from ctx_lsp.code.languages import CONTAINER_KINDS, all_languages, language_named
from ctx_lsp.code.outline import Outline
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.graph.modules import PROBED, ImportStatement, module_names

__all__ = [
    "Definition",
    "FileFacts",
    "Symbols",
    "config_dependents",
    "definitions_of",
    "facts_for",
    "facts_from",
    "in_graph",
    "symbols_of",
]


@dataclass(frozen=True, slots=True)
class Definition:
    """A name a file offers other files: a top-level function, class or constant, a
    method, or a class nested in a class (functions nested in functions are private to
    their parent and left out)."""

    qualname: str
    name: str
    kind: str  # the outline's symbol kind ("class", "function", "method") or "constant"
    line: int


Uses = tuple[tuple[str, ...], tuple[int, ...], tuple[ImportStatement, ...]]
"""(used, uses, imports) of one file: see `FileFacts`."""


@dataclass(frozen=True, slots=True, eq=False)
class FileFacts:
    """What the graph takes from one indexed file (`facts_for`), keyed by its abs path.

    Kept for every code file while the outline itself is decoded only when used
    (`Outline`), so what is kept is compact: names interned (a name is used by many
    files), the uses as two parallel tuples rather than a pair per use.

    `used`, `uses` and `imports` are only read when the graph changes or for a request's
    few working files, so facts restored from the cache's image decode them on first
    read (`source`): on a 20,000-file workspace they are most of the image.

    `imports` holds the raw statements: what they resolve to depends on which other files
    exist, so they are resolved again when those come or go.
    """

    path: str  # as shown to the user
    root: str  # the workspace folder it is in
    modules: tuple[str, ...]  # dotted names other files may import it as
    package: str  # dotted package its relative imports start from
    defines: frozenset[str]  # names of its `Definition`s
    called: frozenset[str]  # simple names its symbols call
    outline: Outline
    source: list[Uses | Callable[[], Uses]]
    """[(used, uses, imports)], or [a function that decodes them] until they are first
    read; the slot then holds what it returned, so the image it reads from can go once
    every file's were read (as the graph's first change, or its preparation, does)."""

    @property
    def used(self) -> tuple[str, ...]:
        """The names it uses (the outline's references), in its order."""
        return self._uses()[0]

    @property
    def uses(self) -> tuple[int, ...]:
        """How often it uses each of `used`."""
        return self._uses()[1]

    @property
    def imports(self) -> tuple[ImportStatement, ...]:
        return self._uses()[2]

    def _uses(self) -> Uses:
        found = self.source[0]
        if callable(found):  # two threads may both decode: both store equal values
            found = self.source[0] = found()
        return found


def _definition_rows(outline: Outline) -> Iterator[tuple[str, str, str, int]]:
    """(qualname, name, kind, line) of each `Definition` of an outline."""
    classes: set[str] = set()
    for sym in outline.symbols:
        if sym.kind in CONTAINER_KINDS:
            classes.add(sym.qualname)
        if sym.depth == 0 or sym.parent in classes:
            yield sym.qualname, sym.name, sym.kind, sym.start_line
    for const in outline.constants:
        yield const.name, const.name, "constant", const.line


def definitions_of(outline: Outline) -> tuple[Definition, ...]:
    return tuple(Definition(*row) for row in _definition_rows(outline))


def in_graph(language: str) -> bool:
    """Files of every registered language are in the graph (documents are not)."""
    return language_named(language) is not None


def facts_for(entry: IndexedFile) -> FileFacts | None:
    """The graph's view of one indexed file; None for documents and plain text.

    Name references link files of every language. Imports resolve to files by dotted
    module names (`LanguageSpec.dotted_modules`: Python), or by the keys a language
    gives its files and the candidates it gives each import (`import_keys`,
    `import_probes`: relative specifiers, Go packages, Rust modules, `#include`, ...)."""
    if language_named(entry.language) is None:
        return None
    return facts_from(entry.rel_path, entry.root, entry.path, entry.outline)


def facts_from(rel_path: str, root: str, path: str, outline: Outline) -> FileFacts | None:
    """`facts_for` from a file's parts: what facts are taken again from when a config its
    language's imports read changed (`config_dependents`)."""
    spec = language_named(outline.language)
    if spec is None:
        return None
    imports: tuple[ImportStatement, ...]
    if spec.dotted_modules:
        modules, package = module_names(rel_path)
        imports = tuple(
            (intern(imp.module), tuple(map(intern, imp.names)), not imp.text.startswith("import"))
            for imp in outline.imports
            if imp.module
        )
    else:
        package = ""
        named = spec.module_names(rel_path)[:1] if spec.module_names is not None else ()
        keys = spec.import_keys(rel_path) if spec.import_keys is not None else ()
        modules = tuple(map(intern, (*named, *keys)))
        probes = spec.import_probes
        imports = (
            tuple(
                (PROBED, tuple(map(intern, group)), False)
                for imp in outline.imports
                for group in probes(rel_path, imp, root)
                if group
            )
            if probes is not None
            else ()
        )
    references = outline.references
    return FileFacts(
        path=path,
        root=root,
        modules=modules,
        package=package,
        defines=frozenset([intern(row[1]) for row in _definition_rows(outline)]),
        called=frozenset([intern(name) for sym in outline.symbols for name in sym.calls]),
        outline=outline,
        source=[
            (
                tuple([intern(name) for name, _ in references]),
                tuple([count for _, count in references]),
                imports,
            )
        ],
    )


def config_dependents(changed: Iterable[str], facts: Mapping[str, FileFacts]) -> dict[str, FileFacts | None]:
    """New facts of the files whose imports read a config among the `changed` paths
    (`LanguageSpec.import_configs`: a tsconfig.json, a go.mod): what was read of it is
    forgotten, and every file of those languages is resolved again."""
    names = {posixpath.basename(p.replace(os.sep, "/")) for p in changed}
    languages = {s.name: s for s in all_languages() if names.intersection(s.import_configs)}
    if not languages:
        return {}
    for spec in languages.values():
        if spec.reload_configs is not None:
            spec.reload_configs()
    return {
        f: facts_from(os.path.relpath(f, ff.root).replace(os.sep, "/"), ff.root, ff.path, ff.outline)
        for f, ff in facts.items()
        if ff.outline.language in languages
    }


@dataclass(frozen=True, slots=True)
class Symbols:
    """One file's symbols indexed for call matching and definition ranks; built on first
    use, per file (most files are never asked about)."""

    definitions: tuple[Definition, ...]
    by_name: Mapping[str, tuple[str, ...]]  # any symbol, at any depth: name -> qualnames
    calls: Mapping[str, tuple[str, ...]]  # qualname -> names it calls
    lines: Mapping[str, int]  # qualname -> first line


def symbols_of(outline: Outline) -> Symbols:
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
    return Symbols(definitions_of(outline), by_name, calls, lines)
