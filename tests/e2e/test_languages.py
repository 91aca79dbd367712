"""End to end over LSP: a workspace of Python, TypeScript and Go (issue 21). One bundle
ranks them together, a query naming a TS identifier shows the TS code, `Type.member`
finds a Go method, status counts files and symbols per language, and an unsaved `.ts`
buffer reaches bundles."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.helpers import EDITORS, SERVER, call, start_session, status, uri, wait_until_indexed, write_workspace

pytestmark = pytest.mark.asyncio(loop_scope="module")

MIXED = {
    "web/src/validators.ts": (
        "/** Validates an email address. */\n"
        "export function validateEmail(input: string): boolean {\n"
        '  const at = input.lastIndexOf("@")\n'
        '  return at > 0 && input.slice(at + 1).includes(".")\n'
        "}\n"
    ),
    "web/src/index.ts": 'export * from "./validators"\n',
    "svc/stack/stack.go": (
        "package stack\n\n// Stack is a LIFO.\ntype Stack[T any] struct{ items []T }\n\n"
        "// Push adds v on top.\nfunc (s *Stack[T]) Push(v T) {\n\ts.items = append(s.items, v)\n}\n"
    ),
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module", params=EDITORS)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[None]:
    workspace = write_workspace(tmp_path_factory.mktemp("languages"), MIXED)
    await start_session(lsp_client, workspace, request.param)
    yield
    await lsp_client.shutdown_session()


async def test_status_counts_files_and_symbols_per_language(client: LanguageClient) -> None:
    """Ensure that ctx.status counts each language's files and symbols."""
    await wait_until_indexed(client)
    report = await status(client)
    assert report["files_by_language"]["typescript"] == 2 and report["files_by_language"]["go"] == 1
    assert report["files_by_language"]["python"] >= 1
    assert report["symbols_by_language"]["go"] == 2 and report["symbols_by_language"]["typescript"] == 1


async def test_a_query_naming_a_typescript_identifier_shows_its_code(client: LanguageClient) -> None:
    """Ensure that a bundle for a task naming `validateEmail` shows that function's body."""
    await wait_until_indexed(client)
    result = await call(client, "ctx/bundle", {"query": "validateEmail rejects addresses with a plus", "budget": 3000})
    assert any(s["path"] == "web/src/validators.ts" for s in result["sections"])
    assert 'input.lastIndexOf("@")' in result["text"]


async def test_a_go_method_is_found_by_its_receiver_type(client: LanguageClient) -> None:
    """Ensure that ctx/symbol answers `Stack.Push` with the Go method's body."""
    await wait_until_indexed(client)
    result = await call(client, "ctx/symbol", {"name": "Stack.Push"})
    [match] = result["matches"]
    assert match["qualname"] == "Stack.Push" and match["path"] == "svc/stack/stack.go"
    assert "s.items = append(s.items, v)" in match["body"]


async def test_an_unsaved_typescript_buffer_reaches_bundles(client: LanguageClient) -> None:
    """Ensure that a `.ts` buffer's unsaved definitions are what bundles show."""
    await wait_until_indexed(client)
    file_uri = uri(client, "web/src/validators.ts")
    text = "export function normalizeAddress(input: string): string {\n  return input.trim().toLowerCase()\n}\n"
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=file_uri, language_id="typescript", version=1, text=text)
        )
    )
    try:
        found = await call(client, "ctx/symbol", {"name": "normalizeAddress"})
        assert [m["qualname"] for m in found["matches"]] == ["normalizeAddress"]
        assert "input.trim().toLowerCase()" in found["matches"][0]["body"]
    finally:
        client.text_document_did_close(t.DidCloseTextDocumentParams(text_document=t.TextDocumentIdentifier(file_uri)))
