"""The C allocator of a long-lived process (`serve`, `daemon run`): how many malloc arenas
it may use.

Its own layer at the bottom: both processes call it first thing, before any thread starts,
and neither should import the other's adapter for it.
"""

from __future__ import annotations

import ctypes
import os
import sys

MALLOC_ARENAS = 2
"""glibc malloc arenas a server may use (`limit_malloc_arenas`)."""
M_ARENA_MAX = -8
"""glibc's `mallopt` parameter number for the arena cap (malloc.h)."""


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process; True if it took effect.

    Why: requests run in worker threads, and glibc gives threads arenas of their own (up to
    8 per core). Memory freed in one arena is not reused by another, so a long session's RSS
    crept up with no Python object left behind: over 20,000 requests of the attack's load
    mix, 134 → 147 MB, while tracemalloc saw the live Python heap flat (1,073 → 1,050 KiB
    between 2,500 and 5,000 requests). With two arenas the same run stayed at 133.1–133.3 MB
    and took no longer. Call it before threads start. A `MALLOC_ARENA_MAX` the user set wins;
    elsewhere than glibc (macOS, musl) nothing is done."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))
