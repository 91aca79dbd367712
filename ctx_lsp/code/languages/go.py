"""Go: functions, methods qualified by their receiver's type (`func (s *Stack[T]) Push` →
`Stack.Push`, pointer and type parameters stripped), structs, interfaces and their
methods, type definitions and aliases, imports one per spec, top-level constants and
exported variables. Doc comments are the `//` lines above a declaration; the package
comment is the module doc.
"""

from __future__ import annotations

import functools
import os

from tree_sitter import Node

from ctx_lsp.code.languages.spec import LanguageSpec, node_text
from ctx_lsp.code.outline import Import

__all__ = ["LANGUAGES"]

QUERY = """
(function_declaration) @definition.function
(method_declaration) @definition.method
(type_spec type: (struct_type)) @definition.struct
(type_spec type: (interface_type)) @definition.interface
(type_spec) @definition.type
(type_alias) @definition.type
(interface_type (method_elem) @definition.function)

(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))

(import_spec) @import

(source_file (const_declaration) @constant)
(source_file (var_declaration) @constant)
"""

REFERENCES = """
(identifier) @reference
(type_identifier) @reference
(field_identifier) @reference
"""

BUILTINS = frozenset(
    [
        "append",
        "cap",
        "clear",
        "close",
        "complex",
        "copy",
        "delete",
        "imag",
        "len",
        "make",
        "max",
        "min",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "any",
        "nil",
        "true",
        "false",
        "iota",
        "err",
        "ok",
        "ctx",
        "fmt",
        "os",
        "io",
        "bytes",
        "strings",
        "strconv",
        "errors",
        "time",
        "context",
        "sync",
        "atomic",
        "sort",
        "slices",
        "maps",
        "math",
        "rand",
        "http",
        "json",
        "filepath",
        "path",
        "bufio",
        "log",
        "reflect",
        "regexp",
        "unicode",
        "utf8",
        "testing",
        "runtime",
        "flag",
        "exec",
        "url",
        "template",
        "Println",
        "Printf",
        "Sprintf",
        "Sprint",
        "Errorf",
        "Error",
        "String",
        "Fprintf",
        "Fprintln",
        "New",
        "Is",
        "As",
        "Unwrap",
        "Join",
        "Contains",
        "HasPrefix",
        "HasSuffix",
        "TrimSpace",
        "TrimPrefix",
        "TrimSuffix",
        "ToUpper",
        "ToLower",
        "Split",
        "Itoa",
        "Atoi",
        "Marshal",
        "Unmarshal",
        "Background",
        "WithCancel",
        "Now",
        "Since",
        "Lock",
        "Unlock",
        "RLock",
        "RUnlock",
        "Done",
        "Wait",
        "Add",
        "Close",
        "Read",
        "Write",
        "Len",
        "Fatal",
        "Fatalf",
        "Errorf",
        "Helper",
        "Run",
    ]
)
"""Builtins, the standard library's common packages and their most used functions."""


def _body(node: Node) -> Node | None:
    """A struct's field list; an interface's `{` (its members are its own definitions)."""
    kind = node.child_by_field_name("type")
    if kind is None:
        return None
    if kind.type == "struct_type":
        return next((c for c in kind.named_children if c.type == "field_declaration_list"), None)
    if kind.type == "interface_type":
        return next((c for c in kind.children if c.type == "{"), None)
    return None


def _receiver_type(node: Node, src: bytes) -> str | None:
    """`Stack` of `(s *Stack[T])`."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    for parameter in receiver.named_children:
        kind = parameter.child_by_field_name("type")
        while kind is not None and kind.type in ("pointer_type", "generic_type", "parenthesized_type"):
            inner = kind.child_by_field_name("type")
            kind = inner if inner is not None else (kind.named_child(0) if kind.named_child_count else None)
        if kind is not None:
            return node_text(src, kind)
    return None


def _imports(node: Node, src: bytes) -> list[Import]:
    path = node.child_by_field_name("path")
    module = node_text(src, path).strip('"`')
    alias = node.child_by_field_name("name")
    name = node_text(src, alias) if alias is not None else module.rsplit("/", 1)[-1]
    return [Import(node.start_point[0] + 1, f"import {node_text(src, node)}", module, (name,))]


def _constants(node: Node, src: bytes) -> list[tuple[str, Node]]:
    """Each constant, and each exported variable (`var ErrEmpty = ...`) of a declaration."""
    constant = node.type == "const_declaration"
    found = []
    stack = list(node.named_children)
    while stack:
        child = stack.pop()
        if child.type in ("const_spec", "var_spec"):
            for name in child.children_by_field_name("name"):
                text = node_text(src, name)
                if constant or text[:1].isupper():
                    found.append((text, child))
        elif child.type == "var_spec_list":
            stack.extend(child.named_children)
    found.sort(key=lambda item: item[1].start_byte)
    return found


def _import_keys(rel_path: str) -> tuple[str, ...]:
    """Every file of a package answers to its folder: importing the package reaches all."""
    return ("go:" + rel_path.rpartition("/")[0],)


@functools.lru_cache(maxsize=64)
def _module_path(root: str) -> str | None:
    """The module path `go.mod` at the workspace folder declares, if any."""
    try:
        with open(os.path.join(root, "go.mod"), encoding="utf-8", errors="replace") as f:
            for line in f:
                words = line.split()
                if len(words) >= 2 and words[0] == "module":
                    return words[1].strip('"')
    except OSError:
        return None
    return None


def _import_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    """`github.com/spf13/cobra/doc` is the folder `doc` of the module `github.com/spf13/cobra`
    (from `go.mod`); without a `go.mod`, the longest tail of the path that is a folder."""
    module = _module_path(root)
    path = imp.module
    if module is not None:
        if path == module:
            return [("go:",)]
        if path.startswith(module + "/"):
            return [("go:" + path[len(module) + 1 :],)]
        return []
    parts = path.split("/")
    return [tuple("go:" + "/".join(parts[i:]) for i in range(len(parts)))]


def _package_names(rel_path: str) -> tuple[str, ...]:
    """A file's definitions are qualified by its package, named after its directory."""
    parts = rel_path.split("/")[:-1]
    return (parts[-1],) if parts else ()


LANGUAGES = [
    LanguageSpec(
        name="go",
        extensions=(".go",),
        grammar=("tree_sitter_go", "language"),
        query=QUERY,
        reference_query=REFERENCES,
        bodies={"type_spec": _body},
        owners={"method_declaration": _receiver_type},
        imports=_imports,
        constants=_constants,
        builtins=BUILTINS,
        fence="go",
        test_suffixes=("_test.go",),
        module_names=_package_names,
        import_keys=_import_keys,
        import_probes=_import_probes,
        import_configs=("go.mod",),
        reload_configs=_module_path.cache_clear,
    )
]
