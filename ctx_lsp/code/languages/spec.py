"""What a language declares: the one shape every module of the language layer fills in.

A language module (`languages/<lang>.py`) builds one or more `LanguageSpec`s and lists
them in `LANGUAGES`; the registry (`languages/__init__.py`) keys them by extension. A
tree-sitter language gives a grammar, a query whose capture names say what each node is
(`@definition.<kind>`, `@call`, `@reference`, `@import`, `@constant`), and small hooks
for what a query cannot say (the name of a C++ `Class::method`, a Go receiver's type);
the shared walker (`walker.py`) builds the `Outline` from them. A language whose outline
is built another way (Python's own extractor) gives `outline` and `outline_json` itself.

Everything else in the engine asks a spec, never compares a language's name: how a
comment starts (marker lines inside shown code), how a fenced block is labelled, which
names are builtins that must not link files in the reference graph, where its imports
lead (`import_keys`, `import_probes`), which of its files are tests.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tree_sitter import Language, Node, Parser, Query

if TYPE_CHECKING:
    from ctx_lsp.code.outline import Import, Outline

__all__ = ["CONTAINER_KINDS", "SYMBOL_KINDS", "LanguageSpec", "node_text", "path_module_names"]

SYMBOL_KINDS = frozenset(
    {"function", "method", "class", "interface", "type", "enum", "struct", "trait", "impl", "module"}
)
"""`Symbol.kind` for code, shared by every language (as universal-ctags maps its per-language
kinds to one table): records are classes, namespaces and Ruby modules are modules, Rust
`impl` blocks are `impl`. Markdown adds `heading`."""

CONTAINER_KINDS = frozenset({"class", "interface", "enum", "struct", "trait", "impl", "module"})
"""Kinds whose members an outline shows under them (a function's nested functions it hides)."""

NameHook = Callable[[Node], "Node | None"]
OwnerHook = Callable[[Node, bytes], "str | None"]
BodyHook = Callable[[Node], "Node | None"]
ImportHook = Callable[[Node, bytes], "list[Import]"]
ConstantHook = Callable[[Node, bytes], "list[tuple[str, Node]]"]


_COMPILE_LOCK = threading.Lock()
"""Grammars load and queries compile once per process, on a language's first file."""


def node_text(src: bytes, node: Node | None) -> str:
    """A node's source text (sliced from the bytes: cheaper than `Node.text`)."""
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


INDEX_STEMS = frozenset({"index", "mod", "lib", "main", "__init__"})
"""File stems that stand for their folder (`store/index.ts` is `store`)."""


def path_module_names(rel_path: str) -> tuple[str, ...]:
    """Names a file's definitions may be qualified with, from its path: `src/vanilla.ts`
    answers to `src.vanilla` and `vanilla`, `store/index.ts` to `store`."""
    name = rel_path.rsplit("/", 1)[-1]
    stem = rel_path.rsplit(".", 1)[0] if "." in name else rel_path
    parts = [p for p in stem.split("/") if p]
    if len(parts) > 1 and parts[-1] in INDEX_STEMS:
        parts = parts[:-1]
    if not parts:
        return ()
    names = [".".join(parts), parts[-1]]
    if len(parts) > 2:
        names.append(".".join(parts[-2:]))
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True, eq=False)
class LanguageSpec:
    """One language as the engine sees it; see the module docstring."""

    name: str
    """The outline's `language`, status's key: one per language (TSX is `typescript`)."""
    extensions: tuple[str, ...]
    """Lowercase suffixes with their dot, longest match wins (`.d.ts` before `.ts`)."""
    evidence: Callable[[str, bytes], bool] | None = None
    """For an extension another language shares (`.h`): whether this file (path, bytes)
    is this language's. Languages with evidence are asked first; the last is the default."""
    grammar: tuple[str, str] | None = None
    """(module, function) of the grammar wheel, imported on first parse."""
    query: str = ""
    """Captures `@definition.<kind>` (kind from `SYMBOL_KINDS`), `@call` (the called
    name), `@import` and `@constant` (statements the hooks read)."""
    reference_query: str = ""
    """Captures `@reference`: the identifiers counted as uses (also run alone over import
    statements, whose identifiers are not uses)."""
    names: Mapping[str, NameHook] = field(default_factory=dict)
    """How a definition node of this type is named, if not by its `name` field."""
    bodies: Mapping[str, BodyHook] = field(default_factory=dict)
    """Where a definition node of this type has its body, if not in its `body` field."""
    owners: Mapping[str, OwnerHook] = field(default_factory=dict)
    """The owner a definition names outside its nesting (Go receiver, C++ `Class::`)."""
    imports: ImportHook | None = None
    constants: ConstantHook | None = None
    """(name, node) of each constant a `@constant` capture declares."""
    doc_line_markers: tuple[bytes, ...] = (b"//",)
    """Line comments that may document the definition below them."""
    block_comments: bool = True
    """`/* ... */` (and `/** ... */`) above a definition documents it too."""
    module_doc_markers: tuple[bytes, ...] = ()
    """Lines that document the file itself wherever they stand at its top (Rust `//!`)."""
    attribute_prefixes: tuple[bytes, ...] = ()
    """Lines above a definition that belong to it (Rust `#[...]`, C# `[...]`)."""
    quiet_decorators: tuple[str, ...] = ()
    """Decorators an outline leaves out (the symbol keeps them): they say nothing about
    what a definition does, and Rust puts `#[inline]` on every other method."""
    doc_cleaner: Callable[[str], str] | None = None
    """What a doc comment's line loses besides its markers (C#'s `<summary>` tags)."""
    builtins: frozenset[str] = frozenset()
    """Names every file uses (`console`, `fmt`, `String`): dropped from references, or
    they would link every file to every other in the reference graph."""
    comment: str = "// "
    """How a line comment starts: marker lines inside shown code read as comments."""
    multiline_quotes: tuple[tuple[str, str], ...] = (("/*", "*/"),)
    """(opening, closing) of the blocks that span lines and may hold blank lines that are
    not statement boundaries (block comments, docstrings): code units are not cut there."""
    fence: str = ""
    """The markdown code fence's language label."""
    header_end: str = ""
    """Added to a container's signature in outlines (Python's `:`); nothing elsewhere."""
    module_doc_format: str = "// {}"
    """How the module doc's row reads in an outline."""
    merge_imports: bool = False
    """Consecutive `import a` statements shown as one `import a, b` (Python)."""
    test_suffixes: tuple[str, ...] = ()
    """File-name endings of test files (`.test.ts`, `_test.go`, `Test.java`), matched
    case-sensitively; the engine demotes tests unless a task is about them."""
    test_dirs: tuple[str, ...] = ()
    """Folders that hold only tests (`__tests__`, Ruby's `spec`)."""
    outline: Callable[[bytes], Outline] | None = None
    """The outline builder, for a language that does not use the shared walker."""
    outline_json: Callable[[bytes], tuple[str, Outline]] | None = None
    """(outline JSON, the outline), if the JSON is faster written another way than by
    `outline_to_json` (from the extractor's own rows)."""
    dotted_modules: bool = False
    """Imports name dotted modules that map onto paths (`a.b` → `a/b.py`): the reference
    graph resolves them with its own module index (Python). Other languages say where
    their imports lead with `import_keys` and `import_probes`."""
    import_keys: Callable[[str], tuple[str, ...]] | None = None
    """Keys a file (its path in its workspace folder) answers to when other files' imports
    are resolved: its path (`paths.path_key`), its folder for a package (Go), its tail
    (`#include "x/y.h"`). Languages without `dotted_modules`."""
    import_probes: Callable[[str, Import, str], list[tuple[str, ...]]] | None = None
    """For one import of the file at a path (in the workspace folder given third), the
    groups of keys to try, best first in each group: the first key some file answers to
    is what the import reaches."""
    import_configs: tuple[str, ...] = ()
    """Names of the workspace files `import_probes` reads (`tsconfig.json`, `go.mod`):
    when one changes, the graph calls `reload_configs` and resolves the language's files
    again."""
    reload_configs: Callable[[], None] | None = None
    """Forget what was read of the `import_configs`."""
    module_names: Callable[[str], tuple[str, ...]] | None = None
    """Names a file's definitions may be qualified with (`vanilla.createStore`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_state", threading.local())
        object.__setattr__(self, "_compiled", [])

    @property
    def language(self) -> Language:
        compiled: list = self._compiled  # type: ignore[attr-defined]
        if not compiled:
            with _COMPILE_LOCK:
                if not compiled:
                    assert self.grammar is not None, f"{self.name} has no grammar"
                    module, function = self.grammar
                    language = Language(getattr(importlib.import_module(module), function)())
                    compiled.extend(
                        [
                            language,
                            Query(language, self.query + "\n" + self.reference_query),
                            Query(language, self.reference_query or "(ERROR) @reference"),
                            frozenset(name.encode() for name in self.builtins),
                        ]
                    )
        return compiled[0]

    @property
    def compiled_query(self) -> Query:
        self.language  # noqa: B018 - compiles both
        return self._compiled[1]  # type: ignore[attr-defined]

    @property
    def compiled_references(self) -> Query:
        self.language  # noqa: B018 - compiles it
        return self._compiled[2]  # type: ignore[attr-defined]

    @property
    def builtin_bytes(self) -> frozenset[bytes]:
        self.language  # noqa: B018
        return self._compiled[3]  # type: ignore[attr-defined]

    def parser(self) -> Parser:
        """A parser for this thread: tree-sitter `Parser` objects are not thread-safe."""
        state = self._state  # type: ignore[attr-defined]
        parser = getattr(state, "parser", None)
        if parser is None:
            parser = state.parser = Parser(self.language)
        return parser
