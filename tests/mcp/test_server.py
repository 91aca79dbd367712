"""Tests for ctx_lsp/mcp/server.py: every tool through the SDK's in-memory client.

The server is the real one over a real engine and workspace; only the transport is in
memory (`Client(server)`). `tests/e2e/test_mcp_stdio.py` runs `ctx-lsp mcp` itself.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the 'mcp' extra (in the test extra too)")

from mcp.client import Client
from mcp_types import CallToolResult, TextContent

from ctx_lsp.engine import Engine
from ctx_lsp.errors import InvalidParam
from ctx_lsp.mcp.arguments import MCP_OUTPUT_CAP_TOKENS, WINDOW_CAP_TOKENS
from ctx_lsp.mcp.server import DESCRIPTIONS, INSTRUCTIONS, create_server, prepare
from ctx_lsp.params import parse_bundle, parse_symbol
from tests.conftest import SAMPLE_FILES, write_tree

TOOLS = [
    "get_context_bundle",
    "get_symbol",
    "search_code",
    "get_library_docs",
    "window_conversation",
    "workspace_status",
]
CLAUDE_CODE_DESCRIPTION_LIMIT = 2048
"""Claude Code cuts tool descriptions and server instructions longer than this."""

CLIENT_PY = textwrap.dedent(
    '''\
    """HTTP client."""


    class Client:
        def send(self, data: bytes) -> int:
            """Send bytes and return how many were sent."""
            return len(data)


    def send(data: bytes) -> int:
        return Client().send(data)
    '''
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = write_tree(tmp_path_factory.mktemp("mcp") / "ws", {**SAMPLE_FILES, "pkg/client.py": CLIENT_PY})
    engine = Engine([root], {"index": {"watch": False}})
    prepare(engine)
    yield engine
    engine.close()


async def call(engine: Engine, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    async with Client(create_server(engine)) as client:
        return await client.call_tool(tool, arguments)


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def test_the_tools_and_what_they_tell_an_agent(engine: Engine) -> None:
    """Ensure that the six tools are listed with schemas, read-only hints, and descriptions
    (and server instructions) that fit Claude Code's limit and say when to call them."""
    async with Client(create_server(engine)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        instructions = client.instructions
    assert list(tools) == TOOLS
    assert instructions == INSTRUCTIONS and len(INSTRUCTIONS) < CLAUDE_CODE_DESCRIPTION_LIMIT
    assert "call get_context_bundle" in INSTRUCTIONS and "call get_symbol" in INSTRUCTIONS
    for name, tool in tools.items():
        assert tool.description == DESCRIPTIONS[name] and len(tool.description) < CLAUDE_CODE_DESCRIPTION_LIMIT
        assert tool.annotations is not None and tool.annotations.read_only_hint
        assert tool.input_schema["additionalProperties"] is False
    assert DESCRIPTIONS["get_context_bundle"].startswith("Call this first")
    assert "get_symbol" in DESCRIPTIONS["get_context_bundle"]
    assert "use it when" in DESCRIPTIONS["get_symbol"]
    assert tools["get_symbol"].input_schema["required"] == ["name"]
    assert tools["get_symbol"].input_schema["properties"]["max_tokens"]["type"] == "integer"
    assert tools["get_context_bundle"].input_schema["properties"]["open"]["items"] == {"type": "string"}


async def test_get_context_bundle_stays_within_the_budget(engine: Engine) -> None:
    """Ensure that a bundle for a task, with a workspace-relative open file and a path:line
    focus, answers text within the budget and a summary of its sections."""
    result = await call(
        engine,
        "get_context_bundle",
        {"query": "assemble bundle budget", "budget": 900, "open": ["pkg/tokens.py"], "focus": "pkg/bundle.py:11"},
    )
    assert not result.is_error
    text = text_of(result)
    assert engine.counter.count(text) <= 900
    assert "def assemble_bundle(sections: list[str], budget: int) -> list[str]:" in text
    assert "get_symbol(name)" in text.rsplit("---", 1)[1]
    summary = result.structured_content
    assert summary is not None and summary["total_tokens"] <= summary["budget"] < 900
    paths = {s["path"]: s["contributor"] for s in summary["sections"]}
    assert paths["pkg/bundle.py"] == paths["pkg/tokens.py"] == "working_files"


async def test_get_context_bundle_caps_a_models_window(engine: Engine) -> None:
    """Ensure that a budget from a model's context window is capped for MCP output, and says so."""
    result = await call(engine, "get_context_bundle", {"query": "count tokens", "model": "gpt-4o"})
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["budget"] < MCP_OUTPUT_CAP_TOKENS
    assert any("capped at 20000 tokens" in w for w in result.structured_content["warnings"])


async def test_get_context_bundle_refuses_bad_arguments_with_the_parsers_message(engine: Engine) -> None:
    """Ensure that bad arguments are is_error results with exactly the parser's message."""
    for arguments in ({"budget": "8k"}, {"tier": 5}, {"budget": 100, "model": "gpt-4o"}, {"open": "pkg/tokens.py"}):
        with pytest.raises(InvalidParam) as parsed:
            parse_bundle(arguments)
        result = await call(engine, "get_context_bundle", arguments)
        assert result.is_error and text_of(result) == str(parsed.value)
    focus = await call(engine, "get_context_bundle", {"focus": "pkg/bundle.py"})
    assert focus.is_error and text_of(focus).startswith("focus: 'pkg/bundle.py' is not PATH:LINE;")
    unknown = await call(engine, "get_context_bundle", {"query": "x", "bugdet": 800})
    assert unknown.is_error and text_of(unknown) == "bugdet: unknown parameter; did you mean 'budget'?"


async def test_get_symbol_shows_the_source_and_lists_namesakes(engine: Engine) -> None:
    """Ensure that get_symbol answers code in a fence, and a bare name lists every match."""
    one = await call(engine, "get_symbol", {"name": "Client.send"})
    assert not one.is_error
    body = "\n".join(CLIENT_PY.split("\n")[4:7])
    assert text_of(one) == f"## Client.send — pkg/client.py:5-7 (method)\n\n```python\n{body}\n```\n"
    assert one.structured_content is not None
    assert one.structured_content["matches"][0] | {"tokens": 0} == {
        "path": "pkg/client.py",
        "qualname": "Client.send",
        "kind": "method",
        "start_line": 5,
        "end_line": 7,
        "signature": "def send(self, data: bytes) -> int",
        "has_body": True,
        "tokens": 0,
        "truncated": False,
    }
    both = await call(engine, "get_symbol", {"name": "send", "include_body": False})
    assert both.structured_content is not None and both.structured_content["ambiguous"]
    assert [m["qualname"] for m in both.structured_content["matches"]] == ["send", "Client.send"]
    assert "> 2 definitions answer to 'send'" in text_of(both)
    picked = await call(engine, "get_symbol", {"name": "count", "path": "pkg/tokens.py", "max_tokens": 100})
    assert "return math.ceil(len(text) / 4)" in text_of(picked)


async def test_get_symbol_refuses_bad_arguments(engine: Engine) -> None:
    """Ensure that a bad or unknown argument, and a path outside the workspace, are is_error
    results naming the field and the fix, and the server answers on."""
    for arguments in ({}, {"name": " "}, {"name": "x", "max_tokens": 99_999}, {"name": "x", "include_body": "no"}):
        with pytest.raises(InvalidParam) as parsed:
            parse_symbol(arguments)
        result = await call(engine, "get_symbol", arguments)
        assert result.is_error and text_of(result) == str(parsed.value)
    unknown = await call(engine, "get_symbol", {"nmae": "send"})
    assert unknown.is_error and text_of(unknown) == "nmae: unknown parameter; did you mean 'name'?"
    outside = await call(engine, "get_symbol", {"name": "send", "path": "../../etc"})
    assert outside.is_error and "outside the workspace" in text_of(outside)
    missing = await call(engine, "get_symbol", {"name": "Nothing.here"})
    assert not missing.is_error and "no definition named 'Nothing.here'" in text_of(missing)


async def test_search_code_lists_hits_one_per_line(engine: Engine) -> None:
    """Ensure that search_code answers path:lines, kind and qualname per hit, best first."""
    result = await call(engine, "search_code", {"query": "count tokens", "limit": 3})
    assert not result.is_error and result.structured_content is not None
    hits = result.structured_content["hits"]
    assert len(hits) == 3 and hits[0]["symbol"] == "count_tokens"
    assert text_of(result).startswith("pkg/tokens.py:20-22  function  count_tokens  score ")
    empty = await call(engine, "search_code", {"query": "  "})
    assert empty.is_error and text_of(empty).startswith("query: is empty;")


async def test_get_library_docs_answers_an_installed_librarys_topic(engine: Engine) -> None:
    """Ensure that docs of an installed dependency (pygls) on a topic come back capped, and
    an unknown library is an is_error result that says what to do."""
    result = await call(engine, "get_library_docs", {"library": "pygls", "topic": "language server", "max_tokens": 600})
    assert not result.is_error and result.structured_content is not None
    summary = result.structured_content
    assert summary["library"] == "pygls" and summary["matched"] and 0 < summary["tokens"] <= 600
    assert engine.counter.count(text_of(result)) <= 600 + 40
    unknown = await call(engine, "get_library_docs", {"library": "no-such-library-here", "topic": "x"})
    assert unknown.is_error and "no-such-library-here" in text_of(unknown)
    bad = await call(engine, "get_library_docs", {"library": "pygls", "max_tokens": "lots"})
    assert bad.is_error and text_of(bad).startswith("max_tokens: expected an integer")


def conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"question {i}: " + "why " * 40})
        messages.append({"role": "assistant", "content": f"answer {i}: " + "because " * 40})
    return messages


async def test_window_conversation_keeps_the_newest_turns(engine: Engine) -> None:
    """Ensure that a long conversation comes back windowed as JSON, the dropped ones counted."""
    messages = conversation(12)
    result = await call(engine, "window_conversation", {"messages": messages, "budget": 600})
    assert not result.is_error and result.structured_content is not None
    window = json.loads(text_of(result))
    assert window == result.structured_content
    assert window["messages"][0] == messages[0] and window["messages"][-1] == messages[-1]
    assert window["dropped"] == len(messages) - len(window["messages"]) > 0
    assert window["metadata"]["input_tokens_used"] <= 600 and window["should_summarize"]
    capped = await call(engine, "window_conversation", {"messages": messages[:3], "model": "gpt-4o"})
    assert capped.structured_content is not None
    assert capped.structured_content["metadata"]["max_input_tokens"] == WINDOW_CAP_TOKENS
    assert any("capped at 15000" in n for n in capped.structured_content["notes"])
    bad = await call(engine, "window_conversation", {"messages": "hello"})
    assert bad.is_error and text_of(bad).startswith("messages")


async def test_workspace_status_reports_the_index(engine: Engine) -> None:
    """Ensure that workspace_status says what is indexed, in text and structured."""
    result = await call(engine, "workspace_status", {})
    assert not result.is_error and result.structured_content is not None
    status = result.structured_content
    assert status["files_indexed"] == 6 and status["files_by_language"] == {"markdown": 1, "python": 4, "text": 1}
    assert not status["indexing"] and "files indexed: 6 (markdown 1, python 4, text 1)" in text_of(result)
