"""The language layer: one module per language, registered in one table keyed by extension.

Every module of this package but `spec`, `walker` and the import helpers (`paths`,
`js_imports`) is a language: it lists its `LanguageSpec`s in `LANGUAGES`, and this
registry finds it by itself (adding Kotlin is adding `kotlin.py` and its tests).
`language_for` picks a file's language by its extension — where two languages share
one (`.h`: C or C++), by the evidence the languages declare — and `language_named` gives
back a spec from an outline's `language`, which is how the renderers and the index ask
what a language needs without naming it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType
from typing import TYPE_CHECKING

from ctx_lsp.code.languages.spec import CONTAINER_KINDS, SYMBOL_KINDS, LanguageSpec

if TYPE_CHECKING:
    from ctx_lsp.code.outline import Outline

__all__ = [
    "CONTAINER_KINDS",
    "SYMBOL_KINDS",
    "LanguageSpec",
    "all_languages",
    "language_for",
    "language_named",
    "layer_modules",
    "outline_in",
]

_NOT_LANGUAGES = frozenset({"spec", "walker", "paths", "js_imports"})


@functools.cache
def _registry() -> tuple[dict[str, tuple[LanguageSpec, ...]], dict[str, LanguageSpec]]:
    """(extension -> specs claiming it, language name -> its first spec)."""
    by_extension: dict[str, list[LanguageSpec]] = {}
    by_name: dict[str, LanguageSpec] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name in _NOT_LANGUAGES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for spec in getattr(module, "LANGUAGES", ()):
            by_name.setdefault(spec.name, spec)
            for extension in spec.extensions:
                by_extension.setdefault(extension, []).append(spec)
    # Where languages share an extension, those that need evidence are asked first.
    ordered = {ext: tuple(sorted(specs, key=lambda s: s.evidence is None)) for ext, specs in by_extension.items()}
    return ordered, by_name


def layer_modules() -> list[ModuleType]:
    """Every module of the layer, by name (the languages, the walker, the spec and the
    helpers): what derives an outline, for the index cache's version (`index/versions.py`)."""
    return [importlib.import_module(f"{__name__}.{i.name}") for i in sorted(pkgutil.iter_modules(__path__))]


def all_languages() -> list[LanguageSpec]:
    """Every registered language (its first spec), by name."""
    return [spec for _, spec in sorted(_registry()[1].items())]


def language_named(name: str) -> LanguageSpec | None:
    """The spec of an outline's `language`; None for documents (markdown, text)."""
    return _registry()[1].get(name)


def outline_in(spec: LanguageSpec, source: bytes) -> Outline:
    """The outline of `source` in a language already chosen (see `language_for`)."""
    if spec.outline is not None:
        return spec.outline(source)
    from ctx_lsp.code.languages.walker import outline_with  # it imports the outline types

    return outline_with(spec, source)


def _suffixes(lower: str) -> list[str]:
    """`a/b.test.d.ts` → ['.test.d.ts', '.d.ts', '.ts']: longest first."""
    name = lower.rsplit("/", 1)[-1]
    dots = [i for i, ch in enumerate(name) if ch == "."]
    return [name[i:] for i in dots]


def language_for(path: str, source: bytes = b"") -> LanguageSpec | None:
    """The language of the file at `path` (with `source`, its content, for extensions
    two languages share; an absolute path lets evidence look at the file's folder), or
    None if no language claims it."""
    table = _registry()[0]
    for suffix in _suffixes(path.lower().replace("\\", "/")):
        specs = table.get(suffix)
        if specs:
            for spec in specs:
                if spec.evidence is None or spec.evidence(path, source):
                    return spec
            return specs[-1]
    return None
