"""Call resolution: callers and callees, by matching the simple names a symbol calls
against the definitions its file can see: its own, then those of the files it imports."""

from __future__ import annotations

from ctx_lsp.index.graph.edges import Edges
from ctx_lsp.relevance import MAX_CALLEE_DEFINERS

__all__ = ["SymbolRef", "callees_of", "callers_of"]


SymbolRef = tuple[str, str]
"""(abs_path, qualname) of a symbol (`Model.save`). A plain tuple, not a NamedTuple: one is
built per call each resolution reaches, and named tuples made `callees_of` and `callers_of`
5-10 % slower (measured on click + jinja + attrs)."""


def _defined_as(edges: Edges, f: str, name: str) -> list[str]:
    if name not in edges.facts[f].defines:
        return []
    return [d.qualname for d in edges.symbols(f).definitions if d.name == name]


def _resolve_call(edges: Edges, f: str, name: str) -> list[SymbolRef]:
    """Symbols a call of `name` in file f may reach: its own file's; else those of the
    files it imports (then the files those import: re-exports); else the definitions
    of the name anywhere, if there are at most MAX_CALLEE_DEFINERS of them."""
    own = edges.symbols(f).by_name.get(name)
    if own:
        return [(f, q) for q in own]
    import_targets = edges.import_targets
    seen = {f}
    layer = sorted(import_targets.get(f, ()))
    for _ in range(2):
        found = [(g, q) for g in layer for q in _defined_as(edges, g, name)]
        if found:
            return found
        seen.update(layer)
        layer = sorted({h for g in layer for h in import_targets.get(g, ()) if h not in seen})
    definers = edges.definers.get(name, ())
    if len(definers) > MAX_CALLEE_DEFINERS:
        return []
    return [(g, q) for g in sorted(definers) for q in _defined_as(edges, g, name)]


def callees_of(edges: Edges, abs_path: str, qualname: str) -> list[SymbolRef]:
    """The symbols the given symbol calls, in the order of the names it calls."""
    if abs_path not in edges.facts:
        return []
    out: list[SymbolRef] = []
    for name in edges.symbols(abs_path).calls.get(qualname, ()):
        for target in _resolve_call(edges, abs_path, name):
            if target != (abs_path, qualname) and target not in out:
                out.append(target)
    return out


def callers_of(edges: Edges, name: str, abs_path: str | None) -> list[SymbolRef]:
    """The symbols whose calls reach `name`, by path and line.

    `name` is a qualname (`Model.save`: files with that symbol) or a simple name (files
    defining it); `abs_path` keeps only the symbol in that file.
    """
    facts = edges.facts
    simple = name.rpartition(".")[2]
    if abs_path is not None:
        candidates = [abs_path] if abs_path in facts else []
    else:
        candidates = sorted(edges.definers.get(simple, ()))
    if "." in name:
        targets = {f for f in candidates if name in edges.symbols(f).lines}
    else:
        targets = {f for f in candidates if simple in edges.symbols(f).by_name}
    if not targets:
        return []
    out = [
        (f, qualname)
        for f in sorted(g for g, ff in facts.items() if simple in ff.called)
        if any(g in targets for g, _ in _resolve_call(edges, f, simple))
        for qualname, called in edges.symbols(f).calls.items()
        if simple in called
    ]
    out.sort(key=lambda fq: (facts[fq[0]].path, edges.symbols(fq[0]).lines.get(fq[1], 0), fq[1]))
    return out
