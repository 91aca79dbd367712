"""The repository's own history, read from the workspace root's `.git` without running
anything the repository controls (issue 22, item 4).

`git` runs programs a cloned repository names in its own `.git/config` (`core.fsmonitor`
on every status, `core.pager`, `diff.external`, filters, hooks), so the history is read
from the object store with dulwich alone: no config file is parsed, no process started,
no network touched. What is read must lie inside the workspace, decided when it is read:

- `.git` must be a directory resolving inside the workspace. A `.git` *file* (`gitdir:
  …`: a linked worktree, a submodule) names a directory elsewhere and is refused, as are
  a `commondir` file and `objects/info/alternates` (object stores elsewhere);
- HEAD, refs, `packed-refs`, loose objects, pack and index files are each opened through
  the read gate (`gate.py`) with the workspace as root, so a link swapped in anywhere
  leads nowhere outside;
- commit graphs and multi-pack indexes are not read: optional accelerators, one format
  less to trust.

The work is bounded: at most `max_commits` first-parent commits from HEAD, a commit
changing more than `max_paths` files (a reformat, a vendored import) is kept without its
paths, and the walk stops at its time budget. A corrupt, truncated or shallow repository
ends the walk where it breaks. `read_history` never raises: `History.status` says what was
read, or why nothing was. It runs off the request path (`history_loader.py`).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from dulwich.diff_tree import tree_changes
from dulwich.object_store import DiskObjectStore
from dulwich.objects import Commit as GitCommit
from dulwich.objects import ObjectID, ShaFile, sha_to_hex
from dulwich.pack import Pack, PackData, load_pack_index_file

from ctx_lsp.errors import CtxError, OutsideWorkspace
from ctx_lsp.gate import Refused, inside, open_file, read_file

MAX_COMMITS = 1000
"""First-parent commits read from HEAD: ~0.7-1.5 ms each (clap, typeorm), so about a
second on a large repository, and years of history on most."""
MAX_CHANGED_PATHS = 50
"""A commit changing more files is a reformat, a rename sweep or an import: it says
nothing about which files belong together, and diffing it costs the most."""
READ_BUDGET_S = 3.0
"""The walk stops here whatever it has read: a huge or pathological repository keeps a
background thread busy at most this long (`history_loader.py`; no request waits for it)."""
MAX_PAUSE_S = 10.0
"""A read running beside requests steps aside while one runs (`busy`), at most this long
in all: on 2 cores a read in another thread took half the interpreter from them
(typeorm: first bundle 0.6-0.8 s while the read ran vs 0.4 s). Paused time does not
count against READ_BUDGET_S."""
PAUSE_POLL_S = 0.01
MAX_REF_BYTES = 4096
MAX_PACKED_REFS_BYTES = 32 << 20
MAX_LOOSE_OBJECT_BYTES = 32 << 20
"""Compressed bytes of one loose object file; dulwich bounds the inflated size too."""
MAX_PACK_BYTES = 8 << 30
"""Pack and index files are mapped, not read: the bound is on what may be mapped."""
MAX_MESSAGE_CHARS = 4000
"""A commit message longer than this (a pasted log) is cut: its head says what it did."""
MAX_SYMREF_DEPTH = 5

_SHA1 = re.compile(rb"[0-9a-f]{40}")
_SHA256 = re.compile(rb"[0-9a-f]{64}")
_REF_NAME = re.compile(r"refs/(?:[A-Za-z0-9_+@-][A-Za-z0-9._+@-]*/)*[A-Za-z0-9_+@-][A-Za-z0-9._+@-]*")


class NoHistory(Exception):
    """Why there is no history; the message is what status shows. `problem` when the
    repository was refused for safety or is broken, not merely absent."""

    def __init__(self, why: str, problem: bool = True) -> None:
        super().__init__(why)
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    time: int
    """Commit time, seconds since the epoch."""
    message: str
    paths: tuple[str, ...]
    """Files it changed against its first parent, workspace-relative with `/`."""
    bulk: bool = False
    """Changed more than MAX_CHANGED_PATHS files: kept for its age, without its paths."""


@dataclass(frozen=True, slots=True)
class History:
    head: str | None
    commits: tuple[Commit, ...]
    """Newest first, first parents only."""
    status: str
    """What was read (`1000 commits from HEAD 1a2b3c4d5e6f`), or why nothing was."""
    problem: bool = False
    """Refused or broken (status lists it under problems), not simply absent."""
    elapsed_s: float = 0.0

    @property
    def bulk(self) -> int:
        return sum(1 for c in self.commits if c.bulk)


def empty(why: str, problem: bool = False) -> History:
    return History(None, (), why, problem)


def git_dir(root: str) -> str:
    """The workspace root's `.git` directory, resolved; raises NoHistory when there is
    none or it may not be read (the module docstring's rules)."""
    path = os.path.join(root, ".git")
    try:
        os.lstat(path)
    except FileNotFoundError:
        raise NoHistory("no .git at the workspace root", problem=False) from None
    real = os.path.realpath(path)
    if not inside(real, [root]):
        raise NoHistory(".git is a link out of the workspace; history not read")
    try:
        mode = os.stat(real).st_mode
    except OSError as err:
        raise NoHistory(f".git cannot be read ({err.strerror})") from None
    if stat.S_ISREG(mode):
        raise NoHistory(
            ".git is a file (gitdir: …, a linked worktree or a submodule) naming a directory that may lie "
            "outside the workspace; history not read"
        )
    if not stat.S_ISDIR(mode):
        raise NoHistory(".git is not a directory; history not read")
    if os.path.lexists(os.path.join(real, "commondir")):
        raise NoHistory(".git has a commondir (a linked worktree's); history not read")
    objects = os.path.realpath(os.path.join(real, "objects"))
    if not inside(objects, [root]):
        raise NoHistory(".git/objects is a link out of the workspace; history not read")
    if not os.path.isdir(objects):
        raise NoHistory(".git/objects is missing; history not read")
    for name in ("alternates", "http-alternates"):
        if os.path.lexists(os.path.join(objects, "info", name)):
            raise NoHistory(f".git/objects/info/{name} names object stores elsewhere; history not read")
    if not inside(os.path.realpath(os.path.join(objects, "pack")), [root]):
        raise NoHistory(".git/objects/pack is a link out of the workspace; history not read")
    return real


def _read(path: str, root: str, max_bytes: int) -> bytes:
    return read_file(path, [root], max_bytes).data


def read_head(gitdir: str, root: str) -> str:
    """The commit HEAD names (a branch followed through loose or packed refs)."""
    if os.path.lexists(os.path.join(gitdir, "reftable")):
        raise NoHistory("refs are stored as a reftable, which is not read")
    value = _read(os.path.join(gitdir, "HEAD"), root, MAX_REF_BYTES).strip()
    for _ in range(MAX_SYMREF_DEPTH):
        if not value.startswith(b"ref:"):
            break
        name = value[4:].strip().decode("utf-8", "replace")
        if not _REF_NAME.fullmatch(name) or ".." in name or name.endswith(".lock"):
            raise NoHistory(f"HEAD names {name!r}, not a ref")
        value = _ref_value(gitdir, root, name)
    if _SHA1.fullmatch(value):
        return value.decode()
    if _SHA256.fullmatch(value):
        raise NoHistory("a SHA-256 repository, which is not read", problem=False)
    raise NoHistory("HEAD names no commit")


def _ref_value(gitdir: str, root: str, name: str) -> bytes:
    loose = os.path.join(gitdir, *name.split("/"))
    if os.path.lexists(loose):
        return _read(loose, root, MAX_REF_BYTES).strip()
    packed = os.path.join(gitdir, "packed-refs")
    if os.path.lexists(packed):
        wanted = name.encode()
        for line in _read(packed, root, MAX_PACKED_REFS_BYTES).splitlines():
            if line[:1] in (b"#", b"^"):
                continue
            sha, _, ref = line.partition(b" ")
            if ref.strip() == wanted:
                return sha.strip()
    raise NoHistory(f"{name} has no commit yet", problem=False)


def head_token(root: str) -> str:
    """HEAD's commit, or why there is none: cheap (a few small reads), so a bundle can
    tell whether the history it holds is still HEAD's."""
    try:
        return read_head(git_dir(root), root)
    except NoHistory as err:
        return f"none: {err}"
    except (CtxError, OSError, ValueError) as err:
        return f"none: {type(err).__name__}: {err}"


class ConfinedObjectStore(DiskObjectStore):
    """dulwich's on-disk store, with every file opened through the read gate (roots: the
    workspace) and without the parts that could read elsewhere (alternates) or that are
    not needed (commit graph, multi-pack index)."""

    def __init__(self, objects: str, root: str) -> None:
        super().__init__(objects)
        self._root = root
        self._use_commit_graph = False
        self._use_midx = False
        self._opened: list[BinaryIO] = []

    def _read_alternate_paths(self) -> Iterator[str]:
        return iter(())

    def _get_loose_object(self, sha: ObjectID) -> ShaFile | None:
        hex_sha = ObjectID(sha if len(sha) == self.object_format.hex_length else sha_to_hex(sha))  # type: ignore[arg-type]
        path = self._get_shafile_path(hex_sha)
        try:
            data = _read(path, self._root, MAX_LOOSE_OBJECT_BYTES)
        except FileNotFoundError:
            return None
        return ShaFile.from_file(
            io.BytesIO(data), hex_sha, object_format=self.object_format, max_size=self.loose_object_size_limit
        )

    def _update_pack_cache(self) -> list[Pack]:
        try:
            names = set(os.listdir(self.pack_dir))
        except FileNotFoundError:
            return []
        new = []
        for name in sorted(names):
            base = name.removesuffix(".pack")
            if base == name or f"{base}.idx" not in names or base in self._pack_cache:
                continue
            pack = self._open_pack(os.path.join(self.pack_dir, base))
            self._pack_cache[base] = pack
            new.append(pack)
        return new

    def _open_pack(self, base: str) -> Pack:
        idx_file = self._open(f"{base}.idx")
        data_file = self._open(f"{base}.pack")
        index = load_pack_index_file(f"{base}.idx", idx_file, self.object_format)
        return Pack.from_objects(PackData(f"{base}.pack", self.object_format, file=data_file), index)

    def _open(self, path: str) -> BinaryIO:
        f = os.fdopen(open_file(path, [self._root], MAX_PACK_BYTES), "rb")
        self._opened.append(f)
        return f

    def close(self) -> None:
        super().close()
        for f in self._opened:
            f.close()
        self._opened.clear()


def read_history(
    root: str | Path,
    *,
    max_commits: int = MAX_COMMITS,
    max_paths: int = MAX_CHANGED_PATHS,
    budget_s: float = READ_BUDGET_S,
    known: Mapping[str, Commit] | None = None,
    clock: Callable[[], float] = time.monotonic,
    stop: threading.Event | None = None,
    busy: Callable[[], bool] | None = None,
) -> History:
    """Up to `max_commits` first-parent commits from HEAD, newest first, with the files
    each changed. `known` commits (by sha, from an earlier read) are not diffed again;
    `stop` set ends the walk between commits (the engine closed); while `busy()` (a
    request runs) the walk waits between commits, up to MAX_PAUSE_S in all."""
    started = clock()
    paused = 0.0

    def out_of_time() -> str:
        nonlocal paused
        while busy is not None and paused < MAX_PAUSE_S and busy() and not (stop is not None and stop.is_set()):
            before = clock()
            time.sleep(PAUSE_POLL_S)
            paused += clock() - before
        if stop is not None and stop.is_set():
            return "engine closed"
        return "time budget" if clock() - started - paused > budget_s else ""

    root = os.path.realpath(root)
    try:
        gitdir = git_dir(root)
        head = read_head(gitdir, root)
    except NoHistory as err:
        return History(None, (), str(err), err.problem, clock() - started)
    except (OutsideWorkspace, Refused) as err:
        return History(None, (), f"history not read: {err}", True, clock() - started)
    except (CtxError, OSError, ValueError) as err:
        return History(None, (), f"history not read: {type(err).__name__}: {err}", True, clock() - started)
    store = ConfinedObjectStore(os.path.join(gitdir, "objects"), root)
    try:
        commits, why = _walk(store, head, max_commits, max_paths, known or {}, out_of_time)
    except Exception as err:  # beyond what the walk handles itself: no history, never a failed bundle
        return History(head, (), f"history not read: {type(err).__name__}: {err}", True, clock() - started)
    finally:
        with contextlib.suppress(Exception):  # closing a broken store must not hide what was read
            store.close()
    if why == "shallow" and os.path.lexists(os.path.join(gitdir, "shallow")):
        why = "the repository is shallow"
    bulk = sum(1 for c in commits if c.bulk)
    status = f"{len(commits)} commits from HEAD {head[:12]}" + (f" ({bulk} bulk, paths left out)" if bulk else "")
    if why:
        status += f"; stopped: {why}"
    broken = why.startswith(("a broken object", "refused", "a tree is missing", "HEAD's commit"))
    return History(head, tuple(commits), status, broken, clock() - started)


def _walk(
    store: ConfinedObjectStore,
    head: str,
    max_commits: int,
    max_paths: int,
    known: Mapping[str, Commit],
    out_of_time: Callable[[], str],
) -> tuple[list[Commit], str]:
    """The first-parent chain from `head`, and why it stopped early ("" when it reached
    the root or `max_commits`). `out_of_time` says why to stop now, or ""."""
    commits: list[Commit] = []
    sha: str | None = head
    commit: GitCommit | None
    try:
        commit = _commit(store, head)
    except KeyError:
        return commits, "HEAD's commit is missing"
    while sha is not None and commit is not None and len(commits) < max_commits:
        if late := out_of_time():
            return commits, late
        parent_sha = commit.parents[0].decode("ascii") if commit.parents else None
        try:
            parent = _commit(store, parent_sha) if parent_sha else None
        except KeyError:
            return commits, "shallow"  # the parent is not in the store: nothing to diff against
        except CtxError as err:
            return commits, f"refused by the read gate: {err}"
        except Exception as err:
            return commits, f"a broken object ({type(err).__name__}: {err})"
        entry = known.get(sha)
        if entry is None:
            try:
                entry = _entry(store, sha, commit, parent, max_paths)
            except KeyError:
                return commits, "a tree is missing"
            except CtxError as err:
                return commits, f"refused by the read gate: {err}"
            except Exception as err:
                return commits, f"a broken object ({type(err).__name__}: {err})"
        commits.append(entry)
        sha, commit = parent_sha, parent
    return commits, ""


def _commit(store: ConfinedObjectStore, sha: str) -> GitCommit:
    obj = store[ObjectID(sha.encode("ascii"))]
    if not isinstance(obj, GitCommit):
        raise ValueError(f"{sha[:12]} is a {obj.type_name.decode()}, not a commit")
    return obj


def _entry(store: ConfinedObjectStore, sha: str, commit: GitCommit, parent: GitCommit | None, max_paths: int) -> Commit:
    message = commit.message.decode("utf-8", "replace")[:MAX_MESSAGE_CHARS]
    paths: list[str] = []
    for change in tree_changes(store, parent.tree if parent else None, commit.tree):
        entry = change.new if change.new is not None and change.new.path is not None else change.old
        if entry is None or entry.path is None:
            continue
        path = _workspace_path(entry.path)
        if path is not None:
            paths.append(path)
        if len(paths) > max_paths:
            return Commit(sha, commit.commit_time, message, (), bulk=True)
    return Commit(sha, commit.commit_time, message, tuple(dict.fromkeys(paths)))


def _workspace_path(raw: bytes) -> str | None:
    """A tree path as the workspace index names files, or None for one no checkout could
    hold (`..`, empty parts, `.git`: only a crafted object store has them)."""
    path = raw.decode("utf-8", "surrogateescape")
    parts = path.split("/")
    if any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        return None
    return path
