"""Token counts and token-bounded cuts: the unit every ctx-lsp budget is measured in.

Budgets are hard limits ("the bundle never exceeds its budget"), so counts come from the
real BPE encodings, not a chars/4 guess. The encodings are OpenAI's published `.tiktoken`
files shipped in `ctx_lsp/data/` and checked against tiktoken's own sha256, because
`tiktoken.get_encoding` downloads them on first use and the machines ctx-lsp runs on may
have no network. Only when tiktoken itself cannot be imported do we fall back to a
deliberately pessimistic character heuristic.
"""

from __future__ import annotations

import binascii
import bisect
import functools
import gzip
import hashlib
import itertools
import logging
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Protocol

from ctx_lsp.errors import InvalidParam

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger(__name__)

O200K_BASE = "o200k_base"
CL100K_BASE = "cl100k_base"
HEURISTIC = "heuristic"
DEFAULT_ENCODING = O200K_BASE
"""OpenAI's chat models since gpt-4o use o200k_base, and it is also our stand-in for models
whose tokenizer we do not ship (see `encoding_for_model`)."""


class TokenCounter(Protocol):
    """What budget code needs from a tokenizer: counts, never token ids.

    `name` is a read-only property here (rather than a plain attribute) so that frozen
    dataclasses satisfy the protocol under a type checker.
    """

    @property
    def name(self) -> str: ...  # "o200k_base" | "cl100k_base" | "heuristic"

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...


# --- shipped encodings -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _EncodingSpec:
    """How tiktoken builds one encoding (`tiktoken_ext/openai_public.py`), minus the download.

    The regexes and special-token ids are copied because tiktoken 0.14 builds them inside
    the spec functions and exposes no constants for them. Calling those functions would mean
    swapping `load_tiktoken_bpe` on the shared module, which races with any other thread
    loading an encoding. They are part of the published encodings and cannot change without
    changing every count; `tests/test_tokens.py` still checks them against tiktoken's.
    """

    file: str
    sha256: str
    """sha256 of the decompressed file: tiktoken's `expected_hash` for the published URL."""
    pat_str: str
    special_tokens: Mapping[str, int]


_SPECS: dict[str, _EncodingSpec] = {
    CL100K_BASE: _EncodingSpec(
        file="cl100k_base.tiktoken.gz",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
            r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    O200K_BASE: _EncodingSpec(
        file="o200k_base.tiktoken.gz",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

ENCODINGS: tuple[str, ...] = (*_SPECS, HEURISTIC)
"""Every name `counter_for` accepts."""


class DamagedEncodingFile(RuntimeError):
    """A shipped BPE file does not match its hash: the install is broken, so counting must
    stop rather than silently produce wrong budgets."""


def read_bpe_file(name: str) -> bytes:
    """The decompressed, hash-checked `.tiktoken` file for `name`.

    Checked on every load because a truncated or altered vocabulary still loads and then
    miscounts silently.
    """
    spec = _SPECS[name]
    raw = gzip.decompress((resources.files("ctx_lsp") / "data" / spec.file).read_bytes())
    actual = hashlib.sha256(raw).hexdigest()
    if actual != spec.sha256:
        raise DamagedEncodingFile(
            f"ctx_lsp/data/{spec.file}: sha256 {actual}, expected {spec.sha256}; "
            "the ctx-lsp install is damaged, reinstall it"
        )
    return raw


def parse_ranks(raw: bytes) -> dict[bytes, int]:
    """Parse `<base64 token> <rank>` lines.

    Same result as `tiktoken.load.load_tiktoken_bpe`, but one split over the whole file
    instead of one per line: 0.18 s instead of 0.30 s for o200k_base.
    """
    fields = raw.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


def _load_encoding(name: str) -> tiktoken.Encoding:
    """Build the encoding from the shipped file: no network, no env vars, no cache writes
    (tiktoken's loader would write a copy into its cache dir)."""
    import tiktoken

    spec = _SPECS[name]
    encoding = tiktoken.Encoding(
        name,
        pat_str=spec.pat_str,
        mergeable_ranks=parse_ranks(read_bpe_file(name)),
        special_tokens=dict(spec.special_tokens),
    )
    # The ranks now live in the Rust tables; tiktoken keeps its Python dict only to pickle
    # the encoding, which nothing here does (workers load their own): ~23 MB for o200k_base.
    encoding._mergeable_ranks = {}
    return encoding


@functools.cache
def _tiktoken_available() -> bool:
    """Whether the real tokenizer can be used; a function so tests can force the fallback."""
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        log.warning(
            "tiktoken is not importable; token counts use the %s fallback (about a third too high for typical code)",
            HEURISTIC,
        )
        return False
    return True


@dataclass(frozen=True, slots=True)
class TiktokenCounter:
    """Get one from `counter_for`, which builds each encoding once per process."""

    name: str
    encoding: tiktoken.Encoding

    def count(self, text: str) -> int:
        """Counts with `encode_ordinary`: source text often contains `<|endoftext|>`, which
        `encode` would reject (or, if allowed, count as one token instead of its pieces)."""
        return len(self.encoding.encode_ordinary(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """A plain loop: `encode_ordinary_batch` was slower here at every size we measured
        (2 cores; its thread pool costs ~50 µs per text on short lines, and it is still 30 %
        slower on 4.7 MB of stdlib files)."""
        encode = self.encoding.encode_ordinary
        return [len(encode(text)) for text in texts]


CHARS_PER_TOKEN_SAFE = 3
"""Characters per token assumed by the heuristic counter.

Real code averages about 4 chars/token, but per file chars/4 is off by 10-35 % (p95) and
up to 60 % on table-heavy files (NOTES-ENV §4, stdlib corpus). Budgets are hard limits, so
we assume 3 (a 4/3 safety factor): it over-counts typical files by about a third and
still covers the p95 file. Text that is mostly non-ASCII can exceed even this."""


@dataclass(frozen=True, slots=True)
class HeuristicCounter:
    """Used only when tiktoken cannot be imported; errs towards counting too many tokens."""

    name: str = HEURISTIC

    def count(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN_SAFE)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


_COUNTERS: dict[str, TokenCounter] = {}
"""One counter per encoding for the whole process: building o200k_base takes ~0.4 s."""
_LOAD_LOCK = threading.Lock()
"""Held while loading, so concurrent first calls load an encoding once, not once each."""


def counter_for(encoding: str = DEFAULT_ENCODING) -> TokenCounter:
    """The counter for a configured `tokenizer` name, loading it on first use."""
    if not isinstance(encoding, str) or encoding not in ENCODINGS:
        raise InvalidParam(
            "tokenizer",
            f"unknown encoding {encoding!r}",
            f"use one of {', '.join(ENCODINGS)}",
        )
    if encoding == HEURISTIC or not _tiktoken_available():
        return HeuristicCounter()
    counter = _COUNTERS.get(encoding)
    if counter is None:
        with _LOAD_LOCK:
            counter = _COUNTERS.get(encoding)
            if counter is None:
                counter = _COUNTERS[encoding] = TiktokenCounter(encoding, _load_encoding(encoding))
    return counter


# --- model names -------------------------------------------------------------------------

_MODEL_PREFIXES: dict[str, str] = {
    # OpenAI, current: o200k_base (tiktoken's MODEL_PREFIX_TO_ENCODING).
    "gpt-5": O200K_BASE,
    "gpt-4o": O200K_BASE,
    "gpt-4.1": O200K_BASE,
    "gpt-4.5": O200K_BASE,
    "chatgpt-4o": O200K_BASE,
    "ft:gpt-4o": O200K_BASE,
    "o1": O200K_BASE,
    "o3": O200K_BASE,
    "o4": O200K_BASE,
    # OpenAI, previous generation: cl100k_base. Shorter than the o200k prefixes above, so
    # the longest-prefix rule sends gpt-4o-mini to o200k and gpt-4-turbo here.
    "gpt-4": CL100K_BASE,
    "gpt-3.5": CL100K_BASE,
    "gpt-35": CL100K_BASE,  # Azure deployment names
    "ft:gpt-4": CL100K_BASE,
    "ft:gpt-3.5": CL100K_BASE,
    "text-embedding-3": CL100K_BASE,
    "text-embedding-ada-002": CL100K_BASE,
    "davinci-002": CL100K_BASE,
    "babbage-002": CL100K_BASE,
}


def encoding_for_model(model: str) -> str:
    """The encoding that best approximates `model`'s tokenizer.

    Claude, Gemini, Llama, Mistral, Qwen, DeepSeek and unknown models get o200k_base: we
    ship no tokenizer of theirs, and o200k_base (a large, modern, code-heavy vocabulary) is
    the closest one we have. Their counts are approximations that can be off by tens of
    percent, so a hard limit for those models needs its own margin. A `provider/` prefix
    (`openai/gpt-4`, `azure/gpt-35-turbo`) is ignored and case does not matter.
    """
    base = model.strip().lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in _MODEL_PREFIXES if base.startswith(prefix)]
    return _MODEL_PREFIXES[max(matches, key=len)] if matches else DEFAULT_ENCODING


# --- cutting -----------------------------------------------------------------------------

CLEAN_CUT_SHARE = 0.30
"""A clean boundary (symbol start, blank line) may drop up to this share of the lines that
would fit: a reader loses less from a shorter text that ends at a boundary than from one
that stops inside a function body."""

FIT_CHECK_SLACK = 1.10
"""How far past the budget the line scan reads before deciding the text must be cut. Its
estimates matched real counts on every stdlib file, but nothing guarantees that for any
text, so a text estimated up to 10 % over budget is still read to the end and counted."""

FIRST_SCAN_CHUNK_UNITS = 32
"""Lines (each with its trailing blank lines) counted before the scan has an average to
size its next step by."""

MIN_SCAN_CHUNK_UNITS = 8
"""Smallest later step, so a scan that undershoots the budget closes the gap in a few calls."""


@dataclass(frozen=True, slots=True)
class Cut:
    """A text cut to a token budget; callers add up `tokens`, so it is always a real count."""

    text: str
    """The kept whole lines, then the marker line if anything was cut."""
    tokens: int
    """Real count of `text` with the counter used; always <= the requested maximum."""
    omitted_lines: int

    @property
    def truncated(self) -> bool:
        return self.omitted_lines > 0


ELLIPSIS = "…"
"""The one mark of text left out, in every outline, docstring line and summary."""


def ellipsize(text: str, max_chars: int) -> str:
    """`text`, or its first characters and `…` in exactly `max_chars` or fewer (trailing
    spaces before the mark dropped). For one-line summaries: signatures, docstrings,
    constants, message previews. Cutting to a *token* budget is `cut_to_tokens`."""
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - 1)].rstrip() + ELLIPSIS


def more_lines_marker(omitted: int) -> str:
    return f"{ELLIPSIS} {omitted} more lines"


def line_count(text: str) -> int:
    """Lines as `cut_to_tokens` counts them: split on `\\n` only, a final `\\n` ends the
    last line rather than starting an empty one.

    Not `str.splitlines`, which also splits on form feeds and U+2028: indexes must match
    tree-sitter rows and LSP line numbers, which is what `breaks` are.
    """
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _iter_lines(text: str) -> Iterator[str]:
    """Lines with their `\\n`, lazily: a small budget over a big file reads a few hundred
    lines, and splitting all of them first cost more than counting the ones we keep."""
    start = 0
    while (end := text.find("\n", start)) != -1:
        yield text[start : end + 1]
        start = end + 1
    if start < len(text):
        yield text[start:]


def cut_to_tokens(
    text: str,
    max_tokens: int,
    counter: TokenCounter,
    *,
    breaks: Sequence[int] = (),
    marker: Callable[[int], str] = more_lines_marker,
    line_tokens: Sequence[int] | None = None,
) -> Cut:
    """The longest prefix of whole lines that fits in `max_tokens` together with the marker.

    `breaks` are 0-based indexes of lines that start a symbol; the cut goes before one of
    them (or before a blank line) if that costs at most `CLEAN_CUT_SHARE` of the kept lines.
    The returned `tokens` is a real count of the returned text, so callers can add up
    sections and trust the sum.

    Fast on big inputs: lines are counted once each, only until the budget is passed, and
    prefix sums pick the cut. Per-line counts are only an estimate of the joined text, so
    the chosen text is counted for real and the cut steps back while it is over.

    `line_tokens`, if given, are the exact counts of each line (with its newline) of a text
    whose lines' counts add up, also with the marker after them — a tier renderer's gutter
    rows for a line-additive encoding (`row_counts.RowCounts`), none of them blank. Then the
    estimates are the real counts, and only the marker is tokenized: the same cut, found
    without a pass over the text (outlines cut to their cap re-counted ~10 K characters a
    Django query).
    """
    total = line_count(text)
    if max_tokens <= 0:
        return Cut("", 0, total)
    if line_tokens is not None and len(line_tokens) == total:
        whole = sum(line_tokens)
        if whole <= max_tokens:
            return Cut(text, whole, 0)
        lines = list(_iter_lines(text))
        return _cut_lines(lines, line_tokens, total, max_tokens, counter, frozenset(breaks), marker, additive=True)
    limit = max_tokens * FIT_CHECK_SLACK
    lines, line_tokens = _count_lines_until(text, counter, limit)
    if len(lines) == total:  # the scan reached the end, so a real count is cheap
        whole = counter.count(text)
        if whole <= max_tokens:
            return Cut(text, whole, 0)
    return _cut_lines(lines, line_tokens, total, max_tokens, counter, frozenset(breaks), marker)


def _count_lines_until(text: str, counter: TokenCounter, limit: float) -> tuple[list[str], list[int]]:
    """The first lines of `text` and their estimated counts, stopping once the estimates
    pass `limit`.

    Each line is counted together with the blank lines after it, and the blank lines get
    0. Counted alone, every blank line costs a token that the joined text merges into its
    neighbour's newline (per-line sums ran 2 % high on the stdlib, 4 % worst); counted this
    way the sum equalled the real count on every stdlib file, for both encodings.
    Each step asks for as many units as the average so far says are still missing, so the
    scan ends close to the budget instead of overshooting it the way doubling would.
    """
    units = _iter_units(_iter_lines(text))
    lines: list[str] = []
    counts: list[int] = []
    tokens = 0
    step = FIRST_SCAN_CHUNK_UNITS
    scanned = 0
    while tokens <= limit:
        chunk = list(itertools.islice(units, step))
        if not chunk:
            break
        for unit, unit_tokens in zip(chunk, counter.count_many(["".join(u) for u in chunk])):
            lines += unit
            counts += [unit_tokens] + [0] * (len(unit) - 1)
            tokens += unit_tokens
        scanned += len(chunk)
        per_unit = max(tokens / scanned, 1.0)
        step = max(MIN_SCAN_CHUNK_UNITS, math.ceil((limit - tokens) / per_unit))
    return lines, counts


def _iter_units(lines: Iterable[str]) -> Iterator[list[str]]:
    """Group lines into a non-blank line plus the blank lines after it (leading blank lines
    form a unit of their own): the pieces whose counts add up to the joined text's."""
    unit: list[str] = []
    for line in lines:
        if unit and not _is_blank(line):
            yield unit
            unit = []
        unit.append(line)
    if unit:
        yield unit


def _cut_lines(
    lines: Sequence[str],
    line_tokens: Sequence[int],
    total: int,
    max_tokens: int,
    counter: TokenCounter,
    breaks: frozenset[int],
    marker: Callable[[int], str],
    additive: bool = False,
) -> Cut:
    """Cut a text known not to fit: estimate, snap to a clean boundary, verify, step back.

    `lines` may be only the first lines of the text (`total` is all of them): the scan
    stopped once they held more than the budget. `additive`: `line_tokens` are exact and
    add up with the marker's count (see `cut_to_tokens`), so verifying counts the marker only.
    """
    prefix = list(itertools.accumulate(line_tokens, initial=0))
    # The marker with the most digits it can have; the real count below settles the rest.
    room = max_tokens - counter.count(marker(total))
    fit = min(bisect.bisect_right(prefix, room) - 1, total - 1) if room >= 0 else 0
    kept = _clean_cut(lines, max(fit, 0), breaks)
    while kept > 0:
        out = "".join(lines[:kept]) + marker(total - kept)
        tokens = prefix[kept] + counter.count(marker(total - kept)) if additive else counter.count(out)
        if tokens <= max_tokens:
            return Cut(out, tokens, total - kept)
        fit = _step_back(prefix, kept, excess=tokens - max_tokens)
        kept = _clean_cut(lines, fit, breaks)
    alone = marker(total)
    tokens = counter.count(alone)
    return Cut(alone, tokens, total) if tokens <= max_tokens else Cut("", 0, total)


def _clean_cut(lines: Sequence[str], fit: int, breaks: frozenset[int]) -> int:
    """How many of the `fit` lines to keep so the cut lands on a clean boundary.

    Prefers the last symbol start in the window, then the last blank line; either way,
    blank lines left dangling before the marker are dropped too.
    """
    if fit == 0:
        return 0
    lowest = max(1, math.ceil(fit * (1 - CLEAN_CUT_SHARE)))
    window = range(fit, lowest - 1, -1)
    kept = next((i for i in window if i in breaks), None)
    if kept is None:
        kept = next((i for i in window if _is_blank(lines[i])), fit)
    while kept > 1 and _is_blank(lines[kept - 1]):
        kept -= 1
    return kept


def _step_back(prefix: Sequence[int], kept: int, excess: int) -> int:
    """Fewest lines to drop from `kept` whose estimated tokens cover `excess` (at least one)."""
    return max(0, min(kept - 1, bisect.bisect_right(prefix, prefix[kept] - excess) - 1))


def _is_blank(line: str) -> bool:
    return not line.strip()
