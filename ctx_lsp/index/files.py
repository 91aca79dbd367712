"""Reading and analysing one file: the unit of work of every index pass.

Kept free of shared state so the same functions run in the server, in the CLI and in
worker processes of a cold index (they return plain rows that cross process boundaries).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, NamedTuple

from ctx_lsp.code.languages import language_for, language_named, outline_in
from ctx_lsp.code.outline import (
    Outline,
    OutlineSource,
    outline_for,
    outline_from_json,
    outline_in_store,
    outline_to_json,
)
from ctx_lsp.errors import OutsideWorkspace
from ctx_lsp.gate import Refused, read_file
from ctx_lsp.index.scan import SkipReason, looks_binary
from ctx_lsp.index.secret_files import credential_kind
from ctx_lsp.index.secret_tokens import mask_tokens
from ctx_lsp.index.store import StoredFile, analysis_key
from ctx_lsp.index.unit_postings import UnitPostings, unit_postings_blob, unpack
from ctx_lsp.tokens import TokenCounter


@dataclass(slots=True, eq=False)
class IndexedFile:
    """What the index knows about one file. Text is not kept: it is read when rendered.

    Never mutated once published (the index replaces entries), except for the outline,
    which is made on first use: a warm start over thousands of files must not pay for
    outlines nobody asks for. An entry whose analysis the cache holds keeps no outline
    JSON: its outline reads it from there by key when a field is needed, and drops it
    again with the least recently used (`code/outline.py`, `outline_in_store`).
    """

    root: str  # absolute path of its workspace folder
    rel_path: str  # posix, relative to root
    path: str  # display path: rel_path, prefixed by the folder name in multi-root workspaces
    abs_path: str
    language: str  # a language of `code/languages/` ("python", "typescript", ...), "markdown" or "text"
    size: int
    mtime_ns: int
    hash: str
    tokens: int  # of the whole file; an estimate for plain text (see `tokens_exact`)
    line_count: int
    symbols: int
    decode_replaced: bool  # not valid UTF-8; decoded with U+FFFD replacements
    outline_json: str
    """The outline as JSON while no cache holds it (`outline_source` None); "" for one the
    cache holds and for text analysed here and never stored (`_outline` set)."""
    masked: str = ""
    """Kinds of token masked in its text, comma-separated; "" for none (status counts them)."""
    overlay_version: int | None = None  # set while an editor buffer overrides the disk copy
    key: str = ""
    """Its analysis's key in the cache (`store.analysis_key`); "" for an editor buffer."""
    has_errors: bool = False
    """Its parse had errors (`Outline.has_errors`), known without decoding the outline."""
    units: bytes | None = field(default=b"", repr=False)
    """Its code units and their terms as cached (`unit_postings`); b"" when not derived at
    indexing (a file without units, an editor buffer: see `unit_postings_for`); None
    while they are only in the cache (`units_blob` reads them from there)."""
    units_source: Callable[[str], bytes] | None = field(default=None, repr=False)
    """Reads a units blob from the cache by analysis key (`IndexStore.units_of`). The
    blobs are ~10 KB a file (0.9 GB on the kernel); a bundle reads those of the few
    hundred files it ranks, so a warm engine keeps none in memory."""
    outline_source: OutlineSource | None = field(default=None, repr=False)
    """Reads an outline's JSON from the cache by analysis key (`IndexStore.outline_of`):
    the JSON is ~8 KB a kernel file (0.7 GB on the kernel); a bundle reads a few hundred,
    the derived indexes each one once when they are built, not restored."""
    _outline: Outline | None = field(default=None, repr=False)

    @property
    def units_blob(self) -> bytes:
        units = self.units
        if units is not None:
            return units
        return self.units_source(self.key) if self.units_source is not None and self.key else b""

    def release_units(self) -> None:
        """Drop the units blob from memory once the cache holds it (read again on use)."""
        if self.units_source is not None and self.key:
            self.units = None

    @property
    def outline(self) -> Outline:
        """Its outline: one object for the entry's life (caches compare by identity), whose
        fields are read from the cache again when they were dropped."""
        outline = self._outline
        if outline is None:
            source = self.outline_source
            if source is not None and self.key and not self.outline_json:
                outline = outline_in_store(source, self.key)
            else:
                outline = outline_from_json(self.outline_json)
            self._outline = outline
        return outline

    @property
    def unit_postings(self) -> UnitPostings | None:
        """The units as cached, decoded (not kept: the units cache of the bundles keeps the
        files a task ranks, and decoding every file a session ever ranked would hold them
        all); None when none were cached or the bytes do not hold to their layout."""
        blob = self.units_blob
        return unpack(blob) if blob else None

    @property
    def tokens_exact(self) -> bool:
        """Its language is counted exactly; `tokens` is 0 until counted (`Workspace.whole_tokens`)."""
        return counted_exactly(self.language)

    @property
    def tokens_counted(self) -> bool:
        """`tokens` is the exact count (or an estimate for text not counted exactly)."""
        return bool(self.tokens) or not self.size or not self.tokens_exact


MARKDOWN_LANGUAGE = "markdown"


def counted_exactly(language: str) -> bool:
    """Code (every registered language) and docs are counted exactly at index time. Other
    text (translations, data, templates) is estimated at chars/4: it is shown
    whole-or-nothing and counted for real when rendered, and exact counts of megabytes of
    .po files cost seconds of a cold index."""
    return language == MARKDOWN_LANGUAGE or language_named(language) is not None


MINIFIED_LINE_CHARS = 5000
"""A code file with a line longer than this, and long lines on the whole, is minified or
generated (a bundle, a vendored build): listed in status as `minified`, never parsed. A
1.2 MB one-line bundle costs ~2 s to parse and query and yields ~20,000 junk definitions
(NOTES-ENV §10); the longest hand-written lines are a few hundred characters."""
MINIFIED_AVERAGE_LINE_CHARS = 200
"""...and its lines average more than this: a hand-written component with one inlined
6 KB data URL among 300 ordinary lines is code to outline, not a bundle."""


def is_minified(data: bytes) -> bool:
    """Whether some line of `data` is over MINIFIED_LINE_CHARS bytes (searched in C, one
    bounded `find` per line) and its lines average over MINIFIED_AVERAGE_LINE_CHARS."""
    if len(data) <= MINIFIED_LINE_CHARS:
        return False
    if len(data) <= MINIFIED_AVERAGE_LINE_CHARS * (data.count(b"\n") + 1):
        return False
    start = 0
    end = len(data)
    while start < end:
        newline = data.find(b"\n", start, start + MINIFIED_LINE_CHARS + 1)
        if newline < 0:
            return end - start > MINIFIED_LINE_CHARS
        start = newline + 1
    return False


CHARS_PER_TOKEN_ESTIMATE = 4


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 (with or without BOM), else replacement characters; never raises."""
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True


def analyse(
    rel_path: str, data: bytes, size: int, mtime_ns: int, counter: TokenCounter, abs_path: str | None = None
) -> StoredFile | None:
    """Outline and count one file's bytes for the cache; None if the content is binary.
    `abs_path` lets a language's evidence look beside the file (a `.h` among `.cpp`s)."""
    analysis = analyse_uncounted(rel_path, data, size, mtime_ns, abs_path)
    if analysis is None:
        return None
    row, text = analysis
    return row if text is None else replace(row, tokens=counter.count(text))


def analyse_uncounted(
    rel_path: str, data: bytes, size: int, mtime_ns: int, abs_path: str | None = None
) -> tuple[StoredFile, str | None] | None:
    """`analyse` without the exact token count: a code or markdown row's `tokens` is 0,
    and the second value is the text to count (None for other text, whose estimate is
    final). The index stops here: whole-file counts are made when a file is first shown
    (`Workspace.whole_tokens`); `analyse` counts at once."""
    if looks_binary(data):
        return None
    text, replaced = decode(data)
    source = data if not replaced else text.encode("utf-8")
    spec = language_for(abs_path or rel_path, source)  # as `outline_for` decides, with the folder
    if spec is not None and spec.outline_json is not None:  # the language writes its JSON itself
        outline_json, outline = spec.outline_json(source)
        language = spec.name
    else:
        outline = outline_in(spec, source) if spec is not None else outline_for(rel_path, source)
        outline_json, language = outline_to_json(outline), outline.language
    row, uncounted = _row(
        rel_path, data, size, mtime_ns, text, replaced, language, outline.line_count, len(outline.symbols), outline_json
    )
    return replace(row, units=unit_postings_blob(outline, text), has_errors=outline.has_errors), uncounted


def analyse_outline(
    rel_path: str, data: bytes, size: int, mtime_ns: int, counter: TokenCounter, abs_path: str | None = None
) -> tuple[StoredFile, Outline] | None:
    """`analyse` for text that is never stored (an editor buffer): the outline is handed
    over as built and the row's `outline_json` is left empty. Encoding it only for the
    search postings to decode it again cost ~0.5 s of a 0.9 MB buffer's 40,000 definitions
    (issue 12), all of it while the next request waited."""
    if looks_binary(data):
        return None
    text, replaced = decode(data)
    source = data if not replaced else text.encode("utf-8")
    spec = language_for(abs_path or rel_path, source)
    outline = outline_in(spec, source) if spec is not None else outline_for(rel_path, source)
    row, uncounted = _row(
        rel_path, data, size, mtime_ns, text, replaced, outline.language, outline.line_count, len(outline.symbols), ""
    )
    return (row if uncounted is None else replace(row, tokens=counter.count(uncounted))), outline


def _row(
    rel_path: str,
    data: bytes,
    size: int,
    mtime_ns: int,
    text: str,
    replaced: bool,
    language: str,
    line_count: int,
    symbols: int,
    outline_json: str,
) -> tuple[StoredFile, str | None]:
    """A file's row, and its text if its language is counted exactly (then the row's
    `tokens` is 0 until counted; otherwise it is the estimate and no text is returned)."""
    exact = counted_exactly(language)
    row = StoredFile(
        rel_path=rel_path,
        size=size,
        mtime_ns=mtime_ns,
        hash=content_hash(data),
        language=language,
        tokens=0 if exact else math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE),
        line_count=line_count,
        symbols=symbols,
        decode_replaced=replaced,
        outline_json=outline_json,
    )
    return row, text if exact else None


BINARY_LANGUAGE = "binary"
"""Stored rows for files found binary by content, so a warm start need not re-read them."""


def binary_row(rel_path: str, data: bytes, mtime_ns: int) -> StoredFile:
    return StoredFile(rel_path, len(data), mtime_ns, content_hash(data), BINARY_LANGUAGE, 0, 0, 0, False, "")


SECRET_LANGUAGE = "secret"
"""Stored rows for files found to hold a private key by content: kept out like binaries,
and not re-read on a warm start."""

GENERATED_HEADER_BYTES = 1024
_GENERATED_MARK = re.compile(
    rb"^\W*(?:Code generated .*DO NOT EDIT|Generated by .*DO NOT EDIT|Autogenerated .*do not edit)"
    rb"|^[ \t]*(?://+|/?\*+|#+|--)[ \t]*(?-i:@generated)\b",
    re.IGNORECASE | re.MULTILINE,
)
"""The markers code generators put in a file's first lines (Go's `// Code generated ...
DO NOT EDIT.`, `@generated`, protobuf's `Generated by the protocol buffer compiler. DO
NOT EDIT!`): a 10,000-line `.pb.go` is thousands of symbols nobody edits. `@generated` is
lowercase and in a comment (`// @generated`, ` * @generated`): TypeORM's `@Generated("uuid")`
column decorator kept 31 hand-written entities of its own repository out of the index."""


def is_generated(data: bytes) -> bool:
    """Whether the file's first lines say a tool wrote it."""
    return _GENERATED_MARK.search(data, 0, GENERATED_HEADER_BYTES) is not None


MINIFIED_LANGUAGE = "minified"
"""Stored rows for code files found minified by content (`is_minified`): kept out like
binaries, and not re-read on a warm start."""

GENERATED_LANGUAGE = "generated"
"""Stored rows for code files that say a tool generated them (`is_generated`)."""

UNINDEXED_LANGUAGES = {
    BINARY_LANGUAGE: SkipReason.BINARY,
    SECRET_LANGUAGE: SkipReason.SECRET,
    MINIFIED_LANGUAGE: SkipReason.MINIFIED,
    GENERATED_LANGUAGE: SkipReason.GENERATED,
}
"""Languages of cached rows that stand for a file kept out of the index, and the reason."""


def secret_row(rel_path: str, data: bytes, mtime_ns: int, kind: str) -> StoredFile:
    """A file kept out as a credential store by its content; `masked` holds its kind."""
    return StoredFile(rel_path, len(data), mtime_ns, content_hash(data), SECRET_LANGUAGE, 0, 0, 0, False, "", kind)


def machine_row(rel_path: str, data: bytes, mtime_ns: int, language: str) -> StoredFile:
    """The stored row of a file kept out as minified or generated."""
    return StoredFile(rel_path, len(data), mtime_ns, content_hash(data), language, 0, 0, 0, False, "")


def machine_written(rel_path: str, data: bytes) -> str | None:
    """For a file of a registered language that a machine wrote, why it is kept out
    (`minified`, `generated`); None for code people write."""
    if language_for(rel_path) is None:
        return None
    if is_minified(data):
        return MINIFIED_LANGUAGE
    if is_generated(data):
        return GENERATED_LANGUAGE
    return None


def to_indexed(
    row: StoredFile,
    root: str,
    abs_path: str,
    display: str,
    outline: Outline | None = None,
    units_source: Callable[[str], bytes] | None = None,
    outline_source: OutlineSource | None = None,
) -> IndexedFile:
    """The entry of a row. With `units_source`, a row read without its units (`IndexStore.
    load_all`) keeps them in the cache, and one with them can drop them (`release_units`).
    With `outline_source` (only for a row the cache is known to hold), the outline is read
    from there when used: a row's JSON, if it has one, is held only while it is recent."""
    has_errors = row.has_errors if outline is None else outline.has_errors
    sourced = outline is None and outline_source is not None and bool(row.key)
    if sourced and row.outline_json and outline_source is not None:
        outline = outline_from_json(row.outline_json, outline_source, row.key)
    return IndexedFile(
        root=root,
        rel_path=row.rel_path,
        path=display,
        abs_path=abs_path,
        language=row.language,
        size=row.size,
        mtime_ns=row.mtime_ns,
        hash=row.hash,
        tokens=row.tokens,
        line_count=row.line_count,
        symbols=row.symbols,
        decode_replaced=row.decode_replaced,
        outline_json="" if sourced else row.outline_json,
        masked=row.masked,
        key=row.key,
        has_errors=has_errors,
        units=None if units_source is not None and row.units is None else row.units,
        units_source=units_source,
        outline_source=outline_source if sourced else None,
        _outline=outline,
    )


@dataclass(frozen=True, slots=True)
class ReadOutcome:
    """Result of reading one file from disk for the index."""

    row: StoredFile | None
    skip_reason: str | None = None
    error: str | None = None
    reused: tuple[str, int, int] | None = None
    """(analysis key, size, mtime) of content the cache already holds an analysis of: not
    analysed again; the indexer takes the stored one (`IndexStore.stored_analysis`)."""

    def __reduce__(
        self,
    ) -> tuple[type[ReadOutcome], tuple[StoredFile | None, str | None, str | None, tuple[str, int, int] | None]]:
        """Pickled as its fields, like `StoredFile`: each crosses back from a pool worker."""
        return (ReadOutcome, (self.row, self.skip_reason, self.error, self.reused))


class ReadJob(NamedTuple):
    """One file for the index to read (a tuple: it crosses into worker processes)."""

    abs_path: str
    rel_path: str
    root: str
    """Its workspace folder: the file must still resolve inside it when it is opened."""
    max_bytes: int
    check_secret: bool
    """Keep it out if its content is a private key (false only for opted-in paths)."""
    cache_db: str = ""
    """The folder's index cache, if on disk: a worker asks it whether the content was
    analysed before (`KnownAnalyses`); "" for none."""


KnownFn = Callable[[str], bool]
"""known(analysis key) — whether the cache holds that analysis."""


class KnownAnalyses:
    """Read-only lookups of a cache's analysis keys from a pool worker: one connection per
    database per process, opened on first use. Content-addressed reuse must not need the
    indexing process: a worker that finds a key skips the parse it was sent for."""

    _connections: ClassVar[dict[tuple[int, str], sqlite3.Connection | None]] = {}
    """By (process, database): a forked worker must not use its parent's connection."""

    @classmethod
    def lookup(cls, cache_db: str) -> KnownFn | None:
        if not cache_db:
            return None
        slot = (os.getpid(), cache_db)
        if slot not in cls._connections:
            try:
                conn: sqlite3.Connection | None = sqlite3.connect(
                    f"{Path(cache_db).as_uri()}?mode=ro", uri=True, timeout=0.5, check_same_thread=False
                )
            except sqlite3.Error:
                conn = None
            cls._connections[slot] = conn
        found = cls._connections[slot]
        if found is None:
            return None
        conn_ = found

        def known(key: str) -> bool:
            try:
                return conn_.execute("SELECT 1 FROM analyses WHERE key=?", (key,)).fetchone() is not None
            except sqlite3.Error:
                return False

        return known


def read_and_analyse(job: ReadJob, known: KnownFn | None = None) -> ReadOutcome:
    """Worker entry point: read a file through the gate and analyse it, turning every
    failure into a reason. Whole-file token counts are not made here: a code or markdown
    row's `tokens` is 0 until first needed (`Workspace.whole_tokens`). Content the cache
    already analysed (`known`, or the job's cache) is not analysed again: the outcome
    says which analysis to reuse."""
    rel_path = job.rel_path
    try:
        read = read_file(job.abs_path, [job.root], job.max_bytes)
    except FileNotFoundError:
        return ReadOutcome(None, "deleted")
    except OSError as err:
        return ReadOutcome(None, SkipReason.UNREADABLE, f"{rel_path}: {err.strerror or err}")
    except OutsideWorkspace:
        return ReadOutcome(None, SkipReason.SYMLINK_OUTSIDE)
    except Refused as err:
        return ReadOutcome(None, err.reason)
    data, mtime_ns = read.data, read.mtime_ns
    key = analysis_key(content_hash(data), rel_path, job.check_secret)
    if known is None:
        known = KnownAnalyses.lookup(job.cache_db)
    if known is not None and known(key):
        return ReadOutcome(None, reused=(key, len(data), mtime_ns))
    outcome = _analysed(job, data, mtime_ns)
    if outcome.row is None:
        return outcome
    return ReadOutcome(replace(outcome.row, key=key), outcome.skip_reason, outcome.error)


def _analysed(job: ReadJob, data: bytes, mtime_ns: int) -> ReadOutcome:
    """`read_and_analyse` once the bytes are read and are not known to the cache."""
    rel_path = job.rel_path
    if looks_binary(data):
        return ReadOutcome(binary_row(rel_path, data, mtime_ns), SkipReason.BINARY)
    size = len(data)
    masked: tuple[str, ...] = ()
    if job.check_secret:
        kind = credential_kind(data)
        if kind is not None:
            return ReadOutcome(secret_row(rel_path, data, mtime_ns, kind), SkipReason.SECRET)
        data, masked = mask_tokens(data)
    machine = machine_written(rel_path, data)
    if machine is not None:
        return ReadOutcome(machine_row(rel_path, data, mtime_ns, machine), UNINDEXED_LANGUAGES[machine])
    try:  # whole-file counts are made when first needed (`Workspace.whole_tokens`), not here
        analysis = analyse_uncounted(rel_path, data, size, mtime_ns, job.abs_path)
        row = None if analysis is None else analysis[0]
    except Exception as err:
        return ReadOutcome(None, "unparsable", f"{rel_path}: {type(err).__name__}: {err}")
    if row is None:
        return ReadOutcome(None, SkipReason.BINARY)
    if masked:  # the size stays the file's: it is compared with the disk's on a warm start
        row = replace(row, masked=",".join(masked))
    return ReadOutcome(row)


def read_batch(batch: list[ReadJob]) -> list[ReadOutcome]:
    """Process-pool entry point: a batch amortises pickling and task overhead."""
    return [read_and_analyse(job) for job in batch]
