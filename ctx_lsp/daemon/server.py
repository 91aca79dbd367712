"""The daemon: one warm engine per workspace, answering CLI calls over a private socket.

A shell-driven agent runs `ctx-lsp bundle` once per turn. In-process, each call pays the
interpreter, the imports, the index load, the search postings and the graph (~2.4 s on
Django's 2,800 Python files); a warm engine answers a new query in tens of milliseconds.
So `ctx-lsp daemon start` keeps one engine per workspace, watching the disk as the
language server does, and `bundle`, `show` and `status` use it when it is there.

The protocol is one JSON object per line, one request per connection:
`{"method": "bundle" | "symbol" | "status" | "stop", "params": {...}, "explain": bool,
"wait_history": bool, "since": <client start, time.time()>}` → `{"result": ..., "explanation": ...}` or
`{"error": {"kind", "message", "field", "problem", "fix"}}`. Params go through the same
parsers as LSP, MCP and the in-process CLI; results are the same wire structures.

Only this user can connect: the socket lives in a 0700 directory (`address.py`), and each
connection's peer uid is checked (SO_PEERCRED) where the platform tells it. The daemon
exits after `idle_timeout` seconds without a request, when its workspace is gone, or on
`stop`; every request gets an answer, and a bad one never stops the daemon.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

from ctx_lsp.daemon.address import owned_socket, read_line, socket_path
from ctx_lsp.engine import CLI_INDEX_WAIT_S, REQUEST_INDEX_WAIT_S, Engine
from ctx_lsp.errors import CtxError, InvalidParam
from ctx_lsp.index.symbols import render_markdown
from ctx_lsp.params import parse_bundle, parse_symbol
from ctx_lsp.wire import to_wire

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""As for the language server's frames: a conversation can be big, not unbounded."""
DEFAULT_IDLE_TIMEOUT_S = 1800
"""Half an hour without a call: the agent's session is over; give the memory back."""
ACCEPT_POLL_S = 1.0
"""How often the accept loop looks at the clock, the workspace and the stop flag."""
READ_TIMEOUT_S = 30.0
WATCH_POLL_S = 0.05
"""A client that connects and sends nothing is dropped after this long."""


class Daemon:
    """A warm engine for one workspace behind a Unix socket."""

    def __init__(self, workspace: Path, idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S) -> None:
        self.workspace = workspace.resolve()
        self.idle_timeout = idle_timeout
        self.engine = Engine([self.workspace])
        self.engine.index_wait_s = REQUEST_INDEX_WAIT_S
        self._watching = threading.Event()
        """Set once the first index is done and the watcher follows the disk."""
        self.started = time.time()
        self.requests = 0
        self.last_request = self.started
        self._stop = False
        self._inode = 0

    def run(self) -> int:
        path = socket_path(self.workspace, create_dir=True)
        if path is None:  # pragma: no cover - create_dir makes it or raises
            raise CtxError("no runtime directory for the daemon's socket")
        listener = self._bind(path)
        try:
            # Indexing runs beside the accept loop: a monorepo's first index takes minutes,
            # and calls meanwhile are answered from what is indexed so far.
            threading.Thread(target=self._prepare, name="ctx-lsp-index", daemon=True).start()
            log.info("ctx-lsp daemon for %s listening on %s", self.workspace, path)
            listener.listen(16)
            listener.settimeout(ACCEPT_POLL_S)
            while not self._stop:
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    if self._should_exit():
                        break
                    continue
                with conn:
                    self._serve(conn)
        finally:
            listener.close()
            with contextlib.suppress(OSError):
                if owned_socket(path) and os.stat(path).st_ino == self._inode:
                    path.unlink()
            self.engine.close()
        return 0

    def _prepare(self) -> None:
        try:
            self.engine.index()
            self.engine.warm_up()
        except Exception:
            log.exception("indexing failed")
        watcher = self.engine.start_watching()
        # Changes made while the first index ran are seen by the watcher's start-up
        # reconcile only: calls made before it must not miss them.
        deadline = time.monotonic() + CLI_INDEX_WAIT_S
        while watcher.reconciles == 0 and watcher.state in ("starting", "watching") and time.monotonic() < deadline:
            time.sleep(WATCH_POLL_S)
        self._watching.set()

    def _bind(self, path: Path) -> socket.socket:
        """Bind the socket, replacing a stale one (its daemon died) but never a live one."""
        if owned_socket(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.settimeout(2.0)
                probe.connect(str(path))
                raise CtxError(f"a daemon is already serving {self.workspace} on {path}")
            except (ConnectionRefusedError, FileNotFoundError):
                path.unlink(missing_ok=True)
            finally:
                probe.close()
        elif path.exists() or path.is_symlink():
            raise CtxError(f"{path} exists and is not this user's socket: remove it")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)  # the socket itself is 0600
        try:
            listener.bind(str(path))
        finally:
            os.umask(old_umask)
        self._inode = os.stat(path).st_ino
        return listener

    def _should_exit(self) -> bool:
        if time.time() - self.last_request > self.idle_timeout:
            log.info("idle for %.0f s: exiting", self.idle_timeout)
            return True
        if not self.workspace.is_dir():
            log.info("%s is gone: exiting", self.workspace)
            return True
        return False

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(READ_TIMEOUT_S)
        if not _same_user(conn):
            _send(conn, {"error": {"kind": "refused", "message": "the daemon answers only its own user"}})
            return
        try:
            request = _read_request(conn)
        except (OSError, ValueError) as err:
            with contextlib.suppress(OSError):
                _send(conn, {"error": {"kind": "protocol", "message": f"bad request: {err}"}})
            return
        self.requests += 1
        self.last_request = time.time()
        with contextlib.suppress(OSError):  # the client may have given up: keep serving others
            _send(conn, self.answer(request))

    def answer(self, request: Any) -> dict[str, Any]:
        """One request's answer; never raises."""
        try:
            if not isinstance(request, dict):
                raise InvalidParam("request", "is not a JSON object", "send {'method': ..., 'params': {...}}")
            method, params = request.get("method"), request.get("params", {})
            since = request.get("since")
            if method in ("bundle", "symbol") and isinstance(since, (int, float)):
                # The watcher starts once the first index is done: until then a change made
                # before the call may not be seen. Wait for it as a CLI call waits for its
                # own index (a monorepo's first one answers partially after that).
                self._watching.wait(CLI_INDEX_WAIT_S)
                if self.engine.watcher is not None:
                    self.engine.watcher.settle(float(since))
            if method == "bundle":
                if request.get("wait_history"):
                    self.engine.wait_for_history()
                result = self.engine.bundle(parse_bundle(params))
                explanation = to_wire(self.engine.explain()) if request.get("explain") else None
                return {"result": to_wire(result), "explanation": explanation}
            if method == "symbol":
                found = self.engine.symbol(parse_symbol(params))
                return {"result": to_wire(found), "markdown": render_markdown(found, with_note=False)}
            if method == "status":
                report = to_wire(self.engine.status())
                report["daemon"] = {"pid": os.getpid(), "since": self.started, "requests": self.requests}
                return {"result": report}
            if method == "stop":
                self._stop = True
                return {"result": {"stopped": True, "pid": os.getpid()}}
            raise InvalidParam("method", f"{method!r} is not a daemon method", "use bundle, symbol, status or stop")
        except InvalidParam as err:
            return {
                "error": {
                    "kind": "invalid_param",
                    "message": str(err),
                    "field": err.field,
                    "problem": err.problem,
                    "fix": err.fix,
                }
            }
        except CtxError as err:
            return {"error": {"kind": "ctx", "message": str(err)}}
        except Exception as err:  # a bug must not stop the daemon: the client falls back
            log.exception("daemon request failed")
            return {"error": {"kind": "internal", "message": f"{type(err).__name__}: {err}"}}


def _same_user(conn: socket.socket) -> bool:
    """SO_PEERCRED where there is one (Linux); elsewhere the 0700 directory is the guard."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:  # pragma: no cover - not Linux
        return True
    raw = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return bool(uid == os.getuid())


def _read_request(conn: socket.socket) -> Any:
    return json.loads(read_line(conn, MAX_REQUEST_BYTES))


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
