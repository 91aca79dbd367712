"""The client's settings at start-up: one bad setting is left out, the others apply."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.helpers import SERVER, call, start_session, wait_until_indexed, write_workspace

pytestmark = pytest.mark.e2e


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    options = {"index": {"maxFileBytes": "big"}, "agents": {"planner": {"budget": 1234}}}
    await start_session(lsp_client, write_workspace(tmp_path), "neovim", options)
    yield
    await lsp_client.shutdown_session()


async def test_a_bad_setting_does_not_reset_the_others(client: LanguageClient) -> None:
    """Ensure that `index.maxFileBytes: "big"` is reported and ignored while the planner's
    budget from the same initializationOptions still applies."""
    await wait_until_indexed(client)
    result = await call(client, "ctx/bundle", {"query": "greeting", "agent": "planner"})
    assert result["budget"] == 1234
    logged = [m.message for m in client.log_messages]
    assert any("index.max" in m.lower().replace("_", ".") or "maxfilebytes" in m.lower() for m in logged), logged
