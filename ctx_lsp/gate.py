"""The one gate every file read passes: a regular file, inside the roots it may come from,
resolved at the moment it is opened (DESIGN, Security).

A workspace is untrusted input. Between the moment a file was indexed and the moment it
is read for a bundle, it may have become a symbolic link out of the workspace, a FIFO
(an open for reading blocks until a writer appears, a read never ends) or a device
(`/dev/zero` never ends either). A decision made on the path alone is stale by the time
the file is opened, so the gate decides on the opened file itself:

1. `stat` what the path leads to and refuse anything but a regular file within the size
   limit, so a FIFO or a device is never even opened;
2. open it with `O_NONBLOCK` (a FIFO swapped in after step 1 cannot block the open) and
   `fstat` the descriptor: still a regular file within the limit;
3. find where the opened file really is and refuse it unless that lies inside a root:
   on Linux the kernel says (`/proc/self/fd/N`), exact whatever was swapped before or
   during the open; elsewhere the path is resolved first, the resolved path opened with
   `O_NOFOLLOW`, and the path must still resolve to the file that was opened (same
   device and inode), so a directory swapped for a link in between is caught;
4. read at most `max_bytes` (a file that grows while it is read is refused, not read
   without end).

Hard links are out of reach of any path check; they need write access to the workspace
and read access to the target, which is already enough to copy the target in.

A leaf module (it imports only `errors`), so configuration, the index and library docs
all read through the same function.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctx_lsp.errors import NotFound, OutsideWorkspace

FOLLOW_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
"""O_NONBLOCK: a FIFO swapped in between the check and the open cannot block the open
(it changes nothing for a regular file). O_NOCTTY: a terminal never becomes ours."""
FD_PATHS = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else ""
"""Where the kernel says which file a descriptor is (Linux); elsewhere the path is
resolved again after the open."""
READ_CHUNK_BYTES = 1 << 20


class Reason:
    """Why the gate refused a file; the values are the keys status reports."""

    OUTSIDE = "outside"
    NOT_A_FILE = "not_a_file"
    TOO_LARGE = "too_large"
    CHANGED = "changed"
    SECRET = "secret"


class Refused(NotFound):
    """A file the gate will not read. A `NotFound` to callers that only need to know it
    cannot be shown; `reason` says why, for status."""

    def __init__(self, path: str, reason: str, detail: str) -> None:
        super().__init__(f"{path} {detail}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class GateRead:
    data: bytes
    mtime_ns: int
    real: str
    """The resolved path that was read."""


def inside(real: str, roots: Sequence[str | Path]) -> bool:
    """True if the resolved path `real` is one of `roots` or lies under one (each root
    resolved). String comparison on resolved paths: `/ws-evil` is not under `/ws`."""
    for root in roots:
        r = _resolved(str(root))
        if real == r or real.startswith(r if r.endswith(os.sep) else r + os.sep):
            return True
    return False


@functools.lru_cache(maxsize=256)
def _resolved(root: str) -> str:
    """A root, resolved once: roots are workspace folders and the user's docs folders,
    whose own location does not move while the server runs; the files under them do."""
    return os.path.realpath(root)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words for a refusal."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def read_file(path: str | Path, roots: Sequence[str | Path] | None, max_bytes: int) -> GateRead:
    """Read one regular file through the gate.

    `roots` are the directories the file must resolve into (None: anywhere, for files the
    user chose: their environment, a file named on the command line; the other checks
    still apply). Raises `OutsideWorkspace` for a file that resolves outside every root,
    `Refused` for one that is not a regular file, is over `max_bytes` or changed while
    being opened, and `OSError` when the file cannot be read at all (missing, permissions).
    """
    shown = str(path)
    fd, st, real = _open(path, roots, max_bytes)
    try:
        data = _read_capped(fd, shown, max_bytes)
    finally:
        os.close(fd)
    return GateRead(data, st.st_mtime_ns, real)


def read_head(path: str | Path, roots: Sequence[str | Path] | None, max_bytes: int) -> bytes:
    """At most the first `max_bytes` of a file, through the same checks as `read_file`
    except the size (for sniffing a file, or reading the start of a big one)."""
    fd, _st, _real = _open(path, roots, None)
    try:
        return _read_upto(fd, max_bytes)
    finally:
        os.close(fd)


def open_file(path: str | Path, roots: Sequence[str | Path] | None, max_bytes: int) -> int:
    """A descriptor of the regular file `path`, through the same checks as `read_file`,
    for a reader that maps the file rather than reading it (git's pack files). The
    caller closes it."""
    return _open(path, roots, max_bytes)[0]


def read_text(path: str | Path, roots: Sequence[str | Path] | None, max_bytes: int) -> str:
    """`read_file` decoded as UTF-8, undecodable bytes replaced."""
    return read_file(path, roots, max_bytes).data.decode("utf-8", errors="replace")


def _open(
    path: str | Path, roots: Sequence[str | Path] | None, max_bytes: int | None
) -> tuple[int, os.stat_result, str]:
    """An open descriptor of the regular file `path` resolves to, its stat and its
    resolved path (the module docstring's steps 1–4). The caller closes the descriptor."""
    try:
        if FD_PATHS:
            return _open_by_descriptor(path, roots, max_bytes)
        return _open_by_path(path, roots, max_bytes)
    except ValueError as err:  # a NUL byte in the path
        raise Refused(str(path), Reason.NOT_A_FILE, f"cannot be opened ({err})") from err


def _open_by_descriptor(
    path: str | Path, roots: Sequence[str | Path] | None, max_bytes: int | None
) -> tuple[int, os.stat_result, str]:
    """Linux: open (links followed), then ask the kernel which file the descriptor is
    (`/proc/self/fd/N`). Exact whatever was swapped before or during the open, and a
    handful of system calls where resolving the path twice costs one per component."""
    shown = str(path)
    _require_regular(shown, os.stat(path), max_bytes)  # FIFOs and devices are never opened
    fd = os.open(path, FOLLOW_FLAGS)
    try:
        st = os.fstat(fd)
        _require_regular(shown, st, max_bytes)
        real = os.readlink(f"{FD_PATHS}/{fd}")
        if not real.startswith("/") or real.endswith(" (deleted)"):
            raise Refused(shown, Reason.CHANGED, "was removed while being opened; not read")
        if roots is not None and not inside(real, roots):
            raise OutsideWorkspace(shown)
    except BaseException:
        os.close(fd)
        raise
    return fd, st, real


def _open_by_path(
    path: str | Path, roots: Sequence[str | Path] | None, max_bytes: int | None
) -> tuple[int, os.stat_result, str]:
    """Elsewhere: resolve, check, open the resolved path without following a link, and
    check that the path still resolves to the file that was opened."""
    shown = str(path)
    real = os.path.realpath(path)
    if roots is not None and not inside(real, roots):
        raise OutsideWorkspace(shown)
    _require_regular(shown, os.lstat(real), max_bytes)
    try:
        fd = os.open(real, FOLLOW_FLAGS | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise Refused(shown, Reason.CHANGED, "became a symbolic link while being opened; not read") from err
        raise
    try:
        st = os.fstat(fd)
        _require_regular(shown, st, max_bytes)
        if not _still_there(path, real, st):
            raise Refused(shown, Reason.CHANGED, "moved or was replaced while being opened; not read")
    except BaseException:
        os.close(fd)
        raise
    return fd, st, real


def _require_regular(shown: str, st: os.stat_result, max_bytes: int | None) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise Refused(shown, Reason.NOT_A_FILE, f"is {file_kind(st.st_mode)}, not a regular file; never read")
    if max_bytes is not None:
        _check_size(shown, st.st_size, max_bytes)


def _check_size(shown: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise Refused(shown, Reason.TOO_LARGE, f"is {size:,} bytes, over the {max_bytes:,}-byte limit; not read")


def _still_there(path: str | Path, real: str, opened: os.stat_result) -> bool:
    """The path still resolves to `real`, and `real` is the file that was opened."""
    try:
        if os.path.realpath(path) != real:
            return False
        now = os.stat(real, follow_symlinks=False)
    except (OSError, ValueError):
        return False
    return (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)


def _read_upto(fd: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < max_bytes:
        chunk = os.read(fd, min(READ_CHUNK_BYTES, max_bytes - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _read_capped(fd: int, shown: str, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(READ_CHUNK_BYTES, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise Refused(shown, Reason.TOO_LARGE, f"grew past the {max_bytes:,}-byte limit while being read; not read")
