"""What `ctx.status` reports: the report's shape, and the counts made over the indexed files."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ctx_lsp.index.files import CHARS_PER_TOKEN_ESTIMATE, IndexedFile
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.vocabulary import Snapshot

__all__ = ["FileCounts", "StatusReport", "WatcherStatus", "file_counts", "indexing_state"]


@dataclass(frozen=True, slots=True)
class WatcherStatus:
    state: str
    """starting (watches not in place yet) | watching | polling (the native watcher failed) |
    stopped | failed | off"""
    error: str | None
    events: int
    reconciles: int = 0  # scans that brought the index in line after a storm or a failure
    lost_events: bool = False  # a storm or a failure may have dropped events (reconciled)


@dataclass(frozen=True, slots=True)
class StatusReport:
    """Everything `ctx.status` and `ctx-lsp status` show."""

    version: str
    folders: tuple[str, ...]
    indexing: Literal[False] | dict[str, Any]
    """false, or while a full pass runs `{done, total, phase}`: files ready so far (requests
    are answered from them), files found so far, and `scanning` | `parsing` | `starting`."""
    files_indexed: int
    files_by_language: dict[str, int]
    symbols_by_language: dict[str, int]
    syntax_errors: dict[str, int]
    """Files per language whose parse had errors: outlined from tree-sitter's recovery,
    so some of their definitions may be missing or cut."""
    skipped: dict[str, int]
    too_large: tuple[str, ...]
    ignored_dirs: int
    problems: tuple[str, ...]
    secrets: dict[str, dict[str, int]]
    """Never paths: `kept_out` counts the files left out as secrets by kind (by name or by
    content), `masked` the indexed files whose tokens are masked, by kind of token."""
    refused: dict[str, str]
    """Indexed files refused when read since the last index (path → reason): swapped for
    a link out of the workspace, a FIFO or a device, grown past the size limit."""
    symbols: int
    tokens: int
    """Exact, of the code and markdown files counted so far (a file is counted when first
    shown, not at indexing)."""
    tokens_estimated: int
    """Estimated (chars/4) for the rest: other text files, and code not counted yet."""
    tokenizer: str
    open_documents: int
    watcher: WatcherStatus
    cache: dict[str, Any]
    config: dict[str, Any]
    last_index: dict[str, Any]
    last_snapshot: Snapshot | None = None
    history: dict[str, Any] = field(default_factory=dict)
    """What the repository's history holds: `status` (commits read from which HEAD, or why
    none, or `reading…` while the first read runs in the background), `commits`, `read_s`,
    `reading`; a refused or broken repository is also under `problems`."""


def indexing_state(workspace: Workspace) -> Literal[False] | dict[str, Any]:
    """Status's `indexing`: false, or how far the running pass is (not started is not done)."""
    progress = workspace.progress
    if not (progress.running or workspace.indexing):
        return False
    return {"done": progress.done, "total": progress.total, "phase": progress.phase}


@dataclass(frozen=True, slots=True)
class FileCounts:
    """Status's counts over the indexed files (one pass over them)."""

    by_language: dict[str, int]
    symbols_by_language: dict[str, int]
    syntax_errors: dict[str, int]
    masked: dict[str, int]
    symbols: int
    tokens: int
    tokens_estimated: int


def file_counts(files: Iterable[IndexedFile]) -> FileCounts:
    """Files, symbols and syntax errors by language, masked tokens by kind, and tokens:
    exact where counted, estimated (chars/4) for the rest. Reads only the rows (no
    outline, no encoding): status answers within a second during a monorepo's index."""
    by_lang: Counter[str] = Counter()
    symbols_by_lang: Counter[str] = Counter()
    errors_by_lang: Counter[str] = Counter()
    masked: Counter[str] = Counter()
    tokens = estimated = 0
    for f in files:
        by_lang[f.language] += 1
        if f.symbols:
            symbols_by_lang[f.language] += f.symbols
        if f.has_errors:
            errors_by_lang[f.language] += 1
        if f.masked:
            masked.update(f.masked.split(","))
        exact, counted = f.tokens_exact, f.tokens_counted
        if exact:
            tokens += f.tokens
        if not (exact and counted):
            estimated += f.tokens if counted else math.ceil(f.size / CHARS_PER_TOKEN_ESTIMATE)
    return FileCounts(
        by_language=dict(sorted(by_lang.items())),
        symbols_by_language=dict(sorted(symbols_by_lang.items())),
        syntax_errors=dict(sorted(errors_by_lang.items())),
        masked=dict(sorted(masked.items())),
        symbols=sum(symbols_by_lang.values()),
        tokens=tokens,
        tokens_estimated=estimated,
    )
