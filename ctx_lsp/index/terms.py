"""Identifier-aware terms: how code and task text are split for lexical matching.

A task says "counting tokens in the bundle"; code says `count_tokens`, `TokenCounter`,
`bundle.py`. Splitting snake_case, camelCase, dotted and path names into lowercase parts,
and folding simple plurals, lets the two meet.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter, _count_elements  # type: ignore[attr-defined]
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "it's",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "self",
        "cls",
        "none",
        "true",
        "false",
        "def",
        "class",
        "return",
        "import",
        "pass",
        "via",
        "use",
        "used",
        "using",
        "make",
        "add",
        "adds",
        "added",
        "fix",
        "fixes",
        "fixed",
        "allow",
        "allows",
        "support",
        "supports",
        "new",
        "also",
        "when",
        "instead",
        "all",
        "any",
        "done",
        "just",
        "makes",
        "more",
        "most",
        "now",
        "only",
        "other",
        "very",
    ]
)
"""English glue and Python keywords: frequent in tasks and code alike, so they carry no signal.

The last eleven (`all` … `very`) are the English words of `bm25-chunks`' list that were
missing here (issue 22, session 15). A compound's part is a term of its own: the task
"Prefer ReplaceAll instead of Replace(..., -1)" ranked `hasAllFlags` and `MatchAll` (a
name match, short units) above the `strings.Replace` calls it was about. Same run, same
instances, against `d9a833c`: Go open 2K line 25.4 -> 27.3, Rust cold 8K function 65.6 ->
70.4, TypeScript cold 8K function 96.9 -> 97.8; Python within a point everywhere."""

MIN_TERM_CHARS = 2


def split_identifier(word: str) -> list[str]:
    """'getHTTPResponse_code' → ['get', 'http', 'response', 'code']."""
    parts: list[str] = []
    for chunk in word.split("_"):
        if not chunk:
            continue
        if chunk.isascii() and chunk.isalpha() and (chunk.islower() or chunk.isupper()):
            parts.append(chunk.lower())  # what `_CAMEL` finds in `inode`, `NULL`: the chunk
        else:
            parts.extend(p.lower() for p in _CAMEL.findall(chunk))
    return parts


def normalise(term: str) -> str:
    """A light stemmer, applied alike to code and queries so inflections meet.

    'tokens'/'token', 'counted'/'counting'/'count', 'parses'/'parsed'/'parse' each fold to
    one stem. Stems need not be words; they only have to agree on both sides.
    """
    if len(term) > 4 and term.endswith("ies"):
        term = term[:-3] + "y"
    elif term.endswith("sses"):
        term = term[:-2]
    elif len(term) > 3 and term.endswith("s") and not term.endswith(("ss", "us", "is")):
        term = term[:-1]
    if len(term) > 5 and term.endswith("ing"):
        term = term[:-3]
    elif len(term) > 4 and term.endswith("ed") and not term.endswith("eed"):
        term = term[:-2]
    if len(term) > 3 and term.endswith("e"):
        term = term[:-1]
    return term


def terms(text: str) -> list[str]:
    """All searchable terms in `text`, with repeats (term frequency matters).

    A compound identifier yields its parts and itself (lowercased), so an exact
    `count_tokens` in a query scores higher than 'count' and 'tokens' apart.
    """
    return list(_chain(map(word_terms, _WORD.findall(text))))


def term_counts(text: str) -> dict[str, int]:
    """How often each term occurs in `text`: `count_terms(terms(text))`, counting the
    words first (code repeats its words; each distinct one is split once)."""
    out: dict[str, int] = {}
    for word, n in Counter(_WORD.findall(text)).items():
        for t in word_terms(word):
            out[t] = out.get(t, 0) + n
    return out


@functools.lru_cache(maxsize=1 << 17)
def word_terms(word: str) -> tuple[str, ...]:
    """Terms of one word; cached because code repeats its identifiers endlessly."""
    parts = split_identifier(word)
    out = [normalise(p) for p in parts if len(p) >= MIN_TERM_CHARS and p not in STOP_WORDS]
    if len(parts) > 1:
        out.append(word.lower().strip("_"))
    return tuple(out)


_chain = itertools.chain.from_iterable

WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_RUNS_TABLE = bytes(b if b in WORD_BYTES else 0x20 for b in range(256))


def word_runs(text: str) -> bytes:
    """`text` as ASCII bytes, every character that no word (`_WORD`) holds a space: its
    `split()` gives the runs of word characters, each at the offset its text has (a
    character that is not ASCII becomes one `?`, then a space). A run is one word, or a
    number and the word after it (`0x1F`: `0`, `x1F`): `run_terms`.

    Splitting runs in C is ~20x cheaper than `_WORD.findall`, which walked the text a
    character at a time (a third of deriving a C file's unit terms)."""
    return text.encode("ascii", "replace").translate(_RUNS_TABLE)


RUN_TERMS_MAX = 1 << 17
"""Distinct runs whose terms `run_terms` keeps (about `word_terms`' cache); past it, the
cache starts again (a kernel's hex constants are millions of distinct runs)."""


class _RunTerms(dict[bytes, tuple[str, ...]]):
    """Run -> its terms; a dict, looked up in C (`map(run_terms.__getitem__, runs)`), that
    fills itself on a miss."""

    def __missing__(self, run: bytes) -> tuple[str, ...]:
        if len(self) >= RUN_TERMS_MAX:
            self.clear()
        text = run.decode("ascii")
        if "0" <= text[0] <= "9":
            found = tuple(t for word in _WORD.findall(text) for t in word_terms(word))
        else:
            found = word_terms(text)
        self[run] = found
        return found


run_terms = _RunTerms()
"""The terms of one run of word characters (see `word_runs`), with repeats: `terms` of
its text. Counting the terms of a text's runs counts the terms of its words."""


def query_terms(text: str) -> list[str]:
    """Distinct terms of a query, in first-seen order."""
    return list(dict.fromkeys(terms(text)))


def identifiers(text: str) -> set[str]:
    """Code-like words in free text (snake, camel, dotted parts): used to personalise ranking."""
    found: set[str] = set()
    for word in _WORD.findall(text):
        if "_" in word or any(c.isupper() for c in word[1:]) or (word.lower() not in STOP_WORDS and len(word) > 2):
            found.add(word)
    return found


def count_terms(items: Iterable[str]) -> dict[str, int]:
    """How often each item occurs, in first-seen order (a plain dict: documents hold one
    each). Counted by `Counter`'s own C loop (`_count_elements`), without a Counter."""
    counts: dict[str, int] = {}
    _count_elements(counts, items)
    return counts
