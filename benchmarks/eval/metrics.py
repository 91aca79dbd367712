"""What it means for a bundle to contain a changed file or function — one rule for all systems.

Every system's output is normalised to a :class:`Bundle` of :class:`Piece` s
(a piece = some text shown from one file, optionally with the line range it
covers). Then:

- a file is *found* if some piece comes from that path;
- a function is *found* if some piece from its file shows its ``def``/``class``
  line. "Shows" is checked on the text the model would read:
  * a piece with a line range must cover the definition line (±1 line of slack
    for 0/1-based or inclusive/exclusive conventions) and contain the definition
    (its stripped source line, or ``def NAME`` / ``class NAME``); when its content
    carries a line-number gutter (``  19│ def f(...)``), the line numbered
    ``def_line`` (±1) must be that definition, since ranges of outlines span the
    whole file;
  * a piece without a range (an Aider map block, a whole file) must show the
    whole scope chain in order — ``class Foo`` then ``def bar`` for ``Foo.bar`` —
    so that one ``def __init__`` line cannot stand for every ``__init__`` in the file.
  A whole file trivially shows every definition in it.
  Outside Python a scope carries its own ``pattern`` (``langs.py``): a Go method is
  recognised by ``func (… Stack…) Push``, a Rust method by ``impl … Buf`` then ``fn read``,
  a TS method by ``class Foo`` then ``bar(``, an arrow-function const by ``const f``.
- a changed *line* (see ``instances.find_answer_lines``: its stripped text, unique
  in the parent file, ≥ 8 characters) is *found* if some piece from its file has
  a line whose stripped text equals it, either as is or after a line-number gutter
  (``  12│ code``) is removed. A piece with a line range must cover the line's
  number (±1); a gutter number, if the matching line has one, must be within ±1
  of it too. A piece without a range (a whole file, an Aider map block) only
  needs the text. Signatures cut or rewritten by a renderer do not count.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

RANGE_SLACK = 1
# Bump when the rules below change meaning: cached results are keyed by it.
# 3: line recall.
# 4: scopes may carry their own header pattern (TypeScript/JavaScript, Go, Rust).
SCORING_VERSION = 4


@dataclass
class Piece:
    path: str | None  # workspace-relative, '/'-separated; None for non-file sections
    content: str
    start_line: int | None = None
    end_line: int | None = None


@dataclass
class Bundle:
    pieces: list[Piece]
    text: str  # exactly what the model would be given (counted with o200k)
    latency_s: float
    reported_tokens: int | None = None  # the system's own count, if it gives one
    extra: dict[str, Any] = field(default_factory=dict)

    def paths(self) -> set[str]:
        return {p.path for p in self.pieces if p.path}


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _scope_patterns(scope: dict) -> tuple[str, re.Pattern[str]]:
    if scope.get("pattern"):  # TypeScript/JavaScript, Go, Rust: the gold says how its header looks
        return scope.get("text", "").strip(), _compiled(scope["pattern"])
    name = re.escape(scope["name"])
    if scope["kind"] == "class":
        pat = re.compile(rf"\bclass\s+{name}\b")
    else:
        pat = re.compile(rf"\b(?:async\s+)?def\s+{name}\b")
    return scope.get("text", "").strip(), pat


def _line_matches(line: str, scope_text: str, pat: re.Pattern[str]) -> bool:
    # Long lines may be cut by a renderer (Aider cuts at 100 chars): compare a prefix.
    if scope_text and len(scope_text) >= 6 and scope_text[:80] in line:
        return True
    return bool(pat.search(line))


_LINENO_PREFIX_RE = re.compile(r"^\s*L?\d+(?:[:|│]\s?|\s)")
_HEADER_RE = re.compile(r"^\s*(?:async\s+def|def|class)\s+\w")
# A definition header in a brace language: where the block of the scope before it ends,
# when at its indentation or less (see shows_chain).
_BRACE_HEADER_RE = re.compile(
    r"^\s*(?:(?:export|default|declare|abstract|async|pub(?:\([^)]*\))?|unsafe|extern(?:\s+\"[^\"]*\")?|"
    r"public|private|protected|static|readonly)\s+)*"
    r"(?:(?:class|interface|enum|namespace|function|fn|impl|trait|struct|union|mod|func|type)\b|macro_rules!)"
)


def _strip_lineno(line: str) -> str:
    """Drop a leading line-number gutter ('12: ', '  12 | ', 'L12 ') a renderer may add."""
    return _LINENO_PREFIX_RE.sub("", line, count=1)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def shows_chain(content: str, chain: list[dict]) -> bool:
    """True if ``content`` shows the scopes of ``chain`` nested as in the source.

    Each scope must appear after its parent and before the parent's block ends
    (a class/def header at the parent's indentation or less), so ``class Foo``
    followed later by ``Other``'s ``def baz`` does not count as ``Foo.baz``.

    Outside Python a type has many blocks (Rust's ``impl Arg { … }`` several times in one
    file, one per topic): every block that matches the parent is tried, not only the first.
    """
    lines = [_strip_lineno(ln) for ln in content.splitlines()]
    if not any(s.get("pattern") for s in chain):  # Python: the rule as it always was
        i = 0
        parent_indent: int | None = None
        for scope in chain:
            text, pat = _scope_patterns(scope)
            while True:
                if i >= len(lines):
                    return False
                line = lines[i]
                i += 1
                if _line_matches(line, text, pat):
                    parent_indent = _indent(line)
                    break
                if parent_indent is not None and _HEADER_RE.match(line) and _indent(line) <= parent_indent:
                    return False
        return True
    scopes = [_scope_patterns(s) for s in chain]

    def match(k: int, start: int, parent_indent: int | None) -> bool:
        if k == len(scopes):
            return True
        text, pat = scopes[k]
        for i in range(start, len(lines)):
            line = lines[i]
            if _line_matches(line, text, pat) and match(k + 1, i + 1, _indent(line)):
                return True
            if parent_indent is not None and _BRACE_HEADER_RE.match(line) and _indent(line) <= parent_indent:
                return False
        return False

    return match(0, 0, None)


_GUTTER_RE = re.compile(r"^\s*L?(\d+)\s*[│|:]\s?(.*)$")


def gutter_lines(content: str) -> dict[int, str]:
    """Source line number -> text, for content rendered with a line-number gutter."""
    out: dict[int, str] = {}
    for line in content.splitlines():
        m = _GUTTER_RE.match(line)
        if m:
            out.setdefault(int(m.group(1)), m.group(2))
    return out


def piece_shows_function(piece: Piece, fn: dict) -> bool:
    if piece.path != fn["path"]:
        return False
    chain = fn.get("chain") or [{"kind": fn.get("kind", "def"), "name": fn["qualname"].rsplit(".", 1)[-1], "text": ""}]
    if piece.start_line is not None and piece.end_line is not None:
        line = fn.get("def_line", fn["start_line"])
        if not (piece.start_line - RANGE_SLACK <= line <= piece.end_line + RANGE_SLACK):
            return False
        gutter = gutter_lines(piece.content)
        if len(gutter) >= 2:
            # Numbered lines (an outline of a whole file): the def line itself must be
            # shown, which pins the definition exactly (two `def __init__` never share a line).
            text, pat = _scope_patterns(chain[-1])
            return any(
                _line_matches(gutter.get(n, ""), text, pat) for n in range(line - RANGE_SLACK, line + RANGE_SLACK + 1)
            )
        return shows_chain(piece.content, chain[-1:])
    return shows_chain(piece.content, chain)


_LINE_GUTTER_RE = re.compile(r"^\s*L?(\d+)(?:\s*[│|:]\s?|\s)(.*)$")


def piece_shows_line(piece: Piece, line: dict) -> bool:
    """True if ``piece`` shows the changed line ``{"path", "line", "text"}`` as a whole line."""
    if piece.path != line["path"]:
        return False
    number, text = line["line"], line["text"]
    ranged = False
    if piece.start_line is not None and piece.end_line is not None:
        if not piece.start_line - RANGE_SLACK <= number <= piece.end_line + RANGE_SLACK:
            return False
        ranged = True
    for raw in piece.content.splitlines():
        if raw.strip() == text:
            return True
        m = _LINE_GUTTER_RE.match(raw)
        if m and m.group(2).strip() == text and (not ranged or abs(int(m.group(1)) - number) <= RANGE_SLACK):
            return True
    return False


def found_lines(bundle: Bundle, lines: Iterable[dict]) -> list[dict]:
    by_path: dict[str, list[Piece]] = {}
    for p in bundle.pieces:
        if p.path:
            by_path.setdefault(p.path, []).append(p)
    return [ln for ln in lines if any(piece_shows_line(p, ln) for p in by_path.get(ln["path"], []))]


def found_files(bundle: Bundle, files: Iterable[str]) -> list[str]:
    have = bundle.paths()
    return [f for f in files if f in have]


def found_functions(bundle: Bundle, functions: Iterable[dict]) -> list[dict]:
    return [fn for fn in functions if any(piece_shows_function(p, fn) for p in bundle.pieces)]


def recall(found: int, total: int) -> float | None:
    return None if total == 0 else found / total
