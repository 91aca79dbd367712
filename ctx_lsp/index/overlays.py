"""Editor buffers: the text an editor holds for a file, which wins over the disk copy
until the editor closes it (DESIGN, Protocol: "open buffers override disk").

The mapping is replaced, never mutated, so a bundle assembled on another thread reads
buffers without a lock while the event loop applies a didChange.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ctx_lsp.index.files import IndexedFile


@dataclass(frozen=True, slots=True)
class Buffer:
    text: str
    version: int
    entry: IndexedFile
    """Analysed from `text` when it was put, so renders need not re-outline it."""
    edited_at: float
    """`time.monotonic()` of the last edit; 0.0 if never edited while open. Working files
    rank buffers by it."""


class Overlays:
    """The open editor buffers, by absolute path."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffers: Mapping[str, Buffer] = {}

    def put(self, entry: IndexedFile, text: str, version: int, *, edited: bool) -> Buffer:
        """Track a buffer (didOpen, didChange, didSave). Only an edit moves `edited_at`:
        a save or a re-open must not make an old edit look recent."""
        with self._lock:
            previous = self._buffers.get(entry.abs_path)
            edited_at = time.monotonic() if edited else previous.edited_at if previous else 0.0
            buffer = Buffer(text, version, replace(entry, overlay_version=version), edited_at)
            self._buffers = {**self._buffers, entry.abs_path: buffer}
        return buffer

    def pop(self, abs_path: str) -> Buffer | None:
        with self._lock:
            buffers = dict(self._buffers)
            buffer = buffers.pop(abs_path, None)
            self._buffers = buffers
        return buffer

    def get(self, abs_path: str) -> Buffer | None:
        return self._buffers.get(abs_path)

    def __contains__(self, abs_path: object) -> bool:
        return abs_path in self._buffers

    def buffers(self) -> list[Buffer]:
        return list(self._buffers.values())

    def paths(self) -> list[str]:
        return list(self._buffers)

    def by_recency(self) -> list[tuple[str, float]]:
        """(path, edited_at), most recently edited first; never-edited ones last."""
        items = [(p, b.edited_at) for p, b in self._buffers.items()]
        return sorted(items, key=lambda item: (-item[1], item[0]))
