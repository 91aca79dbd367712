"""The workspace folders, and the one decision of what lies inside them.

Every path that a request, an editor or the watcher names goes through `locate` before
it is indexed or read. DESIGN (Security) allows only regular files inside the workspace
folders, resolved at the moment of reading: `locate` decides where a path lies, and
`read` reads an indexed file through the gate (`ctx_lsp/gate.py`), which decides again
on the opened file. Files that hold secrets are refused here too, by name and by content.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ctx_lsp.config import MAX_FILE_BYTES
from ctx_lsp.errors import OutsideWorkspace
from ctx_lsp.gate import Reason, Refused, read_file
from ctx_lsp.index.scan import CONFIGURED_SOURCE, IgnoreRules
from ctx_lsp.index.secret_files import credential_kind
from ctx_lsp.index.secret_tokens import mask_tokens
from ctx_lsp.index.store import CACHE_DIR_NAME


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

    def __init__(
        self,
        roots: Sequence[Path],
        ignore: Sequence[str],
        respect_gitignore: bool,
        include_secrets: Sequence[str] = (),
        max_file_bytes: int = MAX_FILE_BYTES,
    ):
        self._ignore = tuple(ignore)
        self._respect_gitignore = respect_gitignore
        self._include_secrets = tuple(include_secrets)
        self.max_file_bytes = max_file_bytes
        """Files read for rendering are refused past this size, as the index refuses them."""
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

    def set_rules(self, ignore: Sequence[str], respect_gitignore: bool, include_secrets: Sequence[str] = ()) -> None:
        """New ignore settings: rebuild every folder's rules (which also drops cached .gitignores)."""
        self._ignore = tuple(ignore)
        self._respect_gitignore = respect_gitignore
        self._include_secrets = tuple(include_secrets)
        self._folders = tuple(self._folder(f.root) for f in self._folders)

    def _folder(self, root: Path) -> Folder:
        rules = IgnoreRules(root, self._ignore, self._respect_gitignore, self._include_secrets)
        return Folder(root, root.name or str(root), rules)

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

    def ignore_problems(self) -> list[str]:
        """Patterns left out of the ignore files read so far (and of `index.ignore`), as
        status lists them: each names its file, line and pattern."""
        found: list[str] = []
        for folder in self._folders:
            for problem in folder.rules.problems:
                if problem.source != CONFIGURED_SOURCE:
                    problem = replace(problem, source=self.display_path(folder, problem.source))
                text = str(problem)
                if text not in found:  # index.ignore is every folder's
                    found.append(text)
        return found

    def secret(self, location: Location) -> str | None:
        """The secret pattern a located file matches by name (None: not a secret)."""
        return location.folder.rules.secrets.match(location.rel) if location.rel else None

    def read(self, abs_path: str) -> tuple[Location, bytes, int]:
        """Read an indexed file for rendering: its location, bytes (tokens masked, as the
        index read them) and mtime (ns).

        The file is located again now, not trusted from when it was indexed: it may have
        been replaced by a symlink since (one that leaves the workspace raises
        OutsideWorkspace, any other is NotFound: links are never followed), by a FIFO or a
        device, or by a secret (`Refused`, a NotFound). Raises OSError if it cannot be read.
        """
        location = self.locate(abs_path)
        if location.abs_path != abs_path:
            raise Refused(abs_path, Reason.CHANGED, "is a symbolic link now; links are not followed")
        display = self.display_path(location.folder, location.rel)
        pattern = self.secret(location)
        if pattern is not None:
            raise Refused(display, Reason.SECRET, f"holds secrets (matches {pattern!r}); never read")
        read = read_file(abs_path, [location.folder.root], self.max_file_bytes)
        data = read.data
        if location.folder.rules.secrets.content_check(location.rel):
            kind = credential_kind(data)
            if kind is not None:
                raise Refused(display, Reason.SECRET, f"holds secrets (a {kind.replace('_', ' ')}); never shown")
            data, _ = mask_tokens(data)
        return location, data, read.mtime_ns
