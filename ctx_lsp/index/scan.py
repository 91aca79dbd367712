"""Walk workspace folders and decide, for every file, whether it is indexed or why not.

Why a hand-written walk instead of `git ls-files`: workspaces are not always git
repositories, and open-but-untracked files matter most. Ignore rules follow git's
semantics (nested `.gitignore` files, negations, directory-only patterns) through
`pathspec`'s GitIgnoreSpec, plus built-in ignores for things that are never context
(VCS data, virtualenvs, caches, build output) and configured globs.

A skipped file is never silent: each one is counted under a reason that status reports.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from ctx_lsp.config import MAX_FILE_BYTES
from ctx_lsp.errors import NotFound, OutsideWorkspace
from ctx_lsp.gate import read_text
from ctx_lsp.index.ignore_files import PatternProblem, compile_patterns, split_lines
from ctx_lsp.index.secret_files import SecretRules, kind_of_pattern

DEFAULT_IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "_darcs",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        ".env",
        "env",
        "virtualenv",
        ".virtualenv",
        "site-packages",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".eggs",
        ".cache",
        ".ipynb_checkpoints",
        "build",
        "dist",
        "_build",
        "htmlcov",
        ".coverage_html",
        ".ctx-lsp",
        ".idea",
        ".gradle",
        "target",
        "vendor",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".turbo",
        ".parcel-cache",
    }
)
"""Directories that are never context for an agent, whatever .gitignore says."""

DEFAULT_IGNORED_SUFFIXES = (
    ".pyc",
    ".pyo",
    ".so",
    ".dylib",
    ".dll",
    ".o",
    ".a",
    ".class",
    ".min.js",
    ".min.mjs",
    ".min.cjs",
    ".min.css",
    ".map",
    ".lock",
)
LOCK_FILE_NAMES = frozenset({"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "bun.lockb", "go.sum"})
DEFAULT_IGNORED_NAMES = LOCK_FILE_NAMES | {".coverage", ".DS_Store"}
"""Generated or machine-only files: minified bundles, lock files, compiled objects. Checked
by name, not through pathspec: this runs for every file of every scan."""

MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css", ".map")


def machine_file_reason(name: str) -> str | None:
    """Why a file the built-in names keep out is kept out, for status (None: not one of them)."""
    if name in LOCK_FILE_NAMES or name.endswith(".lock"):
        return SkipReason.LOCK_FILE
    if name.endswith(MINIFIED_SUFFIXES):
        return SkipReason.MINIFIED
    if name.endswith(DEFAULT_IGNORED_SUFFIXES):
        return SkipReason.COMPILED
    return None


BINARY_SUFFIXES = frozenset(
    [
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".bmp",
        ".ico",
        ".webp",
        ".tif",
        ".tiff",
        ".psd",
        ".pdf",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".7z",
        ".rar",
        ".tar",
        ".whl",
        ".egg",
        ".jar",
        ".war",
        ".exe",
        ".bin",
        ".dat",
        ".db",
        ".sqlite",
        ".sqlite3",
        ".mo",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".eot",
        ".mp3",
        ".mp4",
        ".wav",
        ".ogg",
        ".flac",
        ".avi",
        ".mov",
        ".mkv",
        ".webm",
        ".npy",
        ".npz",
        ".pkl",
        ".pickle",
        ".parquet",
        ".h5",
        ".onnx",
        ".pt",
    ]
)
"""Suffixes known to be binary, so we skip them without reading a byte."""

INFO_EXCLUDE = ".git/info/exclude"
"""The repository's own excludes, not committed: read with the root's `.gitignore`. The
global excludes file (`core.excludesFile`) is not read: it lies outside the workspace,
and the index reads nothing outside it."""
LINKED_IGNORE_FILE = "a symbolic link, not read (git does not follow one either)"
CONFIGURED_SOURCE = "index.ignore"
"""How problems with the configured globs name their source."""

VIRTUALENV_MARKER = "pyvenv.cfg"
"""A directory holding this file is a virtualenv, whatever it is called."""

BINARY_SNIFF_BYTES = 8192
"""Like git, a NUL byte in the first 8 KiB marks a file as binary."""


class SkipReason:
    """Why a file is not indexed; the values are the keys status reports."""

    IGNORED = "ignored"
    BINARY = "binary"
    TOO_LARGE = "too_large"
    SYMLINK_OUTSIDE = "symlink_outside"
    SYMLINK_INSIDE = "symlink_inside"
    UNREADABLE = "unreadable"
    NOT_A_FILE = "not_a_file"
    SECRET = "secret"
    MINIFIED = "minified"
    """Code with a line over thousands of characters, or named `*.min.js`, `*.map`: not parsed."""
    GENERATED = "generated"
    """Code that says a tool wrote it (`// Code generated ... DO NOT EDIT.`): not parsed."""
    LOCK_FILE = "lock_file"
    """A package manager's lock file (`package-lock.json`, `Cargo.lock`, `go.sum`): never read."""
    COMPILED = "compiled"
    """Compiled objects and caches (`*.pyc`, `*.so`, `*.class`): never read."""
    CHANGED = "changed"
    """Replaced (by a link, a FIFO) between being listed and being read."""


@dataclass(frozen=True, slots=True)
class ScannedFile:
    """A file the index should read."""

    abs_path: str
    rel_path: str  # posix, relative to its workspace folder
    size: int
    mtime_ns: int


@dataclass
class ScanResult:
    files: list[ScannedFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    too_large: list[str] = field(default_factory=list)
    """Paths over the size limit, listed so status can name them."""
    ignored_dirs: int = 0
    secret_kinds: Counter[str] = field(default_factory=Counter)
    """Files kept out as secrets by name, by kind (`secret_files.NAME_KINDS`)."""
    problems: list[str] = field(default_factory=list)
    """Entries the walk could not decide on (a bug, not a property of the file): each is
    left out and named here, and the walk goes on."""


MAX_SCAN_PROBLEMS = 20
"""Failed entries named per walk; a bug that hits every entry must not flood status."""


def is_binary_name(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in BINARY_SUFFIXES


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


_UNREAD: Any = object()
"""A directory whose ignore file was not read yet (None: read, and it has none)."""


class IgnoreRules:
    """The ignore decision for one workspace folder: built-ins, configured globs, .gitignores,
    and the files kept out because they hold secrets (`secrets`).

    Nested `.gitignore` files apply to their own subtree with paths relative to their
    directory, as in git. Specs are cached per directory, so re-checking a single path for
    the watcher is cheap.
    """

    def __init__(
        self,
        root: Path,
        extra_globs: Sequence[str] = (),
        respect_gitignore: bool = True,
        include_secrets: Sequence[str] = (),
    ):
        self.root = root
        self.respect_gitignore = respect_gitignore
        self.secrets = SecretRules(include_secrets)
        configured = compile_patterns([(CONFIGURED_SOURCE, list(extra_globs))])
        self._global = configured.spec
        self._configured_problems = configured.problems
        self._dir_specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._dir_problems: dict[str, tuple[PatternProblem, ...]] = {}

    @property
    def problems(self) -> list[PatternProblem]:
        """Every pattern left out of the ignore files read so far and of `index.ignore`."""
        found = [*self._configured_problems]
        for rel_dir in sorted(self._dir_problems):
            found += self._dir_problems[rel_dir]
        return found

    def _spec_for(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir in self._dir_specs:
            return self._dir_specs[rel_dir]
        spec = None
        if self.respect_gitignore:
            # The root's spec starts with .git/info/exclude, which git ranks below every
            # .gitignore: within one spec the later pattern wins.
            names = [INFO_EXCLUDE, ".gitignore"] if not rel_dir else [f"{rel_dir}/.gitignore"]
            # Like git (2.32 on), a `.gitignore` that is a symbolic link is not followed:
            # it would apply another file's patterns, or one outside the workspace.
            links = [name for name in names if name != INFO_EXCLUDE and os.path.islink(self.root / name)]
            sources = [(name, self._read_lines(name)) for name in names if name not in links]
            compiled = compile_patterns([(name, lines) for name, lines in sources if lines])
            spec = compiled.spec
            self._dir_problems[rel_dir] = (
                *(PatternProblem(name, 0, "", LINKED_IGNORE_FILE) for name in links),
                *compiled.problems,
            )
        self._dir_specs[rel_dir] = spec
        return spec

    def _read_lines(self, rel_path: str) -> list[str]:
        """An ignore file's lines; none if it is absent or refused. Through the gate: an
        ignore file may be a FIFO, a device or a link out of the workspace."""
        try:
            return split_lines(read_text(self.root / rel_path, [self.root], MAX_FILE_BYTES))
        except (OSError, NotFound, OutsideWorkspace):
            return []

    def note_no_gitignore(self, rel_dir: str) -> None:
        """The walk listed `rel_dir` and saw no .gitignore: spare a failed open later (not
        for the root, whose spec also holds `.git/info/exclude`)."""
        if rel_dir:
            self._dir_specs.setdefault(rel_dir, None)

    def forget_all(self) -> None:
        """Drop every cached ignore file: a full pass reads them all again (one edited
        while nothing watched must count at the next `reindex`)."""
        self._dir_specs.clear()
        self._dir_problems.clear()

    def forget(self, rel_dir: str) -> None:
        """Drop a cached .gitignore (it changed on disk)."""
        self._dir_specs.pop(rel_dir, None)
        self._dir_problems.pop(rel_dir, None)

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """Decide for a path relative to the root, checking every ancestor's rules."""
        parts = rel_path.split("/")
        name = parts[-1]
        if is_dir and (name in DEFAULT_IGNORED_DIRS or name.endswith(".egg-info")):
            return True
        if any(p in DEFAULT_IGNORED_DIRS for p in parts[:-1]):
            return True
        if not is_dir and (name in DEFAULT_IGNORED_NAMES or name.endswith(DEFAULT_IGNORED_SUFFIXES)):
            return True
        if self._global is not None and self._global.match_file(_matchable(rel_path) + ("/" if is_dir else "")):
            return True
        # Deepest .gitignore wins (it can re-include with "!"), so check from the root down
        # and remember the last spec that had an opinion.
        if not self.respect_gitignore:
            return False
        ignored = False
        rel_dir = ""
        for depth, part in enumerate(parts):
            spec = self._dir_specs.get(rel_dir, _UNREAD)
            if spec is _UNREAD:  # one lookup: a full pass may clear the cache meanwhile
                spec = self._spec_for(rel_dir)
            if spec is not None:
                sub = _matchable("/".join(parts[depth:])) + ("/" if is_dir else "")
                result = spec.check_file(sub)
                if result.include is not None:
                    ignored = bool(result.include)
            rel_dir = f"{rel_dir}/{part}" if rel_dir else part
        return ignored

    def is_excluded(self, rel_path: str, is_dir: bool) -> bool:
        """Like `is_ignored`, but also true when an ancestor directory is ignored.

        The walk never descends into ignored directories; a single path reported by the
        watcher has to re-check its ancestors instead (git cannot re-include a file whose
        parent directory is excluded, and neither do we).
        """
        return any(self.is_ignored(d, True) for d in iter_ancestors(rel_path)) or self.is_ignored(rel_path, is_dir)


def _matchable(rel_path: str) -> str:
    """A path as pathspec can match it. Its regexes match `.` as Python's and RE2's do,
    never a newline, so `m.py` missed `nl\nx/m.py`, which git ignores (found by the
    workspace fuzz test). No pattern holds a newline or a NUL (`split_lines`, and config
    globs are single lines), so NUL stands in for the newline."""
    return rel_path.replace("\n", "\0") if "\n" in rel_path else rel_path


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def classify_file(
    abs_path: str,
    rel_path: str,
    st: os.stat_result,
    root: Path,
    max_file_bytes: int,
    secrets: SecretRules | None = None,
) -> tuple[ScannedFile | None, str | None]:
    """Decide whether one file is indexed; return (file, None) or (None, reason). A secret
    is decided first, by name, so it is never read, nor listed as too large."""
    if secrets is not None and secrets.match(rel_path) is not None:
        return None, SkipReason.SECRET
    if not stat.S_ISREG(st.st_mode):
        return None, SkipReason.NOT_A_FILE
    if is_binary_name(rel_path):
        return None, SkipReason.BINARY
    if st.st_size > max_file_bytes:
        return None, SkipReason.TOO_LARGE
    return ScannedFile(abs_path, rel_path, st.st_size, st.st_mtime_ns), None


def scan_folder(
    root: Path,
    rules: IgnoreRules,
    max_file_bytes: int,
    start: str = "",
    on_file: Callable[[ScannedFile], object] | None = None,
) -> ScanResult:
    """Walk one workspace folder iteratively (deep trees must not hit the recursion limit).

    `start` limits the walk to a subdirectory (relative posix path), for the watcher;
    paths in the result stay relative to `root`. `on_file` is called with each indexed
    file as the walk finds it (walk order, not the result's path order), so a cold index
    can start parsing before the walk ends.
    """
    root = root.resolve()
    result = ScanResult()
    if start and rules.is_excluded(start, True):
        return result
    stack: list[tuple[str, str]] = [(str(root / start) if start else str(root), start)]
    while stack:
        dir_abs, dir_rel = stack.pop()
        try:
            entries = list(os.scandir(dir_abs))
        except OSError:
            result.skipped[SkipReason.UNREADABLE] += 1
            continue
        entries.sort(key=lambda e: e.name)
        if dir_rel != start and _is_virtualenv(dir_abs, entries):
            result.ignored_dirs += 1
            continue
        if not any(e.name == ".gitignore" for e in entries):
            rules.note_no_gitignore(dir_rel)
        for entry in entries:
            try:
                rel = f"{dir_rel}/{entry.name}" if dir_rel else entry.name
                try:
                    is_link = entry.is_symlink()
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    result.skipped[SkipReason.UNREADABLE] += 1
                    continue
                if rules.is_ignored(rel, is_dir):
                    if is_dir:
                        result.ignored_dirs += 1
                    else:
                        result.skipped[machine_file_reason(entry.name) or SkipReason.IGNORED] += 1
                    continue
                if is_link:
                    # Like git, links are not followed: one inside the workspace points at
                    # something indexed under its real path already (no content twice), and
                    # one that leaves the workspace must never be read.
                    try:
                        target = Path(os.path.realpath(entry.path))
                    except OSError:
                        result.skipped[SkipReason.UNREADABLE] += 1
                        continue
                    inside = _inside(target, root)
                    result.skipped[SkipReason.SYMLINK_INSIDE if inside else SkipReason.SYMLINK_OUTSIDE] += 1
                    continue
                if is_dir:  # listed when popped (a directory deleted meanwhile counts as unreadable then)
                    stack.append((entry.path, rel))
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    # A file deleted while we walk.
                    result.skipped[SkipReason.UNREADABLE] += 1
                    continue
                scanned, reason = classify_file(entry.path, rel, st, root, max_file_bytes, rules.secrets)
                if scanned is None:
                    result.skipped[reason or SkipReason.NOT_A_FILE] += 1
                    if reason == SkipReason.TOO_LARGE:
                        result.too_large.append(rel)
                    elif reason == SkipReason.SECRET:
                        result.secret_kinds[kind_of_pattern(rules.secrets.match(rel) or "")] += 1
                else:
                    result.files.append(scanned)
                    if on_file is not None:
                        on_file(scanned)
            except Exception as err:  # never one entry's failure for the whole walk
                result.skipped[SkipReason.UNREADABLE] += 1
                if len(result.problems) < MAX_SCAN_PROBLEMS:
                    result.problems.append(f"{dir_rel or '.'}/{entry.name}: left out after {type(err).__name__}: {err}")
    result.files.sort(key=lambda f: f.rel_path)
    return result


def _is_virtualenv(dir_abs: str, entries: Sequence[os.DirEntry[str]]) -> bool:
    """Whether a listed directory is a virtualenv (holds `VIRTUALENV_MARKER`). Decided from
    its listing, which the walk makes anyway, instead of a `stat` of the marker in every
    directory (with the directory's own `stat`, which nothing used: ~15 % of the walk's CPU
    on Django's 3,248 directories). A hit is still checked with `exists`, as before: a
    dangling link named like the marker does not count."""
    return any(e.name == VIRTUALENV_MARKER for e in entries) and os.path.exists(
        os.path.join(dir_abs, VIRTUALENV_MARKER)
    )


def iter_ancestors(rel_path: str) -> Iterator[str]:
    """'a/b/c.py' → 'a', 'a/b' — the directories whose rules apply to a path."""
    parts = rel_path.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        yield "/".join(parts[:i])
