"""What every end-to-end module shares: the server command, the session start, and the
calls a test makes through the client.

The modules differ only in their fixture's scope: a module whose tests only read shares one
server per editor (`scope="module"`), a module whose tests change the server's state
(documents, files on disk, reindex, shutdown) starts one per test.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pytest_lsp import LanguageClient, client_capabilities

from tests.conftest import SAMPLE_FILES, write_tree

SERVER = [sys.executable, "-m", "ctx_lsp", "serve", "--log-level", "DEBUG"]
EDITORS = ["visual_studio_code", "neovim"]
"""pytest-lsp's recorded client capabilities: the two editors we pose as."""
WAIT_S = 10.0


def write_workspace(parent: Path, extra: Mapping[str, str] | None = None) -> Path:
    """The sample project (plus `extra` files) in `parent/ws`."""
    files: dict[str, str | bytes] = {**SAMPLE_FILES, **(extra or {})}
    return write_tree(parent / "ws", files)


async def start_session(
    client: LanguageClient, workspace: Path, editor: str, initialization_options: dict[str, Any] | None = None
) -> None:
    """Initialize as `editor` with one workspace folder, and remember the folder for `uri`."""
    client.workspace_root = workspace  # type: ignore[attr-defined]
    await client.initialize_session(
        t.InitializeParams(
            capabilities=client_capabilities(editor),
            workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=initialization_options,
        )
    )


def workspace_root(client: LanguageClient) -> Path:
    root: Path = client.workspace_root  # type: ignore[attr-defined]
    return root


def uri(client: LanguageClient, rel: str) -> str:
    return (workspace_root(client) / rel).as_uri()


def plain(o: Any) -> Any:
    """Custom-method results arrive as namedtuples on the client; make them dicts."""
    if hasattr(o, "_asdict"):
        return {k: plain(v) for k, v in o._asdict().items()}
    if isinstance(o, (list, tuple)):
        return [plain(v) for v in o]
    return o


async def call(client: LanguageClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = plain(await client.protocol.send_request_async(method, params))
    return result


async def command(client: LanguageClient, name: str) -> dict[str, Any]:
    """workspace/executeCommand: results arrive as plain dicts (only custom requests need `plain`)."""
    result: dict[str, Any] | None = await client.workspace_execute_command_async(t.ExecuteCommandParams(command=name))
    assert result is not None, f"{name} answered null"
    return result


async def status(client: LanguageClient) -> dict[str, Any]:
    return await command(client, "ctx.status")


async def wait_until_indexed(client: LanguageClient) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    report: dict[str, Any] = {}
    while time.monotonic() < deadline:
        report = await status(client)
        if not report["indexing"] and report["files_indexed"] and report["watcher"]["state"] == "watching":
            return report
        await asyncio.sleep(0.05)
    raise AssertionError(f"never finished indexing: {report}")
