"""The public API of a Python module as doc sections, read with tree-sitter.

Library docs never import a package: importing runs its code (slow, side effects, maybe
an exception or a network call), and the package belongs to the user's environment, not
to the server's interpreter. So signatures and docstrings are read from the source text.

Unlike `ctx_lsp.code.outline`, which keeps only first docstring lines because outlines
must be short, docs keep whole docstrings: they are the documentation. One section per
public function, one per public class (its docstring plus a line per public member:
signature or field, and the member's first docstring line), one per method whose
docstring says more than one line, and one for the module docstring with its public
constants. Names starting with "_" are private; a module-level `__all__` written as a
list or tuple of strings decides instead when present.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from ctx_lsp.code.languages.python import python_parser
from ctx_lsp.docs.sections import Block, Draft, Kind, drafts_from_blocks, split_blocks
from ctx_lsp.tokens import ellipsize

__all__ = ["ModuleApi", "module_drafts", "parse_module"]

MAX_DOCSTRING_CHARS = 6000
"""A docstring longer than this is cut: a few generated modules carry whole manuals in
one docstring, and ranking works on sections, not on megabytes."""

MAX_MEMBER_CHARS = 160
"""One member line of a class section (signature or field) is cut here."""

MAX_CONSTANT_CHARS = 100
"""A constant shows its first line, cut here: a table literal must not eat the section."""

UNDOCUMENTED_WEIGHT = 0.5
"""Topic-score weight of a function or class without a docstring: it only repeats its
name and signature, so a documented section matching as well explains more. Tiny
undocumented classes (`JsonRpcInvalidRequest` with two constants) would otherwise win
on BM25's short-section advantage alone."""

PUBLIC_DUNDERS = frozenset({"__init__", "__call__"})
"""Dunder methods that document how a class is used; the others are protocol plumbing."""

_CONSTANT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_STRING_PREFIX = re.compile(r"^[rRbBuUfF]{0,2}")
_NOISY_CONDITION = re.compile(r"^(?:\w+\.)?TYPE_CHECKING$|^__name__\s*==\s*['\"]__main__['\"]$")
_AFTER_OPEN = re.compile(r"([(\[{]) ")
_BEFORE_CLOSE = re.compile(r",? ([)\]}])")
_COMPOUND = frozenset({"if_statement", "try_statement"})
_CLAUSES = frozenset({"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause"})


@dataclass(frozen=True, slots=True)
class Member:
    """A function, method or class header with its whole docstring."""

    name: str
    signature: str
    """The header on one line, decorators first ("@property def name(self) -> str")."""
    decorators: tuple[str, ...]
    doc: str
    line: int
    doc_line: int


@dataclass(frozen=True, slots=True)
class Field:
    """An assignment shown as one line: a module constant or a class attribute."""

    name: str
    text: str
    doc: str
    """First line of the attribute docstring (the string statement after it), or ""."""
    line: int


@dataclass(frozen=True, slots=True)
class ClassApi:
    header: Member
    methods: tuple[Member, ...]
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class ModuleApi:
    docstring: str
    doc_line: int
    constants: tuple[Field, ...]
    functions: tuple[Member, ...]
    classes: tuple[ClassApi, ...]


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _one_line(text: str, limit: int) -> str:
    """Source text on one line; a bracketed list written one item per line loses the
    padding and trailing comma its layout added."""
    text = " ".join(text.split())
    if " " in text:
        text = _AFTER_OPEN.sub(r"\1", _BEFORE_CLOSE.sub(r"\1", text))
    return ellipsize(text, limit)


def _header(src: bytes, node: Node) -> str:
    """A def/class header up to its final ":" on one line, comments removed (a `# note`
    inside a multi-line parameter list would otherwise swallow the rest of the line)."""
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    colon = body.prev_sibling if body is not None else None
    while colon is not None and colon.type != ":":
        colon = colon.prev_sibling
    if colon is not None:
        end = colon.start_byte
    pieces: list[bytes] = []
    pos = node.start_byte
    stack = [node]
    comments: list[Node] = []
    while stack:
        current = stack.pop()
        for child in current.children:
            if child.start_byte >= end:
                break
            if child.type == "comment":
                comments.append(child)
            elif child.child_count:
                stack.append(child)
    for comment in sorted(comments, key=lambda c: c.start_byte):
        pieces.append(src[pos : comment.start_byte])
        pos = comment.end_byte
    pieces.append(src[pos:end])
    return _one_line(b"".join(pieces).decode("utf-8", "replace"), 10_000)


def _string_value(node: Node) -> str:
    """The text of a string literal, unescaped only of its quotes and prefix, dedented as
    `inspect.cleandoc` does for `__doc__`."""
    if node.type == "concatenated_string" and node.named_child_count:
        node = node.named_child(0)
    text = _STRING_PREFIX.sub("", _text(node), count=1)
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            text = text[len(quote) : -len(quote)]
            break
    doc = inspect.cleandoc(text)
    if len(doc) > MAX_DOCSTRING_CHARS:
        doc = doc[:MAX_DOCSTRING_CHARS].rsplit("\n", 1)[0] + "\n…"
    return doc


def _string_statement(node: Node | None) -> Node | None:
    """The string of a statement that is only a string literal (a docstring), or None."""
    if node is None or node.type != "expression_statement" or node.named_child_count != 1:
        return None
    value = node.named_child(0)
    if value is not None and value.type in ("string", "concatenated_string"):
        return value
    return None


def _docstring(block: Node | None) -> tuple[str, int]:
    """The docstring opening `block` (a body or the module) and its 1-based line."""
    if block is None:
        return "", 0
    stmt = block.named_child(0) if block.named_child_count else None
    while stmt is not None and stmt.type == "comment":
        stmt = stmt.next_named_sibling
    value = _string_statement(stmt)
    if value is None:
        return "", 0
    return _string_value(value), value.start_point[0] + 1


def _first_line(doc: str) -> str:
    return next((line.strip() for line in doc.splitlines() if line.strip()), "")


def _statements(container: Node) -> Iterator[Node]:
    """Statements of a module or class body in source order, looking inside `if`/`try`
    blocks (definitions behind a version check are still API) but not inside
    `if TYPE_CHECKING:` or `if __name__ == "__main__":`."""
    stack: list[Iterator[Node]] = [iter(container.named_children)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        if node.type in _COMPOUND:
            condition = node.child_by_field_name("condition")
            if condition is not None and _NOISY_CONDITION.match(" ".join(_text(condition).split())):
                continue
            stack.append(_compound_statements(node))
            continue
        yield node


def _compound_statements(node: Node) -> Iterator[Node]:
    for child in node.children:
        if child.type == "block":
            yield from child.named_children
        elif child.type in _CLAUSES:
            yield from _compound_statements(child)


def _definition(node: Node) -> tuple[Node, tuple[str, ...]] | None:
    """The def/class inside a statement, with its decorators, or None."""
    decorators: tuple[str, ...] = ()
    if node.type == "decorated_definition":
        decorators = tuple(_one_line(_text(d), MAX_MEMBER_CHARS) for d in node.named_children if d.type == "decorator")
        inner = node.child_by_field_name("definition")
        if inner is None:
            return None
        node = inner
    if node.type in ("function_definition", "class_definition"):
        return node, decorators
    return None


def _member(src: bytes, node: Node, decorators: tuple[str, ...]) -> Member:
    name = _text(node.child_by_field_name("name"))
    doc, doc_line = _docstring(node.child_by_field_name("body"))
    header = _header(src, node)
    return Member(name, header, decorators, doc, node.start_point[0] + 1, doc_line)


def _assignment(node: Node) -> tuple[str, Node] | None:
    """(name, assignment node) of `NAME = …`, `NAME: T = …`, `NAME: T` or `type NAME = …`."""
    if node.type == "type_alias_statement":
        alias = node.named_child(0)
        return (_text(alias), node) if alias is not None else None
    if node.type != "expression_statement" or not node.named_child_count:
        return None
    value = node.named_child(0)
    if value is None or value.type != "assignment":
        return None
    left = value.child_by_field_name("left")
    if left is None or left.type != "identifier":
        return None
    return _text(left), value


def _field(name: str, node: Node, statement: Node) -> Field:
    doc_node = _string_statement(statement.next_named_sibling)
    doc = _first_line(_string_value(doc_node)) if doc_node is not None else ""
    head = _text(node)[: MAX_CONSTANT_CHARS * 4]  # enough to fill the line once collapsed
    return Field(name, _one_line(head, MAX_CONSTANT_CHARS), doc, node.start_point[0] + 1)


def _all_names(statement: Node) -> tuple[str, ...] | None:
    """`__all__ = [...]` / `(...)` of plain strings; anything computed is ignored."""
    found = _assignment(statement)
    if found is None or found[0] != "__all__":
        return None
    value = found[1].child_by_field_name("right")
    if value is None or value.type not in ("list", "tuple"):
        return None
    names = []
    for item in value.named_children:
        if item.type == "comment":
            continue
        if item.type != "string":
            return None
        names.append(_string_value(item))
    return tuple(names)


def _is_public(name: str) -> bool:
    return bool(name) and not name.startswith("_")


def _is_public_member(name: str) -> bool:
    return _is_public(name) or name in PUBLIC_DUNDERS


def _class_api(src: bytes, node: Node, decorators: tuple[str, ...]) -> ClassApi:
    header = _member(src, node, decorators)
    methods: list[Member] = []
    fields: list[Field] = []
    body = node.child_by_field_name("body")
    if body is not None:
        for statement in _statements(body):
            definition = _definition(statement)
            if definition is not None:
                inner, inner_decorators = definition
                if inner.type == "function_definition":
                    member = _member(src, inner, inner_decorators)
                    if _is_public_member(member.name):
                        methods.append(member)
                continue
            assigned = _assignment(statement)
            if assigned is not None and _is_public(assigned[0]):
                fields.append(_field(assigned[0], assigned[1], statement))
    return ClassApi(header, tuple(methods), tuple(fields))


def parse_module(source: bytes) -> ModuleApi:
    """The public API of one module's source (syntax errors are tolerated: tree-sitter
    recovers, and what it parsed is still documentation)."""
    root = python_parser().parse(source).root_node
    docstring, doc_line = _docstring(root)
    statements = list(_statements(root))
    exported: tuple[str, ...] | None = None
    for statement in statements:
        names = _all_names(statement)
        if names is not None:
            exported = names
    public = (lambda name: name in exported) if exported is not None else _is_public
    seen: set[str] = set()
    constants: list[Field] = []
    functions: list[Member] = []
    classes: list[ClassApi] = []
    for statement in statements:
        definition = _definition(statement)
        if definition is not None:
            node, decorators = definition
            name = _text(node.child_by_field_name("name"))
            if name in seen or not public(name):
                continue
            seen.add(name)
            if node.type == "class_definition":
                classes.append(_class_api(source, node, decorators))
            else:
                functions.append(_member(source, node, decorators))
            continue
        assigned = _assignment(statement)
        if assigned is not None:
            name = assigned[0]
            wanted = name in exported if exported is not None else bool(_CONSTANT_NAME.match(name))
            if wanted and name not in seen:
                seen.add(name)
                constants.append(_field(name, assigned[1], statement))
    return ModuleApi(docstring, doc_line, tuple(constants), tuple(functions), tuple(classes))


# --- rendering -----------------------------------------------------------------------------


def _signature_line(member: Member) -> str:
    return " ".join((*member.decorators, member.signature))


def _code_block(member: Member) -> Block:
    lines = "\n".join((*member.decorators, member.signature))
    return Block(f"```python\n{lines}\n```", member.line)


def _doc_blocks(doc: str, line: int) -> list[Block]:
    return split_blocks(doc.split("\n"), line) if doc else []


def _member_line(text: str, doc: str) -> str:
    line = f"- `{_one_line(text, MAX_MEMBER_CHARS)}`"
    return f"{line} — {_first_line(doc)}" if doc else line


def _members_block(cls: ClassApi) -> Block | None:
    lines = [_member_line(f.text, f.doc) for f in cls.fields]
    seen: set[str] = set()
    for method in cls.methods:
        line = _member_line(_signature_line(method), method.doc)
        if line not in seen:  # @overload stubs often repeat a signature
            seen.add(line)
            lines.append(line)
    if not lines:
        return None
    start = min([f.line for f in cls.fields] + [m.line for m in cls.methods])
    return Block("\n".join(lines), start)


def _weight(member: Member) -> float:
    return 1.0 if member.doc else UNDOCUMENTED_WEIGHT


def _says_more_than_one_line(doc: str) -> bool:
    return sum(1 for line in doc.splitlines() if line.strip()) > 1


def module_drafts(module: str, api: ModuleApi, path: str, display: str) -> list[Draft]:
    """Sections of one module: its docstring and constants, each public function, each
    public class, and each public method with more to say than its first line."""
    drafts: list[Draft] = []
    blocks = _doc_blocks(api.docstring, api.doc_line or 1)
    if api.constants:
        constants = "\n".join(_member_line(c.text, c.doc) for c in api.constants)
        blocks.append(Block(constants, api.constants[0].line))
    if blocks:
        drafts += drafts_from_blocks(module, path, display, api.doc_line or 1, Kind.MODULE, blocks)
    for function in api.functions:
        blocks = [_code_block(function), *_doc_blocks(function.doc, function.doc_line)]
        drafts += drafts_from_blocks(
            f"{module}.{function.name}", path, display, function.line, Kind.FUNCTION, blocks, weight=_weight(function)
        )
    for cls in api.classes:
        title = f"{module}.{cls.header.name}"
        blocks = [_code_block(cls.header), *_doc_blocks(cls.header.doc, cls.header.doc_line)]
        members = _members_block(cls)
        if members is not None:
            blocks.append(members)
        drafts += drafts_from_blocks(
            title, path, display, cls.header.line, Kind.CLASS, blocks, weight=_weight(cls.header)
        )
        for method in cls.methods:
            if _says_more_than_one_line(method.doc):
                blocks = [_code_block(method), *_doc_blocks(method.doc, method.doc_line)]
                drafts += drafts_from_blocks(f"{title}.{method.name}", path, display, method.line, Kind.METHOD, blocks)
    return drafts


def module_name(relative_parts: Sequence[str]) -> str:
    """`("pkg", "sub", "mod.py")` → "pkg.sub.mod"; a package's `__init__` is the package."""
    *dirs, filename = relative_parts
    stem = filename.rsplit(".", 1)[0]
    return ".".join(dirs if stem == "__init__" and dirs else [*dirs, stem])
