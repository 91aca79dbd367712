"""Helpers for languages whose imports name files (relative specifiers, `#include`,
`mod x;`, `require_relative`): the keys a file answers to and the candidates an import
tries, as the reference graph's module index matches them (`index/graph/modules.py`).

A path key is the file's path relative to its workspace folder, prefixed `/` so that it
can never be mistaken for a Python dotted module name; a folder key (`dir:`) stands for
every file of a folder (a Go package, a Java package).
"""

from __future__ import annotations

import posixpath

__all__ = ["dir_key", "joined", "path_key", "suffix_keys"]


def path_key(rel_path: str) -> str:
    return "/" + rel_path


def dir_key(rel_dir: str, prefix: str = "dir:") -> str:
    return prefix + rel_dir.strip("/")


def joined(importer: str, specifier: str) -> str | None:
    """`specifier` taken from the folder of the file `importer` (both relative to the
    workspace folder), normalised; None if it climbs out of the workspace."""
    path = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    if path == ".." or path.startswith("../") or path.startswith("/"):
        return None
    return "" if path == "." else path


def suffix_keys(rel_path: str, depth: int = 3, prefix: str = "tail:") -> tuple[str, ...]:
    """`tail:` keys of a path's last 1..depth parts: `#include "net/http.h"` finds
    `src/net/http.h` without knowing the include path."""
    parts = rel_path.split("/")
    return tuple(prefix + "/".join(parts[-n:]) for n in range(1, min(depth, len(parts)) + 1))
