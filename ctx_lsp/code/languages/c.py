"""C: functions (definitions and prototypes, so a header's API is its outline), structs,
unions, enums, typedefs, function-like macros, `#include` as imports and `#define`d values
as constants. `.h` files are C unless C++ claims them (`cpp.py`).

The declarator hooks are shared with C++: a function's name sits at the bottom of a chain
of declarators (`*`, `&`, the parameter list), and C++ may qualify it (`Widget::size`).
"""

from __future__ import annotations

from tree_sitter import Node

from ctx_lsp.code.languages.paths import joined, path_key, suffix_keys
from ctx_lsp.code.languages.spec import LanguageSpec, node_text, path_module_names
from ctx_lsp.code.outline import Import

__all__ = [
    "C_BUILTINS",
    "LANGUAGES",
    "declarator_name",
    "include_imports",
    "include_keys",
    "include_probes",
    "macro_constants",
]

QUERY = """
(function_definition) @definition.function
(declaration declarator: (function_declarator)) @definition.function
(struct_specifier name: (_) body: (_)) @definition.struct
(union_specifier name: (_) body: (_)) @definition.struct
(enum_specifier name: (_) body: (_)) @definition.enum
(type_definition) @definition.type
(preproc_function_def) @definition.function

(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))

(preproc_include) @import
(preproc_def) @constant
"""

REFERENCES = """
(identifier) @reference
(type_identifier) @reference
(field_identifier) @reference
"""

C_BUILTINS = frozenset(
    [
        "NULL",
        "size_t",
        "ssize_t",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "uintptr_t",
        "bool",
        "true",
        "false",
        "FILE",
        "errno",
        "printf",
        "fprintf",
        "sprintf",
        "snprintf",
        "puts",
        "malloc",
        "calloc",
        "realloc",
        "free",
        "memcpy",
        "memmove",
        "memset",
        "memcmp",
        "strlen",
        "strcmp",
        "strncmp",
        "strcpy",
        "strncpy",
        "strcat",
        "strdup",
        "strchr",
        "strstr",
        "abort",
        "exit",
        "assert",
        "fopen",
        "fclose",
        "fread",
        "fwrite",
        "stderr",
        "stdout",
        "stdin",
        "va_list",
        "va_start",
        "va_end",
        "sizeof",
    ]
)

_DECLARATOR_WRAPPERS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "array_declarator",
        "attributed_declarator",
    }
)


def _innermost(node: Node) -> Node | None:
    """The declarator a name sits in: down through `*`, `&`, `(...)` and parameter lists."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in _DECLARATOR_WRAPPERS:
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in declarator.named_children if c.type not in ("parameter_list",)), None)
            if inner is None or inner == declarator:
                break
        declarator = inner
    return declarator


def declarator_name(node: Node) -> Node | None:
    """A function's (or typedef's) name node; for C++ `a::B::f`, the `f`."""
    declarator = _innermost(node)
    while declarator is not None and declarator.type == "qualified_identifier":
        declarator = declarator.child_by_field_name("name")
    return declarator


def include_imports(node: Node, src: bytes) -> list[Import]:
    path = node.child_by_field_name("path")
    module = node_text(src, path).strip('"<>')
    text = " ".join(node_text(src, node).split())
    return [Import(node.start_point[0] + 1, text, module, ())]


def macro_constants(node: Node, src: bytes) -> list[tuple[str, Node]]:
    """`#define NAME value`; a guard (`#define FOO_H`, no value) is not a constant."""
    name = node.child_by_field_name("name")
    if name is None or node.child_by_field_name("value") is None:
        return []
    return [(node_text(src, name), node)]


def include_keys(rel_path: str) -> tuple[str, ...]:
    """A header answers to its path and to its last parts (`x/y.h`, `y.h`)."""
    return (path_key(rel_path), *suffix_keys(rel_path))


def include_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    """`#include "x/y.h"`: beside the file first, then any file ending in `x/y.h` (the
    include path is the build's, which the index does not know)."""
    if not imp.module:
        return []
    beside = joined(rel_path, imp.module)
    candidates = ([path_key(beside)] if beside else []) + [f"tail:{imp.module.lstrip('./')}"]
    return [tuple(candidates)]


LANGUAGES = [
    LanguageSpec(
        name="c",
        extensions=(".c", ".h"),
        grammar=("tree_sitter_c", "language"),
        query=QUERY,
        reference_query=REFERENCES,
        names={
            "function_definition": declarator_name,
            "declaration": declarator_name,
            "type_definition": declarator_name,
        },
        imports=include_imports,
        constants=macro_constants,
        builtins=C_BUILTINS,
        fence="c",
        test_suffixes=("_test.c", "_unittest.c"),
        module_names=path_module_names,
        import_keys=include_keys,
        import_probes=include_probes,
    )
]
