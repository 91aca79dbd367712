"""End to end, ctx/symbol: one symbol's code from a running `python -m ctx_lsp serve`.

The module shares one server per editor. Its one test that opens a buffer does so over a
file no other test asks about (`pkg/edited.py`), and closes it again.
"""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import SAMPLE_FILES
from tests.e2e.helpers import EDITORS, SERVER, call, start_session, uri, wait_until_indexed, write_workspace

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALT = textwrap.dedent(
    '''\
    def count_tokens(text: str) -> int:
        """A rough count, for comparison."""
        return len(text.split())
    '''
)
EDITED = "def edited_on_disk():\n    return 'disk'\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module", params=EDITORS)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[None]:
    workspace = write_workspace(tmp_path_factory.mktemp("symbol"), {"pkg/alt.py": ALT, "pkg/edited.py": EDITED})
    await start_session(lsp_client, workspace, request.param)
    yield
    await lsp_client.shutdown_session()


async def symbol(client: LanguageClient, params: dict[str, Any]) -> dict[str, Any]:
    await wait_until_indexed(client)
    return await call(client, "ctx/symbol", params)


async def test_a_qualname_answers_with_its_exact_source(client: LanguageClient) -> None:
    """Ensure that ctx/symbol returns the contract's fields and the definition's exact lines."""
    result = await symbol(client, {"name": "TokenCounter.count"})
    assert (result["name"], result["ambiguous"], result["total_matches"], result["note"]) == (
        "TokenCounter.count",
        False,
        1,
        None,
    )
    [match] = result["matches"]
    lines = SAMPLE_FILES["pkg/tokens.py"].split("\n")
    assert match == {
        "path": "pkg/tokens.py",
        "uri": uri(client, "pkg/tokens.py"),
        "qualname": "TokenCounter.count",
        "kind": "method",
        "range": {"start_line": 15, "end_line": 17},
        "signature": "def count(self, text: str) -> int",
        "body": "\n".join(lines[14:17]) + "\n",
        "tokens": match["tokens"],
        "truncated": False,
    }
    assert 0 < match["tokens"] < 60


async def test_a_bare_name_in_two_files_is_ambiguous_until_a_path_picks_one(client: LanguageClient) -> None:
    """Ensure that a name defined twice lists both (ambiguous), and `path` (relative or a
    file URI) narrows it to one."""
    both = await symbol(client, {"name": "count_tokens", "include_body": False})
    assert both["ambiguous"] and both["total_matches"] == 2
    assert sorted(m["path"] for m in both["matches"]) == ["pkg/alt.py", "pkg/tokens.py"]
    assert all(m["body"] is None for m in both["matches"]) and "pass its qualname" in both["note"]
    for path in ("pkg/alt.py", uri(client, "pkg/alt.py")):
        one = await symbol(client, {"name": "count_tokens", "path": path, "max_tokens": 200})
        assert [m["path"] for m in one["matches"]] == ["pkg/alt.py"] and one["matches"][0]["body"] == ALT


async def test_an_unknown_name_is_an_empty_answer_with_close_names(client: LanguageClient) -> None:
    """Ensure that no match is not an error: empty matches and a note of close names."""
    result = await symbol(client, {"name": "TokenCounter.cuont"})
    assert result["matches"] == [] and result["total_matches"] == 0
    assert "close names: TokenCounter.count" in result["note"]


async def test_bad_params_and_outside_paths_are_refused_naming_the_field(client: LanguageClient) -> None:
    """Ensure that bad fields get -32602 naming the field, a path outside the workspace is
    refused, a missing one fails naming `path`, and the server answers on."""
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "^name: is required"),
        ({"name": ""}, "^name: is empty"),
        ({"name": "x", "max_tokens": 10}, "^max_tokens: 10 is out of range"),
        ({"name": "x", "include_body": 1}, "^include_body: expected a boolean"),
        ({"name": "x", "paht": "a.py"}, "^paht: unknown parameter; did you mean 'path'"),
        ({"name": "x", "path": "../../etc/passwd"}, "outside the workspace"),
        ({"name": "x", "path": "file:///etc/passwd"}, "outside the workspace"),
    ]
    await wait_until_indexed(client)
    for params, message in cases:
        with pytest.raises(JsonRpcInvalidParams, match=message):
            await call(client, "ctx/symbol", params)
    with pytest.raises(JsonRpcException, match="path: nowhere.py is not an indexed file"):
        await call(client, "ctx/symbol", {"name": "x", "path": "nowhere.py"})
    assert (await symbol(client, {"name": "count_tokens", "path": "pkg/tokens.py"}))["total_matches"] == 1


async def test_an_unsaved_buffer_wins_over_the_disk(client: LanguageClient) -> None:
    """Ensure that a didOpen buffer's text is what ctx/symbol shows, until it is closed."""
    await wait_until_indexed(client)
    file_uri = uri(client, "pkg/edited.py")
    buffer = "# moved down by a comment\n\ndef edited_on_disk():\n    return 'buffer'\n"
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=file_uri, language_id="python", version=1, text=buffer)
        )
    )
    try:
        match = (await symbol(client, {"name": "edited_on_disk"}))["matches"][0]
        assert match["body"] == "def edited_on_disk():\n    return 'buffer'\n"
        assert match["range"] == {"start_line": 3, "end_line": 4}
    finally:
        client.text_document_did_close(t.DidCloseTextDocumentParams(text_document=t.TextDocumentIdentifier(file_uri)))
    match = (await symbol(client, {"name": "edited_on_disk"}))["matches"][0]
    assert match["body"] == EDITED
