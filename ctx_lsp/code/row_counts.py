"""Token counts of outline rows, by their parts, shared by every file of the process.

An outline's exact count is a few dictionary lookups instead of a tokenizer pass when
the encoding is line-additive (`LINE_ADDITIVE_ENCODINGS`): a rendered row is its gutter
(`_gutter`) and its text (`_row_text`), and both are counted once per process
(`RowCounts`). A whole text (a bundle's) is counted the same way, by its lines
(`RowCounts.whole`). Separate from `tiers.py`, which fits rows to caps with these counts.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence

from ctx_lsp.tokens import TokenCounter

__all__ = ["GUTTER", "LINE_ADDITIVE_ENCODINGS", "RowCounts", "row_counts"]

GUTTER = "│ "
"""Between the right-aligned line number and the line; one token, unlike `: ` or `| `
inside code, it cannot be mistaken for source."""


LINE_ADDITIVE_ENCODINGS = frozenset({"o200k_base", "cl100k_base"})
"""Encodings whose count of rendered rows is the sum of the rows' counts. Their
pre-tokenizer never makes a piece that runs past a newline into text after it (`\\s*[\\r\\n]+`
comes before `\\s+(?!\\S)` in both patterns), and a row ends in one newline while the next
begins with a digit or a space: so an outline's exact count is a few dictionary lookups
instead of a tokenizer pass (`tests/code/test_tiers.py` checks the identity on arbitrary
text). The heuristic counter rounds up per call, so it is not additive."""
ROW_TEXT_COUNTS_MAX_BYTES = 8 << 20
"""Bound of the process-wide counts of row texts (`RowCounts`), in estimated bytes. The
scale bench's whole session on Django counts ~30,000 distinct texts (1.6 M characters,
~5 MB counted this way), so a server session never evicts; a long one over a big
workspace keeps the newest texts, half the bound, when full."""
ROW_TEXT_ENTRY_BYTES = 100
"""Estimated bytes a kept text costs besides its characters: its string header (49) and
its dictionary slot, when no file basis holds the same string."""
PIECE_BREAK = re.compile(r"(?<=\n)(?=[^\s/]|[ \t]+\S)")
r"""Where any text splits into parts whose counts add up to its own, for the line-additive
encodings: after a newline that no piece of their pre-tokenizers runs past. A piece takes
in whitespace up to the last newline of its run (`\s*[\r\n]+`), and o200k_base's
punctuation piece the newlines and slashes right after it (`[\r\n/]*`): so the next line
must start with neither whitespace nor a slash, or with spaces or tabs and then something
else than whitespace (`tests/code/test_line_counts.py` checks the identity on arbitrary
text)."""
TEXT_PART_COUNTS_MAX_BYTES = 4 << 20
"""Bound of the process-wide counts of a whole text's parts (`RowCounts.whole`): a Django
8K bundle is ~30 KB of parts, most of them shown again by the next request."""
GUTTER_COUNTS_MAX = 1 << 16
"""Gutters kept per width: line numbers repeat across files, and a file's rows are
rendered from a few thousand of them; a width whose numbers pass this starts over."""


def _gutter(width: int, number: int) -> str:
    """A row's gutter up to its bar; the rest of the row is `_row_text`'s. `GUTTER` is
    the bar and one space, so the two parts joined are the row `_content` renders."""
    return f"{number:>{width}}{GUTTER[:-1]}" if number else f"{'':>{width}}{GUTTER[:-1]}"


def _row_text(text: str) -> str:
    return f"{GUTTER[-1]}{text}\n"


class RowCounts:
    """Tokens of rendered rows, counted by their parts — the gutter (`_gutter`) and the
    text after it (`_row_text`) — for one line-additive encoding, shared by every file
    of the process.

    The split is exact for these encodings: the bar is a piece of its own for their
    pre-tokenizers (no piece runs from a symbol across the space after it, and a digit
    never joins a symbol), so a row's count is its gutter's plus its text's
    (`tests/code/test_line_counts.py` checks it on arbitrary text; every distinct line
    of Django and the stdlib agreed, both encodings). Keyed by text, a line is counted
    once whatever its number or file: a new query on Django counted ~1,000 rows, and
    half of them were texts already counted in other files (`def __init__(self):`,
    `return None`, imports, decorators).

    Safe to share between threads without a lock on the read path: counting the same
    text twice gives the same count, and eviction replaces the dictionary instead of
    deleting from it, so a reader holding the old one still finds what it had."""

    def __init__(self, counter: TokenCounter, max_bytes: int = ROW_TEXT_COUNTS_MAX_BYTES):
        self.counter = counter
        self.max_bytes = max_bytes
        self._texts: dict[str, int] = {}
        self._bytes = 0
        self._gutters: dict[int, dict[int, int]] = {}
        self._parts: dict[str, int] = {}
        self._parts_bytes = 0
        self._lock = threading.Lock()

    def whole(self, text: str) -> int:
        """The exact count of any text (a bundle's), summed over its parts between
        PIECE_BREAKs, each part counted once per process: counting a Django 8K bundle's
        text took ~5 ms of tokenizer a request (~9 % of the bundle), and most of its lines
        (each part is a line or a few) were in an earlier request's text."""
        parts = PIECE_BREAK.split(text)
        counts = self._parts
        try:
            return sum(map(counts.__getitem__, parts))
        except KeyError:
            pass
        missing = [p for p in dict.fromkeys(parts) if p not in counts]
        fresh = dict(zip(missing, self.counter.count_many(missing)))
        with self._lock:
            size = sum(map(len, missing)) + ROW_TEXT_ENTRY_BYTES * len(missing)
            if self._parts_bytes + size > TEXT_PART_COUNTS_MAX_BYTES:  # start over (readers keep the old dict)
                self._parts, self._parts_bytes = {}, 0
            self._parts.update(fresh)
            self._parts_bytes += size
        return sum(fresh[p] if p in fresh else counts[p] for p in parts)

    def tokens(self, width: int, numbers: Sequence[int], texts: Sequence[str]) -> int:
        """Tokens of the rows `numbers[i]`, `texts[i]` as rendered at `width` and joined."""
        return self._text_tokens(texts) + self._gutter_tokens(width, numbers)

    def each(self, width: int, numbers: Sequence[int], texts: Sequence[str]) -> list[int]:
        """Tokens of each row, as `tokens` sums them."""
        text_counts, gutter_counts = self._text_counts(texts), self._gutter_counts(width, numbers)
        return [text_counts[t] + gutter_counts[n] for n, t in zip(numbers, texts)]

    def _text_tokens(self, texts: Sequence[str]) -> int:
        try:
            return sum(map(self._texts.__getitem__, texts))
        except KeyError:
            return sum(map(self._text_counts(texts).__getitem__, texts))

    def _text_counts(self, texts: Sequence[str]) -> Mapping[str, int]:
        """A mapping holding the count of every one of `texts`, counting the missing ones."""
        counts = self._texts
        unique = dict.fromkeys(texts)
        missing = [t for t in unique if t not in counts]
        if not missing:
            return counts
        fresh = dict(zip(missing, self.counter.count_many([_row_text(t) for t in missing])))
        self._keep(fresh)
        # Not `counts` updated: it may have been replaced by a smaller dict meanwhile.
        return {t: fresh[t] if t in fresh else counts[t] for t in unique}

    def _keep(self, fresh: dict[str, int]) -> None:
        with self._lock:
            texts = self._texts
            texts.update(fresh)
            self._bytes += sum(len(t) for t in fresh) + ROW_TEXT_ENTRY_BYTES * len(fresh)
            if self._bytes > self.max_bytes:  # keep the newest half of the bound, in a new dict (see the class)
                newest: list[tuple[str, int]] = []
                size = 0
                for text in reversed(texts):
                    size += len(text) + ROW_TEXT_ENTRY_BYTES
                    if size > self.max_bytes // 2:
                        break
                    newest.append((text, texts[text]))
                self._texts = dict(reversed(newest))
                self._bytes = sum(len(t) for t, _ in newest) + ROW_TEXT_ENTRY_BYTES * len(newest)

    def _gutter_tokens(self, width: int, numbers: Sequence[int]) -> int:
        counts = self._gutters.get(width)
        if counts is not None:
            try:
                return sum(map(counts.__getitem__, numbers))
            except KeyError:
                pass
        return sum(map(self._gutter_counts(width, numbers).__getitem__, numbers))

    def _gutter_counts(self, width: int, numbers: Sequence[int]) -> Mapping[int, int]:
        """A mapping holding the count of the gutter of every one of `numbers` at `width`."""
        counts = self._gutters.get(width)
        if counts is None:
            counts = self._gutters.setdefault(width, {})
        unique = dict.fromkeys(numbers)
        missing = [n for n in unique if n not in counts]
        if not missing:
            return counts
        fresh = dict(zip(missing, self.counter.count_many([_gutter(width, n) for n in missing])))
        with self._lock:
            if len(counts) + len(fresh) > GUTTER_COUNTS_MAX:
                self._gutters[width] = {}  # readers holding the old dict keep it whole
            self._gutters[width].update(fresh)
        return {n: fresh[n] if n in fresh else counts[n] for n in unique}


_ROW_COUNTS: dict[TokenCounter, RowCounts] = {}
_ROW_COUNTS_LOCK = threading.Lock()


def row_counts(counter: TokenCounter) -> RowCounts | None:
    """The process's shared row counts for `counter`, or None if its rows cannot be
    counted by their parts (an encoding outside LINE_ADDITIVE_ENCODINGS)."""
    if counter.name not in LINE_ADDITIVE_ENCODINGS:
        return None
    shared = _ROW_COUNTS.get(counter)
    if shared is None:
        with _ROW_COUNTS_LOCK:
            shared = _ROW_COUNTS.setdefault(counter, RowCounts(counter))
    return shared
