"""C#: classes, records, structs, interfaces and enums with their methods and
constructors, `using` directives. `[Attributes]` are decorators and `///` XML comments
docs (tags stripped). Namespaces are the file's, as Java's packages: left out of
qualified names (`Service.Run`).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ctx_lsp.code.languages.spec import LanguageSpec, node_text, path_module_names
from ctx_lsp.code.outline import Import

__all__ = ["LANGUAGES"]

QUERY = """
(class_declaration) @definition.class
(record_declaration) @definition.class
(struct_declaration) @definition.struct
(interface_declaration) @definition.interface
(enum_declaration) @definition.enum
(method_declaration) @definition.method
(constructor_declaration) @definition.method

(invocation_expression function: (identifier) @call)
(invocation_expression function: (member_access_expression name: (identifier) @call))
(object_creation_expression type: (identifier) @call)

(using_directive) @import
"""

REFERENCES = """
(identifier) @reference
"""

BUILTINS = frozenset(
    [
        "System",
        "Console",
        "WriteLine",
        "Write",
        "String",
        "Object",
        "Int32",
        "Int64",
        "Boolean",
        "Double",
        "Decimal",
        "Math",
        "List",
        "Dictionary",
        "HashSet",
        "IEnumerable",
        "IList",
        "IDictionary",
        "ICollection",
        "Task",
        "ValueTask",
        "Func",
        "Action",
        "Exception",
        "ArgumentException",
        "ArgumentNullException",
        "InvalidOperationException",
        "NotImplementedException",
        "Linq",
        "Select",
        "Where",
        "ToList",
        "ToArray",
        "FirstOrDefault",
        "Any",
        "Count",
        "Add",
        "Remove",
        "Contains",
        "ContainsKey",
        "TryGetValue",
        "Get",
        "Set",
        "ToString",
        "Equals",
        "GetHashCode",
        "GetType",
        "Format",
        "IsNullOrEmpty",
        "Join",
        "Split",
        "Trim",
        "var",
        "nameof",
        "typeof",
        "Serializable",
        "Obsolete",
        "Fact",
        "Theory",
        "Test",
        "Assert",
        "Equal",
        "True",
        "False",
        "NotNull",
        "Null",
    ]
)

_XML_TAG = re.compile(r"</?\w+[^>]*>")


def _imports(node: Node, src: bytes) -> list[Import]:
    text = " ".join(node_text(src, node).split())
    path = next((c for c in node.named_children if c.type in ("qualified_name", "identifier")), None)
    module = node_text(src, path)
    return [Import(node.start_point[0] + 1, text, module, (module.rsplit(".", 1)[-1],))]


def _import_keys(rel_path: str) -> tuple[str, ...]:
    """A file answers to the tails of its folder as a dotted name: `src/Shop.Core/Models/
    Cart.cs` to `Models`, `Core.Models`, `Shop.Core.Models`, ... A namespace is not
    tied to a path in C#, but projects mirror it in their folders by convention."""
    folder = rel_path.rpartition("/")[0]
    parts = [p for segment in folder.split("/") for p in segment.split(".") if p]
    return tuple(f"cs:{'.'.join(parts[i:])}" for i in range(len(parts)))


def _import_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    """`using Shop.Core.Models;` reaches the files of a folder ending in that namespace."""
    if not imp.module or imp.module.startswith(("System", "Microsoft")):
        return []
    return [(f"cs:{imp.module}",)]


LANGUAGES = [
    LanguageSpec(
        name="csharp",
        extensions=(".cs",),
        grammar=("tree_sitter_c_sharp", "language"),
        query=QUERY,
        reference_query=REFERENCES,
        imports=_imports,
        attribute_prefixes=(b"[",),
        builtins=BUILTINS,
        fence="csharp",
        test_suffixes=("Test.cs", "Tests.cs"),
        module_names=path_module_names,
        import_keys=_import_keys,
        import_probes=_import_probes,
        doc_cleaner=lambda text: _XML_TAG.sub("", text).strip(),
    )
]
