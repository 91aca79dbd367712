"""Whole-file token counts: made when first needed, or in a pause, never at indexing.

Counting every code and markdown file with tiktoken at indexing cost ~10 MB/s on the
indexing core (the kernel: ~100 s of a cold index) for counts most files never need. A
bundle needs a file's count when it may show the file whole; the first bundles after a
cold index then paid for them (Django, 8K: p95 150 -> 250 ms, 380 files read and counted
over 20 bundles). So a server counts the rest in the background, in the pauses between
requests, most-ranked files first, and the cache keeps every count for the next process.
"""

from __future__ import annotations

import gc
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import NamedTuple

from ctx_lsp.errors import CtxError
from ctx_lsp.gate import read_file
from ctx_lsp.index.files import IndexedFile, content_hash, decode
from ctx_lsp.index.secret_files import credential_kind
from ctx_lsp.index.secret_tokens import mask_tokens
from ctx_lsp.index.store import IndexStore
from ctx_lsp.tokens import TokenCounter, counter_for

MAX_KEPT_WHOLE_COUNTS = 200_000
"""Counts kept in memory (three small objects each) before the table is cleared at once:
the cache keeps them all; this bounds a long session's table on a monorepo."""
FILL_SAVE_EVERY = 256
"""Counts made in the background between writes to the cache."""
FILL_PAUSE_S = 0.05
"""How long background counting sleeps while a request is answered."""

ReadText = Callable[[IndexedFile], tuple[str, IndexedFile]]
StoreFor = Callable[[str | None], IndexStore | None]


class WholeCounts:
    """The whole-file counts made since indexing, and those still to write to the cache."""

    def __init__(self, read_text: ReadText, store_for: StoreFor, tokenizer: Callable[[], str]):
        """`tokenizer` names the configured encoding: only its counts are cached."""
        self._read_text = read_text
        self._store_for = store_for
        self._tokenizer = tokenizer
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str, str], int] = {}
        """By (path, content hash, encoding)."""
        self._unsaved: list[tuple[str, str, int]] = []
        """(folder root, analysis key, count) not yet written to the cache."""

    def known(self, entry: IndexedFile, counter: TokenCounter) -> int | None:
        """The count if it was made (indexed, or counted since), without reading."""
        if entry.tokens_counted:
            return entry.tokens
        return self._counts.get((entry.abs_path, entry.hash, counter.name))

    def count(self, entry: IndexedFile, counter: TokenCounter) -> int:
        """The exact count of the file's whole text as indexed, made now if it was not.
        Text not counted exactly (plain text) keeps its estimate. Raises NotFound if the
        file cannot be read."""
        known = self.known(entry, counter)
        if known is not None:
            return known
        text, current = self._read_text(entry)
        tokens = counter.count(text)
        if current is entry:  # the text indexed: the count holds for this version
            with self._lock:
                if len(self._counts) >= MAX_KEPT_WHOLE_COUNTS:
                    self._counts.clear()
                self._counts[(entry.abs_path, entry.hash, counter.name)] = tokens
                if entry.key and entry.overlay_version is None and counter.name == self._tokenizer():
                    self._unsaved.append((entry.root, entry.key, tokens))
        return tokens

    def learn(self, entries: Iterable[IndexedFile], counts: Mapping[str, int], counter: TokenCounter) -> None:
        """Take counts made elsewhere (a worker, `PoolCounting`), by analysis key: the
        cache holds them already."""
        with self._lock:
            for entry in entries:
                tokens = counts.get(entry.key)
                if tokens is not None and entry.overlay_version is None:
                    if len(self._counts) >= MAX_KEPT_WHOLE_COUNTS:
                        self._counts.clear()
                    self._counts[(entry.abs_path, entry.hash, counter.name)] = tokens

    def save(self) -> None:
        """Write the counts made since the last call to the cache; those a store does not
        take now (an image is being written: `IndexStore.record_tokens`) wait for the next."""
        with self._lock:
            unsaved, self._unsaved = self._unsaved, []
        by_root: dict[str, list[tuple[str, int]]] = {}
        for root, key, tokens in unsaved:
            by_root.setdefault(root, []).append((key, tokens))
        for root, counts in by_root.items():
            self.record(root, counts)

    def record(self, root: str, counts: list[tuple[str, int]]) -> None:
        """Write counts (analysis key, count) to the cache of the folder at `root`, or keep
        them for the next `save` if it cannot take them now."""
        store = self._store_for(root)
        if store is not None and not store.record_tokens(counts):
            with self._lock:
                self._unsaved.extend((root, key, tokens) for key, tokens in counts)

    def fill(
        self,
        entries: Iterable[IndexedFile],
        counter: TokenCounter,
        *,
        busy: Callable[[], bool],
        stopped: threading.Event,
    ) -> int:
        """Count `entries` not counted yet, in their order, stepping aside while `busy()`
        (a request is answered) and stopping when `stopped` is set; saves as it goes.
        Returns how many files were counted."""
        made = 0
        try:
            for entry in entries:
                if stopped.is_set():
                    break
                if self.known(entry, counter) is not None:
                    continue
                while busy() and not stopped.is_set():
                    time.sleep(FILL_PAUSE_S)
                try:
                    self.count(entry, counter)
                except CtxError:  # gone or unreadable since indexing: the next pass says so
                    continue
                made += 1
                if made % FILL_SAVE_EVERY == 0:
                    self.save()
        finally:
            self.save()
        return made


# ---------------------------------------------------------------- in a worker process


class CountJob(NamedTuple):
    """One file to count in a worker (a tuple: it crosses into the process)."""

    abs_path: str
    root: str
    """Its workspace folder: the file must still resolve inside it (the gate)."""
    max_bytes: int
    check_secret: bool
    """Its tokens were masked when indexed (and a private key keeps it out)."""
    hash: str
    """The indexed content's hash: a file changed since is not counted."""
    key: str
    """Its analysis in the cache, where the count goes."""


COUNT_BATCH_FILES = 256


def count_batch(tokenizer: str, jobs: Sequence[CountJob]) -> list[tuple[str, int]]:
    """Worker entry point: (analysis key, count) of each file whose text is still the one
    indexed, read and masked as `Workspace.read_text` reads it for a bundle."""
    counter = counter_for(tokenizer)
    counted = []
    for job in jobs:
        try:
            data = read_file(job.abs_path, [job.root], job.max_bytes).data
        except (OSError, CtxError):
            continue
        if job.check_secret:
            if credential_kind(data) is not None:
                continue
            data, _ = mask_tokens(data)
        if content_hash(data) != job.hash:
            continue
        counted.append((job.key, counter.count(decode(data)[0])))
    return counted


class PoolCounting:
    """Whole files counted by one worker process while this one does other work: a CLI
    `index` derives its indexes on one core for minutes on a monorepo (the kernel: ~380 s)
    while the other sits idle, and a server that starts from the cache then has every
    count a bundle needs (tiktoken holds the interpreter lock: a thread would not do)."""

    def __init__(self, jobs: Sequence[CountJob], tokenizer: str, context: multiprocessing.context.BaseContext):
        self._pool = ProcessPoolExecutor(1, mp_context=context, initializer=gc.disable)
        self._futures: list[tuple[str, Future[list[tuple[str, int]]]]] = []
        by_root: dict[str, list[CountJob]] = {}
        for job in jobs:
            by_root.setdefault(job.root, []).append(job)
        for root, listed in by_root.items():
            for at in range(0, len(listed), COUNT_BATCH_FILES):
                batch = listed[at : at + COUNT_BATCH_FILES]
                self._futures.append((root, self._pool.submit(count_batch, tokenizer, batch)))

    def finish(
        self, record: Callable[[str, list[tuple[str, int]]], None], stopped: threading.Event | None = None
    ) -> dict[str, int]:
        """Wait for the counts and `record` them (folder root, counts) for the cache (e.g.
        `WholeCounts.record`); the counts made, by analysis key. Set `stopped` to give up
        on those not made yet."""
        made: dict[str, int] = {}
        try:
            for root, future in self._futures:
                if stopped is not None and stopped.is_set():
                    break
                try:
                    counts = future.result()
                except Exception:  # a worker that died: the counts are made on first use
                    continue
                if counts:
                    record(root, counts)
                made.update(counts)
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
        return made
