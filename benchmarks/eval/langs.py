"""Languages of the eval: which files are source, which are tests, and the gold definitions.

The gold for TypeScript/JavaScript, Go and Rust (the innermost definition enclosing
each changed line) comes from tree-sitter, through the per-language grammar wheels
(``tree-sitter-typescript``, ``-javascript``, ``-go``, ``-rust``; offline, tree-sitter
0.26). It deliberately does not use ctx-lsp's own language code: the measure must
stay independent of the thing measured. Python keeps its ``ast`` gold
(``instances.definitions``), unchanged.

What counts as a definition (the analogue of Python's module- and class-level
``def``/``class``; anything nested in a function folds into that function):

- TypeScript/JavaScript: functions (and overload signatures), classes, interfaces,
  type aliases, enums, namespaces, and ``const``/``let`` declarations whose value is a
  function (``export const f = (...) => ...``, ``function () {}``, a class expression,
  or a call given a function, e.g. ``createMiddleware(async (c, next) => ...)``).
  Class members that are methods (or fields holding a function) are ``Class.member``;
  other lines of a class body belong to the class.
- Go: functions, methods qualified by their receiver type with ``*`` and type
  parameters stripped (``func (s *Stack[T]) Push`` -> ``Stack.Push``), type specs.
- Rust: functions, ``impl`` blocks (named by their type, trait impls included:
  ``impl<T> Source for Buf<T>`` -> ``Buf``) whose functions are ``Buf.read``, traits
  (``Trait.method``), structs, enums, unions, type aliases, macros, inline modules
  (``inner.f``). Code under ``#[cfg(test)]`` / ``mod tests`` / ``#[test]`` is test code:
  never an answer (see :func:`test_ranges`).

A definition's range starts at the comments, attributes and decorators directly above it
(no blank line between), so a changed doc comment is a change to what it documents, as a
changed docstring is in Python. ``def_line`` is the line of its name.

Each scope of a definition's chain carries ``pattern``: a regex that recognises its
header line in any rendering (``metrics`` falls back to it when the exact source line is
not shown), e.g. ``\\bfunc\\s*\\([^)]*\\bStack\\b[^)]*\\)\\s*Push\\b`` for a Go method.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

LANGUAGES = ("python", "typescript", "go", "rust")

EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py",),
    "typescript": (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"),
    "go": (".go",),
    "rust": (".rs",),
}

FENCES = {".py": "python", ".go": "go", ".rs": "rust", ".tsx": "tsx", ".jsx": "jsx"}
FENCES |= {e: "typescript" for e in (".ts", ".mts", ".cts")}
FENCES |= {e: "javascript" for e in (".js", ".mjs", ".cjs")}

# Directories whose files are never answers outside Python (Python keeps its own rule:
# instances.is_test_path / is_answer_candidate, unchanged so its instances do not move).
TEST_DIRS = {"test", "tests", "testing", "__tests__", "__test__", "__mocks__", "testdata", "e2e", "fixtures"}
NON_CODE_DIRS = {"doc", "docs", "example", "examples", "bench", "benches", "benchmark", "benchmarks", "perf"}
_TEST_DIR_RE = re.compile(r"^[\w.-]*[-_.](tests?|spec|e2e|bench(marks?)?|fixtures)$")
_TEST_FILE_RE = re.compile(
    r"(^test_.*|.*_test\.go$|.*\.(test|spec|bench|test-d|spec-d)\.[cm]?[jt]sx?$|.*_test\.rs$|^tests?\.rs$)"
)


def language_of(path: str) -> str | None:
    suffix = PurePosixPath(path).suffix
    for lang, exts in EXTENSIONS.items():
        if suffix in exts:
            return lang
    return None


def fence(path: str) -> str:
    return FENCES.get(PurePosixPath(path).suffix, "")


def detect_language(paths: Iterable[str]) -> str:
    """The language with the most source files among ``paths`` (tests excluded)."""
    counts = Counter(lang for p in paths if (lang := language_of(p)) and not is_test_path(p, lang))
    return counts.most_common(1)[0][0] if counts else "python"


def is_test_path(path: str, lang: str) -> bool:
    p = PurePosixPath(path)
    if lang == "python":  # the rule the Python instances were built with, unchanged
        if any(part in ("test", "tests", "testing") for part in p.parts[:-1]):
            return True
        return p.name.startswith("test_") or p.name.endswith("_test.py") or p.name == "conftest.py"
    if any(part in TEST_DIRS or _TEST_DIR_RE.match(part) for part in p.parts[:-1]):
        return True
    return bool(_TEST_FILE_RE.match(p.name))


def is_answer_candidate(path: str, lang: str) -> bool:
    """A non-test source file of ``lang`` outside docs, examples and benchmarks."""
    if lang == "python":  # unchanged: docs/ is the only directory left out
        if not path.endswith(".py") or is_test_path(path, lang):
            return False
        parts = PurePosixPath(path).parts
        return not (parts and parts[0] in ("doc", "docs"))
    if language_of(path) != lang or is_test_path(path, lang):
        return False
    if path.endswith(".d.ts") and "/node_modules/" in f"/{path}":
        return False
    return not any(part in NON_CODE_DIRS for part in PurePosixPath(path).parts[:-1])


# --------------------------------------------------------------------------- tree-sitter


@functools.cache
def _parser(name: str) -> Any:
    import tree_sitter as ts

    if name in ("typescript", "tsx"):
        import tree_sitter_typescript as mod

        lang = mod.language_typescript() if name == "typescript" else mod.language_tsx()
    elif name == "javascript":
        import tree_sitter_javascript as mod

        lang = mod.language()
    elif name == "go":
        import tree_sitter_go as mod

        lang = mod.language()
    elif name == "rust":
        import tree_sitter_rust as mod

        lang = mod.language()
    else:
        raise ValueError(f"no grammar for {name!r}")
    return ts.Parser(ts.Language(lang))


def grammar_for(path: str) -> str:
    suffix = PurePosixPath(path).suffix
    if suffix in (".ts", ".mts", ".cts"):
        return "typescript"
    if suffix == ".tsx":
        return "tsx"
    if suffix in (".js", ".jsx", ".mjs", ".cjs"):
        return "javascript"
    if suffix == ".go":
        return "go"
    if suffix == ".rs":
        return "rust"
    raise ValueError(f"no grammar for {path}")


def parse(source: str, path: str) -> Any:
    """The tree-sitter root node (error recovery included: see :func:`error_ranges`)."""
    return _parser(grammar_for(path)).parse(source.encode("utf-8")).root_node


def error_ranges(root: Any) -> list[tuple[int, int]]:
    """1-based line ranges of the parse's ERROR nodes.

    The grammars lag the languages (tree-sitter-typescript 0.23 rejects a generic call
    signature in an interface, which hono's ``src/context.ts`` has). A file with errors
    is still usable; only a change whose lines fall in an ERROR node is not (its
    enclosing definition may be wrong): ``instances`` skips such commits.
    """
    out: list[tuple[int, int]] = []
    stack = [root] if root.has_error else []
    while stack:
        n = stack.pop()
        if n.type == "ERROR":
            out.append((n.start_point.row + 1, _end_row(n) + 1))
        elif n.has_error:
            stack.extend(n.children)
    return sorted(out)


@dataclass(frozen=True)
class TsScope:
    """One definition on the path to another, as it looks in source (see metrics)."""

    kind: str
    name: str
    line: int
    text: str
    pattern: str


@dataclass(frozen=True)
class TsDefinition:
    qualname: str
    kind: str
    start_line: int
    def_line: int
    end_line: int
    chain: tuple[TsScope, ...]


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _end_row(node: Any) -> int:
    """0-based last row of a node (a node ending at column 0 ends on the row before)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


_LEADING = {"comment", "line_comment", "block_comment", "attribute_item", "decorator"}


def _start_row(node: Any) -> int:
    """First row of a node including comments/attributes/decorators directly above it."""
    row = node.start_point.row
    prev = node.prev_sibling
    while prev is not None and prev.type in _LEADING and _end_row(prev) >= row - 1:
        # a trailing comment on the previous statement's line is not this node's
        before = prev.prev_sibling
        if prev.type.endswith("comment") and before is not None and _end_row(before) == prev.start_point.row:
            break
        row = prev.start_point.row
        prev = prev.prev_sibling
    return row


class _Builder:
    def __init__(self, source: str) -> None:
        self.lines = source.split("\n")
        self.out: list[TsDefinition] = []

    def line_text(self, row: int) -> str:
        return self.lines[row].strip() if 0 <= row < len(self.lines) else ""

    def add(
        self,
        node: Any,
        name_node: Any,
        kind: str,
        name: str,
        pattern: str,
        prefix: str,
        chain: tuple[TsScope, ...],
        outer: Any = None,
    ) -> tuple[str, tuple[TsScope, ...]]:
        """Record a definition spanning ``outer`` (e.g. its export statement) or ``node``."""
        span = outer if outer is not None else node
        def_row = (name_node or node).start_point.row
        scope = TsScope(kind, name, def_row + 1, self.line_text(def_row), pattern)
        here = (*chain, scope)
        qual = f"{prefix}{name}"
        self.out.append(TsDefinition(qual, kind, _start_row(span) + 1, def_row + 1, _end_row(span) + 1, here))
        return qual, here


def _esc(name: str) -> str:
    return re.escape(name)


# --------------------------------------------------------------------------- TypeScript / JavaScript

_TS_WRAPPERS = {"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"}
_TS_FUNCS = {"arrow_function", "function_expression", "function", "generator_function", "class"}


def _ts_function_value(value: Any) -> bool:
    while value is not None and value.type in _TS_WRAPPERS:
        value = value.named_children[0] if value.named_children else None
    if value is None:
        return False
    if value.type in _TS_FUNCS:
        return True
    if value.type == "call_expression":
        args = value.child_by_field_name("arguments")
        return args is not None and any(_ts_function_value(a) for a in args.named_children)
    return False


_TS_KINDS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_signature": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
}


def _ts_pattern(kind: str, name: str) -> str:
    n = _esc(name)
    return {
        "function": rf"\bfunction\b\s*\*?\s*{n}\b",
        "class": rf"\bclass\s+{n}\b",
        "interface": rf"\binterface\s+{n}\b",
        "type": rf"\btype\s+{n}\b",
        "enum": rf"\benum\s+{n}\b",
        "namespace": rf"\b(?:namespace|module)\s+{n}\b",
        "const": rf"\b(?:const|let|var)\s+{n}\b",
        "method": rf"(?<![\w$.#]){n}\s*[?!]?\s*(?:<[^>]*>\s*)?[(=:]",
    }[kind]


def _ts_statements(b: _Builder, body: Iterable[Any], prefix: str, chain: tuple[TsScope, ...]) -> None:
    for stmt in body:
        outer = None
        node = stmt
        if stmt.type in ("export_statement", "ambient_declaration"):
            outer = stmt
            node = stmt.child_by_field_name("declaration")
            if node is None:
                node = next(
                    (c for c in stmt.named_children if c.type in _TS_KINDS or c.type.endswith("declaration")), None
                )
            if node is None:
                continue
        if node.type == "expression_statement" and node.named_children:
            inner = node.named_children[0]
            if inner.type == "internal_module":
                outer, node = outer or node, inner
        if node.type in _TS_KINDS:
            name_node = node.child_by_field_name("name")
            if name_node is None or name_node.type == "string":
                continue
            kind = _TS_KINDS[node.type]
            name = _text(name_node)
            qual, here = b.add(node, name_node, kind, name, _ts_pattern(kind, name), prefix, chain, outer)
            body_node = node.child_by_field_name("body")
            if kind == "class" and body_node is not None:
                _ts_class_body(b, body_node, qual + ".", here)
            elif kind == "namespace" and body_node is not None:
                _ts_statements(b, body_node.named_children, qual + ".", here)
        elif node.type in ("lexical_declaration", "variable_declaration"):
            decls = [c for c in node.named_children if c.type == "variable_declarator"]
            for d in decls:
                name_node = d.child_by_field_name("name")
                if name_node is None or name_node.type != "identifier":
                    continue
                if not _ts_function_value(d.child_by_field_name("value")):
                    continue
                name = _text(name_node)
                span = (outer or node) if len(decls) == 1 else d
                b.add(d, name_node, "const", name, _ts_pattern("const", name), prefix, chain, span)


_TS_MEMBERS = {"method_definition", "method_signature", "abstract_method_signature"}
_TS_FIELDS = {"public_field_definition", "field_definition"}


def _ts_class_body(b: _Builder, body: Any, prefix: str, chain: tuple[TsScope, ...]) -> None:
    for m in body.named_children:
        if m.type in _TS_MEMBERS:
            pass
        elif m.type in _TS_FIELDS:
            if not _ts_function_value(m.child_by_field_name("value")):
                continue
        else:
            continue
        name_node = m.child_by_field_name("name") or m.child_by_field_name("property")
        if name_node is None:
            continue
        name = _text(name_node)
        b.add(m, name_node, "method", name, _ts_pattern("method", name), prefix, chain)


# --------------------------------------------------------------------------- Go


def _go_receiver_type(receiver: Any) -> str:
    """``(s *Stack[T])`` -> ``Stack``: the first type identifier of the receiver's type."""

    def first(node: Any) -> str:
        if node.type == "type_identifier":
            return _text(node)
        for child in node.named_children:
            if found := first(child):
                return found
        return ""

    for param in receiver.named_children:
        typ = param.child_by_field_name("type")
        if typ is not None and (found := first(typ)):
            return found
    return ""


def _go(b: _Builder, root: Any) -> None:
    for node in root.named_children:
        if node.type == "function_declaration":
            name_node = node.child_by_field_name("name")
            name = _text(name_node)
            b.add(node, name_node, "function", name, rf"\bfunc\s+{_esc(name)}\b", "", ())
        elif node.type == "method_declaration":
            name_node = node.child_by_field_name("name")
            name = _text(name_node)
            owner = _go_receiver_type(node.child_by_field_name("receiver"))
            pat = rf"\bfunc\s*\([^)]*\b{_esc(owner)}\b[^)]*\)\s*{_esc(name)}\b"
            b.add(node, name_node, "method", name, pat, f"{owner}." if owner else "", ())
        elif node.type == "type_declaration":
            specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
            for spec in specs:
                name_node = spec.child_by_field_name("name")
                name = _text(name_node)
                if len(specs) == 1:
                    pat = rf"\btype\s+{_esc(name)}\b"
                else:  # `Name struct {` inside `type ( ... )`
                    pat = rf"^\s*{_esc(name)}\s+(?:struct|interface)\b"
                b.add(spec, name_node, "type", name, pat, "", (), node if len(specs) == 1 else spec)


# --------------------------------------------------------------------------- Rust


def _rust_type_name(node: Any) -> str:
    """``Buf<T>`` -> Buf, ``&'a mut crate::x::Bar<'a>`` -> Bar, ``[T]`` -> its text."""
    while node is not None:
        if node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        elif node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        else:
            return _text(node)
    return ""


_RUST_ITEMS = {
    "struct_item": "struct",
    "enum_item": "enum",
    "union_item": "union",
    "type_item": "type",
    "trait_item": "trait",
    "mod_item": "mod",
}


def _is_cfg_test(node: Any) -> bool:
    prev = node.prev_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
        if prev.type == "attribute_item" and re.fullmatch(r"#\[\s*(cfg\s*\(\s*test\s*\)|test)\s*\]", _text(prev)):
            return True
        prev = prev.prev_sibling
    return False


def _rust_is_test(node: Any) -> bool:
    if _is_cfg_test(node):
        return True
    if node.type == "mod_item":
        return _text(node.child_by_field_name("name")) in ("tests", "test")
    return False


def _rust(b: _Builder, items: Iterable[Any], prefix: str, chain: tuple[TsScope, ...]) -> None:
    for node in items:
        if _rust_is_test(node):
            continue
        if node.type in ("function_item", "function_signature_item"):
            name_node = node.child_by_field_name("name")
            name = _text(name_node)
            kind = "method" if chain and chain[-1].kind in ("impl", "trait") else "fn"
            b.add(node, name_node, kind, name, rf"\bfn\s+{_esc(name)}\b", prefix, chain)
        elif node.type == "impl_item":
            typ = node.child_by_field_name("type")
            trait = node.child_by_field_name("trait")
            owner = _rust_type_name(typ)
            if trait is not None:
                pat = rf"\bimpl\b.*\b{_esc(_rust_type_name(trait))}\b.*\bfor\b.*\b{_esc(owner)}\b"
            else:
                pat = rf"\bimpl\b(?:\s*<.*>)?\s*(?:[\w:]+::)?&?\s*{_esc(owner)}\b"
            qual, here = b.add(node, typ, "impl", owner, pat, prefix, chain)
            body = node.child_by_field_name("body")
            if body is not None:
                _rust(b, body.named_children, qual + ".", here)
        elif node.type in _RUST_ITEMS:
            name_node = node.child_by_field_name("name")
            if name_node is None:
                continue
            kind = _RUST_ITEMS[node.type]
            name = _text(name_node)
            qual, here = b.add(node, name_node, kind, name, rf"\b{kind}\s+{_esc(name)}\b", prefix, chain)
            body = node.child_by_field_name("body")
            if kind in ("trait", "mod") and body is not None:
                _rust(b, body.named_children, qual + ".", here)
        elif node.type == "macro_definition":
            name_node = node.child_by_field_name("name")
            name = _text(name_node)
            b.add(node, name_node, "macro", name, rf"\bmacro_rules!\s*{_esc(name)}\b", prefix, chain)


def test_ranges(source: str, path: str, root: Any = None) -> list[tuple[int, int]]:
    """1-based line ranges of test code inside a source file (Rust ``#[cfg(test)]``, ``mod
    tests``, ``#[test]`` functions, attributes included); empty for other languages."""
    if grammar_for(path) != "rust":
        return []
    out: list[tuple[int, int]] = []

    def visit(items: Iterable[Any]) -> None:
        for node in items:
            if node.type in ("attribute_item", "line_comment", "block_comment"):
                continue
            if _rust_is_test(node):
                out.append((_start_row(node) + 1, _end_row(node) + 1))
            elif node.type in ("mod_item", "impl_item", "trait_item"):
                body = node.child_by_field_name("body")
                if body is not None:
                    visit(body.named_children)

    visit((root if root is not None else parse(source, path)).named_children)
    return out


def definitions(source: str, path: str, root: Any = None) -> list[TsDefinition]:
    """Definitions of a TS/JS, Go or Rust file (see the module docstring)."""
    root = root if root is not None else parse(source, path)
    b = _Builder(source)
    grammar = grammar_for(path)
    if grammar == "go":
        _go(b, root)
    elif grammar == "rust":
        _rust(b, root.named_children, "", ())
    else:
        _ts_statements(b, root.named_children, "", ())
    return b.out
