"""Rust: functions, structs, enums, traits with their methods, `impl` blocks qualifying
their methods by the implemented type (`impl<T> Source for Buf<T>` → `Buf.read`), inline
modules, type aliases, macros, `use` declarations, `mod x;` (an import of a file), and
top-level `const`/`static` items. `///` lines are doc comments, `#[...]` lines above a
definition its attributes, and `//!` lines the module doc.
"""

from __future__ import annotations

from tree_sitter import Node

from ctx_lsp.code.languages.paths import path_key
from ctx_lsp.code.languages.spec import LanguageSpec, node_text
from ctx_lsp.code.outline import Import

__all__ = ["LANGUAGES"]

QUERY = """
(function_item) @definition.function
(function_signature_item) @definition.function
(struct_item) @definition.struct
(union_item) @definition.struct
(enum_item) @definition.enum
(trait_item) @definition.trait
(impl_item) @definition.impl
(mod_item body: (declaration_list)) @definition.module
(type_item) @definition.type
(macro_definition) @definition.function

(call_expression function: (identifier) @call)
(call_expression function: (scoped_identifier name: (identifier) @call))
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @call)))
(macro_invocation macro: (identifier) @call)

(use_declaration) @import
(mod_item !body) @import

(source_file (const_item) @constant)
(source_file (static_item) @constant)
"""

REFERENCES = """
(identifier) @reference
(type_identifier) @reference
(field_identifier) @reference
"""

BUILTINS = frozenset(
    [
        "Self",
        "String",
        "Vec",
        "Option",
        "Some",
        "None",
        "Ok",
        "Err",
        "Result",
        "Box",
        "Rc",
        "Arc",
        "RefCell",
        "Cell",
        "Mutex",
        "RwLock",
        "HashMap",
        "HashSet",
        "BTreeMap",
        "BTreeSet",
        "VecDeque",
        "Cow",
        "PhantomData",
        "std",
        "core",
        "alloc",
        "new",
        "len",
        "is_empty",
        "clone",
        "unwrap",
        "expect",
        "into",
        "from",
        "iter",
        "iter_mut",
        "into_iter",
        "map",
        "and_then",
        "ok_or",
        "unwrap_or",
        "unwrap_or_else",
        "collect",
        "push",
        "pop",
        "insert",
        "get",
        "get_mut",
        "remove",
        "contains",
        "to_string",
        "to_owned",
        "as_ref",
        "as_mut",
        "as_str",
        "fmt",
        "Debug",
        "Display",
        "Default",
        "Clone",
        "Copy",
        "PartialEq",
        "Eq",
        "PartialOrd",
        "Ord",
        "Hash",
        "Send",
        "Sync",
        "Sized",
        "Drop",
        "Deref",
        "DerefMut",
        "From",
        "Into",
        "TryFrom",
        "TryInto",
        "AsRef",
        "AsMut",
        "Iterator",
        "IntoIterator",
        "Formatter",
        "Error",
        "io",
        "Write",
        "Read",
        "println",
        "print",
        "eprintln",
        "format",
        "vec",
        "write",
        "writeln",
        "assert",
        "assert_eq",
        "assert_ne",
        "debug_assert",
        "panic",
        "unreachable",
        "todo",
        "unimplemented",
        "matches",
        "dbg",
    ]
)
"""The prelude, the standard library's common types and traits, and common macros."""


def _impl_type(node: Node) -> Node | None:
    """The type an `impl` block is for, without its path (`a::Foo<T>` → `Foo`)."""
    kind = node.child_by_field_name("type")
    while kind is not None and kind.type in ("generic_type", "scoped_type_identifier", "reference_type"):
        inner = kind.child_by_field_name("name" if kind.type == "scoped_type_identifier" else "type")
        if inner is None:
            break
        kind = inner
    return kind


def _macro_body(node: Node) -> Node | None:
    """A `macro_rules!`'s rules start at its first bracket."""
    return next((c for c in node.children if c.type in ("{", "(", "[")), None)


def _use_parts(src: bytes, node: Node | None) -> tuple[str, tuple[str, ...]]:
    """(module path, names) of a `use` argument: `std::io::{self, Read}` → ("std::io", ("self", "Read"))."""
    if node is None:
        return "", ()
    kind = node.type
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        listed = node.child_by_field_name("list")
        names = tuple(node_text(src, c) for c in listed.named_children) if listed is not None else ()
        return node_text(src, path), names
    if kind == "use_as_clause":
        return _use_parts(src, node.child_by_field_name("path"))
    if kind == "use_wildcard":
        text = node_text(src, node)
        return text.rsplit("::", 1)[0] if "::" in text else "", ("*",)
    text = node_text(src, node)
    module, _, name = text.rpartition("::")
    return module, (name,)


def _imports(node: Node, src: bytes) -> list[Import]:
    line = node.start_point[0] + 1
    text = " ".join(node_text(src, node).split())
    if node.type == "mod_item":
        name = node_text(src, node.child_by_field_name("name"))
        return [Import(line, text, name, (name,))]
    module, names = _use_parts(src, node.child_by_field_name("argument"))
    return [Import(line, text, module, names)]


def _constants(node: Node, src: bytes) -> list[tuple[str, Node]]:
    name = node.child_by_field_name("name")
    return [] if name is None else [(node_text(src, name), node)]


def _import_keys(rel_path: str) -> tuple[str, ...]:
    return (path_key(rel_path),)


def _module_dir(rel_path: str) -> str:
    """The folder a file's own `mod x;` children live in: its folder for `lib.rs`,
    `main.rs` and `mod.rs`, else a folder named after it (`a.rs` → `a/`)."""
    folder, _, name = rel_path.rpartition("/")
    stem = name.rsplit(".", 1)[0]
    if stem in ("lib", "main", "mod"):
        return folder
    return f"{folder}/{stem}" if folder else stem


def _crate_root(rel_path: str) -> str:
    """The crate's `src` folder (`crates/x/src/a.rs` → `crates/x/src`)."""
    if rel_path.startswith("src/"):
        return "src"
    at = rel_path.find("/src/")
    return rel_path[: at + 4] if at >= 0 else rel_path.rpartition("/")[0]


def _files_of(base: str, parts: list[str]) -> list[str]:
    path = "/".join([p for p in [base, *parts] if p])
    return [f"{path}.rs", f"{path}/mod.rs"]


def _import_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    """`mod x;` → `x.rs` or `x/mod.rs` beside the file's module; `use crate::a::b::C` →
    the file of `a::b::C` if it is a module, else of `a::b`, then `a` (`self::`, `super::`
    from the file's own module). Other crates are not in the workspace's files."""
    if imp.text.startswith(("mod ", "pub mod ", "pub(crate) mod ")):
        return [tuple(path_key(p) for p in _files_of(_module_dir(rel_path), [imp.module]))]
    segments = [s for s in imp.module.split("::") if s]
    if not segments:
        return []
    head, rest = segments[0], segments[1:]
    if head == "crate":
        base = _crate_root(rel_path)
    elif head in ("self", "super"):
        base = _module_dir(rel_path)
        while (rest and rest[0] == "super") or head == "super":
            base = base.rpartition("/")[0]
            if head == "super":
                head = ""
            else:
                rest = rest[1:]
    else:
        return []
    groups = []
    names = [n for n in imp.names if n not in ("self", "*")] or [""]
    for name in names:
        full = [*rest, name] if name else rest
        candidates = []
        for cut in range(len(full), 0, -1):
            candidates.extend(_files_of(base, full[:cut]))
        if candidates:
            groups.append(tuple(path_key(p) for p in dict.fromkeys(candidates)))
    return groups


def _module_names(rel_path: str) -> tuple[str, ...]:
    """`src/parse/lexer.rs` is `parse::lexer` (and `lexer`); `mod.rs`/`lib.rs` name their folder."""
    stem = rel_path.rsplit(".", 1)[0]
    parts = [p for p in stem.split("/") if p]
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    if not parts:
        return ()
    return tuple(dict.fromkeys(["::".join(parts).replace("::", "."), parts[-1]]))


LANGUAGES = [
    LanguageSpec(
        name="rust",
        extensions=(".rs",),
        grammar=("tree_sitter_rust", "language"),
        query=QUERY,
        reference_query=REFERENCES,
        names={"impl_item": _impl_type},
        bodies={"macro_definition": _macro_body},
        imports=_imports,
        constants=_constants,
        attribute_prefixes=(b"#[",),
        quiet_decorators=(
            "#[inline",
            "#[must_use",
            "#[doc(hidden)]",
            "#[allow(",
            "#[expect(",
            "#[cold]",
            "#[track_caller]",
            "#[rustfmt::",
            "#[cfg_attr(docsrs",
            '#[cfg_attr(feature = "cargo-clippy"',
        ),
        module_doc_markers=(b"//!",),
        builtins=BUILTINS,
        fence="rust",
        test_suffixes=("_test.rs", "_tests.rs"),
        test_dirs=("benches",),
        module_names=_module_names,
        import_keys=_import_keys,
        import_probes=_import_probes,
    )
]
