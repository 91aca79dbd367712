"""End to end, requests that only read: status, outline, search, bundle, and refusals.

None of these tests opens a document, writes into the workspace or reindexes, so the module
shares one `python -m ctx_lsp serve` per editor (VS Code and Neovim capabilities) instead
of starting one per test. A test that changes the server's state belongs in
`test_state_changes.py`, which gives each test its own server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from ctx_lsp.cli import main as cli_main
from ctx_lsp.cli import option_for
from ctx_lsp.errors import InvalidParam
from ctx_lsp.params import parse_bundle
from tests.conftest import SAMPLE_FILES
from tests.e2e.helpers import (
    EDITORS,
    SERVER,
    call,
    plain,
    start_session,
    status,
    uri,
    wait_until_indexed,
    workspace_root,
    write_workspace,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module", params=EDITORS)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[None]:
    workspace = write_workspace(tmp_path_factory.mktemp("queries"))
    await start_session(lsp_client, workspace, request.param, {"index": {"ignore": ["notes.txt"]}})
    yield
    await lsp_client.shutdown_session()


async def test_initialize_progress_and_status(client: LanguageClient) -> None:
    """Ensure that indexing reports $/progress and status counts files, kinds and skips."""
    report = await wait_until_indexed(client)
    assert report["files_indexed"] == 4  # notes.txt ignored by initializationOptions
    assert report["files_by_language"] == {"markdown": 1, "python": 3}
    assert report["skipped"] == {"ignored": 1}
    assert report["tokenizer"] == "o200k_base"
    assert report["symbols"] >= 4 and report["tokens"] + report["tokens_estimated"] > 100  # counted when shown
    capabilities = client.capabilities
    assert capabilities is not None
    if capabilities.window and capabilities.window.work_done_progress:
        kinds = [
            [r.kind for r in reports]  # type: ignore[attr-defined]  # typed ProgressParams, holds WorkDoneProgress*
            for token, reports in client.progress_reports.items()
            if str(token).startswith("ctx-lsp-index")
        ]
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


async def test_outside_uri_is_refused(client: LanguageClient) -> None:
    """Ensure that a URI outside the workspace folders is refused with -32602, never read."""
    await wait_until_indexed(client)
    # Next to the workspace folder, not in it: the shared server's state stays as it was.
    secret = workspace_root(client).parent / "secret.py"
    secret.write_text("PASSWORD = 'hunter2'\n")
    for target in (secret.as_uri(), uri(client, "../secret.py"), "file:///etc/passwd"):
        with pytest.raises(JsonRpcInvalidParams, match="outside the workspace"):
            await call(client, "ctx/outline", {"uri": target})


BAD_OUTLINE_PARAMS: list[tuple[dict[str, Any], str]] = [
    ({"uri": "PLACEHOLDER", "tier": 5}, "tier"),
    ({"uri": "pkg/tokens.py"}, "uri"),
    ({"uri": "PLACEHOLDER", "tier": "2"}, "tier"),
    ({"tier": 1}, "uri"),
    ({"uri": 42}, "uri"),
    ({"uri": "http://example.com/a.py"}, "uri"),
    ({"uri": "PLACEHOLDER", "teir": 2}, "teir"),
]
BAD_BUNDLE_PARAMS: list[tuple[dict[str, Any], str]] = [
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
        for case, field in cases:
            params: dict[str, Any] = {k: (good_uri if v == "PLACEHOLDER" else v) for k, v in case.items()}
            if "focus" in params:
                params["focus"] = {**params["focus"], "uri": good_uri}
            with pytest.raises(JsonRpcInvalidParams, match=f"^{field}: ") as info:
                await call(client, method, params)
            assert "e.g." in str(info.value) or ";" in str(info.value), info.value
    with pytest.raises(JsonRpcInvalidParams, match=r"^params: expected a JSON object"):
        await call(client, "ctx/bundle", [1, 2])  # type: ignore[arg-type]
    assert (await status(client))["files_indexed"] == 4


REFUSED_BY_BOTH: list[tuple[str, list[str], dict[str, Any]]] = [
    ("budget-with-model", ["--budget", "8000", "--model", "gpt-4o"], {"budget": 8000, "model": "gpt-4o"}),
    ("utilization-without-model", ["--utilization", "low"], {"utilization": "low"}),
    (
        "unknown-utilization",
        ["--model", "gpt-4o", "--utilization", "extreme"],
        {"model": "gpt-4o", "utilization": "extreme"},
    ),
    ("budget-0", ["--budget", "0"], {"budget": 0}),
    # --focus is 1-based (PATH:LINE), focus.position.line 0-based: the same line, one apart.
    (
        "focus-line-out-of-range",
        ["--focus", "pkg/tokens.py:10000002"],
        {"focus": {"uri": "pkg/tokens.py", "position": {"line": 10_000_001}}},
    ),
    ("empty-docs-library", ["--docs", ":custom requests"], {"docs": [{"library": "", "topic": "custom requests"}]}),
    ("empty-model", ["--model", ""], {"model": ""}),
    ("blank-agent", ["--agent", " "], {"agent": " "}),
]
"""Bad bundles the CLI can express (its options → the same params dict → `parse_bundle`),
each with the ctx/bundle params an editor would send for it."""


@pytest.mark.parametrize(
    ("argv", "params"), [case[1:] for case in REFUSED_BY_BOTH], ids=[case[0] for case in REFUSED_BY_BOTH]
)
async def test_lsp_and_cli_refuse_a_bad_bundle_alike(
    client: LanguageClient, argv: list[str], params: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ensure that a bad ctx/bundle is refused over LSP and by the CLI by the same rule, with the same message."""
    await wait_until_indexed(client)
    if "focus" in params:
        params = {**params, "focus": {**params["focus"], "uri": uri(client, params["focus"]["uri"])}}
    with pytest.raises(InvalidParam) as parsed:
        parse_bundle(params)
    rule = parsed.value
    with pytest.raises(JsonRpcInvalidParams) as over_lsp:
        await call(client, "ctx/bundle", params)
    assert over_lsp.value.message == str(rule)
    assert plain(over_lsp.value.data)["field"] == rule.field
    capsys.readouterr()  # drop the server's stderr, which pytest-lsp relays into this process
    # An empty folder as the CLI's workspace: a case that slipped through would fail on the
    # exit code without indexing (and writing a cache into) the folder the server watches.
    assert cli_main(["bundle", "--workspace", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ctx-lsp: error: {option_for(rule.field)}"), err
    assert f": {rule.problem}; {rule.fix}\n" in err, err


async def test_tier_out_of_range_is_refused_by_both(
    client: LanguageClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ensure that tier 4 is refused over LSP by parse_bundle's rule and by the CLI, which stops it at
    argparse's choices first (so there the message is argparse's, naming --tier)."""
    await wait_until_indexed(client)
    with pytest.raises(InvalidParam) as parsed:
        parse_bundle({"tier": 4})
    with pytest.raises(JsonRpcInvalidParams) as over_lsp:
        await call(client, "ctx/bundle", {"tier": 4})
    assert over_lsp.value.message == str(parsed.value)
    capsys.readouterr()  # drop the server's stderr, which pytest-lsp relays into this process
    with pytest.raises(SystemExit) as exited:
        cli_main(["bundle", "--workspace", str(tmp_path), "--tier", "4"])
    assert exited.value.code == 2
    assert "--tier" in capsys.readouterr().err


async def test_bundle_and_search(client: LanguageClient) -> None:
    """Ensure that ctx/bundle answers with the contract's shape under its budget."""
    await wait_until_indexed(client)
    result = await call(client, "ctx/bundle", {"query": "assemble bundle budget", "budget": 600})
    assert result["total_tokens"] <= 600 and result["budget"] == 600
    code = [sec for sec in result["sections"] if sec["contributor"] != "project_docs"]
    assert code[0]["path"] == "pkg/bundle.py"
    section = code[0]
    assert set(section) == {
        "id",
        "contributor",
        "path",
        "uri",
        "tier",
        "range",
        "tokens",
        "salience",
        "reason",
        "content",
    }
    assert section["reason"]
    assert "## pkg/bundle.py (lines" in result["text"]
    assert result["snapshot"]["tokenizer"] == "o200k_base"
    hits = (await call(client, "ctx/search", {"query": "count tokens", "limit": 3}))["hits"]
    assert hits[0]["path"] == "pkg/tokens.py" and len(hits) <= 3
