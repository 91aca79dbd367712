"""End to end, requests that change the server's state: didOpen/didChange, files written on
disk, ctx.reindex, shutdown.

Each test gets its own `python -m ctx_lsp serve` (per editor: VS Code and Neovim
capabilities) and its own workspace, so an open buffer, a new file or a finished session
cannot leak into another test. Tests that only read go in `test_queries.py`, which shares
one server per editor.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import SAMPLE_FILES
from tests.e2e.helpers import (
    EDITORS,
    SERVER,
    WAIT_S,
    call,
    command,
    start_session,
    status,
    uri,
    wait_until_indexed,
    workspace_root,
    write_workspace,
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=EDITORS)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest) -> AsyncIterator[None]:
    workspace = write_workspace(request.getfixturevalue("tmp_path"))
    await start_session(lsp_client, workspace, request.param, {"index": {"ignore": ["notes.txt"]}})
    yield
    await lsp_client.shutdown_session()


async def test_unsaved_change_is_reflected(client: LanguageClient) -> None:
    """Ensure that an incremental didChange (not saved) shows up in the next outline."""
    await wait_until_indexed(client)
    file_uri = uri(client, "pkg/bundle.py")
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(
                uri=file_uri, language_id="python", version=1, text=SAMPLE_FILES["pkg/bundle.py"]
            )
        )
    )
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=file_uri, version=2),
            content_changes=[
                t.TextDocumentContentChangePartial(
                    range=t.Range(start=t.Position(line=5, character=4), end=t.Position(line=5, character=19)),
                    text="assemble_unsaved",
                )
            ],
        )
    )
    outline = await call(client, "ctx/outline", {"uri": file_uri})
    assert "def assemble_unsaved(sections" in outline["content"]
    report = await status(client)
    assert report["open_documents"] == 1


async def test_file_written_on_disk_is_picked_up(client: LanguageClient) -> None:
    """Ensure that the watcher indexes a file created on disk, with no editor involved."""
    await wait_until_indexed(client)
    root = workspace_root(client)
    (root / "pkg" / "watched.py").write_text("def appeared_on_disk():\n    return 42\n")
    deadline = time.monotonic() + WAIT_S
    hits: list[Any] = []
    while time.monotonic() < deadline and not hits:
        hits = (await call(client, "ctx/search", {"query": "appeared_on_disk"}))["hits"]
        await asyncio.sleep(0.05)
    assert hits and hits[0]["path"] == "pkg/watched.py" and hits[0]["symbol"] == "appeared_on_disk"
    (root / "pkg" / "watched.py").unlink()
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and hits:
        hits = (await call(client, "ctx/search", {"query": "appeared_on_disk"}))["hits"]
        await asyncio.sleep(0.05)
    assert not hits


async def test_edited_working_file_ranks_first_and_explain(client: LanguageClient) -> None:
    """Ensure that a didChange'd buffer leads the bundle and ctx.explain says why."""
    await wait_until_indexed(client)
    file_uri = uri(client, "pkg/tokens.py")
    original = SAMPLE_FILES["pkg/tokens.py"]
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=file_uri, language_id="python", version=1, text=original)
        )
    )
    edited = original.replace("/ 4)", "/ 3)  # unsaved")
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=file_uri, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    result = await call(
        client, "ctx/bundle", {"query": "assemble bundle budget", "budget": 2000, "agent": "implementer"}
    )
    code = [sec for sec in result["sections"] if sec["contributor"] != "project_docs"]
    assert code[0]["path"] == "pkg/tokens.py" and code[0]["contributor"] == "working_files"
    assert "# unsaved" in code[0]["content"] and "unsaved edits" in code[0]["reason"]
    assert result["total_tokens"] <= 2000
    why = await command(client, "ctx.explain")
    rows = {row["id"]: row for row in why["candidates"]}
    assert rows["working_files:pkg/tokens.py"]["outcome"].startswith("in")
    assert all(row["reason"] and row["outcome"] for row in why["candidates"])


async def test_reindex_reparses_everything(client: LanguageClient) -> None:
    """Ensure that ctx.reindex re-parses every file (bypassing the cache) with progress."""
    await wait_until_indexed(client)
    report = await command(client, "ctx.reindex")
    assert report["last_index"]["parsed"] == 4 and report["last_index"]["reused"] == 0
    assert not report["indexing"] and report["files_indexed"] == 4


async def test_shutdown_and_exit_cleanly(client: LanguageClient) -> None:
    """Ensure that shutdown then exit ends the server process with return code 0."""
    await wait_until_indexed(client)
    await client.shutdown_session()
    assert client._server is not None and client._server.returncode == 0
    client.capabilities = None  # the fixture's own shutdown becomes a no-op
