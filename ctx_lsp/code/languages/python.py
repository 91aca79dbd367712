"""Python: tree-sitter outlines of Python source (definitions, calls, imports, constants,
references), with its own extractor rather than the shared walker (`walker.py`).

Python was the first language, and its extractor knows what the shared walker does not:
docstrings inside bodies, module-level `if TYPE_CHECKING:`/`try:` blocks, headers cut at
their `:` with comments removed. It is registered like any other language (`LANGUAGES`).

Speed shapes the code: a whole repository is outlined with this on a cold index. The
per-node work (definitions, calls, identifiers) is one `QueryCursor.captures` pass in C;
Python only touches definition nodes and the module's top-level statements, and every
walk uses an explicit stack so deeply nested code cannot hit the recursion limit.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from operator import attrgetter

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from ctx_lsp.code.languages.spec import LanguageSpec
from ctx_lsp.code.languages.walker import fill_calls
from ctx_lsp.code.outline import (
    CONSTANT_TEXT_MAX_CHARS,
    OUTLINE_JSON_VERSION,
    Constant,
    Import,
    Outline,
    Symbol,
    decode_source,
    outline_text,
    outline_to_json,
)
from ctx_lsp.tokens import ellipsize

__all__ = ["LANGUAGES", "outline_python", "outline_python_json", "python_parser"]


log = logging.getLogger(__name__)

_PY_LANGUAGE = Language(tree_sitter_python.language())

# One pass in C over every node gives what would otherwise need a Python walk of the
# whole tree: definitions and their decorated wrappers, call targets (`f()`, `obj.m()`
# -> the last name), all identifiers (attribute names are identifiers too) and the
# import statements whose identifiers the reference counts leave out. On the stdlib this
# pass costs about half of what parsing does; the identifiers (for `references`) are a
# third of that, plus their counting.
_QUERY = Query(
    _PY_LANGUAGE,
    """
    (function_definition) @def
    (class_definition) @def
    (decorated_definition) @dec
    (call function: (identifier) @call)
    (call function: (attribute attribute: (identifier) @call))
    (identifier) @id
    (import_statement) @imp
    (import_from_statement) @imp
    (future_import_statement) @imp
    """,
)

_IDENTIFIERS = Query(_PY_LANGUAGE, "(identifier) @id")
"""The identifiers under one node (an import statement's, which references leave out)."""

_thread_state = threading.local()

_START_BYTE = attrgetter("start_byte")

# Statements whose blocks may hold module-level imports and constants
# (`if sys.version_info >= ...:`, `try: import x except ImportError: ...`).
_COMPOUND_TYPES = frozenset(
    {
        "if_statement",
        "elif_clause",
        "else_clause",
        "try_statement",
        "except_clause",
        "except_group_clause",
        "finally_clause",
        "with_statement",
        "for_statement",
        "while_statement",
        "match_statement",
        "case_clause",
        "block",
        "ERROR",
    }
)
_IMPORT_TYPES = frozenset({"import_statement", "import_from_statement", "future_import_statement"})

# `if TYPE_CHECKING:` holds type-only imports (kept: they are real dependencies) and
# aliases that only a type checker sees; `if __name__ == "__main__":` holds script
# state. Constants inside either are noise in an outline.
_NOISY_IF_CONDITION = re.compile(r"^(?:\w+\.)?TYPE_CHECKING$|^__name__\s*==\s*['\"]__main__['\"]$")
_MAY_OPEN_DOCSTRING = re.compile(rb"[rRbBuUfF]{0,2}[\"']|#")
"""A block whose first bytes are not a (prefixed) quote or a comment has no docstring."""
_PLAIN_HEADER = re.compile(rb"[^\n\t#\\ ]*(?: [^\n\t#\\ ]+)*")
"""A header `_collapse_node` would return unchanged: one line, no comment or line
continuation, no run of spaces. Tested first, it spares most definitions its slicing and
joining (a buffer of 40,000 small functions spent ~0.1 s there)."""
_DOCSTRING_PREFIX = re.compile(r"^[rRbBuUfF]{0,2}")
_ESCAPED_NEWLINE = re.compile(r"\\\r?\n")
# Whitespace that only a line break put there: after an opening bracket, and before a
# closing one together with the "magic" trailing comma of a one-per-line list.
_BROKEN_AFTER_OPEN = re.compile(r"([(\[{])[ \t]*\r?\n\s*")
_BROKEN_BEFORE_CLOSE = re.compile(r",?[ \t]*\r?\n\s*([)\]}])")


def python_parser() -> Parser:
    """A Python parser for this thread: tree-sitter `Parser` objects are not thread-safe.
    Shared by everything that parses Python (outlines, library docs)."""
    parser = getattr(_thread_state, "parser", None)
    if parser is None:
        parser = _thread_state.parser = Parser(_PY_LANGUAGE)
    return parser


def _collapse(data: bytes) -> str:
    """Source text on one line: whitespace runs become one space, and a bracketed list
    written one item per line loses the padding and trailing comma its layout added."""
    text = decode_source(data)
    if "\n" in text:
        text = _ESCAPED_NEWLINE.sub(" ", text)
        text = _BROKEN_BEFORE_CLOSE.sub(r"\1", _BROKEN_AFTER_OPEN.sub(r"\1", text))
    elif "  " not in text and "\t" not in text:
        return text.strip()
    return " ".join(text.split())


def _collapse_node(src: bytes, node: Node, end_byte: int | None = None) -> str:
    """`_collapse` of a node's source (optionally cut at `end_byte`), comments removed:
    a `# note` inside a multi-line parameter list would comment out the rest of the line."""
    start = node.start_byte
    end = node.end_byte if end_byte is None else end_byte
    data = src[start:end]
    if b"#" in data and b"\n" in data:
        comments = [c for c in _descendants(node, end) if c.type == "comment"]
        if comments:
            parts, pos = [], start
            for c in sorted(comments, key=_START_BYTE):
                parts.append(src[pos : c.start_byte])
                pos = c.end_byte
            parts.append(src[pos:end])
            data = b"".join(parts)
    return _collapse(data)


def _descendants(node: Node, end_byte: int) -> Iterator[Node]:
    """All nodes under `node` that start before `end_byte` (explicit stack)."""
    stack = [node]
    while stack:
        n = stack.pop()
        for child in n.children:
            if child.start_byte < end_byte:
                yield child
                if child.child_count:
                    stack.append(child)


def _first_doc_line(string_node: Node) -> str:
    text = decode_source(string_node.text or b"")
    text = _DOCSTRING_PREFIX.sub("", text, count=1)
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote):
            text = text[len(quote) :]
            if text.endswith(quote):
                text = text[: -len(quote)]
            break
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line
    return ""


def _docstring(block: Node | None, src: bytes | None = None) -> str:
    """First line of the docstring that opens `block` (a body or the module), or "".

    With `src`, bodies that cannot start with a docstring (most of them) are ruled out
    from the source bytes, without walking nodes.
    """
    if block is None or not block.named_child_count:  # named_child(0) raises on none
        return ""
    if src is not None and not _MAY_OPEN_DOCSTRING.match(src, block.start_byte):
        return ""
    stmt: Node | None = block.named_child(0)
    while stmt is not None and stmt.type == "comment":
        stmt = stmt.next_named_sibling
    if stmt is None or stmt.type != "expression_statement" or not stmt.named_child_count:
        return ""
    value = stmt.named_child(0)
    if value.type == "concatenated_string" and value.named_child_count:
        value = value.named_child(0)
    if value is None or value.type != "string":
        return ""
    return _first_doc_line(value)


def _header_colon(node: Node, body: Node | None) -> Node | None:
    """The ":" that ends a def/class header. Searched backwards from the body: a trailing
    comment after the colon sits between the two (NOTES-ENV §3)."""
    child = body.prev_sibling if body is not None else node.child(node.child_count - 1)
    while child is not None and child.type != ":":
        child = child.prev_sibling
    return child


def _symbol_rows(src: bytes, def_nodes: list[Node], decorated_nodes: list[Node], call_nodes: list[Node]) -> list[list]:
    """Definitions in source order with their nesting, plus the calls each body makes, as
    lists of `Symbol`'s fields (what the outline JSON stores, but `is_async` a bool).

    Byte ranges from one tree nest, so a stack of the open definitions gives each one its
    parent, and the calls of a body are the sorted call positions inside it minus those
    inside the bodies of its direct children (found by bisection, copied by slicing).
    """
    if not def_nodes:
        return []
    def_nodes = sorted(def_nodes, key=_START_BYTE)
    # decorated_definition -> its def, by the def's start (cheaper than Node.parent, which
    # tree-sitter finds by descending from the root)
    wrappers: dict[int, Node] = {}
    for wrapper in decorated_nodes:
        definition = wrapper.child_by_field_name("definition")
        if definition is not None:
            wrappers[definition.start_byte] = wrapper
    calls_sorted = sorted(call_nodes, key=_START_BYTE)
    call_starts = list(map(_START_BYTE, calls_sorted))
    call_texts = [src[n.start_byte : n.end_byte] for n in calls_sorted]

    rows: list[list] = []  # Symbol fields, calls filled in at the end
    spans: list[tuple[int, int]] = []  # call-index range of each body
    children: list[list[int]] = []
    open_defs: list[tuple[int, int]] = []  # (end_byte, row index)
    for node in def_nodes:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            continue
        start = node.start_byte
        while open_defs and open_defs[-1][0] <= start:
            open_defs.pop()
        outer = rows[open_defs[-1][1]] if open_defs else None
        name = src[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
        if node.type == "class_definition":
            kind = "class"
            is_async = False
        else:
            kind = "method" if outer is not None and outer[2] == "class" else "function"
            is_async = src.startswith(b"async", start)

        body = node.child_by_field_name("body")
        colon = _header_colon(node, body)
        if colon is not None:
            header = src[start : colon.start_byte]
            if _PLAIN_HEADER.fullmatch(header):  # most are: one line, single spaces
                signature = header.decode("utf-8", "replace").strip()
            else:
                signature = _collapse_node(src, node, colon.start_byte)
        else:  # a broken header: keep its first line
            signature = _collapse(src[start : node.end_byte].split(b"\n", 1)[0])
        decorators: tuple[str, ...] = ()
        start_row, _ = node.start_point
        decorated = wrappers.get(start)
        if decorated is not None:
            decorators = tuple(_collapse_node(src, d) for d in decorated.named_children if d.type == "decorator")
            start_row = decorated.start_point[0]
        end_row, end_column = node.end_point
        if end_column == 0 and end_row > start_row:
            end_row -= 1
        if body is not None:
            body_row = body.start_point[0]
            span = (
                bisect_left(call_starts, body.start_byte),
                bisect_left(call_starts, body.end_byte),
            )
        else:
            body_row = end_row
            span = (0, 0)
        index = len(rows)
        if outer is None:
            qualname, depth, parent = name, 0, ""
        else:
            qualname, depth, parent = f"{outer[0]}.{name}", outer[9] + 1, outer[0]
            children[open_defs[-1][1]].append(index)
        rows.append(
            [
                qualname,
                name,
                kind,
                signature,
                decorators,
                _docstring(body) if body is not None and _MAY_OPEN_DOCSTRING.match(src, body.start_byte) else "",
                start_row + 1,
                end_row + 1,
                body_row + 1,
                depth,
                parent,
                (),
                is_async,
            ]
        )
        spans.append(span)
        children.append([])
        open_defs.append((node.end_byte, index))

    fill_calls(rows, spans, children, call_texts)
    return rows


def _dotted(node: Node | None) -> str:
    """The imported name of a `dotted_name` or `aliased_import` ("a.b" for `a.b as c`)."""
    if node is None:
        return ""
    if node.type == "aliased_import":
        node = node.child_by_field_name("name")
        if node is None:
            return ""
    return "".join(decode_source(node.text or b"").split())


def _imports(src: bytes, node: Node) -> list[Import]:
    line = node.start_point[0] + 1
    text = _collapse_node(src, node)
    names = [_dotted(n) for n in node.children_by_field_name("name")]
    if node.type == "import_statement":
        return [Import(line, text, name, (name,)) for name in names if name]
    if node.type == "future_import_statement":
        module = "__future__"
    else:
        module = _dotted(node.child_by_field_name("module_name"))
        if any(c.type == "wildcard_import" for c in node.children):
            names.append("*")
    return [Import(line, text, module, tuple(n for n in names if n))]


def _constant(src: bytes, stmt: Node) -> Constant | None:
    """A module-level `NAME = ...` / `NAME: T = ...` / `type NAME = ...`, else None."""
    if stmt.type == "type_alias_statement":
        left = stmt.child_by_field_name("left")
        if left is not None and left.named_child_count:
            left = left.named_child(0)
    else:
        if not stmt.named_child_count:
            return None
        assignment = stmt.named_child(0)
        if assignment.type != "assignment":
            return None
        left = assignment.child_by_field_name("left")
    if left is None or left.type != "identifier":
        return None
    first_line = decode_source(src[stmt.start_byte : stmt.end_byte].split(b"\n", 1)[0]).strip()
    return Constant(
        stmt.start_point[0] + 1, decode_source(left.text or b""), ellipsize(first_line, CONSTANT_TEXT_MAX_CHARS)
    )


def _module_level(src: bytes, root: Node) -> tuple[list[Import], list[Constant]]:
    """Imports and constants of the module, including those under module-level
    `if`/`try`/`with` blocks; definitions' bodies are not entered."""
    imports: list[Import] = []
    constants: list[Constant] = []
    seen: set[str] = set()
    stack: list[tuple[Iterator[Node], bool]] = [(iter(root.children), False)]
    while stack:
        children, noisy = stack[-1]
        node = next(children, None)
        if node is None:
            stack.pop()
            continue
        kind = node.type
        if kind in _IMPORT_TYPES:
            imports.extend(_imports(src, node))
        elif kind == "expression_statement" or kind == "type_alias_statement":
            if not noisy:
                constant = _constant(src, node)
                if constant is not None and constant.name not in seen:
                    seen.add(constant.name)
                    constants.append(constant)
        elif kind == "if_statement" and _is_noisy_if(node):
            # only the `if` branch is noise (`else:` is what runs for real), so each
            # child gets its own flag; pushed in reverse to be visited in source order
            for child in reversed(node.children):
                stack.append((iter((child,)), noisy or child.type == "block"))
        elif kind in _COMPOUND_TYPES:
            stack.append((iter(node.children), noisy))
    return imports, constants


def _is_noisy_if(node: Node) -> bool:
    condition = node.child_by_field_name("condition")
    if condition is None:
        return False
    return _NOISY_IF_CONDITION.match(_collapse(condition.text or b"")) is not None


def _references(
    src: bytes, id_nodes: list[Node], import_nodes: list[Node], symbol_rows: list[list]
) -> tuple[tuple[str, int], ...]:
    """Identifier counts without definition names and import statements (the graph wants
    uses, not declarations).

    Texts are sliced from the source (cheaper than `Node.text` over hundreds of thousands
    of identifiers), and an import's identifiers come from a query over its subtree in C
    rather than a walk of its nodes in Python."""
    counts = Counter([src[n.start_byte : n.end_byte] for n in id_nodes])
    if import_nodes:
        cursor = QueryCursor(_IDENTIFIERS)
        for node in import_nodes:
            for d in cursor.captures(node).get("id", ()):
                counts[src[d.start_byte : d.end_byte]] -= 1
    for row in symbol_rows:
        counts[row[1].encode("utf-8", "replace")] -= 1
    return tuple(sorted([(name.decode("utf-8", "replace"), n) for name, n in counts.items() if n > 0]))


def outline_python(source: bytes) -> Outline:
    """Outline of Python source. Never raises: what parses is outlined, and a tree with
    ERROR/MISSING nodes sets `has_errors`."""
    try:
        return _outline_python(source)
    except Exception:  # the contract is "never raise"; a bare outline is the floor
        log.warning("outline of a %d-byte Python source failed", len(source), exc_info=True)
        docstring = outline_text(decode_source(source)).docstring
        return Outline("python", docstring, (), (), (), (), _line_count_bytes(source), True)


def _outline_python(source: bytes) -> Outline:
    docstring, imports, constants, rows, references, line_count, has_errors = _outline_parts(source)
    return Outline(
        language="python",
        docstring=docstring,
        imports=tuple(imports),
        constants=tuple(constants),
        symbols=tuple([Symbol(*row) for row in rows]),
        references=references,
        line_count=line_count,
        has_errors=has_errors,
    )


def outline_python_json(source: bytes) -> tuple[str, Outline]:
    """`outline_to_json(outline_python(source))` and that outline, the JSON written from
    the extractor's rows (`outline_to_json` would walk the `Symbol`s again) and the
    outline built from the same rows: a cold index stores the JSON and derives the
    file's units from the outline, which decoding the JSON just written cost again
    (`json.loads` of Django's 12 MB, and every `Symbol` built a second time). Never
    raises, like `outline_python`."""
    try:
        docstring, imports, constants, rows, references, line_count, has_errors = _outline_parts(source)
    except Exception:
        outline = outline_python(source)  # logs, and gives the bare outline
        return outline_to_json(outline), outline
    outline = Outline(
        "python",
        docstring,
        tuple(imports),
        tuple(constants),
        tuple([Symbol(*row) for row in rows]),
        references,
        line_count,
        has_errors,
    )
    for row in rows:
        row[12] = int(row[12])
    text = json.dumps(
        [
            OUTLINE_JSON_VERSION,
            "python",
            docstring,
            [[i.line, i.text, i.module, i.names] for i in imports],
            [[c.line, c.name, c.text] for c in constants],
            rows,
            references,
            line_count,
            int(has_errors),
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return text, outline


def _outline_parts(
    source: bytes,
) -> tuple[str, list[Import], list[Constant], list[list], tuple[tuple[str, int], ...], int, bool]:
    """An outline's fields (symbols as `_symbol_rows`), for an `Outline` or its JSON."""
    root = python_parser().parse(source).root_node
    captures = QueryCursor(_QUERY).captures(root)
    rows = _symbol_rows(source, captures.get("def", []), captures.get("dec", []), captures.get("call", []))
    imports, constants = _module_level(source, root)
    references = _references(source, captures.get("id", []), captures.get("imp", []), rows)
    return _docstring(root), imports, constants, rows, references, _line_count_bytes(source), root.has_error


def _line_count_bytes(source: bytes) -> int:
    return source.count(b"\n") + (0 if not source or source.endswith(b"\n") else 1)


def _module_names(rel_path: str) -> tuple[str, ...]:
    """`pkg/mod.py` is `pkg.mod` (`pkg/__init__.py` is `pkg`); under `src/` also without it."""
    stem, dot, suffix = rel_path.rpartition(".")
    parts = (stem if dot and suffix in ("py", "pyi") else rel_path).split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts:
        return ()
    names = [".".join(parts)]
    if parts[0] == "src" and len(parts) > 1:
        names.append(".".join(parts[1:]))
    return tuple(names)


LANGUAGES = [
    LanguageSpec(
        name="python",
        extensions=(".py", ".pyi"),
        # The outline is the extractor's (`outline`, `outline_json`, `python_parser`); the
        # grammar is declared so that `spec.parser()` parses Python as it parses every
        # other language (what a caller timing or checking grammars asks for).
        grammar=("tree_sitter_python", "language"),
        comment="# ",
        multiline_quotes=(('"""', '"""'), ("'''", "'''")),
        fence="python",
        header_end=":",
        module_doc_format='"""{}"""',
        merge_imports=True,
        dotted_modules=True,
        doc_line_markers=(b"#",),
        block_comments=False,
        outline=outline_python,
        outline_json=outline_python_json,
        module_names=_module_names,
    )
]
