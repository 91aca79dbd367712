"""Which workspace a command works on, and how the paths it is given are read."""

from __future__ import annotations

import re
from pathlib import Path

ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", ".hg", "ctx-lsp.toml")
"""Files that mark a project root when `outline FILE` or `docs` is called without
`--workspace`. With none above it, a directory is not a workspace: nothing is indexed
beyond the file asked about, and no cache is written there (`ctx-lsp outline /bin/ls`
once indexed /usr/bin and wrote /usr/bin/.ctx-lsp/)."""


NO_CACHE = {"index": {"cache": False, "watch": False}}
"""Settings for a directory the user did not name as a workspace: no cache written in it."""


def workspace_of(given: Path | None) -> Path:
    """The workspace a command works on: the one named, else the project the current
    directory is in (so a run from a subfolder indexes the whole project, not a corner of
    it), else the current directory."""
    if given is not None:
        return given.resolve()
    cwd = Path.cwd().resolve()
    return project_root(cwd) or cwd


def project_root(directory: Path) -> Path | None:
    """The nearest of `directory` and its parents holding a project root marker, or None."""
    for candidate in [directory, *directory.parents]:
        if any((candidate / m).exists() for m in ROOT_MARKERS):
            return candidate
    return None


def find_root(path: Path) -> Path | None:
    """The project a file belongs to (None: it belongs to none)."""
    return project_root(path.parent)


def resolve_cli_path(workspace: Path, raw: str) -> str:
    p = Path(raw)
    if p.is_absolute():
        return str(p)
    in_ws = workspace / p
    return str(in_ws if in_ws.exists() or not p.exists() else p.resolve())


def glob_literal(name: str) -> str:
    """A file name as a gitignore pattern that matches only that name."""
    escaped = re.sub(r"([\\*?\[\]])", r"\\\1", name)
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped
