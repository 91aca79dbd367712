"""A raw-bytes LSP client for protocol fault tests: pytest-lsp's client can only send
well-formed frames, and these tests send broken ones (bad headers, bodies that are not
JSON, batches, absurd lengths) to a real `python -m ctx_lsp serve` subprocess.

A reader thread splits the server's stdout into frames (the server's own framing is
trusted here: a malformed frame from it fails the test) and queues the messages. Requests
the server sends (e.g. `window/workDoneProgress/create`) are answered with `null`.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

SERVE = [sys.executable, "-m", "ctx_lsp", "serve"]
ANSWER_S = 10.0
"""Every wait is bounded: a hang fails the test instead of stalling the suite."""


def frame(body: bytes | str | Any, *, length: int | str | None = None, header: str = "Content-Length") -> bytes:
    """One frame. `body` is sent as is if bytes/str, else as JSON; `length` overrides the
    header's value (to lie about it)."""
    if isinstance(body, str):
        data = body.encode("utf-8")
    elif isinstance(body, bytes):
        data = body
    else:
        data = json.dumps(body).encode("utf-8")
    value = len(data) if length is None else length
    return f"{header}: {value}\r\n\r\n".encode("ascii") + data


def request(msg_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def read_message(stream: BinaryIO) -> Any:
    """The next message the server wrote to `stream` (None at its end). The server's framing
    is trusted: anything malformed raises."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise ValueError("a frame without Content-Length")
    return json.loads(stream.read(length))


class RawServer:
    """One `ctx-lsp serve` subprocess spoken to in raw bytes."""

    def __init__(self, workspace: Path | None = None, *, args: list[str] | None = None, cwd: Path | None = None):
        self.workspace = workspace
        self.stderr_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"ctx-lsp-raw-{os.getpid()}-{id(self)}.log"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [*SERVE, *(args or [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd or workspace,
        )
        self.messages: queue.Queue[Any] = queue.Queue()
        self.answered: collections.Counter[Any] = collections.Counter()
        """How many responses each id got (all of them, batch members too)."""
        self._next_id = 1000
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ sending
    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise AssertionError(f"the server is gone (exit code {self.proc.poll()})\n{self.stderr_tail()}") from None

    def send(self, message: Any) -> None:
        self.send_bytes(frame(message))

    def request(self, method: str, params: Any = None, msg_id: int | str | None = None) -> int | str:
        if msg_id is None:
            self._next_id += 1
            msg_id = self._next_id
        self.send(request(msg_id, method, params))
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        self.send(notification(method, params))

    def call(self, method: str, params: Any = None, timeout: float = ANSWER_S) -> dict[str, Any]:
        """Send a request and wait for its response (the whole response message)."""
        return self.response(self.request(method, params), timeout)

    def initialize(self, **params: Any) -> dict[str, Any]:
        base: dict[str, Any] = {"processId": None, "capabilities": {}}
        if self.workspace is not None:
            base["workspaceFolders"] = [{"uri": self.workspace.as_uri(), "name": "ws"}]
        result = self.call("initialize", {**base, **params})
        assert "result" in result, result
        self.notify("initialized", {})
        return result

    # ------------------------------------------------------------------ receiving
    def next_message(self, timeout: float = ANSWER_S) -> Any:
        """The next message from the server that is not a request to the client."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no message from the server within {timeout}s\n{self.stderr_tail()}")
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if isinstance(message, BaseException):
                raise AssertionError(f"the server's output is not well framed: {message}\n{self.stderr_tail()}")
            return message

    def responses(self, timeout: float = ANSWER_S) -> Iterator[Any]:
        """Responses (objects with an id and no method, or batch arrays) as they come."""
        while True:
            message = self.next_message(timeout)
            if isinstance(message, list) or "method" not in message:
                yield message

    def response(self, msg_id: int | str | None, timeout: float = ANSWER_S) -> dict[str, Any]:
        """The response to `msg_id` (None: an error response with id null); others are skipped."""
        for message in self.responses(timeout):
            if isinstance(message, dict) and message.get("id") == msg_id:
                return message
        raise AssertionError("unreachable")

    def batch_response(self, timeout: float = ANSWER_S) -> list[dict[str, Any]]:
        """The next response that is an array (the answer to a batch)."""
        for message in self.responses(timeout):
            if isinstance(message, list):
                return message
        raise AssertionError("unreachable")

    def error(self, msg_id: int | str | None, timeout: float = ANSWER_S) -> dict[str, Any]:
        message = self.response(msg_id, timeout)
        assert "error" in message, f"expected an error for id {msg_id!r}, got {message}"
        error: dict[str, Any] = message["error"]
        return error

    def quiet(self, seconds: float) -> list[Any]:
        """Messages that arrive within `seconds` (for checking that nothing does)."""
        got = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                got.append(self.messages.get(timeout=left))
            except queue.Empty:
                break
        return got

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while (message := read_message(self.proc.stdout)) is not None:
                if isinstance(message, dict) and "method" in message and "id" in message:
                    # A request to the client: answer it, never queue it.
                    with contextlib.suppress(OSError, ValueError, AssertionError):
                        self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                    continue
                for response in message if isinstance(message, list) else [message]:
                    if isinstance(response, dict) and "method" not in response:
                        self.answered[response.get("id")] += 1
                self.messages.put(message)
        except Exception as err:  # pragma: no cover - reported by next_message
            self.messages.put(err)

    # ------------------------------------------------------------------ ending
    def stderr_tail(self, chars: int = 4000) -> str:
        with contextlib.suppress(OSError):
            self._stderr.flush()
            return "server stderr (tail):\n" + self.stderr_path.read_text(errors="replace")[-chars:]
        return ""

    def wait_exit(self, timeout: float = ANSWER_S) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server did not exit within {timeout}s\n{self.stderr_tail()}") from None

    def close(self) -> None:
        """End the process if it is still there (after the test's own shutdown, if any)."""
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin:
                self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdout:
                self.proc.stdout.close()
        self._stderr.close()
        with contextlib.suppress(OSError):
            self.stderr_path.unlink()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
