"""RE2 where it is installed: matching in linear time, and a fast scan for many literals.

google-re2 is a core dependency on the platforms it has wheels for (Linux x86_64 and
aarch64, macOS, Windows); elsewhere Python's `re` stands in, and the callers that need a
guarantee RE2 gives (ignore patterns: no exponential backtracking) say what they skip.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["any_literal", "has_re2"]


@functools.cache
def _re2() -> Any | None:
    try:
        return importlib.import_module("re2")
    except Exception:  # an import of a broken native module may raise anything
        return None


def has_re2() -> bool:
    """Whether google-re2 is importable here."""
    return _re2() is not None


def any_literal(literals: Sequence[bytes]) -> Callable[[bytes], bool]:
    """A test of whether a text holds any of `literals`: one pass of a DFA with RE2 (on
    Django's 27 MB of source: 140 ms for 25 literals, against 1.5 s for 25 `in` scans or
    Python's `re` alternation), else Python's `re`."""
    pattern = b"|".join(re.escape(literal) for literal in sorted(set(literals), key=len, reverse=True))
    engine = _re2()
    if engine is not None:
        try:
            compiled = engine.compile(pattern)
        except Exception:
            compiled = re.compile(pattern)
    else:
        compiled = re.compile(pattern)
    search = compiled.search
    return lambda data: search(data) is not None
