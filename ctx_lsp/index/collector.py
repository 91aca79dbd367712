"""Pausing Python's cyclic garbage collector while a large, acyclic state is built.

Restoring the reference graph of a big workspace from its image makes tens of millions of
objects in a few seconds (the kernel: 3.8M names, 3M definitions, 8M weighted edges as
dicts, frozensets and tuples per file). Each allocation burst triggers young collections,
and each time the old generation grows by a quarter a full collection walks every object
the process holds, the whole index included: on the kernel, 15 s of CPU of a 27 s restore
(measured with `gc.disable()` around the same code, CPU time). None of these objects form
cycles, so nothing is there to collect: the collector is paused while they are made and
runs as before afterwards. `Engine.warm_up` then freezes what was built (`gc.freeze`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block, then restore it as it was.

    Safe when nested or entered by several threads: only the entry that found the
    collector enabled enables it again (a thread inside a later entry at worst runs the
    rest of its block with the collector on, as before this existed)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
