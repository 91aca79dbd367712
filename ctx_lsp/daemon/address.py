"""Where a workspace's daemon listens, the checks that keep that place private, and how a
message on its socket ends.

A socket per workspace, named by a hash of the workspace's real path, in a directory only
this user can enter: `$XDG_RUNTIME_DIR/ctx-lsp/` where the session has one, else
`/tmp/ctx-lsp-<uid>/`. A directory that is a link, is owned by someone else, or lets
others in is refused (another user could otherwise plant a socket that answers with
anything, or read what the daemon serves); so is a socket owned by someone else.

Stdlib only: the CLI imports this on its fast path, before anything heavy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import stat
from pathlib import Path

SOCKET_SUFFIX = ".sock"


class UnsafeRuntimeDir(RuntimeError):
    """The directory for daemon sockets is not private to this user."""


def runtime_dir() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and Path(base).is_dir():
        return Path(base) / "ctx-lsp"
    return Path("/tmp") / f"ctx-lsp-{os.getuid()}"


def private_dir(create: bool) -> Path | None:
    """The runtime directory, created 0700 if asked; None if absent and not created.

    Raises UnsafeRuntimeDir if it exists but is a link, not ours, or open to others."""
    path = runtime_dir()
    if create:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700, parents=False)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeRuntimeDir(f"{path} is not a directory (a link or a file): refusing to use it for daemon sockets")
    if info.st_uid != os.getuid():
        raise UnsafeRuntimeDir(f"{path} belongs to uid {info.st_uid}, not to you: refusing to use it")
    if info.st_mode & 0o077:
        raise UnsafeRuntimeDir(f"{path} is open to other users (mode {info.st_mode & 0o777:o}): chmod 700 it")
    return path


def workspace_key(workspace: Path) -> str:
    """A short name for the workspace's real path (a socket path must stay under ~100 bytes)."""
    real = os.path.realpath(workspace)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def socket_path(workspace: Path, create_dir: bool = False) -> Path | None:
    directory = private_dir(create_dir)
    return None if directory is None else directory / f"{workspace_key(workspace)}{SOCKET_SUFFIX}"


def log_path(workspace: Path) -> Path | None:
    directory = private_dir(False)
    return None if directory is None else directory / f"{workspace_key(workspace)}.log"


def owned_socket(path: Path) -> bool:
    """The path is a socket this user owns (what a daemon of ours would have made)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == os.getuid()


def read_line(conn: socket.socket, max_bytes: int) -> bytes:
    """One message of the daemon's protocol: the bytes up to the first newline (or the end
    of the stream), refused past `max_bytes`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise ValueError(f"over {max_bytes} bytes")
    return b"".join(chunks)
