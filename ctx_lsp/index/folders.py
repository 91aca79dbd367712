"""The workspace folders, and the one decision of what lies inside them.

Every path that a request, an editor or the watcher names goes through `locate` before
it is indexed or read. DESIGN (Security) allows only regular files inside the workspace
folders, resolved at the moment of reading; with one function making that decision,
there is one place to get it right.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctx_lsp.errors import NotFound, OutsideWorkspace
from ctx_lsp.index.scan import IgnoreRules
from ctx_lsp.index.store import CACHE_DIR_NAME

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
"""O_NOFOLLOW refuses a symlink swapped in after `locate` looked. O_NONBLOCK keeps a FIFO
swapped in from blocking the open; it changes nothing for a regular file."""


@dataclass(frozen=True, slots=True)
class Folder:
    """One workspace folder (`root` is resolved) and its ignore rules."""

    root: Path
    name: str
    rules: IgnoreRules


@dataclass(frozen=True, slots=True)
class Location:
    """A path inside the workspace: its folder, and its posix path relative to the root
    ("" for the root itself)."""

    folder: Folder
    rel: str

    @property
    def abs_path(self) -> str:
        root = str(self.folder.root)
        return os.path.join(root, self.rel.replace("/", os.sep)) if self.rel else root


def locate(folders: Sequence[Folder], path: str | Path) -> Location:
    """Decide whether a path is inside the workspace; raise OutsideWorkspace if not.

    The decision is made on the real path (symlinks resolved), so a link pointing out of
    the workspace is refused, and so is `..`. A relative path is taken relative to the
    first folder. The innermost folder wins when folders nest. The cache directory is
    never inside: it holds our own files, not the user's.

    String operations, not pathlib: every read of a file for a bundle goes through here.
    """
    try:
        real = os.path.realpath(os.path.join(folders[0].root, os.path.expanduser(path)))
    except (OSError, ValueError) as err:
        raise OutsideWorkspace(str(path)) from err
    for folder in sorted(folders, key=lambda f: len(str(f.root)), reverse=True):
        root = str(folder.root)
        if real == root:
            return Location(folder, "")
        prefix = root if root.endswith(os.sep) else root + os.sep
        if not real.startswith(prefix):
            continue
        rel = real[len(prefix) :]
        if rel.split(os.sep, 1)[0] == CACHE_DIR_NAME:
            continue
        return Location(folder, rel.replace(os.sep, "/"))
    raise OutsideWorkspace(str(path))


class Folders:
    """The current workspace folders.

    The tuple is replaced, never mutated, so a thread that locates a path while the
    editor adds a folder sees either the old set or the new one.
    """

    def __init__(self, roots: Sequence[Path], ignore: Sequence[str], respect_gitignore: bool):
        self._ignore = tuple(ignore)
        self._respect_gitignore = respect_gitignore
        self._folders: tuple[Folder, ...] = ()
        self.set_roots(roots)

    def set_roots(self, roots: Sequence[Path]) -> list[Folder]:
        """Adopt a new set of roots, keeping the rules of folders that stay; returns the
        folders that went."""
        resolved: list[Path] = []
        for root in roots:
            r = Path(root).expanduser().resolve()
            if r not in resolved:
                resolved.append(r)
        if not resolved:
            raise ValueError("a workspace needs at least one folder")
        old = {f.root: f for f in self._folders}
        self._folders = tuple(old.get(r) or self._folder(r) for r in resolved)
        return [f for root, f in old.items() if root not in resolved]

    def set_rules(self, ignore: Sequence[str], respect_gitignore: bool) -> None:
        """New ignore settings: rebuild every folder's rules (which also drops cached .gitignores)."""
        self._ignore = tuple(ignore)
        self._respect_gitignore = respect_gitignore
        self._folders = tuple(self._folder(f.root) for f in self._folders)

    def _folder(self, root: Path) -> Folder:
        return Folder(root, root.name or str(root), IgnoreRules(root, self._ignore, self._respect_gitignore))

    def __iter__(self) -> Iterator[Folder]:
        return iter(self._folders)

    @property
    def roots(self) -> list[Path]:
        return [f.root for f in self._folders]

    def locate(self, path: str | Path) -> Location:
        return locate(self._folders, path)

    def display_path(self, folder: Folder, rel: str) -> str:
        """What a person and an agent see: the relative path, prefixed by the folder's name
        only when there are several folders."""
        return rel if len(self._folders) == 1 else f"{folder.name}/{rel}"

    def read(self, abs_path: str) -> tuple[Location, bytes, int]:
        """Read an indexed file for rendering: its location, bytes and mtime (ns).

        The file is located again now, not trusted from when it was indexed: it may have
        been replaced by a symlink since (one that leaves the workspace raises
        OutsideWorkspace, any other is NotFound: links are never followed). Raises
        OSError if it cannot be read.
        """
        location = self.locate(abs_path)
        if location.abs_path != abs_path:
            raise NotFound(f"{abs_path} is a symbolic link now; links are not followed")
        fd = os.open(abs_path, _OPEN_FLAGS)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotFound(f"{abs_path} is not a regular file now")
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read()
        finally:
            os.close(fd)
        return location, data, st.st_mtime_ns
