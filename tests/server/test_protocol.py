"""Tests for ctx_lsp/server/protocol.py, in process: what pygls kept forever is released,
and messages that do not fit their type are answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ctx_lsp.server.app import CtxServer, create_server


class Capture:
    """A writer that keeps what the server sends, as parsed messages."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> list[Any]:
        out, rest = [], self.data
        while rest:
            header, _, rest = rest.partition(b"\r\n\r\n")
            length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            out.append(json.loads(rest[:length]))
            rest = rest[length:]
        return out


def send(server: CtxServer, message: dict[str, Any]) -> None:
    server.protocol.receive(json.dumps(message).encode())


async def settle(server: CtxServer) -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)
    await server.buffers.settled()
    await asyncio.sleep(0.05)


async def test_finished_handlers_are_forgotten(sample_workspace: Path) -> None:
    """Ensure that the futures pygls tracks for notifications and for the handlers behind its
    built-ins (didOpen, didChange, executeCommand) are released once they finish: pygls
    kept one per message for the life of the process."""
    server = create_server()
    out = Capture()
    server.protocol.set_writer(out)
    uri = (sample_workspace / "pkg" / "bundle.py").as_uri()
    send(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "capabilities": {}, "rootUri": sample_workspace.as_uri()}})  # fmt: skip
    send(server, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}}})  # fmt: skip
    for version in range(2, 302):
        send(server, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": f"x = {version}\n"}]}})  # fmt: skip
        if version % 30 == 0:
            send(server, {"jsonrpc": "2.0", "id": version, "method": "workspace/executeCommand",
                          "params": {"command": "ctx.status"}})  # fmt: skip
    await settle(server)
    answered = [m["id"] for m in out.messages() if "id" in m and "method" not in m]
    assert answered == [1, *range(30, 302, 30)]
    assert server.protocol.pending_futures == 0
    server.stop()


async def test_a_request_that_does_not_fit_its_type_is_answered_naming_the_field() -> None:
    """Ensure that `workspace/executeCommand` without `command` gets -32602 naming it (pygls
    dropped it: the client waited forever), and a notification method sent with an id gets
    -32600."""
    server = create_server()
    out = Capture()
    server.protocol.set_writer(out)
    send(server, {"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand", "params": {"arguments": []}})
    send(server, {"jsonrpc": "2.0", "id": 2, "method": "initialized", "params": {}})
    await settle(server)
    first, second = out.messages()
    assert first["id"] == 1 and first["error"]["code"] == -32602
    assert first["error"]["message"].startswith("command: required field missing")
    assert first["error"]["data"] == {"field": "command"}
    assert second["id"] == 2 and second["error"]["code"] == -32600 and "notification" in second["error"]["message"]
