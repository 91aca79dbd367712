"""What an outline of a file is, and how it is cached.

An `Outline` is everything the index keeps about a file's shape: imports, top-level
constants, every class and function (nested ones flattened, with depth and parent), the
calls each one makes, and identifier counts for the cross-file reference graph. Tier
renderings (`tiers.py`) and the index work from it without parsing again, and the SQLite
cache stores it through `outline_to_json` / `outline_from_json`.

The extractors live beside it: `python.py` (tree-sitter) and `markdown.py` (headings).
This module holds the types they build, plain text's outline and `outline_for`, which
picks an extractor by suffix; it imports them lazily, since they build on this module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = [
    "Constant",
    "Import",
    "Outline",
    "Symbol",
    "outline_for",
    "outline_from_json",
    "outline_text",
    "outline_to_json",
    "split_lines",
]


@dataclass(frozen=True, slots=True)
class Symbol:
    """A class, function or method (Python) or a heading (markdown).

    Lines are 1-based and inclusive; `start_line` includes decorators. `signature` is the
    header up to (not including) its final ":", on one line.
    """

    qualname: str
    name: str
    kind: str
    signature: str
    decorators: tuple[str, ...]
    doc: str
    start_line: int
    end_line: int
    body_start_line: int
    depth: int
    parent: str
    calls: tuple[str, ...]
    is_async: bool = False


@dataclass(frozen=True, slots=True)
class Import:
    """One imported module. `import a.b, c` gives two, both with the statement's text."""

    line: int
    text: str
    module: str
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Constant:
    """A module-level assignment (`X = ...`, `X: int = ...`, `type X = ...`)."""

    line: int
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Outline:
    """The shape of one file; see the module docstring."""

    language: str
    docstring: str
    imports: tuple[Import, ...]
    constants: tuple[Constant, ...]
    symbols: tuple[Symbol, ...]
    references: tuple[tuple[str, int], ...]
    line_count: int
    has_errors: bool


PYTHON_SUFFIXES = (".py", ".pyi")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")

CONSTANT_TEXT_MAX_CHARS = 100
"""Constants show their first line only, cut here: a table literal must not eat the outline."""

OUTLINE_JSON_VERSION = 1
"""Bumped whenever the JSON shape or the extraction changes, so cached outlines are redone."""


def decode_source(data: bytes) -> str:
    """Source bytes as text, bad UTF-8 replaced: an outline never fails on encoding."""
    return data.decode("utf-8", "replace")


def _line_count(text: str) -> int:
    """Lines as tree-sitter rows count them: split on "\\n" only, no empty last line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def outline_text(text: str) -> Outline:
    """Plain text: no symbols; the docstring is the first non-empty line (cut)."""
    docstring = ""
    for line in text.splitlines():
        line = line.strip()
        if line:
            docstring = line[:CONSTANT_TEXT_MAX_CHARS]
            break
    return Outline("text", docstring, (), (), (), (), _line_count(text), False)


def outline_for(path: str, source: bytes) -> Outline:
    """Outline by file suffix: Python, markdown, or plain text for anything else."""
    lower = path.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        from ctx_lsp.code.python import outline_python  # the extractors import this module

        return outline_python(source)
    text = decode_source(source)
    if lower.endswith(MARKDOWN_SUFFIXES):
        from ctx_lsp.code.markdown import outline_markdown

        return outline_markdown(text)
    return outline_text(text)


# -- JSON round trip (the SQLite cache) -------------------------------------------------
# Lists, not dicts: positional rows are smaller and faster to encode and decode.


def outline_to_json(o: Outline) -> str:
    """Compact JSON of an outline; `outline_from_json` gives back an equal Outline."""
    return json.dumps(
        [
            OUTLINE_JSON_VERSION,
            o.language,
            o.docstring,
            [[i.line, i.text, i.module, i.names] for i in o.imports],
            [[c.line, c.name, c.text] for c in o.constants],
            [
                [
                    s.qualname,
                    s.name,
                    s.kind,
                    s.signature,
                    s.decorators,
                    s.doc,
                    s.start_line,
                    s.end_line,
                    s.body_start_line,
                    s.depth,
                    s.parent,
                    s.calls,
                    int(s.is_async),
                ]
                for s in o.symbols
            ],
            o.references,
            o.line_count,
            int(o.has_errors),
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def outline_from_json(s: str) -> Outline:
    """Inverse of `outline_to_json`. Raises ValueError for another format version, so a
    cache can treat that as a miss."""
    data = json.loads(s)
    if not isinstance(data, list) or not data or data[0] != OUTLINE_JSON_VERSION:
        raise ValueError("outline JSON of another format version")
    _, language, docstring, imports, constants, symbols, references, line_count, errors = data
    return Outline(
        language=language,
        docstring=docstring,
        imports=tuple(Import(line, text, module, tuple(names)) for line, text, module, names in imports),
        constants=tuple(Constant(line, name, text) for line, name, text in constants),
        symbols=tuple(
            Symbol(q, n, k, sig, tuple(dec), doc, sl, el, bl, d, p, tuple(calls), bool(a))
            for q, n, k, sig, dec, doc, sl, el, bl, d, p, calls, a in symbols
        ),
        references=tuple((name, count) for name, count in references),
        line_count=line_count,
        has_errors=bool(errors),
    )


def split_lines(text: str) -> list[str]:
    """The lines of a text as `Symbol` line numbers count them ("\\n" only; a trailing
    "\\r" of CRLF files is dropped)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in text:
        return [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines
