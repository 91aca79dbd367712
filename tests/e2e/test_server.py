"""End to end: start `python -m ctx_lsp serve` and speak LSP to it with a real pygls client.

The client poses as two editors (capabilities from pytest-lsp's recorded VS Code and
Neovim clients), so progress and sync are exercised the way real editors drive them.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import SAMPLE_FILES, write_tree

SERVER = [sys.executable, "-m", "ctx_lsp", "serve", "--log-level", "DEBUG"]
WAIT_S = 10.0


def plain(o: Any) -> Any:
    """Custom-method results arrive as namedtuples on the client; make them dicts."""
    if hasattr(o, "_asdict"):
        return {k: plain(v) for k, v in o._asdict().items()}
    if isinstance(o, (list, tuple)):
        return [plain(v) for v in o]
    return o


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER),
    params=["visual_studio_code", "neovim"],
)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest):
    workspace = write_tree(request.getfixturevalue("tmp_path") / "ws", SAMPLE_FILES)
    lsp_client.workspace_root = workspace  # type: ignore[attr-defined]
    await lsp_client.initialize_session(
        t.InitializeParams(
            capabilities=client_capabilities(request.param),
            workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options={"index": {"ignore": ["notes.txt"]}},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def call(client: LanguageClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return plain(await client.protocol.send_request_async(method, params))


async def status(client: LanguageClient) -> dict[str, Any]:
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command="ctx.status"))


async def wait_until_indexed(client: LanguageClient) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        report = await status(client)
        if not report["indexing"] and report["files_indexed"] and report["watcher"]["state"] == "watching":
            return report
        await asyncio.sleep(0.05)
    raise AssertionError(f"never finished indexing: {report}")


def uri(client: LanguageClient, rel: str) -> str:
    return (client.workspace_root / rel).as_uri()  # type: ignore[attr-defined]


async def test_initialize_progress_and_status(client: LanguageClient) -> None:
    """Ensure that indexing reports $/progress and status counts files, kinds and skips."""
    report = await wait_until_indexed(client)
    assert report["files_indexed"] == 4  # notes.txt ignored by initializationOptions
    assert report["files_by_language"] == {"markdown": 1, "python": 3}
    assert report["skipped"] == {"ignored": 1}
    assert report["tokenizer"] == "o200k_base"
    assert report["symbols"] >= 4 and report["tokens"] > 100
    if client.capabilities.window and client.capabilities.window.work_done_progress:
        kinds = [[r.kind for r in reports] for token, reports in client.progress_reports.items()
                 if str(token).startswith("ctx-lsp-index")]
        assert kinds and kinds[0][0] == "begin" and kinds[0][-1] == "end"
    assert any("indexed 4 files" in m.message for m in client.log_messages)


async def test_outline_at_each_tier(client: LanguageClient) -> None:
    """Ensure that ctx/outline serves tier 1, 2 and 3 of a file with token counts."""
    await wait_until_indexed(client)
    file_uri = uri(client, "pkg/tokens.py")
    one = await call(client, "ctx/outline", {"uri": file_uri, "tier": 1})
    two = await call(client, "ctx/outline", {"uri": file_uri, "tier": 2})
    three = await call(client, "ctx/outline", {"uri": file_uri, "tier": 3})
    assert "def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int" in one["content"]
    assert "return math.ceil" not in one["content"]
    assert three["content"] == SAMPLE_FILES["pkg/tokens.py"]
    assert one["tokens"] < three["tokens"] and two["tier"] == 2
    assert [s["qualname"] for s in one["symbols"]] == ["TokenCounter", "TokenCounter.count", "count_tokens"]
    assert one["symbols"][2]["range"]["start_line"] == 20


async def test_unsaved_change_is_reflected(client: LanguageClient) -> None:
    """Ensure that an incremental didChange (not saved) shows up in the next outline."""
    await wait_until_indexed(client)
    file_uri = uri(client, "pkg/bundle.py")
    client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(
        uri=file_uri, language_id="python", version=1, text=SAMPLE_FILES["pkg/bundle.py"])))
    client.text_document_did_change(t.DidChangeTextDocumentParams(
        text_document=t.VersionedTextDocumentIdentifier(uri=file_uri, version=2),
        content_changes=[t.TextDocumentContentChangePartial(
            range=t.Range(start=t.Position(line=5, character=4), end=t.Position(line=5, character=19)),
            text="assemble_unsaved")],
    ))
    outline = await call(client, "ctx/outline", {"uri": file_uri})
    assert "def assemble_unsaved(sections" in outline["content"]
    report = await status(client)
    assert report["open_documents"] == 1


async def test_file_written_on_disk_is_picked_up(client: LanguageClient) -> None:
    """Ensure that the watcher indexes a file created on disk, with no editor involved."""
    await wait_until_indexed(client)
    root: Path = client.workspace_root  # type: ignore[attr-defined]
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


async def test_outside_uri_is_refused(client: LanguageClient, tmp_path: Path) -> None:
    """Ensure that a URI outside the workspace folders is refused with -32602, never read."""
    await wait_until_indexed(client)
    secret = tmp_path / "secret.py"
    secret.write_text("PASSWORD = 'hunter2'\n")
    for target in (secret.as_uri(), uri(client, "../secret.py"), "file:///etc/passwd"):
        with pytest.raises(JsonRpcInvalidParams, match="outside the workspace"):
            await call(client, "ctx/outline", {"uri": target})


BAD_OUTLINE_PARAMS = [
    ({"uri": "PLACEHOLDER", "tier": 5}, "tier"),
    ({"uri": "pkg/tokens.py"}, "uri"),
    ({"uri": "PLACEHOLDER", "tier": "2"}, "tier"),
    ({"tier": 1}, "uri"),
    ({"uri": 42}, "uri"),
    ({"uri": "http://example.com/a.py"}, "uri"),
    ({"uri": "PLACEHOLDER", "teir": 2}, "teir"),
]
BAD_BUNDLE_PARAMS = [
    ({"budget": "8k"}, "budget"),
    ({"budget": 0}, "budget"),
    ({"budget": True}, "budget"),
    ({"open": "file:///x.py"}, "open"),
    ({"focus": {"uri": "PLACEHOLDER", "position": {"line": -1}}}, "focus.position.line"),
    ({"format": "html"}, "format"),
    ({"bugdet": 100}, "bugdet"),
]


async def test_bad_params_name_the_field(client: LanguageClient) -> None:
    """Ensure that every bad parameter gets -32602 naming the field, and the server lives on."""
    await wait_until_indexed(client)
    good_uri = uri(client, "pkg/tokens.py")
    for method, cases in (("ctx/outline", BAD_OUTLINE_PARAMS), ("ctx/bundle", BAD_BUNDLE_PARAMS)):
        for params, field in cases:
            params = {k: (good_uri if v == "PLACEHOLDER" else v) for k, v in params.items()}
            if "focus" in params:
                params["focus"]["uri"] = good_uri
            with pytest.raises(JsonRpcInvalidParams, match=f"^{field}: ") as info:
                await call(client, method, params)
            assert "e.g." in str(info.value) or ";" in str(info.value), info.value
    with pytest.raises(JsonRpcInvalidParams, match="^params: expected a JSON object"):
        await call(client, "ctx/bundle", [1, 2])  # type: ignore[arg-type]
    assert (await status(client))["files_indexed"] == 4


async def test_bundle_and_search(client: LanguageClient) -> None:
    """Ensure that ctx/bundle answers with the contract's shape under its budget."""
    await wait_until_indexed(client)
    result = await call(client, "ctx/bundle", {"query": "assemble bundle budget", "budget": 600})
    assert result["total_tokens"] <= 600 and result["budget"] == 600
    code = [sec for sec in result["sections"] if sec["contributor"] != "project_docs"]
    assert code[0]["path"] == "pkg/bundle.py"
    section = code[0]
    assert set(section) == {"id", "contributor", "path", "uri", "tier", "range", "tokens", "salience",
                            "reason", "content"}
    assert section["reason"]
    assert "## pkg/bundle.py (lines" in result["text"]
    assert result["snapshot"]["tokenizer"] == "o200k_base"
    hits = (await call(client, "ctx/search", {"query": "count tokens", "limit": 3}))["hits"]
    assert hits[0]["path"] == "pkg/tokens.py" and len(hits) <= 3


async def test_edited_working_file_ranks_first_and_explain(client: LanguageClient) -> None:
    """Ensure that a didChange'd buffer leads the bundle and ctx.explain says why."""
    await wait_until_indexed(client)
    file_uri = uri(client, "pkg/tokens.py")
    original = SAMPLE_FILES["pkg/tokens.py"]
    client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(
        uri=file_uri, language_id="python", version=1, text=original)))
    edited = original.replace("/ 4)", "/ 3)  # unsaved")
    client.text_document_did_change(t.DidChangeTextDocumentParams(
        text_document=t.VersionedTextDocumentIdentifier(uri=file_uri, version=2),
        content_changes=[t.TextDocumentContentChangeWholeDocument(text=edited)]))
    result = await call(client, "ctx/bundle", {"query": "assemble bundle budget", "budget": 2000,
                                               "agent": "implementer"})
    code = [sec for sec in result["sections"] if sec["contributor"] != "project_docs"]
    assert code[0]["path"] == "pkg/tokens.py" and code[0]["contributor"] == "working_files"
    assert "# unsaved" in code[0]["content"] and "unsaved edits" in code[0]["reason"]
    assert result["total_tokens"] <= 2000
    why = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="ctx.explain"))
    rows = {row["id"]: row for row in why["candidates"]}
    assert rows["working_files:pkg/tokens.py"]["outcome"].startswith("in")
    assert all(row["reason"] and row["outcome"] for row in why["candidates"])


async def test_reindex_reparses_everything(client: LanguageClient) -> None:
    """Ensure that ctx.reindex re-parses every file (bypassing the cache) with progress."""
    await wait_until_indexed(client)
    report = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="ctx.reindex"))
    assert report["last_index"]["parsed"] == 4 and report["last_index"]["reused"] == 0
    assert not report["indexing"] and report["files_indexed"] == 4


async def test_shutdown_and_exit_cleanly(client: LanguageClient) -> None:
    """Ensure that shutdown then exit ends the server process with return code 0."""
    await wait_until_indexed(client)
    await client.shutdown_session()
    assert client._server is not None and client._server.returncode == 0  # noqa: SLF001
    client.capabilities = None  # the fixture's own shutdown becomes a no-op
