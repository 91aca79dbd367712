"""End to end over LSP: ctx/docs, ctx/resolveLibrary, ctx/window, ctx.prewarmDocs, and a
bundle with docs, messages and artifacts together.

These tests only read (the docs cache they fill is a cache: a hit returns what a miss
would), so the module shares one server per editor (VS Code and Neovim capabilities).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.helpers import EDITORS, SERVER, call, command, start_session, wait_until_indexed, write_workspace

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module", params=EDITORS)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[None]:
    pyproject = '[project]\nname = "sample"\ndependencies = ["pygls>=2"]\n'
    workspace = write_workspace(tmp_path_factory.mktemp("docs"), {"pyproject.toml": pyproject})
    await start_session(lsp_client, workspace, request.param)
    yield
    await lsp_client.shutdown_session()


def tool_conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"Step {i}: please look at module number {i} closely."})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": f'{{"n": {i}}}'},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"contents of module {i} " * 40})
        messages.append({"role": "assistant", "content": f"Module {i} reviewed."})
    return messages


async def test_docs_for_a_tester_are_capped_and_cached(client: LanguageClient) -> None:
    """Ensure that 'pygls: custom requests' as tester fits 2,500 tokens and hits the cache."""
    await wait_until_indexed(client)
    first = await call(client, "ctx/docs", {"library": "pygls", "topic": "custom requests", "agent": "tester"})
    assert first["library"] == "pygls" and first["cap"] == 2500 and 0 < first["tokens"] <= 2500
    assert "command" in first["content"] or "feature" in first["content"]
    second = await call(client, "ctx/docs", {"library": "pygls", "topic": "custom requests", "agent": "tester"})
    assert second["cache"] == "hit" and second["content"] == first["content"]
    lower = await call(client, "ctx/docs", {"library": "pygls", "topic": "custom requests", "max_tokens": 300})
    assert lower["cap"] == 300 and lower["tokens"] <= 300
    with pytest.raises(JsonRpcInvalidParams, match=r"^topic"):
        await call(client, "ctx/docs", {"library": "pygls"})
    matches = (await call(client, "ctx/resolveLibrary", {"name": "PyGLS"}))["matches"]
    assert matches[0]["library"].lower() == "pygls" and matches[0]["version"]
    warmed = await command(client, "ctx.prewarmDocs")
    assert "pygls" in [d.lower() for d in warmed["declared"]] and warmed["warmed"] >= 1
    status = await command(client, "ctx.status")
    assert status["cache"]["docs"]["hits"] >= 1


async def test_window_keeps_tool_pairs(client: LanguageClient) -> None:
    """Ensure that ctx/window drops whole turns and never splits a tool call from its result."""
    await wait_until_indexed(client)
    messages = tool_conversation(50)  # 201 messages
    result = await call(client, "ctx/window", {"messages": messages, "budget": 3000})
    kept = result["messages"]
    assert kept[0]["role"] == "system" and result["dropped"] and result["should_summarize"]
    call_ids = {c["id"] for m in kept if m.get("tool_calls") for c in m["tool_calls"]}
    result_ids = {m["tool_call_id"] for m in kept if m["role"] == "tool"}
    assert call_ids == result_ids
    assert result["metadata"]["input_tokens_used"] <= 3000
    assert result["summary_fallback"]
    with pytest.raises(JsonRpcInvalidParams, match=r"^messages\[1\]"):
        await call(
            client, "ctx/window", {"messages": [{"role": "system", "content": "x"}, {"role": "robot"}], "budget": 100}
        )


async def test_bundle_with_docs_messages_and_artifacts(client: LanguageClient) -> None:
    """Ensure that one bundle carries docs, windowed messages and artifacts within its budget."""
    await wait_until_indexed(client)
    spec = "The bundle must never exceed its budget. " * 30 + "\n\nSecond paragraph of the spec. " * 10
    result = await call(
        client,
        "ctx/bundle",
        {
            "query": "assemble bundle budget",
            "budget": 8000,
            "agent": "implementer",
            "messages": tool_conversation(10),
            "summary": "Earlier we set up the project.",
            "artifacts": [{"key": "spec", "content": spec}],
            "docs": [{"library": "pygls", "topic": "custom requests"}],
        },
    )
    contributors = {s["contributor"] for s in result["sections"]}
    assert {"artifacts", "library_docs", "retrieval"} <= contributors
    assert result["messages"] and result["messages"][0]["role"] == "system"
    assert any("[Summary of earlier conversation]" in (m.get("content") or "") for m in result["messages"])
    assert result["total_tokens"] <= 8000
    used = {c["contributor"]: c for c in result["snapshot"]["contributions"]}
    assert used["conversation_history"]["used"] > 0
