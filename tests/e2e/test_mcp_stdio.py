"""End to end, `ctx-lsp mcp`: the MCP server as an agent starts it, over stdio.

The SDK's own stdio client launches `python -m ctx_lsp mcp --workspace WS` (PATH does not
matter), lists the tools, asks for a bundle and for one symbol's body.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the 'mcp' extra (in the test extra too)")

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

from tests.conftest import SAMPLE_FILES
from tests.e2e.helpers import write_workspace


async def test_an_agent_lists_tools_gets_a_bundle_and_a_symbol(tmp_path: Path) -> None:
    """Ensure that `ctx-lsp mcp` indexes its workspace and serves the tools over stdio."""
    workspace = write_workspace(tmp_path)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "ctx_lsp", "mcp", "--workspace", str(workspace)], cwd=str(tmp_path)
    )
    async with Client(server) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        assert "get_context_bundle" in (client.instructions or "")
        bundle = await client.call_tool("get_context_bundle", {"query": "assemble bundle budget", "budget": 700})
        symbol = await client.call_tool("get_symbol", {"name": "TokenCounter.count"})
        status = await client.call_tool("workspace_status", {})
    assert tools == [
        "get_context_bundle",
        "get_symbol",
        "search_code",
        "get_library_docs",
        "window_conversation",
        "workspace_status",
    ]
    assert not bundle.is_error and isinstance(bundle.content[0], TextContent)
    assert "def assemble_bundle(sections: list[str], budget: int) -> list[str]:" in bundle.content[0].text
    assert bundle.structured_content is not None and bundle.structured_content["total_tokens"] <= 700
    assert not symbol.is_error and isinstance(symbol.content[0], TextContent)
    body = "\n".join(SAMPLE_FILES["pkg/tokens.py"].split("\n")[14:17])
    assert f"```python\n{body}\n```" in symbol.content[0].text
    assert status.structured_content is not None and status.structured_content["files_indexed"] == 5
    assert (workspace / ".ctx-lsp").is_dir(), "the index cache is written in the workspace"
