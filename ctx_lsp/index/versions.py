"""Version strings for state derived from source code and kept in the index cache.

A cache row or image derived by one version of the code must not be read by another that
would derive it differently. Hand-kept version numbers are forgotten; a digest of the
source of the modules that do the deriving changes whenever they do."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["source_digest"]


def source_digest(*modules: object) -> str:
    """A digest of the modules' source files (their names alone for a frozen install)."""
    h = hashlib.blake2b(digest_size=16)
    for module in modules:
        try:
            h.update(Path(str(getattr(module, "__file__", ""))).read_bytes())
        except OSError:  # no source (a frozen install): the name alone
            h.update(str(getattr(module, "__name__", "")).encode())
    return h.hexdigest()
