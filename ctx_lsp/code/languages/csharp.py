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
        module_names=path_module_names,
        doc_cleaner=lambda text: _XML_TAG.sub("", text).strip(),
    )
]
