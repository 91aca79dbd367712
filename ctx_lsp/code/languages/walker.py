"""The shared walker: one tree-sitter pass turns a file of any declared language into an
`Outline` (definitions with qualified names, doc comments, calls, imports, constants and
identifier references).

A language says *what* its nodes are (`LanguageSpec`: a query with `@definition.<kind>`,
`@call`, `@reference`, `@import`, `@constant` captures, and hooks for names, bodies and
owners); this module says *how* an outline is made of them, the same for every language.
Speed shapes it as it shapes Python's extractor: the per-node work is one
`QueryCursor.captures` pass in C; Python touches only definitions, imports and constants
(and slices identifier texts from the source), and nesting comes from byte ranges with an
explicit stack, never a recursive walk.

Doc comments and attributes are read from the lines above a definition rather than from
sibling nodes: a comment's node is not the definition's in most grammars (`export`
wraps a TS function, Rust attributes are siblings), and a line scan is the same rule for
every language — contiguous comment lines, no blank line between them and the definition.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from operator import attrgetter

from tree_sitter import Node, QueryCursor

from ctx_lsp.code.languages.spec import CONTAINER_KINDS, LanguageSpec
from ctx_lsp.code.outline import (
    CONSTANT_TEXT_MAX_CHARS,
    Constant,
    Import,
    Outline,
    Symbol,
    decode_source,
    outline_text,
)
from ctx_lsp.tokens import ellipsize

__all__ = ["SIGNATURE_MAX_CHARS", "collapse", "outline_with"]

log = logging.getLogger(__name__)

SIGNATURE_MAX_CHARS = 240
"""A definition without a body (a type alias, a prototype) keeps this much of its text as
its signature: `type Shape = A | B | ...` over forty lines is not a one-line header."""

_START_BYTE = attrgetter("start_byte")
_TYPE_KINDS = CONTAINER_KINDS - {"module"}
"""Functions inside these are methods; inside a namespace or an object literal they stay functions."""
_KEYWORD_PREFIX = re.compile(rb"[ \t]*(?:[A-Za-z_][\w]*[ \t]+)*")
"""What may stand before a definition on its line and belongs to its header (`export
const`, `pub`, `public static`): words only, so `x = { get() {` is never taken in."""
_WHITESPACE = re.compile(r"\s+")
_NOT_DOC = re.compile(
    r"^(?:eslint|@ts-|prettier-|nolint|go:|#region|#endregion|region|endregion|-\*-|TODO|FIXME"
    r"|frozen_string_literal|(?:en)?coding[:=]|rubocop:|clang-format|NOLINT|pragma)"
)
"""Tool directives and markers above a definition: not what it is for."""
_LICENSE = re.compile(rb"(?i)copyright|license|spdx-")
_TRAILING_LINE_COMMENT = re.compile(rb"[ \t]+//[^\n\"'`]*$")
"""A `// note` ending a line of a multi-line header (not `http://` in a string: it needs
a blank before it and no quote after it)."""


def collapse(data: bytes) -> str:
    """Source text on one line: whitespace runs become one space."""
    return _WHITESPACE.sub(" ", decode_source(data)).strip()


def outline_with(spec: LanguageSpec, source: bytes) -> Outline:
    """Outline of `source` in `spec`'s language. Never raises: what parses is outlined,
    and a tree with ERROR/MISSING nodes sets `has_errors`."""
    try:
        return _outline(spec, source)
    except Exception:  # the contract is "never raise"; a bare outline is the floor
        log.warning("outline of a %d-byte %s source failed", len(source), spec.name, exc_info=True)
        docstring = outline_text(decode_source(source)).docstring
        return Outline(spec.name, docstring, (), (), (), (), _line_count(source), True)


def _line_count(source: bytes) -> int:
    return source.count(b"\n") + (0 if not source or source.endswith(b"\n") else 1)


def _outline(spec: LanguageSpec, src: bytes) -> Outline:
    root = spec.parser().parse(src).root_node
    captures = QueryCursor(spec.compiled_query).captures(root)
    lines = src.split(b"\n")
    defs = _definitions(spec, captures)
    calls = sorted(captures.get("call", []), key=_START_BYTE)
    symbols, spans = _symbols(spec, src, lines, defs, calls)
    imports = _imports(spec, src, captures.get("import", []))
    constants = _constants(spec, src, captures.get("constant", []), spans)
    references = _references(spec, src, captures, symbols)
    return Outline(
        spec.name,
        _module_doc(spec, lines),
        tuple(imports),
        tuple(constants),
        tuple(symbols),
        references,
        _line_count(src),
        root.has_error,
    )


def _definitions(spec: LanguageSpec, captures: dict[str, list[Node]]) -> list[tuple[str, Node]]:
    """(kind, node) of every definition in source order, outer before inner; a node
    captured under two kinds keeps the one its query names first."""
    query = spec.compiled_query
    found: dict[tuple[int, int], tuple[str, Node]] = {}
    for index in range(query.capture_count):
        key = query.capture_name(index)
        if not key.startswith("definition."):
            continue
        kind = key[len("definition.") :]
        for node in captures.get(key, ()):
            found.setdefault((node.start_byte, -node.end_byte), (kind, node))
    return [found[key] for key in sorted(found)]


def _name_node(spec: LanguageSpec, node: Node) -> Node | None:
    hook = spec.names.get(node.type)
    return hook(node) if hook is not None else node.child_by_field_name("name")


def _body(spec: LanguageSpec, node: Node) -> Node | None:
    hook = spec.bodies.get(node.type)
    return hook(node) if hook is not None else node.child_by_field_name("body")


def _symbols(
    spec: LanguageSpec, src: bytes, lines: list[bytes], defs: list[tuple[str, Node]], calls: list[Node]
) -> tuple[list[Symbol], list[tuple[int, int]]]:
    """The definitions as symbols (nesting by byte ranges, an explicit stack), and the byte
    spans of the top-level ones (a constant inside one is not the module's)."""
    call_starts = [n.start_byte for n in calls]
    call_texts = [src[n.start_byte : n.end_byte] for n in calls]
    rows: list[list] = []
    call_spans: list[tuple[int, int]] = []
    children: list[list[int]] = []
    top_spans: list[tuple[int, int]] = []
    open_defs: list[tuple[int, int]] = []  # (end byte, row index)
    for kind, node in defs:
        name_node = _name_node(spec, node)
        if name_node is None:
            continue
        name = _simple_name(src, name_node)
        if not name:
            continue
        start = node.start_byte
        while open_defs and open_defs[-1][0] <= start:
            open_defs.pop()
        outer = rows[open_defs[-1][1]] if open_defs else None
        owner_hook = spec.owners.get(node.type)
        owner = owner_hook(node, src) if owner_hook is not None else None
        if kind == "function" and (owner or (outer is not None and outer[2] in _TYPE_KINDS)):
            kind = "method"
        if outer is None:
            depth, parent = 0, owner or ""
            qualname = f"{owner}.{name}" if owner else name
            top_spans.append((start, node.end_byte))
        else:
            depth = outer[9] + 1
            parent = f"{outer[0]}.{owner}" if owner else outer[0]
            qualname = f"{parent}.{name}"
        body = _body(spec, node)
        header_row = name_node.start_point[0]
        node_row = node.start_point[0]
        header_start = _header_start(src, node, name_node, header_row, node_row)
        end = body.start_byte if body is not None and body.start_byte > header_start else node.end_byte
        header = src[header_start:end]
        if b"\n" in header:  # comments inside a multi-line header are not the header
            kept = header.split(b"\n")
            kept = [kept[0], *(k for k in kept[1:] if not k.lstrip().startswith(spec.doc_line_markers))]
            if b"//" in spec.doc_line_markers:
                kept = [_TRAILING_LINE_COMMENT.sub(b"", k) for k in kept]
            header = b"\n".join(kept)
        signature = collapse(header).rstrip(" {;")
        if body is None or end == node.end_byte:
            signature = ellipsize(signature, SIGNATURE_MAX_CHARS)
        decorators = [collapse(lines[row]) for row in range(node_row, min(header_row, len(lines)))]
        first_row = node_row
        while (
            first_row > 0
            and spec.attribute_prefixes
            and lines[first_row - 1].lstrip().startswith(spec.attribute_prefixes)
        ):
            first_row -= 1
            decorators.insert(0, collapse(lines[first_row]))
        end_row, end_column = node.end_point
        if end_column == 0 and end_row > node_row:
            end_row -= 1
        body_row = body.start_point[0] if body is not None else end_row
        if body is not None:
            span = (bisect_left(call_starts, body.start_byte), bisect_left(call_starts, body.end_byte))
        else:
            span = (0, 0)
        index = len(rows)
        if outer is not None:
            children[open_defs[-1][1]].append(index)
        rows.append(
            [
                qualname,
                name,
                kind,
                signature,
                tuple(decorators),
                _doc_above(spec, lines, first_row),
                first_row + 1,
                end_row + 1,
                body_row + 1,
                depth,
                parent,
                (),
                "async " in signature.split("(", 1)[0] + " ",
            ]
        )
        call_spans.append(span)
        children.append([])
        open_defs.append((node.end_byte, index))

    fill_calls(rows, call_spans, children, call_texts, spec.builtin_bytes)
    return [Symbol(*row) for row in rows], top_spans


def _simple_name(src: bytes, node: Node) -> str:
    """A name node's text without what is not part of a name (generic arguments, `*`)."""
    text = src[node.start_byte : node.end_byte]
    if b"<" in text or b"[" in text:
        text = re.split(rb"[<\[]", text, maxsplit=1)[0]
    return text.decode("utf-8", "replace").strip().lstrip("*&")


def _header_start(src: bytes, node: Node, name_node: Node, header_row: int, node_row: int) -> int:
    """Where a definition's one-line header starts: its node, or the start of the line
    its name is on when attributes come first (`@Override`), taking in the keywords before
    it on its line (`export const X = () =>` is a declarator after `export const`)."""
    if header_row > node_row:
        start = name_node.start_byte - name_node.start_point[1]
    else:
        start = node.start_byte
        line_start = src.rfind(b"\n", 0, start) + 1
        if line_start < start and _KEYWORD_PREFIX.fullmatch(src, line_start, start):
            start = line_start
    while start < len(src) and src[start] in b" \t":
        start += 1
    return start


def _doc_above(spec: LanguageSpec, lines: list[bytes], row: int) -> str:
    """First line of the comment block right above line `row` (0-based): `/** ... */`,
    `///`, `//`, `#` lines, with no blank line between it and the definition."""
    block = _comment_block_above(spec, lines, row)
    return _first_doc_line(block, spec.doc_cleaner) if block else ""


def _comment_block_above(spec: LanguageSpec, lines: list[bytes], row: int) -> list[bytes]:
    i = row - 1
    top = row
    while i >= 0:
        stripped = lines[i].strip()
        if spec.block_comments and stripped.endswith(b"*/"):
            j = i
            while j >= 0 and b"/*" not in lines[j]:
                j -= 1
            if j < 0:
                break
            top, i = j, j - 1
            continue
        if stripped and stripped.startswith(spec.doc_line_markers):
            top, i = i, i - 1
            continue
        break
    return lines[top:row]


def _first_doc_line(block: list[bytes], cleaner: Callable[[str], str] | None = None) -> str:
    for raw in block:
        text = decode_source(raw).strip()
        text = text.lstrip("/").lstrip("*").lstrip("!").lstrip("#").strip()
        if text.endswith("*/"):
            text = text[:-2].rstrip()
        if cleaner is not None:
            text = cleaner(text)
        if text and not text.startswith("@") and not _NOT_DOC.match(text):
            return text
    return ""


def _module_doc(spec: LanguageSpec, lines: list[bytes]) -> str:
    """First line of the file's leading comment block (`//!`, a package comment, a header
    comment), unless it is a licence; a block right above a definition is that
    definition's, so only one followed by a blank line or `package` counts."""
    row, limit = 0, min(len(lines), 200)
    while row < limit:
        stripped = lines[row].strip()
        if not stripped or stripped.startswith(b"#!"):
            row += 1
            continue
        end = row
        if spec.module_doc_markers and stripped.startswith(spec.module_doc_markers):
            while end < limit and lines[end].strip().startswith(spec.module_doc_markers):
                end += 1
            return _first_doc_line(lines[row:end], spec.doc_cleaner)
        if spec.block_comments and stripped.startswith(b"/*"):
            while end < limit and b"*/" not in lines[end]:
                end += 1
            end += 1
        elif stripped.startswith(spec.doc_line_markers) and not stripped.startswith(
            spec.attribute_prefixes or (b"\0",)
        ):
            while end < limit and lines[end].strip().startswith(spec.doc_line_markers):
                end += 1
        else:
            return ""
        block = lines[row:end]
        after = lines[end].strip() if end < len(lines) else b""
        if _LICENSE.search(b"".join(block)) is None and (not after or after.startswith(b"package ")):
            return _first_doc_line(block, spec.doc_cleaner)
        row = end
    return ""


def _imports(spec: LanguageSpec, src: bytes, nodes: list[Node]) -> list[Import]:
    if spec.imports is None or not nodes:
        return []
    found: list[Import] = []
    for node in sorted(nodes, key=_START_BYTE):
        found.extend(spec.imports(node, src))
    return found


def _constants(spec: LanguageSpec, src: bytes, nodes: list[Node], top_spans: list[tuple[int, int]]) -> list[Constant]:
    """Module-level constants: those outside every top-level definition."""
    if spec.constants is None or not nodes:
        return []
    starts = [s for s, _ in top_spans]
    found: list[Constant] = []
    seen: set[str] = set()
    for node in sorted(nodes, key=_START_BYTE):
        at = bisect_right(starts, node.start_byte) - 1
        if at >= 0 and top_spans[at][1] >= node.end_byte and top_spans[at][0] < node.start_byte:
            continue
        for name, declared in spec.constants(node, src):
            if not name or name in seen:
                continue
            seen.add(name)
            line = declared.start_point[0]
            first = decode_source(src[src.rfind(b"\n", 0, declared.start_byte) + 1 :].split(b"\n", 1)[0]).strip()
            found.append(Constant(line + 1, name, ellipsize(first, CONSTANT_TEXT_MAX_CHARS)))
    return found


def _references(
    spec: LanguageSpec, src: bytes, captures: dict[str, list[Node]], symbols: list[Symbol]
) -> tuple[tuple[str, int], ...]:
    """Identifier counts without definition names, import statements and the language's
    builtins (the graph wants uses of the workspace's own names)."""
    counts = Counter([src[n.start_byte : n.end_byte] for n in captures.get("reference", ())])
    imports = captures.get("import")
    if imports:
        cursor = QueryCursor(spec.compiled_references)
        for node in imports:
            for d in cursor.captures(node).get("reference", ()):
                counts[src[d.start_byte : d.end_byte]] -= 1
    for symbol in symbols:
        counts[symbol.name.encode("utf-8", "replace")] -= 1
    builtins = spec.builtin_bytes
    return tuple(
        sorted([(name.decode("utf-8", "replace"), n) for name, n in counts.items() if n > 0 and name not in builtins])
    )


def fill_calls(
    rows: Sequence[list],
    spans: Sequence[tuple[int, int]],
    children: Sequence[Sequence[int]],
    call_texts: Sequence[bytes],
    drop: frozenset[bytes] = frozenset(),
) -> None:
    """Set each symbol row's calls (field 11): the names called in its span of `call_texts`
    (every call, in source order) outside the spans of its nested definitions, less
    `drop` (builtins). A call belongs to the innermost definition that holds it. Shared by
    the walker and Python's own extractor."""
    for row, (lo, hi), kids in zip(rows, spans, children):
        if lo == hi:
            continue
        names: set[bytes] = set()
        pos = lo
        for kid in kids:
            kid_lo, kid_hi = spans[kid]
            if kid_lo > pos:
                names.update(call_texts[pos:kid_lo])
            pos = max(pos, kid_hi)
        names.update(call_texts[pos:hi])
        names.difference_update(drop)
        if names:
            row[11] = tuple(sorted([n.decode("utf-8", "replace") for n in names]))
