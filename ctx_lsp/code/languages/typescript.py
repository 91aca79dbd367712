"""TypeScript and TSX: JavaScript's definitions (`javascript.py`) plus interfaces, type
aliases, enums, namespaces, abstract classes, overload and interface method signatures.

`.tsx` needs its own grammar (`language_tsx()`: with the TypeScript one, JSX lines are
errors) and `.ts` the other (`<number>x` casts fail under TSX), so there are two specs,
one language: both outlines say `typescript`.
"""

from __future__ import annotations

from dataclasses import replace

from ctx_lsp.code.languages.javascript import (
    _FUNCTION_VALUES,
    COMMON_QUERY,
    COMMON_REFERENCES,
    JS_BUILTINS,
    JSX_QUERY,
    SHARED_HOOKS,
)
from ctx_lsp.code.languages.js_imports import CONFIG_FILES, import_keys, import_probes, reload_configs
from ctx_lsp.code.languages.spec import LanguageSpec, path_module_names

__all__ = ["LANGUAGES"]

TS_QUERY = (
    COMMON_QUERY
    + f"""
(abstract_class_declaration) @definition.class
(interface_declaration) @definition.interface
(type_alias_declaration) @definition.type
(enum_declaration) @definition.enum
(internal_module name: (identifier)) @definition.module
(interface_body (method_signature) @definition.function)
(class_body (abstract_method_signature) @definition.function)
(class_body (method_signature) @definition.function)
(function_signature) @definition.function
(variable_declarator name: (identifier)
  value: (as_expression (parenthesized_expression {_FUNCTION_VALUES}))) @definition.function
(variable_declarator name: (identifier)
  value: (satisfies_expression (parenthesized_expression {_FUNCTION_VALUES}))) @definition.function
(class_body (public_field_definition name: (property_identifier) value: {_FUNCTION_VALUES}) @definition.function)
"""
)

TS_BUILTINS = JS_BUILTINS | frozenset(
    [
        "Record",
        "Partial",
        "Required",
        "Readonly",
        "Pick",
        "Omit",
        "Exclude",
        "Extract",
        "NonNullable",
        "ReturnType",
        "Parameters",
        "InstanceType",
        "Awaited",
        "PromiseLike",
        "ArrayLike",
        "Iterable",
        "Iterator",
        "AsyncIterable",
        "ReadonlyArray",
    ]
)

TYPESCRIPT = LanguageSpec(
    name="typescript",
    extensions=(".ts", ".mts", ".cts"),
    grammar=("tree_sitter_typescript", "language_typescript"),
    query=TS_QUERY,
    reference_query=COMMON_REFERENCES + "(type_identifier) @reference\n",
    builtins=TS_BUILTINS,
    attribute_prefixes=(b"@",),
    fence="typescript",
    test_suffixes=(".test.ts", ".spec.ts", ".test.tsx", ".spec.tsx", ".test-d.ts", ".test.mts"),
    test_dirs=("__tests__", "__mocks__"),
    module_names=path_module_names,
    import_keys=import_keys,
    import_probes=import_probes,
    import_configs=CONFIG_FILES,
    reload_configs=reload_configs,
    **SHARED_HOOKS,  # type: ignore[arg-type]
)

TSX = replace(
    TYPESCRIPT,
    extensions=(".tsx",),
    grammar=("tree_sitter_typescript", "language_tsx"),
    query=TS_QUERY + JSX_QUERY,
    fence="tsx",
)

LANGUAGES = [TYPESCRIPT, TSX]
