"""A minimal agent-side client for ctx-lsp over LSP: no libraries, just JSON-RPC on stdio.

It starts `ctx-lsp serve`, initializes with one workspace folder, asks `ctx/bundle` for a
task and `ctx/symbol` for one function the bundle may only outline, and prints both.

    python docs/examples/lsp_client.py /path/to/repo "why does send retry twice?" Client.send
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "ctx_lsp", "serve"]  # or ["ctx-lsp", "serve"]


class Connection:
    """LSP framing: a `Content-Length` header, a blank line, then the JSON body."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin, self.stdout = process.stdin, process.stdout
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def receive(self) -> dict[str, Any]:
        length = 0
        while (line := await self.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(await self.stdout.readexactly(length))
        return message

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = await self.receive()
            if "method" in message and "id" in message:  # the server asks us something: say nothing
                self.send({"id": message["id"], "result": None})
            elif message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']['message']}")
                return message["result"]
            # anything else is a notification (logs, progress): skip it

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})


async def main(workspace: Path, query: str, name: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *SERVER, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    rpc = Connection(process)
    folder = {"uri": workspace.as_uri(), "name": workspace.name}
    await rpc.request("initialize", {"processId": None, "capabilities": {}, "workspaceFolders": [folder]})
    rpc.notify("initialized", {})

    bundle = await rpc.request("ctx/bundle", {"query": query, "budget": 2000})
    print(bundle["text"])
    print(f"-- bundle: {len(bundle['sections'])} sections, {bundle['total_tokens']}/{bundle['budget']} tokens\n")

    symbol = await rpc.request("ctx/symbol", {"name": name, "max_tokens": 1500})
    for match in symbol["matches"]:
        lines = f"{match['range']['start_line']}-{match['range']['end_line']}"
        print(f"-- {match['qualname']} ({match['path']}:{lines})")
        print(match["body"] or match["signature"])
    if symbol["note"]:
        print(f"-- note: {symbol['note']}")

    await rpc.request("shutdown", None)
    rpc.notify("exit", None)
    await process.wait()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]).resolve(), sys.argv[2], sys.argv[3]))
