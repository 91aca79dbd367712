"""Version strings for state derived from source code and kept in the index cache.

A cache row or image derived by one version of the code must not be read by another that
would derive it differently. Hand-kept version numbers are forgotten; a digest of the
source of the modules that do the deriving changes whenever they do."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["outlines_version", "source_digest"]


def source_digest(*modules: object) -> str:
    """A digest of the modules' source files (their names alone for a frozen install)."""
    h = hashlib.blake2b(digest_size=16)
    for module in modules:
        try:
            h.update(Path(str(getattr(module, "__file__", ""))).read_bytes())
        except OSError:  # no source (a frozen install): the name alone
            h.update(str(getattr(module, "__name__", "")).encode())
    return h.hexdigest()


@functools.cache
def outlines_version() -> str:
    """Changes when the way outlines are derived may have changed (the outline module, the
    markdown outline, every module of the language layer): the store then rebuilds its
    rows, whose outlines were derived the old way. Without it a cache kept every file's
    outline as an older language layer derived it (a query pattern added, a hook changed)
    until the file itself changed, and a cache written by newer code was read as is by
    older code, which then served outlines it cannot derive."""
    from ctx_lsp.code import markdown, outline
    from ctx_lsp.code.languages import layer_modules

    return f"1:{source_digest(outline, markdown, *layer_modules())}"
