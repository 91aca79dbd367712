"""JavaScript (and JSX): classes and their members, functions, `const X = (...) =>`
components, object-literal methods (`const api = { get() {} }` → `api.get`), ES imports,
re-exports and `require`.

The patterns both JavaScript and TypeScript grammars know live here (`COMMON_QUERY` and
the hooks); `typescript.py` adds interfaces, type aliases, enums and namespaces on top.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import posixpath
import re

from tree_sitter import Node

from ctx_lsp.code.languages.paths import joined, path_key
from ctx_lsp.code.languages.spec import LanguageSpec, node_text, path_module_names
from ctx_lsp.code.outline import Import
from ctx_lsp.tokens import ellipsize

__all__ = ["COMMON_QUERY", "JS_BUILTINS", "LANGUAGES", "SHARED_HOOKS"]

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
    "names": {"pair": _key, "field_definition": _property, "public_field_definition": _property},
    "bodies": {
        "variable_declarator": _value_body,
        "pair": _value_body,
        "field_definition": _value_body,
        "public_field_definition": _value_body,
    },
    "imports": imports_of,
    "constants": constants_of,
}


SCRIPT_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
"""What a relative specifier without its extension may name, in the order bundlers try."""


def import_keys(rel_path: str) -> tuple[str, ...]:
    return (path_key(rel_path),)


def import_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    """A relative specifier (`./store`, `../utils/index.js`) as the files it may name:
    itself, with each script extension (`./x.js` also names `x.ts`, as TypeScript's ESM
    resolution does), and its folder's `index.*`. A bare specifier goes through the
    workspace's `tsconfig.json`/`jsconfig.json` (`paths`, then `baseUrl`); others are
    packages outside the workspace (package workspaces are not resolved yet)."""
    if imp.module.startswith("."):
        base = joined(rel_path, imp.module)
        return [] if base is None else [_file_candidates(base)]
    groups = _workspace_package_probes(imp.module, root)
    config = _path_config(root)
    if config is None:
        return groups
    base_url, patterns = config
    specifier = imp.module
    for pattern, targets in patterns:
        star = _matched_star(pattern, specifier)
        if star is None:
            continue
        for target in targets:
            path = posixpath.normpath(target.replace("*", star, 1))
            if not path.startswith(".."):
                groups.append(_file_candidates(path))
    if base_url is not None:
        path = posixpath.normpath(posixpath.join(base_url, specifier))
        if not path.startswith(".."):
            groups.append(_file_candidates(path))
    return groups


def _workspace_package_probes(specifier: str, root: str) -> list[tuple[str, ...]]:
    """`@acme/ui` or `@acme/ui/button` as a package of the repository's workspaces: its
    entry point's source (`source`, `types`, `module`, `main` with `dist/`→`src/`), then
    `src/index.*` and `index.*`; a subpath in the package's folder or its `src/`."""
    packages = _workspace_packages(root)
    if not packages:
        return []
    parts = specifier.split("/")
    count = 2 if specifier.startswith("@") else 1
    name, subpath = "/".join(parts[:count]), "/".join(parts[count:])
    found = packages.get(name)
    if found is None:
        return []
    folder, entries = found
    join = posixpath.join
    if subpath:
        return [_file_candidates(join(folder, subpath)), _file_candidates(join(folder, "src", subpath))]
    groups = [_file_candidates(join(folder, entry)) for entry in entries]
    groups += [_file_candidates(join(folder, "src/index")), _file_candidates(join(folder, "index"))]
    return groups


_ENTRY_FIELDS = ("source", "types", "typings", "module", "main")
_SCRIPT_SUFFIX = re.compile(r"\.(?:d\.ts|[mc]?[jt]sx?)$")


def _entries(manifest: dict) -> tuple[str, ...]:
    """A package's entry points as source paths without their extension."""
    found = [manifest[f] for f in _ENTRY_FIELDS if isinstance(manifest.get(f), str)]
    exports = manifest.get("exports")
    dot = exports.get(".") if isinstance(exports, dict) else exports
    if isinstance(dot, str):
        found.append(dot)
    elif isinstance(dot, dict):
        found.extend(v for v in dot.values() if isinstance(v, str))
    out = []
    for entry in found:
        path = posixpath.normpath(_SCRIPT_SUFFIX.sub("", entry))
        if path.startswith(".."):
            continue
        out.append(path)
        if path.startswith(("dist/", "lib/", "build/", "out/")):
            out.append("src/" + path.split("/", 1)[1])
    return tuple(dict.fromkeys(out))


def _workspace_globs(root: str) -> list[str]:
    """The package folders' patterns: package.json `workspaces`, pnpm-workspace.yaml."""
    manifest = _read_jsonc(os.path.join(root, "package.json")) or {}
    declared = manifest.get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    patterns = [p for p in declared if isinstance(p, str)] if isinstance(declared, list) else []
    try:
        with open(os.path.join(root, "pnpm-workspace.yaml"), encoding="utf-8", errors="replace") as f:
            for line in f:
                item = line.strip()
                if item.startswith("- "):
                    patterns.append(item[2:].strip().strip("'\""))
    except OSError:
        pass
    return [p for p in patterns if not p.startswith("!")]


MAX_WORKSPACE_PACKAGES = 500


@functools.lru_cache(maxsize=32)
def _workspace_packages(root: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Package name → (its folder in the workspace folder, entry points) for the
    repository's own packages. Read once per process, like the tsconfig."""
    packages: dict[str, tuple[str, tuple[str, ...]]] = {}
    for pattern in _workspace_globs(root):
        for manifest_path in sorted(glob.glob(os.path.join(root, pattern, "package.json"), recursive=True)):
            if "node_modules" in manifest_path or len(packages) >= MAX_WORKSPACE_PACKAGES:
                continue
            manifest = _read_jsonc(manifest_path)
            name = manifest.get("name") if manifest else None
            if isinstance(name, str) and manifest is not None:
                folder = os.path.relpath(os.path.dirname(manifest_path), root).replace(os.sep, "/")
                packages.setdefault(name, (folder, _entries(manifest)))
    return packages


def _matched_star(pattern: str, specifier: str) -> str | None:
    """What `*` stands for when `specifier` matches a `paths` pattern ("" for an exact one)."""
    if "*" not in pattern:
        return "" if pattern == specifier else None
    prefix, _, suffix = pattern.partition("*")
    if specifier.startswith(prefix) and specifier.endswith(suffix) and len(specifier) >= len(prefix) + len(suffix):
        return specifier[len(prefix) : len(specifier) - len(suffix)]
    return None


_JSONC_NOISE = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
MAX_EXTENDS = 5


def _read_jsonc(path: str) -> dict | None:
    """A tsconfig file: JSON with comments and trailing commas."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
        data = json.loads(_TRAILING_COMMA.sub(r"\1", _JSONC_NOISE.sub(lambda m: m.group(1) or "", text)))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@functools.lru_cache(maxsize=32)
def _path_config(root: str) -> tuple[str | None, tuple[tuple[str, tuple[str, ...]], ...]] | None:
    """(baseUrl, `paths` with targets) of the workspace folder's tsconfig/jsconfig, relative
    to the folder, following relative `extends` (the child's options win). Read once per
    process: a changed config is seen by the next process."""
    for name in CONFIG_NAMES:
        config_path = os.path.join(root, name)
        if os.path.isfile(config_path):
            break
    else:
        return None
    chain: list[tuple[str, dict]] = []
    current: str | None = config_path
    while current is not None and len(chain) < MAX_EXTENDS:
        data = _read_jsonc(current)
        if data is None:
            break
        chain.append((current, data.get("compilerOptions") or {}))
        extends = data.get("extends")
        if isinstance(extends, list):
            extends = extends[0] if extends else None
        if isinstance(extends, str) and extends.startswith("."):
            current = os.path.normpath(os.path.join(os.path.dirname(current), extends))
            if not current.endswith(".json"):
                current += ".json"
        else:
            current = None
    base_url: str | None = None
    paths: dict = {}
    paths_base: str | None = None
    for path, compiler in reversed(chain):  # the base first, so the child's options win
        folder = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
        if isinstance(compiler.get("baseUrl"), str):
            base_url = posixpath.normpath(posixpath.join(folder, compiler["baseUrl"]))
        if isinstance(compiler.get("paths"), dict):
            paths = compiler["paths"]
            paths_base = folder
    prefix = base_url if base_url is not None else (paths_base or ".")
    patterns = tuple(
        (pattern, tuple(posixpath.join(prefix, t) for t in targets if isinstance(t, str)))
        for pattern, targets in paths.items()
        if isinstance(pattern, str) and isinstance(targets, list)
    )
    if base_url is None and not patterns:
        return None
    return base_url, patterns


def _file_candidates(base: str) -> tuple[str, ...]:
    """Keys of the files a specifier's path may name (see `import_probes`)."""
    stem = base
    for extension in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(extension):
            stem = base[: -len(extension)]
            break
    candidates = [base, *(stem + e for e in SCRIPT_EXTENSIONS), *(f"{base}/index{e}" for e in SCRIPT_EXTENSIONS)]
    return tuple(path_key(c) for c in dict.fromkeys(candidates) if c)


JS_QUERY = (
    COMMON_QUERY
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
    module_names=path_module_names,
    import_keys=import_keys,
    import_probes=import_probes,
    **SHARED_HOOKS,  # type: ignore[arg-type]
)

LANGUAGES = [JAVASCRIPT]
