"""BM25-over-whole-files baseline: the simplest thing an agent harness could do.

Score every source file of the instance's language (``.py`` for Python; see
``langs.EXTENSIONS``) of the workspace against the task text with BM25
(k1=1.5, b=0.75) over identifier-aware tokens, then pack whole files in rank
order while they fit the budget (a file that does not fit is skipped and the
next one tried). Whole files make "function found" trivially true whenever the
file is in, which is the baseline's one advantage; its cost is that few files
fit in a small budget.

In ``open`` mode the open file is a working file: it is packed first (if it
fits), exactly as a bundle would show the file being edited, and the rest
follows by rank.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import langs
import tokens

K1 = 1.5
B = 0.75

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "not",
        "no",
        "but",
        "if",
        "then",
        "else",
        "when",
        "which",
        "who",
        "we",
        "you",
        "i",
        "our",
        "can",
        "should",
        "would",
        "could",
        "do",
        "does",
        "did",
        "done",
        "so",
        "all",
        "any",
        "some",
        "more",
        "most",
        "other",
        "such",
        "than",
        "too",
        "very",
        "just",
        "also",
        "only",
        "use",
        "used",
        "using",
        "via",
        "add",
        "added",
        "adds",
        "fix",
        "fixed",
        "fixes",
        "make",
        "makes",
        "allow",
        "allows",
        "support",
        "new",
        "now",
        "def",
        "class",
        "self",
        "cls",
        "return",
        "import",
        "none",
        "true",
        "false",
        "pass",
        "elif",
        "try",
        "except",
        "finally",
        "raise",
        "lambda",
        "yield",
        "while",
        "py",
    ]
)

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokenize(text: str) -> list[str]:
    """Identifier-aware tokens: ``get_HTTPResponse.parse`` -> get, http, response, parse.

    Splitting on non-alphanumerics handles snake_case, dotted names and paths;
    each piece is split again at camelCase boundaries, lowercased, and stop
    words and one-character pieces are dropped.
    """
    out: list[str] = []
    for word in _WORD_RE.findall(text):
        for part in _CAMEL_RE.findall(word):
            low = part.lower()
            if len(low) > 1 and low not in STOP_WORDS:
                out.append(low)
    return out


@dataclass
class Document:
    path: str  # workspace-relative, '/'-separated
    text: str
    tf: Counter[str]
    length: int
    rendered_tokens: int | None = None  # memo: tokens of render_file(path, text)

    def block(self) -> tuple[str, int]:
        block = render_file(self.path, self.text)
        if self.rendered_tokens is None:
            self.rendered_tokens = tokens.count(block)
        return block, self.rendered_tokens


class BM25Index:
    """An in-memory BM25 index of one workspace's source files (path included in the text)."""

    def __init__(self, docs: list[Document]) -> None:
        self.docs = docs
        self.avgdl = sum(d.length for d in docs) / max(1, len(docs))
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    @classmethod
    def from_workspace(cls, root: Path, files: list[str], exts: tuple[str, ...] = (".py",)) -> BM25Index:
        docs = []
        for rel in files:
            if not rel.endswith(exts):
                continue
            try:
                text = (root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            toks = tokenize(rel) + tokenize(text)
            docs.append(Document(rel, text, Counter(toks), len(toks)))
        return cls(docs)

    def rank(self, query: str) -> list[tuple[float, Document]]:
        """Documents with a positive score, best first (ties broken by path for determinism)."""
        q = Counter(tokenize(query))
        scored = []
        for d in self.docs:
            s = 0.0
            for term, _qtf in q.items():
                f = d.tf.get(term)
                if not f:
                    continue
                norm = f * (K1 + 1) / (f + K1 * (1 - B + B * d.length / self.avgdl))
                s += self.idf[term] * norm
            if s > 0:
                scored.append((s, d))
        scored.sort(key=lambda x: (-x[0], x[1].path))
        return scored


def render_file(path: str, text: str) -> str:
    """How a whole file is shown to the model (the header and fence are counted too)."""
    if not text.endswith("\n"):
        text += "\n"
    return f"{path}\n```{langs.fence(path)}\n{text}```\n\n"


def pack(index: BM25Index, query: str, budget: int, open_file: str | None = None) -> list[tuple[str, str, int]]:
    """Whole files in rank order that fit the budget: [(path, rendered block, tokens)]."""
    chosen: list[tuple[str, str, int]] = []
    used = 0
    order: list[Document] = []
    if open_file:
        order += [d for d in index.docs if d.path == open_file]
    order += [d for _, d in index.rank(query) if d.path != open_file]
    for d in order:
        block, n = d.block()
        if used + n <= budget:
            chosen.append((d.path, block, n))
            used += n
    return chosen


def list_files(root: Path) -> list[str]:
    """Workspace files (sorted, '/'-separated), skipping tool caches the systems may create."""
    skip_dirs = {".git", "__pycache__", ".ctx-lsp", ".mypy_cache", ".pytest_cache", ".tox", ".venv"}
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs and not d.startswith(".aider"))
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            out.append(rel.replace(os.sep, "/"))
    return sorted(out)


# --------------------------------------------------------------------------- chunks

CHUNK_LINES = 30
"""Lines per window; 20 and 40 gave line recall 54.8 and 56.6 at 8K (cold) against 55.3."""
CHUNK_STEP = 15
"""Windows overlap by half, so a changed line is never only at a window's edge."""


@dataclass
class Chunk:
    path: str
    start: int  # 1-based, inclusive
    end: int
    tf: Counter[str]
    length: int


class ChunkIndex:
    """BM25 over overlapping windows of lines: retrieval-augmented generation's usual unit.

    The stronger lexical baseline for line recall: it spends the budget on the windows
    that hold the query's words rather than on whole files.
    """

    def __init__(self, files: dict[str, list[str]]) -> None:
        self.lines = files
        self.chunks: list[Chunk] = []
        for path, lines in files.items():
            path_toks = tokenize(path)
            start = 0
            while True:
                end = min(len(lines), start + CHUNK_LINES)
                toks = path_toks + tokenize("\n".join(lines[start:end]))
                self.chunks.append(Chunk(path, start + 1, end, Counter(toks), len(toks)))
                if end >= len(lines):
                    break
                start += CHUNK_STEP
        self.avgdl = sum(c.length for c in self.chunks) / max(1, len(self.chunks))
        df: Counter[str] = Counter()
        for c in self.chunks:
            df.update(c.tf.keys())
        n = len(self.chunks)
        self.idf = {t: math.log(1 + (n - k + 0.5) / (k + 0.5)) for t, k in df.items()}

    @classmethod
    def from_workspace(cls, root: Path, files: list[str], exts: tuple[str, ...] = (".py",)) -> ChunkIndex:
        out: dict[str, list[str]] = {}
        for rel in files:
            if rel.endswith(exts):
                try:
                    out[rel] = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    continue
        return cls(out)

    def rank(self, query: str) -> list[Chunk]:
        q = Counter(tokenize(query))
        scored = []
        for c in self.chunks:
            s = 0.0
            for term in q:
                f = c.tf.get(term)
                if f:
                    s += self.idf[term] * f * (K1 + 1) / (f + K1 * (1 - B + B * c.length / self.avgdl))
            if s > 0:
                scored.append((s, c))
        scored.sort(key=lambda x: (-x[0], x[1].path, x[1].start))
        return [c for _, c in scored]


def pack_chunks(
    index: ChunkIndex, query: str, budget: int, open_file: str | None = None
) -> list[tuple[str, int, int, str, int]]:
    """Best windows first, clipped where they overlap one already packed, each shown with
    line numbers; in ``open`` mode the open file comes first, whole if it fits, as in
    ``pack``."""
    spans: dict[str, list[list[int]]] = {}
    used = 0
    out: list[tuple[str, int, int, str, int]] = []
    if open_file in index.lines:
        lines = index.lines[open_file]
        block = render_file(open_file, "\n".join(lines))
        n = tokens.count(block)
        if n <= budget:
            used = n
            spans[open_file] = [[1, len(lines)]]
            out.append((open_file, 1, len(lines), block, n))
    for c in index.rank(query):
        start, end = c.start, c.end
        for s in spans.get(c.path, []):
            if s[0] <= start <= s[1]:
                start = s[1] + 1
            if s[0] <= end <= s[1]:
                end = s[0] - 1
        if start > end:
            continue
        lines = index.lines[c.path]
        body = "".join(f"{n:>5}│ {lines[n - 1]}\n" for n in range(start, end + 1))
        block = f"{c.path} (lines {start}-{end})\n```{langs.fence(c.path)}\n{body}```\n\n"
        n = tokens.count(block)
        if used + n > budget:
            continue
        used += n
        spans.setdefault(c.path, []).append([start, end])
        out.append((c.path, start, end, block, n))
    return out
