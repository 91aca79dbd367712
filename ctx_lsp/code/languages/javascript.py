"""JavaScript (and JSX): classes and their members, functions, `const X = (...) =>`
components, object-literal methods (`const api = { get() {} }` → `api.get`), ES imports,
re-exports and `require`.

The patterns both JavaScript and TypeScript grammars know live here (`COMMON_QUERY` and
the hooks); `typescript.py` adds interfaces, type aliases, enums and namespaces on top.
"""

from __future__ import annotations

from tree_sitter import Node

from ctx_lsp.code.languages.js_imports import CONFIG_FILES, import_keys, import_probes, reload_configs
from ctx_lsp.code.languages.spec import LanguageSpec, node_text, path_module_names
from ctx_lsp.code.outline import Import
from ctx_lsp.tokens import ellipsize

__all__ = ["COMMON_QUERY", "JSX_QUERY", "JS_BUILTINS", "LANGUAGES", "SHARED_HOOKS"]

_FUNCTION_VALUES = "[(arrow_function) (function_expression) (generator_function)]"

COMMON_QUERY = f"""
(function_declaration) @definition.function
(generator_function_declaration) @definition.function
(class_declaration) @definition.class
(class_body (method_definition) @definition.function)
(variable_declarator name: (identifier) value: {_FUNCTION_VALUES}) @definition.function
(variable_declarator name: (identifier) value: (parenthesized_expression {_FUNCTION_VALUES})) @definition.function
(variable_declarator name: (identifier)
  value: (object [(method_definition) (pair value: {_FUNCTION_VALUES})])) @definition.module
(variable_declarator value: (object (method_definition) @definition.function))
(variable_declarator value: (object (pair key: (property_identifier) value: {_FUNCTION_VALUES}) @definition.function))

(program (expression_statement (assignment_expression
  left: (member_expression property: (property_identifier)) right: {_FUNCTION_VALUES}) @definition.function))

(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)

(import_statement) @import
(export_statement source: (_)) @import
(lexical_declaration (variable_declarator value: (call_expression function: (identifier) @_require
  arguments: (arguments (string)))) (#eq? @_require "require")) @import

(program (lexical_declaration) @constant)
(program (export_statement declaration: (lexical_declaration) @constant))
"""

JSX_QUERY = """
(jsx_opening_element name: (identifier) @call (#match? @call "^[A-Z]"))
(jsx_self_closing_element name: (identifier) @call (#match? @call "^[A-Z]"))
(jsx_opening_element name: (member_expression property: (property_identifier) @call))
(jsx_self_closing_element name: (member_expression property: (property_identifier) @call))
"""
"""A component rendered as `<Header />` is called (`<div>` is not: components are
capitalised). JSX grammars only (not plain `.ts`)."""

COMMON_REFERENCES = """
(identifier) @reference
(property_identifier) @reference
(shorthand_property_identifier) @reference
"""

JS_BUILTINS = frozenset(
    [
        "console",
        "window",
        "document",
        "globalThis",
        "global",
        "self",
        "process",
        "require",
        "module",
        "exports",
        "undefined",
        "NaN",
        "Infinity",
        "Object",
        "Array",
        "String",
        "Number",
        "Boolean",
        "Symbol",
        "BigInt",
        "Function",
        "Promise",
        "Map",
        "Set",
        "WeakMap",
        "WeakSet",
        "JSON",
        "Math",
        "Date",
        "RegExp",
        "Error",
        "TypeError",
        "RangeError",
        "SyntaxError",
        "Reflect",
        "Proxy",
        "Intl",
        "URL",
        "URLSearchParams",
        "fetch",
        "Response",
        "Request",
        "Headers",
        "setTimeout",
        "clearTimeout",
        "setInterval",
        "clearInterval",
        "queueMicrotask",
        "structuredClone",
        "parseInt",
        "parseFloat",
        "isNaN",
        "encodeURIComponent",
        "decodeURIComponent",
        "arguments",
        "length",
        "push",
        "pop",
        "shift",
        "unshift",
        "slice",
        "splice",
        "map",
        "filter",
        "reduce",
        "forEach",
        "find",
        "findIndex",
        "some",
        "every",
        "includes",
        "indexOf",
        "join",
        "split",
        "concat",
        "keys",
        "values",
        "entries",
        "assign",
        "freeze",
        "create",
        "defineProperty",
        "hasOwnProperty",
        "toString",
        "valueOf",
        "then",
        "catch",
        "finally",
        "resolve",
        "reject",
        "all",
        "apply",
        "call",
        "bind",
        "prototype",
        "log",
        "warn",
        "error",
        "info",
        "debug",
        "trim",
        "replace",
        "startsWith",
        "endsWith",
        "toLowerCase",
        "toUpperCase",
        "get",
        "set",
        "has",
        "delete",
        "add",
        "clear",
        "size",
        "stringify",
        "parse",
        "from",
        "isArray",
        "sort",
        "reverse",
        "fill",
        "flat",
        "flatMap",
    ]
)
"""Globals and the standard library's member names: `console.log`, `arr.map` link nothing."""


_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression"})
"""What may wrap a function value: `const f = ((x) => x) as Creator`."""


def _unwrapped(value: Node | None) -> Node | None:
    while value is not None and value.type in _WRAPPERS and value.named_child_count:
        value = value.named_child(0)
    return value


def _value_body(node: Node) -> Node | None:
    """The body of `x = () => {}` / `x: function () {}`; the object of `const api = {...}`."""
    value = _unwrapped(node.child_by_field_name("value"))
    if value is None:
        return None
    if value.type == "object":
        return value
    return value.child_by_field_name("body")


def _assigned_name(node: Node) -> Node | None:
    """`foo` of `exports.foo = function () {}` / `Foo.prototype.foo = ...`."""
    left = node.child_by_field_name("left")
    return left.child_by_field_name("property") if left is not None else None


def _assigned_body(node: Node) -> Node | None:
    right = node.child_by_field_name("right")
    return right.child_by_field_name("body") if right is not None else None


def _prototype_owner(node: Node, src: bytes) -> str | None:
    """`Foo` of `Foo.prototype.bar = function () {}`: a method of Foo, as a class's would be."""
    left = node.child_by_field_name("left")
    target = left.child_by_field_name("object") if left is not None else None
    if target is None or target.type != "member_expression":
        return None
    if node_text(src, target.child_by_field_name("property")) != "prototype":
        return None
    owner = target.child_by_field_name("object")
    return node_text(src, owner) if owner is not None and owner.type == "identifier" else None


def _key(node: Node) -> Node | None:
    return node.child_by_field_name("key")


def _property(node: Node) -> Node | None:
    return node.child_by_field_name("property") or node.child_by_field_name("name")


def _string_value(src: bytes, node: Node | None) -> str:
    if node is None:
        return ""
    text = node_text(src, node)
    return text[1:-1] if len(text) >= 2 and text[0] in "'\"`" else text


def imports_of(node: Node, src: bytes) -> list[Import]:
    """One import per statement: the module as written (`./store`, `react`) and the names it
    takes (`*` for a namespace import or `export * from`)."""
    text = ellipsize(" ".join(node_text(src, node).split()), 200)
    line = node.start_point[0] + 1
    names: list[str] = []
    if node.type in ("lexical_declaration", "variable_declaration"):
        for declarator in node.named_children:
            value = declarator.child_by_field_name("value")
            arguments = value.child_by_field_name("arguments") if value is not None else None
            if arguments is None or not arguments.named_child_count:
                continue
            name = declarator.child_by_field_name("name")
            return [Import(line, text, _string_value(src, arguments.named_child(0)), (node_text(src, name),))]
        return []
    module = _string_value(src, node.child_by_field_name("source"))
    stack = list(node.named_children)
    while stack:
        child = stack.pop()
        kind = child.type
        if kind in ("import_specifier", "export_specifier"):
            names.append(node_text(src, child.child_by_field_name("name")))
        elif kind == "namespace_import" or kind == "namespace_export":
            names.append("*")
        elif kind == "identifier" and child.parent is not None and child.parent.type == "import_clause":
            names.append(node_text(src, child))
        elif kind in ("import_clause", "named_imports", "export_clause"):
            stack.extend(child.named_children)
    if node.type == "export_statement" and not names:
        names.append("*")
    return [Import(line, text, module, tuple(reversed(names)))]


def _holds_functions(value: Node) -> bool:
    for child in value.named_children:
        if child.type == "method_definition":
            return True
        if child.type == "pair":
            inner = child.child_by_field_name("value")
            if inner is not None and inner.type in ("arrow_function", "function_expression", "generator_function"):
                return True
    return False


def constants_of(node: Node, src: bytes) -> list[tuple[str, Node]]:
    """Top-level `const X = ...` that are not functions (those are definitions)."""
    if node.child_count == 0 or node.child(0).type != "const":  # `let` is state, not a constant
        return []
    found = []
    for declarator in node.named_children:
        if declarator.type != "variable_declarator":
            continue
        name = declarator.child_by_field_name("name")
        value = _unwrapped(declarator.child_by_field_name("value"))
        if name is None or name.type != "identifier" or value is None:
            continue
        if value.type in ("arrow_function", "function_expression", "generator_function", "class"):
            continue
        if value.type == "object" and _holds_functions(value):
            continue
        if value.type == "call_expression" and node_text(src, value.child_by_field_name("function")) == "require":
            continue  # an import
        found.append((node_text(src, name), node))
    return found


SHARED_HOOKS = {
    "names": {
        "pair": _key,
        "field_definition": _property,
        "public_field_definition": _property,
        "assignment_expression": _assigned_name,
    },
    "owners": {"assignment_expression": _prototype_owner},
    "bodies": {
        "assignment_expression": _assigned_body,
        "variable_declarator": _value_body,
        "pair": _value_body,
        "field_definition": _value_body,
        "public_field_definition": _value_body,
    },
    "imports": imports_of,
    "constants": constants_of,
}


JS_QUERY = (
    COMMON_QUERY
    + JSX_QUERY
    + f"""
(class_body (field_definition property: (property_identifier) value: {_FUNCTION_VALUES}) @definition.function)
"""
)

JAVASCRIPT = LanguageSpec(
    name="javascript",
    extensions=(".js", ".jsx", ".mjs", ".cjs"),
    grammar=("tree_sitter_javascript", "language"),
    query=JS_QUERY,
    reference_query=COMMON_REFERENCES,
    builtins=JS_BUILTINS,
    attribute_prefixes=(b"@",),
    fence="javascript",
    test_suffixes=(".test.js", ".spec.js", ".test.jsx", ".spec.jsx", ".test.mjs", ".spec.mjs", ".test.cjs"),
    test_dirs=("__tests__", "__mocks__"),
    module_names=path_module_names,
    import_keys=import_keys,
    import_probes=import_probes,
    import_configs=CONFIG_FILES,
    reload_configs=reload_configs,
    **SHARED_HOOKS,  # type: ignore[arg-type]
)

LANGUAGES = [JAVASCRIPT]
