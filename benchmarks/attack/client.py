"""A raw-stdio LSP client for the attack run: own Content-Length framing, every wait bounded.

All bytes the server writes to stdout are kept (`out`) so that a marker can be looked for in
every message it sent, notifications and logs included, not only in results.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ANSWER_S = 10.0


def frame(body: bytes | str | Any, *, length: int | str | None = None, header: str = "Content-Length") -> bytes:
    if isinstance(body, str):
        data = body.encode("utf-8")
    elif isinstance(body, bytes):
        data = body
    else:
        data = json.dumps(body).encode("utf-8")
    value = len(data) if length is None else length
    return f"{header}: {value}\r\n\r\n".encode("ascii") + data


def key(msg_id: Any) -> str:
    return json.dumps(msg_id, sort_keys=True)


class Server:
    """One `python -m ctx_lsp serve` subprocess, optionally under `unshare -n`."""

    def __init__(self, workspace: Path, *, home: Path, netns: bool, log: Path, args: list[str] | None = None):
        self.workspace = workspace
        cmd = [sys.executable, "-m", "ctx_lsp", "serve", *(args or [])]
        if netns:
            cmd = ["unshare", "-n", *cmd]
        env = dict(os.environ, HOME=str(home))
        env.pop("VIRTUAL_ENV", None)
        self.log_path = log
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=workspace, env=env
        )
        self.out = bytearray()
        self.cond = threading.Condition()
        self.responses: dict[str, Any] = {}
        self.null_errors: list[Any] = []
        self.batches: list[Any] = []
        self.answers = 0
        """Every response received (any id, id null, batches)."""
        self.framing_error: str | None = None
        self.eof = False
        self._next_id = 0
        self._writes: queue.Queue[tuple[bytes, threading.Event] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._write, daemon=True).start()

    # ---------------------------------------------------------------- plumbing
    def _write(self) -> None:
        assert self.proc.stdin is not None
        while (item := self._writes.get()) is not None:
            data, done = item
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass
            done.set()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while True:
                length = None
                head = bytearray()
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    head += line
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    raise ValueError(f"frame without Content-Length: {bytes(head)[:200]!r}")
                body = stream.read(length)
                with self.cond:
                    self.out += head + body
                message = json.loads(body)
                if isinstance(message, dict) and "method" in message and "id" in message:
                    self.send_bytes(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}), wait=False)
                    continue
                with self.cond:
                    members = message if isinstance(message, list) else [message]
                    if isinstance(message, list):
                        self.batches.append(message)
                    for m in members:
                        if isinstance(m, dict) and "method" not in m:
                            self.answers += 1
                            if m.get("id") is None:
                                self.null_errors.append(m)
                            else:
                                self.responses[key(m["id"])] = m
                    self.cond.notify_all()
        except Exception as err:
            self.framing_error = f"{type(err).__name__}: {err}"
        finally:
            with self.cond:
                self.eof = True
                self.cond.notify_all()

    def send_bytes(self, data: bytes, *, wait: bool = True, timeout: float = ANSWER_S) -> bool:
        """Queue bytes for stdin; True when written within `timeout` (a server that stops
        reading its stdin shows up here as False)."""
        done = threading.Event()
        self._writes.put((data, done))
        return done.wait(timeout) if wait else True

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        msg_id = self.new_id() if msg_id is None else msg_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_bytes(frame(message))
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send_bytes(frame(message))

    def wait(self, msg_id: Any, timeout: float = ANSWER_S) -> Any:
        deadline = time.monotonic() + timeout
        k = key(msg_id)
        with self.cond:
            while k not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or (self.eof and k not in self.responses):
                    return None
                self.cond.wait(min(left, 0.5))
            return self.responses.pop(k)

    def wait_nulls(self, count: int, timeout: float = ANSWER_S) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.null_errors) < count:
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    return False
                self.cond.wait(min(left, 0.5))
            return True

    def call(self, method: str, params: Any = None, timeout: float = ANSWER_S) -> Any:
        return self.wait(self.request(method, params), timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kb(self) -> int:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    # ---------------------------------------------------------------- lifecycle
    def initialize(self, options: dict[str, Any] | None = None) -> Any:
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": self.workspace.as_uri(),
            "workspaceFolders": [{"uri": self.workspace.as_uri(), "name": "ws"}],
            "capabilities": {},
        }
        if options is not None:
            params["initializationOptions"] = options
        result = self.call("initialize", params, timeout=30)
        self.notify("initialized", {})
        return result

    def status(self, timeout: float = ANSWER_S) -> Any:
        r = self.call("workspace/executeCommand", {"command": "ctx.status", "arguments": []}, timeout)
        return None if r is None else r.get("result")

    def wait_indexed(self, timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        report = None
        while time.monotonic() < deadline:
            report = self.status()
            if report and not report.get("indexing") and report.get("files_indexed"):
                watcher = (report.get("watcher") or {}).get("state")
                if watcher in ("watching", "polling", "off", "failed"):
                    return report
            time.sleep(0.2)
        return report

    def shutdown(self, timeout: float = ANSWER_S) -> tuple[bool, str]:
        """shutdown + exit; (True, note) when it answered and exited 0 in time."""
        if not self.alive():
            return False, f"already dead, code {self.proc.returncode}"
        r = self.call("shutdown", None, timeout)
        self.notify("exit")
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return False, f"shutdown answered={r is not None}, still alive {timeout}s after exit"
        self.close()
        return (r is not None and code == 0), f"shutdown answered={r is not None}, exit code {code}"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
        self.close()

    def close(self) -> None:
        self._writes.put(None)
        self._log.close()

    def stderr_tail(self, n: int = 600) -> str:
        try:
            return self.log_path.read_bytes()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""
