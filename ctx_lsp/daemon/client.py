"""The CLI's side of the daemon: ask it, start it, stop it.

Stdlib only, and nothing else from the package but `address`: the point of the daemon is
a CLI call that costs the interpreter's start and one round trip, not the engine's imports.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ctx_lsp.daemon.address import log_path, owned_socket, read_line, socket_path

CONNECT_TIMEOUT_S = 0.5
"""A live daemon accepts at once; a socket that does not is stale."""
ANSWER_TIMEOUT_S = 120.0
"""A bundle on a 20,000-file workspace takes seconds, not minutes."""
MAX_ANSWER_BYTES = 256 * 1024 * 1024
"""A 200K-token bundle as JSON is a few MB; past this the daemon is not one of ours."""
START_TIMEOUT_S = 300.0
"""`daemon start` waits this long for the first index (a 20,000-file cold index: ~70 s)."""


class NoDaemon(Exception):
    """No daemon answers for this workspace (none started, or it died): run in-process."""


def request(workspace: Path, method: str, params: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """Send one request to the workspace's daemon and return its answer (a dict with
    `result` or `error`). Raises NoDaemon if there is none to ask."""
    try:
        path = socket_path(workspace)
    except RuntimeError as err:  # an unsafe runtime directory: never talk through it
        raise NoDaemon(str(err)) from err
    if path is None or not owned_socket(path):
        raise NoDaemon("no daemon socket")
    message = {"method": method, "params": params or {}, **extra}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(CONNECT_TIMEOUT_S)
        try:
            conn.connect(str(path))
        except OSError as err:
            raise NoDaemon(f"daemon not answering: {err}") from err
        conn.settimeout(ANSWER_TIMEOUT_S)
        try:
            conn.sendall(json.dumps(message).encode("utf-8") + b"\n")
            reply = read_line(conn, MAX_ANSWER_BYTES)
        except (OSError, ValueError) as err:
            raise NoDaemon(f"daemon went away: {err}") from err
    try:
        answer = json.loads(reply)
    except ValueError as err:
        raise NoDaemon(f"daemon answered garbage: {err}") from err
    if not isinstance(answer, dict) or ("result" not in answer and "error" not in answer):
        raise NoDaemon("daemon answered garbage")
    return answer


def start(workspace: Path, idle_timeout: float, python: str = sys.executable) -> dict[str, Any]:
    """Start a daemon for the workspace (if none answers) and wait until it does; its
    status. The daemon runs in its own session, its output in the runtime directory's log."""
    try:
        return request(workspace, "status")["result"]
    except NoDaemon:
        pass
    path = socket_path(workspace, create_dir=True)
    log = log_path(workspace)
    assert path is not None and log is not None
    with os.fdopen(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600), "ab") as out:
        proc = subprocess.Popen(
            [
                python,
                "-m",
                "ctx_lsp",
                "daemon",
                "run",
                "--workspace",
                str(workspace),
                "--idle-timeout",
                str(idle_timeout),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the daemon exited with {proc.returncode}; see {log}")
        try:
            return request(workspace, "status")["result"]
        except NoDaemon:
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError(f"the daemon did not answer within {START_TIMEOUT_S:.0f} s; see {log}")


def stop(workspace: Path) -> int | None:
    """Stop the workspace's daemon; its pid, or None if none was running."""
    try:
        answer = request(workspace, "stop")
    except NoDaemon:
        return None
    pid = answer.get("result", {}).get("pid")
    deadline = time.monotonic() + 10
    while isinstance(pid, int) and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    return pid if isinstance(pid, int) else None
