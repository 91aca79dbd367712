"""What an outline of a file is, and how it is cached.

An `Outline` is everything the index keeps about a file's shape: imports, top-level
constants, every class and function (nested ones flattened, with depth and parent), the
calls each one makes, and identifier counts for the cross-file reference graph. Tier
renderings (`tiers.py`) and the index work from it without parsing again, and the SQLite
cache stores it through `outline_to_json` / `outline_from_json`.

The extractors live beside it: the language layer (`languages/`: one module per language,
tree-sitter) and `markdown.py` (headings). This module holds the types they build, plain
text's outline and `outline_for`, which picks an extractor by the file's language; it
imports them lazily, since they build on this module.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import operator
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)

__all__ = [
    "Constant",
    "Import",
    "Outline",
    "OutlineSource",
    "Symbol",
    "line_starts",
    "outline_for",
    "outline_from_json",
    "outline_in_store",
    "outline_text",
    "outline_to_json",
    "outlines_kept_decoded",
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


_Parts = tuple[
    str, str, tuple[Import, ...], tuple[Constant, ...], tuple[Symbol, ...], tuple[tuple[str, int], ...], int, bool
]
"""An outline's fields in constructor order: what `Outline` holds, or decodes from JSON."""

OutlineSource = Callable[[str], "str | None"]
"""Reads an outline's JSON by analysis key (`IndexStore.outline_of`); None if it has none."""

_FIELDS = ("language", "docstring", "imports", "constants", "symbols", "references", "line_count", "has_errors")


class Outline:
    """The shape of one file; see the module docstring. Immutable, compared by value.

    An extractor builds one whole. One read from the cache (`outline_from_json`) keeps
    only its JSON and decodes it when a field is first read; the decoded fields are then
    kept while they are used, within `DECODED_OUTLINES_MAX_CHARS` of JSON for the whole
    process (issue 11: a warm engine holds every file's outline, but decoded, they took
    ~50 MB of Django's ~300). The object itself stays, so a cache keyed by it stays valid.

    One with a source (`outline_in_store`: the index cache, by analysis key) does not keep
    its JSON either: it is read from the source when a field is needed and dropped with
    the decoded fields (issue 34: the JSON alone is ~58 MB per 7,000 kernel files, and
    memory per file must not grow with the workspace). Its object is the file's shell.
    """

    __slots__ = ("_chars", "_json", "_key", "_names", "_parts", "_queued", "_source", "_used")

    def __init__(
        self,
        language: str,
        docstring: str,
        imports: tuple[Import, ...],
        constants: tuple[Constant, ...],
        symbols: tuple[Symbol, ...],
        references: tuple[tuple[str, int], ...],
        line_count: int,
        has_errors: bool,
    ) -> None:
        self._json: str | None = None
        self._parts: _Parts | None = (
            language,
            docstring,
            imports,
            constants,
            symbols,
            references,
            line_count,
            has_errors,
        )
        self._used = False
        self._names: frozenset[str] | None = None
        self._source: OutlineSource | None = None
        self._key = ""
        self._queued = False
        self._chars = 0

    @classmethod
    def _stored(cls, text: str | None, source: OutlineSource | None = None, key: str = "") -> Outline:
        """An outline kept as its JSON (checked and decoded on first use), or with a source
        read by key when needed (then `text`, if given, is held only while it is used)."""
        outline = cls.__new__(cls)
        outline._json = text
        outline._parts = None
        outline._used = False
        outline._names = None
        outline._source = source
        outline._key = key
        outline._queued = False
        outline._chars = 0
        if source is not None and text is not None:
            _DECODED.add(outline)
        return outline

    def _fields(self) -> _Parts:
        parts = self._parts
        if parts is None:
            parts = self._decode()
        else:
            self._used = True
        return parts

    def _text(self) -> str:
        """The JSON: held, or read from the source (and held while used, as decoded
        fields are). One the source no longer has (a cache rebuilt or closed under a live
        entry) reads as an empty outline, logged: a bundle must not fail for it."""
        text = self._json
        if text is not None:
            return text
        assert self._source is not None
        loaded = self._source(self._key)
        if loaded is None or not loaded.startswith(_VERSION_PREFIX):
            log.warning("outline %s is not in the index cache any more; read as empty", self._key)
            loaded = _EMPTY_JSON
        self._json = loaded
        _DECODED.add(self)
        return loaded

    def _decode(self) -> _Parts:
        parts = _parts_from_json(self._text())
        if self._names is None and self._source is None:
            self._names = _names_of(parts[4], parts[3])
        self._parts = parts
        _DECODED.add(self)
        if self._source is not None:  # decoded, the JSON is only needed again once dropped
            self._json = None
        return parts

    def _evict(self) -> int:
        """Drop the decoded fields, and the JSON and names of one with a source (which
        reads them again on use); returns the JSON's length as counted when queued."""
        self._parts = None
        self._used = False
        if self._source is not None:
            self._json = None
            self._names = None
        return self._chars

    @property
    def language(self) -> str:
        parts, text = self._parts, self._json
        if parts is None and text is None and self._source is not None:
            text = self._text()
        if parts is None and text is not None:  # read without decoding: `[1,"python",...`
            start = len(_VERSION_PREFIX) + 1
            end = text.find('"', start)
            if text[start - 1] == '"' and end > 0 and "\\" not in text[start:end]:
                return text[start:end]
        return self._fields()[0]

    @property
    def docstring(self) -> str:
        return self._fields()[1]

    @property
    def imports(self) -> tuple[Import, ...]:
        return self._fields()[2]

    @property
    def constants(self) -> tuple[Constant, ...]:
        return self._fields()[3]

    @property
    def symbols(self) -> tuple[Symbol, ...]:
        return self._fields()[4]

    @property
    def references(self) -> tuple[tuple[str, int], ...]:
        return self._fields()[5]

    @property
    def line_count(self) -> int:
        if self._parts is None and (self._json is not None or self._source is not None):
            return self._tail()[0]
        return self._fields()[6]

    @property
    def has_errors(self) -> bool:
        if self._parts is None and (self._json is not None or self._source is not None):
            return self._tail()[1]
        return self._fields()[7]

    def _tail(self) -> tuple[int, bool]:
        """(line count, has errors) read from the end of the JSON (`...,120,0]`), which
        `outline_to_json` writes as plain numbers: a renderer asks for them before it
        knows whether it needs the rest."""
        text = self._text()
        end = len(text) - 1
        second = text.rfind(",", 0, end)
        first = text.rfind(",", 0, second)
        try:
            return int(text[first + 1 : second]), text[second + 1 : end] == "1"
        except ValueError:
            parts = self._fields()
            return parts[6], parts[7]

    @property
    def names(self) -> frozenset[str]:
        """Every name the file defines: its symbols' (any depth) and its constants'. Kept
        once known (it is small, and what the index's symbol table holds anyway); for one
        with a source, while its fields are (every file's would grow with the workspace)."""
        names = self._names
        if names is None:
            parts = self._fields()
            names = self._names = _names_of(parts[4], parts[3])
        return names

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outline):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in zip(_FIELDS, self._fields()))
        return f"Outline({inner})"

    def __reduce__(self) -> tuple[type[Outline], _Parts]:
        return (Outline, self._fields())


def _names_of(symbols: tuple[Symbol, ...], constants: tuple[Constant, ...]) -> frozenset[str]:
    return frozenset([*(s.name for s in symbols), *(c.name for c in constants)])


DECODED_OUTLINES_MAX_CHARS = 6_000_000
"""How much outline JSON may be held decoded at once, process-wide. Decoded, an outline
takes ~4x its JSON (Django: 12 MB of JSON, ~50 MB decoded). Django, 60 bundles after
warm-up (/tmp/memwork/misses.py): 3 MB held ~220 outlines and decoded 814 again (475 ms
CPU, ~8 ms a bundle), 6 MB ~640 and 447 (150 ms, most of them the graph's first look at
a file's symbols), everything none; RSS at the end 276 / 282 / 306 MB."""


class _DecodedOutlines:
    """Stored outlines whose fields are decoded, oldest first. Over the limit, the oldest
    is dropped unless it was read since it was last looked at (then it goes to the back:
    the CLOCK policy, so a read costs one flag and no lock)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._queue: deque[Outline] = deque()
        self._chars = 0

    def add(self, outline: Outline) -> None:
        """Queue an outline that now holds decoded fields or a JSON read from its source
        (once: one already queued stays where it is)."""
        with self._lock:
            if outline._queued:
                return
            outline._queued = True
            outline._chars = len(outline._json or "")
            self._queue.append(outline)
            self._chars += outline._chars
            queue = self._queue
            while self._chars > self.max_chars and len(queue) > 1:
                oldest = queue.popleft()
                if oldest._used and oldest._parts is not None:
                    oldest._used = False
                    queue.append(oldest)
                else:
                    oldest._queued = False
                    self._chars -= oldest._evict()

    def clear(self) -> None:
        """Drop every decoded outline (for tests)."""
        with self._lock:
            while self._queue:
                oldest = self._queue.popleft()
                oldest._queued = False
                oldest._evict()
            self._chars = 0


_DECODED = _DecodedOutlines(DECODED_OUTLINES_MAX_CHARS)


DERIVING_OUTLINES_MAX_CHARS = 32_000_000
"""The limit while a pass reads every outline more than once: all of Django's (12 MB of
JSON) stay decoded; on a 20,000-file workspace (118 MB) an unbounded limit took the index
process from ~1.0 to 1.36 GB."""


@contextlib.contextmanager
def outlines_kept_decoded(max_chars: int = DERIVING_OUTLINES_MAX_CHARS) -> Iterator[None]:
    """Raise the limit on decoded outlines for a pass that reads every outline more than
    once (`ctx-lsp index` deriving search terms, then graph facts, from each: under the
    usual limit most were decoded twice); the usual limit applies again from the next
    decode on."""
    limit = _DECODED.max_chars
    _DECODED.max_chars = max(limit, max_chars)
    try:
        yield
    finally:
        _DECODED.max_chars = limit


MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")

CONSTANT_TEXT_MAX_CHARS = 100
"""Constants show their first line only, cut here: a table literal must not eat the outline."""

OUTLINE_JSON_VERSION = 2
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
    """Outline by the file's language (`code/languages/`), markdown, or plain text."""
    from ctx_lsp.code.languages import language_for, outline_in  # the languages import this module

    spec = language_for(path, source)
    if spec is not None:
        return outline_in(spec, source)
    lower = path.lower()
    text = decode_source(source)
    if lower.endswith(MARKDOWN_SUFFIXES):
        from ctx_lsp.code.markdown import outline_markdown

        return outline_markdown(text)
    return outline_text(text)


# -- JSON round trip (the SQLite cache) -------------------------------------------------
# Lists, not dicts: positional rows are smaller and faster to encode and decode.


def outline_to_json(o: Outline) -> str:
    """Compact JSON of an outline; `outline_from_json` gives back an equal Outline."""
    if o._json is not None or o._source is not None:
        return o._text()
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


def outline_from_json(s: str, source: OutlineSource | None = None, key: str = "") -> Outline:
    """Inverse of `outline_to_json`: an equal Outline, kept as this JSON and decoded on
    first use (see `Outline`); with a `source` that holds it under `key`, the JSON is held
    only while used and read from there again. Raises ValueError for another format
    version, so a cache can treat that as a miss (the version is read without decoding
    the rest)."""
    if not s.startswith(_VERSION_PREFIX):
        raise ValueError("outline JSON of another format version")
    return Outline._stored(s, source, key)


def outline_in_store(source: OutlineSource, key: str) -> Outline:
    """An outline whose JSON `source` holds under `key`, read when a field is first
    needed and dropped again with its decoded fields (see `Outline`)."""
    return Outline._stored(None, source, key)


_VERSION_PREFIX = f"[{OUTLINE_JSON_VERSION},"
_EMPTY_JSON = f'{_VERSION_PREFIX}"text","",[],[],[],[],0,0]'
"""What an outline its source lost reads as: plain text without lines."""


def _parts_from_json(s: str) -> _Parts:
    data = json.loads(s)
    if not isinstance(data, list) or not data or data[0] != OUTLINE_JSON_VERSION:
        raise ValueError("outline JSON of another format version")
    _, language, docstring, imports, constants, symbols, references, line_count, errors = data
    return (
        language,
        docstring,
        tuple(Import(line, text, module, tuple(names)) for line, text, module, names in imports),
        tuple(Constant(line, name, text) for line, name, text in constants),
        tuple(
            Symbol(q, n, k, sig, tuple(dec), doc, sl, el, bl, d, p, tuple(calls), bool(a))
            for q, n, k, sig, dec, doc, sl, el, bl, d, p, calls, a in symbols
        ),
        tuple((name, count) for name, count in references),
        line_count,
        bool(errors),
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


def line_starts(lines: Sequence[str]) -> list[int]:
    """Where each line starts in the lines joined by "\\n", then the joined length + 1
    (summed in C: a Python step a line was a tenth of deriving a file's units)."""
    return list(itertools.accumulate(map(operator.add, map(len, lines), itertools.repeat(1)), initial=0))
