"""C++: C's definitions plus classes, structs and their members (in-class definitions and
declarations), out-of-line `Class::method` definitions qualified by their class
(`int ns::Widget::size() const` → `Widget.size`), templates and aliases. Namespaces are
not part of qualified names (as Java's packages).

A `.h` file is C++ by evidence: C++ keywords in it, or a C++ source beside it (when the
path says where it is).
"""

from __future__ import annotations

import functools
import os
import re

from tree_sitter import Node

from ctx_lsp.code.languages.c import (
    C_BUILTINS,
    declarator_name,
    include_imports,
    include_keys,
    include_probes,
    macro_constants,
)
from ctx_lsp.code.languages.spec import LanguageSpec, node_text, path_module_names

__all__ = ["LANGUAGES", "looks_cpp"]

QUERY = """
(function_definition) @definition.function
(declaration declarator: (function_declarator)) @definition.function
(field_declaration_list (field_declaration declarator: (function_declarator)) @definition.function)
(field_declaration_list (declaration declarator: (function_declarator)) @definition.function)
(class_specifier name: (_) body: (_)) @definition.class
(struct_specifier name: (_) body: (_)) @definition.struct
(union_specifier name: (_) body: (_)) @definition.struct
(enum_specifier name: (_) body: (_)) @definition.enum
(type_definition) @definition.type
(alias_declaration) @definition.type
(preproc_function_def) @definition.function

(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (qualified_identifier name: (identifier) @call))
(call_expression function: (template_function name: (identifier) @call))

(preproc_include) @import
(preproc_def) @constant
"""

REFERENCES = """
(identifier) @reference
(type_identifier) @reference
(field_identifier) @reference
(namespace_identifier) @reference
"""

BUILTINS = C_BUILTINS | frozenset(
    [
        "std",
        "string",
        "string_view",
        "vector",
        "map",
        "unordered_map",
        "set",
        "unordered_set",
        "array",
        "list",
        "deque",
        "pair",
        "tuple",
        "optional",
        "variant",
        "unique_ptr",
        "shared_ptr",
        "weak_ptr",
        "make_unique",
        "make_shared",
        "move",
        "forward",
        "size",
        "empty",
        "begin",
        "end",
        "push_back",
        "emplace_back",
        "insert",
        "erase",
        "find",
        "at",
        "data",
        "c_str",
        "cout",
        "cerr",
        "endl",
        "function",
        "thread",
        "mutex",
        "lock_guard",
        "unique_lock",
        "runtime_error",
        "invalid_argument",
        "exception",
        "nullptr_t",
        "override",
    ]
)

_CPP_EVIDENCE = re.compile(
    rb"std::|^[ \t\f]*(?:(?:class|namespace|template)\b|(?:public|private|protected):|using[ \t]+namespace\b)",
    re.MULTILINE,
)
"""`std::` first, and line starts without `\\s*` (which spans lines): a C header is searched
to its end, and this form does it 2.5x faster than `\\bstd::` after `^\\s*` alternatives
did (1.9 s vs 4.8 s over 9,072 headers of /usr/include, 118 MB; the same 2,384 found
C++). The old form took as long as tree-sitter's parse of a C header full of macros."""
_CPP_SIBLINGS = (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx")


def looks_cpp(path: str, source: bytes) -> bool:
    """A `.h` that uses C++ (`class`, `namespace`, `template`, `std::`, access specifiers),
    or sits beside C++ sources (checked when `path` is absolute)."""
    if _CPP_EVIDENCE.search(source):
        return True
    if not os.path.isabs(path):
        return False
    folder = os.path.dirname(path)
    try:
        mtime_ns = os.stat(folder).st_mtime_ns
    except OSError:
        return False
    return _holds_cpp_sources(folder, mtime_ns)


@functools.lru_cache(maxsize=1024)
def _holds_cpp_sources(folder: str, mtime_ns: int) -> bool:
    """Whether `folder` holds a C++ source. Listed once per folder and its mtime (which an
    added, removed or renamed entry changes), not once per header: a folder of n C headers
    cost n listings of n names, 0.24 s of /usr/include/linux's 760 headers, more than
    parsing them. An entry made within the filesystem's timestamp tick (a few ms) of a
    listing is seen when the folder next changes."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(name.lower().endswith(_CPP_SIBLINGS) for name in names)


def _class_of(node: Node, src: bytes) -> str | None:
    """`Widget` of an out-of-line `ns::Widget::size`: the last scope of its name."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in ("qualified_identifier", "identifier"):
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            return None
        declarator = inner
    scope = None
    while declarator is not None and declarator.type == "qualified_identifier":
        scope = declarator.child_by_field_name("scope")
        declarator = declarator.child_by_field_name("name")
    if scope is None:
        return None
    text = node_text(src, scope)
    return text.split("<", 1)[0] or None


SPEC = LanguageSpec(
    name="cpp",
    extensions=(".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".ipp", ".tpp", ".h"),
    evidence=lambda path, source: not path.lower().endswith(".h") or looks_cpp(path, source),
    grammar=("tree_sitter_cpp", "language"),
    query=QUERY,
    reference_query=REFERENCES,
    names={
        "function_definition": declarator_name,
        "declaration": declarator_name,
        "field_declaration": declarator_name,
        "type_definition": declarator_name,
    },
    owners={"function_definition": _class_of, "declaration": _class_of},
    imports=include_imports,
    constants=macro_constants,
    builtins=BUILTINS,
    fence="cpp",
    test_suffixes=("_test.cc", "_test.cpp", "_unittest.cc", "_unittest.cpp", "Test.cpp"),
    module_names=path_module_names,
    import_keys=include_keys,
    import_probes=include_probes,
)

LANGUAGES = [SPEC]
