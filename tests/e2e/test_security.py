"""End to end, issue 12's file-level attacks on a real `python -m ctx_lsp serve`: files
swapped after indexing for links out of the workspace, FIFOs and devices; secrets in the
workspace; URIs and workspace config that point outside.

Every test changes the workspace on disk, so each gets its own server and workspace (per
editor, VS Code and Neovim capabilities), like `test_state_changes.py`.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from ctx_lsp.server.errors import REQUEST_FAILED
from tests.e2e.helpers import (
    EDITORS,
    SERVER,
    call,
    command,
    start_session,
    status,
    uri,
    wait_until_indexed,
    workspace_root,
    write_workspace,
)

MARKER = "LEAKED_SECRET_7f3a9c"
"""In every secret file of the workspace."""
OUTSIDE = "OUTSIDE_CONTENT_b41e07"
"""In every file outside the workspace."""
ANSWER_S = 5.0
"""A request must answer within this long whatever the disk holds (a FIFO once hung it)."""

SECRET_FILES = {
    ".env": f"API_TOKEN={MARKER}\n",
    ".env.local": f"API_TOKEN={MARKER}\n",
    "config/.env.production": f"DATABASE_URL=postgres://app:{MARKER}@db/app\n",
    "deploy/server.pem": f"-----BEGIN PRIVATE KEY-----\n{MARKER}\n-----END PRIVATE KEY-----\n",
    "deploy/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARKER}\n-----END OPENSSH PRIVATE KEY-----\n",
    "credentials.json": f'{{"client_secret": "{MARKER}", "token": "count tokens budget"}}\n',
}
"""Each mentions what a natural query asks about (tokens, budget), so only the exclusion
keeps them out."""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=EDITORS)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest) -> AsyncIterator[None]:
    tmp_path: Path = request.getfixturevalue("tmp_path")
    outside = tmp_path / "outside"
    (outside / "docs").mkdir(parents=True)
    (outside / "stolen.py").write_text(f'"""{OUTSIDE}"""\n\ndef count_tokens(text):\n    return "{OUTSIDE}"\n')
    (outside / "docs" / "guide.md").write_text(f"# Guide\n\n## Tokens\n\nCount tokens: {OUTSIDE}\n")
    pyproject = '[project]\nname = "sample"\n\n[tool.ctx-lsp.docs.folders]\nevil = ["../outside/docs"]\n'
    workspace = write_workspace(tmp_path, {**SECRET_FILES, "pyproject.toml": pyproject})
    await start_session(lsp_client, workspace, request.param)
    yield
    await lsp_client.shutdown_session()


async def bundle_text(client: LanguageClient, **params: Any) -> str:
    result = await asyncio.wait_for(call(client, "ctx/bundle", {"budget": 8000, **params}), ANSWER_S)
    return str(result["text"]) + str(result["snapshot"])


async def test_a_file_swapped_for_a_link_out_is_never_served(client: LanguageClient) -> None:
    """Ensure that a workspace file replaced after indexing by a symlink to a file outside
    the workspace is not read: the outside content is in no bundle or outline, and status
    names the file as refused."""
    await wait_until_indexed(client)
    root = workspace_root(client)
    target = root / "pkg" / "tokens.py"
    target.unlink()
    target.symlink_to(root.parent / "outside" / "stolen.py")
    for _ in range(3):  # before and after the watcher has seen the swap
        text = await bundle_text(client, query="count tokens TokenCounter", tier=3)
        assert OUTSIDE not in text
        with pytest.raises(JsonRpcInvalidParams, match="outside the workspace"):
            await call(client, "ctx/outline", {"uri": target.as_uri(), "tier": 3})
        await asyncio.sleep(0.3)
    report = await status(client)
    assert report["refused"] == {"pkg/tokens.py": "outside"}, report["refused"]


async def test_a_file_swapped_for_a_fifo_answers_and_shuts_down(client: LanguageClient) -> None:
    """Ensure that a FIFO swapped in for an indexed file never blocks a request, a
    reindex or the shutdown."""
    await wait_until_indexed(client)
    root = workspace_root(client)
    fifo = root / "pkg" / "tokens.py"
    fifo.unlink()
    os.mkfifo(fifo)
    (root / ".gitignore").unlink(missing_ok=True)
    os.mkfifo(root / ".gitignore")  # the watcher re-reads a changed .gitignore
    await asyncio.sleep(2.0)  # past the watcher's longest debounce
    await bundle_text(client, query="count tokens TokenCounter", tier=3)
    await asyncio.wait_for(call(client, "ctx/search", {"query": "count_tokens"}), ANSWER_S)
    # Refused when read, or dropped from the index once the watcher has seen it.
    with pytest.raises(JsonRpcException, match="pkg/tokens.py (is a FIFO|is not indexed)") as info:
        await asyncio.wait_for(call(client, "ctx/outline", {"uri": fifo.as_uri()}), ANSWER_S)
    assert info.value.code == REQUEST_FAILED
    report = await asyncio.wait_for(command(client, "ctx.reindex"), ANSWER_S)
    assert report["skipped"].get("not_a_file", 0) >= 1
    await asyncio.wait_for(client.shutdown_session(), ANSWER_S)
    assert client._server is not None and client._server.returncode == 0
    client.capabilities = None  # the fixture's own shutdown becomes a no-op


async def test_a_char_device_swapped_in_is_refused_gracefully(client: LanguageClient) -> None:
    """Ensure that a character device (a /dev/zero node) in place of an indexed file is
    refused with a reason, never read and never an internal error (-32603)."""
    await wait_until_indexed(client)
    root = workspace_root(client)
    node = root / "pkg" / "tokens.py"
    node.unlink()
    try:
        os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        node.symlink_to("/dev/zero")  # not root: the nearest a user can make
    await bundle_text(client, query="count tokens TokenCounter", tier=3)
    # Refused when read, or (if the watcher or its reconcile saw the swap first) no longer
    # indexed: either way a refusal that names the file, never a read or an internal error.
    refusal = r"pkg/tokens.py (is a character device, not a regular file|is not indexed \(.*not a file)"
    with pytest.raises(JsonRpcException, match=refusal) as info:
        await asyncio.wait_for(call(client, "ctx/outline", {"uri": node.as_uri(), "tier": 3}), ANSWER_S)
    assert info.value.code == REQUEST_FAILED  # not -32603: refused, not crashed


async def test_secrets_are_never_indexed_searched_or_served(client: LanguageClient) -> None:
    """Ensure that `.env*`, keys and credentials files reach no search hit, no bundle (by
    query, or focused on a file next to them) and no outline, and that status lists none
    of them but counts them as `secret`."""
    report = await wait_until_indexed(client)
    assert report["skipped"].get("secret") == len(SECRET_FILES)
    assert MARKER not in str(report)
    for query in ("API_TOKEN", "client_secret", MARKER, "PRIVATE KEY", "DATABASE_URL postgres"):
        hits = await call(client, "ctx/search", {"query": query})
        assert not any(h["path"] in SECRET_FILES for h in hits["hits"]), hits
    root = workspace_root(client)
    (root / "config" / "settings.py").write_text("def load_settings():\n    return read_env('.env')\n")
    await asyncio.sleep(0.3)
    for query in ("count tokens budget API_TOKEN", "env settings credentials client secret token", "private key"):
        assert MARKER not in await bundle_text(client, query=query, tier=3, budget=32000)
    focus = {"uri": uri(client, "config/settings.py"), "position": {"line": 0, "character": 4}}
    assert MARKER not in await bundle_text(client, query="load settings from .env", focus=focus, tier=3)
    for rel in SECRET_FILES:
        with pytest.raises(JsonRpcInvalidParams, match=r"^uri: .*secret") as info:
            await call(client, "ctx/outline", {"uri": uri(client, rel), "tier": 3})
        assert MARKER not in str(info.value)
    with pytest.raises(JsonRpcInvalidParams, match=r"^open\[1\]: .*secret"):
        await call(client, "ctx/bundle", {"open": [uri(client, "pkg/tokens.py"), uri(client, ".env")]})
    with pytest.raises(JsonRpcInvalidParams, match=r"^focus\.uri: .*secret"):
        await call(client, "ctx/bundle", {"focus": {"uri": uri(client, ".env"), "position": {"line": 0}}})


async def test_outside_uris_are_refused_naming_their_field(client: LanguageClient) -> None:
    """Ensure that every param that takes a URI refuses one outside the workspace with
    -32602 naming that exact field, whether plain, `..` or `%2e%2e`-encoded."""
    await wait_until_indexed(client)
    root = workspace_root(client)
    stolen = root.parent / "outside" / "stolen.py"
    targets = [stolen.as_uri(), uri(client, "../outside/stolen.py"), root.as_uri() + "/%2e%2e/outside/stolen.py"]
    targets.append(root.as_uri() + "/pkg/%2E%2E/%2e%2e/outside/stolen.py")
    for target in targets:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("ctx/outline", {"uri": target}, "uri"),
            ("ctx/bundle", {"focus": {"uri": target, "position": {"line": 0}}}, "focus.uri"),
            ("ctx/bundle", {"open": [target]}, r"open\[0\]"),
            ("ctx/bundle", {"open": [uri(client, "pkg/tokens.py"), target]}, r"open\[1\]"),
        ]
        for method, params, field in cases:
            with pytest.raises(JsonRpcInvalidParams, match=f"^{field}: .*outside the workspace") as info:
                await call(client, method, params)
            assert OUTSIDE not in str(info.value)


async def test_workspace_config_cannot_serve_an_outside_docs_folder(client: LanguageClient) -> None:
    """Ensure that a docs folder a cloned repository's pyproject.toml points outside the
    workspace is refused with a config warning naming the key, and served by neither
    ctx/docs nor a bundle with docs."""
    report = await wait_until_indexed(client)
    assert any("docs.folders" in w for w in report["config"]["warnings"]), report["config"]
    requests = [
        call(client, "ctx/docs", {"library": "evil", "topic": "tokens"}),
        bundle_text(client, query="tokens", docs=[{"library": "evil", "topic": "tokens"}]),
    ]
    for request in requests:
        try:
            answer = str(await request)
        except JsonRpcException as err:  # no such library: the refused folder was its only source
            answer = str(err)
        assert OUTSIDE not in answer
    assert OUTSIDE not in str(await status(client))
