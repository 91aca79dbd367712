"""Java: classes, records, interfaces, enums and annotation types with their methods and
constructors, `import` declarations. Annotations (`@Override`) are a definition's
decorators and `/** Javadoc */` its doc; the package is the file's, so it is left out of
qualified names (`Foo.run`, found too as `com.acme.Foo.run` through the file's path).
"""

from __future__ import annotations

from tree_sitter import Node

from ctx_lsp.code.languages.spec import LanguageSpec, node_text, path_module_names
from ctx_lsp.code.outline import Import

__all__ = ["LANGUAGES"]

QUERY = """
(class_declaration) @definition.class
(record_declaration) @definition.class
(interface_declaration) @definition.interface
(annotation_type_declaration) @definition.interface
(enum_declaration) @definition.enum
(method_declaration) @definition.method
(constructor_declaration) @definition.method
(compact_constructor_declaration) @definition.method

(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)

(import_declaration) @import
"""

REFERENCES = """
(identifier) @reference
(type_identifier) @reference
"""

BUILTINS = frozenset(
    [
        "String",
        "Object",
        "Integer",
        "Long",
        "Short",
        "Byte",
        "Character",
        "Boolean",
        "Double",
        "Float",
        "Number",
        "Void",
        "Math",
        "System",
        "out",
        "err",
        "println",
        "printf",
        "print",
        "format",
        "List",
        "Map",
        "Set",
        "Collection",
        "ArrayList",
        "LinkedList",
        "HashMap",
        "LinkedHashMap",
        "TreeMap",
        "HashSet",
        "LinkedHashSet",
        "Optional",
        "Arrays",
        "Collections",
        "Objects",
        "StringBuilder",
        "Iterator",
        "Iterable",
        "Comparable",
        "Comparator",
        "Runnable",
        "Thread",
        "Exception",
        "RuntimeException",
        "IllegalArgumentException",
        "IllegalStateException",
        "NullPointerException",
        "IOException",
        "Override",
        "Deprecated",
        "SuppressWarnings",
        "FunctionalInterface",
        "Function",
        "Supplier",
        "Consumer",
        "Predicate",
        "BiFunction",
        "Stream",
        "Collectors",
        "Class",
        "toString",
        "equals",
        "hashCode",
        "getClass",
        "get",
        "set",
        "add",
        "put",
        "remove",
        "size",
        "isEmpty",
        "contains",
        "stream",
        "map",
        "filter",
        "collect",
        "of",
        "valueOf",
        "length",
        "append",
        "forEach",
        "Test",
        "assertEquals",
        "assertTrue",
        "assertFalse",
        "assertNotNull",
        "assertNull",
        "assertThrows",
    ]
)


def _imports(node: Node, src: bytes) -> list[Import]:
    text = " ".join(node_text(src, node).split())
    path = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    module = node_text(src, path)
    wildcard = any(c.type == "asterisk" for c in node.children)
    names = ("*",) if wildcard else (module.rsplit(".", 1)[-1],)
    return [Import(node.start_point[0] + 1, text, module, names)]


def _module_names(rel_path: str) -> tuple[str, ...]:
    """`src/main/java/com/acme/Foo.java` answers to `com.acme.Foo` and `Foo`."""
    for root in ("src/main/java/", "src/test/java/", "src/"):
        if root in rel_path:
            rel_path = rel_path.split(root, 1)[1]
            break
    return path_module_names(rel_path)


def _import_keys(rel_path: str) -> tuple[str, ...]:
    """`com/acme/Foo.java` answers to `java:com.acme.Foo` and, for wildcard imports, to
    its package `java:com.acme.*`."""
    names = _module_names(rel_path)
    if not names:
        return ()
    dotted = names[0]
    package = dotted.rpartition(".")[0]
    return (f"java:{dotted}", f"java:{package}.*")


def _import_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    """`import a.b.C;` → the file of `a.b.C`; `import a.b.*;` → every file of package `a.b`;
    `import static a.b.C.m;` → `a.b.C.m`'s class `a.b.C`."""
    if imp.names == ("*",):
        return [(f"java:{imp.module}.*", f"java:{imp.module}")]
    return [(f"java:{imp.module}", f"java:{imp.module.rpartition('.')[0]}")]


LANGUAGES = [
    LanguageSpec(
        name="java",
        extensions=(".java",),
        grammar=("tree_sitter_java", "language"),
        query=QUERY,
        reference_query=REFERENCES,
        imports=_imports,
        attribute_prefixes=(b"@",),
        builtins=BUILTINS,
        fence="java",
        test_suffixes=("Test.java", "Tests.java", "IT.java"),
        module_names=_module_names,
        import_keys=_import_keys,
        import_probes=_import_probes,
    )
]
