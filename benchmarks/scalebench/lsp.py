"""A minimal synchronous LSP client over a subprocess's stdio, for timing.

No threads and no asyncio: `request()` writes one message and reads until its response,
so the measured time is the round trip a client sees (write, server work, JSON back and
parsed). Reads go through `select` with a deadline, so a hung server is a `Timeout`
naming the method, never a hung benchmark. Requests the server sends (progress tokens,
configuration) are answered with `null`; notifications are kept (the last few log
messages help explain a failure).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Any


class LspError(RuntimeError):
    """The server answered with a JSON-RPC error."""


class Timeout(RuntimeError):
    """No answer before the deadline."""


class ServerExited(RuntimeError):
    """The server closed its stdout (crashed or exited)."""


class MemoryLimit(RuntimeError):
    """The server's resident memory passed `max_rss_mb`: it was killed (on a shared machine
    a server that grows without bound must not take the others' memory)."""


GUARD_SLICE_S = 1.0
"""How often a wait checks the server's memory."""


class LspClient:
    def __init__(
        self,
        cmd: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        stderr_path: Path | None = None,
        max_rss_mb: float | None = None,
    ):
        self.stderr_path = stderr_path
        self.max_rss_mb = max_rss_mb
        self._stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL  # noqa: SIM115
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._fd = self.proc.stdout.fileno()
        self._buf = bytearray()
        self._next_id = 0
        self.logs: deque[str] = deque(maxlen=20)
        self.notifications = 0
        self.stray: list[dict[str, Any]] = []
        """Responses to pipelined requests that arrived while `request` waited for its own."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    # ------------------------------------------------------------------ wire
    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        try:
            self._in.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._in.flush()
        except BrokenPipeError as err:
            raise ServerExited(f"server exited (rc={self.proc.poll()}) {self.stderr_tail()}") from err

    def _fill(self, deadline: float, what: str) -> None:
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise Timeout(f"no answer to {what} within the time limit")
            ready, _, _ = select.select([self._fd], [], [], min(remaining, GUARD_SLICE_S))
            if ready:
                break
            self._check_memory(what)
        chunk = os.read(self._fd, 1 << 20)
        if not chunk:
            raise ServerExited(f"server exited (rc={self.proc.poll()}) while waiting for {what}. {self.stderr_tail()}")
        self._buf += chunk

    def _take(self) -> dict[str, Any] | None:
        """One whole message from the buffer, or None if it holds no whole message yet."""
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        length = 0
        for line in bytes(self._buf[:end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        start = end + 4
        if len(self._buf) < start + length:
            return None
        body = bytes(self._buf[start : start + length])
        del self._buf[: start + length]
        message: dict[str, Any] = json.loads(body)
        return message

    def _receive(self, deadline: float, what: str) -> dict[str, Any]:
        while True:
            message = self._take()
            if message is not None:
                return message
            self._fill(deadline, what)

    def _handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A response is returned; a request from the server is answered with `null` and
        a notification counted (log messages kept): both return None."""
        if "method" not in message:
            return message
        if "id" in message:  # a request from the server: accept, say nothing
            self._send({"id": message["id"], "result": None})
        else:
            self.notifications += 1
            if message["method"] == "window/logMessage":
                self.logs.append(str(message.get("params", {}).get("message", ""))[:300])
        return None

    # ------------------------------------------------------------------ api
    def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        rid = self.send_request(method, params)
        deadline = time.perf_counter() + timeout
        while True:
            message = self._handle(self._receive(deadline, f"{method} (limit {timeout:.0f} s)"))
            if message is None:
                continue
            if message.get("id") == rid:
                if "error" in message:
                    raise LspError(f"{method}: {message['error'].get('message')}")
                return message.get("result")
            self.stray.append(message)

    def send_request(self, method: str, params: Any) -> int:
        """Send a request without waiting (several in flight); its id, for `poll`."""
        self._next_id += 1
        self._send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def poll(self, timeout: float) -> list[dict[str, Any]]:
        """The responses that arrive within `timeout` s (returns as soon as one has, with
        any others already read; [] at the deadline). Responses `request` read while
        waiting for its own come first."""
        deadline = time.perf_counter() + timeout
        out, self.stray = self.stray, []
        while True:
            while (message := self._take()) is not None:
                response = self._handle(message)
                if response is not None:
                    out.append(response)
            if out:
                return out
            try:
                self._fill(deadline, "poll")
            except Timeout:
                return out

    def timed(self, method: str, params: Any, timeout: float = 60.0) -> tuple[float, Any]:
        """(seconds, result) of one request, measured by the client."""
        started = time.perf_counter()
        result = self.request(method, params, timeout)
        return time.perf_counter() - started, result

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def initialize(self, root: Path, timeout: float = 60.0) -> Any:
        folder = {"uri": root.as_uri(), "name": root.name}
        result = self.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}, "workspaceFolders": [folder]},
            timeout,
        )
        self.notify("initialized", {})
        return result

    def _check_memory(self, what: str) -> None:
        if self.max_rss_mb is None:
            return
        rss_mb = self.proc_status().get("VmRSS", 0) / 1024
        if rss_mb > self.max_rss_mb:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, 9)
            raise MemoryLimit(
                f"server killed at {rss_mb:,.0f} MB resident (limit {self.max_rss_mb:,.0f} MB) while waiting for {what}"
            )

    def proc_status(self) -> dict[str, int]:
        """VmHWM / VmRSS of the server process, in kB (Linux)."""
        out: dict[str, int] = {}
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(value.split()[0])
        except OSError:
            pass
        return out

    def stderr_tail(self, lines: int = 8) -> str:
        if self.stderr_path is None:
            return ""
        try:
            self._stderr.flush()  # type: ignore[union-attr]
            text = self.stderr_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return ("stderr: " + " | ".join(text[-lines:])) if text else ""

    def close(self, timeout: float = 10.0) -> None:
        """shutdown + exit, then wait; kill the server's process group if it does not go."""
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout)
                self.notify("exit", None)
            except (Timeout, ServerExited, LspError, OSError):
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, 9)
                except OSError:
                    self.proc.kill()
                self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self.stderr_path is not None:
            self._stderr.close()  # type: ignore[union-attr]
