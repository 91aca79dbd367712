"""End to end, issue 20: a cloned repository's own files never switch the server off.

One workspace holds both of the issue's cases, as a stranger's clone might: psf/black's two
`.gitignore` files whose only line is `!` (at two depths), and a `pyproject.toml` whose
`[tool.ctx-lsp]` table says `tokenizer = 5`. Each test starts its own server on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.helpers import EDITORS, SERVER, call, start_session, wait_until_indexed, write_workspace

BLACK_IGNORES = {
    "tests/data/invalid_gitignore_tests/.gitignore": "!\n",
    "tests/data/invalid_nested_gitignore_tests/a/.gitignore": "!\n",
}
SOURCES = {
    "src/black/__init__.py": "def format_str(src):\n    return src\n",
    "tests/data/invalid_gitignore_tests/pyproject.py": "X = 1\n",
    "tests/data/invalid_nested_gitignore_tests/a/b.py": "def nested():\n    return 2\n",
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=EDITORS[:1])
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest) -> AsyncIterator[None]:
    tmp_path: Path = request.getfixturevalue("tmp_path")
    pyproject = '[project]\nname = "sample"\n\n[tool.ctx-lsp]\ntokenizer = 5\n'
    workspace = write_workspace(tmp_path, {**BLACK_IGNORES, **SOURCES, "pyproject.toml": pyproject})
    await start_session(lsp_client, workspace, request.param)
    yield
    await lsp_client.shutdown_session()


async def test_bang_only_ignore_files_are_problems_and_every_source_file_is_indexed(client: LanguageClient) -> None:
    """Ensure that after initialize, `ctx.status` lists both `!` patterns under problems
    with file and line, and counts every .py file of the workspace as indexed."""
    report = await wait_until_indexed(client)
    for rel in BLACK_IGNORES:
        assert any(p.startswith(f"{rel}:1: pattern '!'") for p in report["problems"]), report["problems"]
    root = Path(report["folders"][0])
    on_disk = sum(1 for _ in root.rglob("*.py") if ".ctx-lsp" not in _.parts)
    assert report["files_by_language"]["python"] == on_disk


async def test_a_wrong_tokenizer_in_pyproject_is_a_warning_not_a_dead_server(client: LanguageClient) -> None:
    """Ensure that `[tool.ctx-lsp] tokenizer = 5` lets initialize succeed, a bundle answers,
    and `ctx.status` names the key under config warnings."""
    report = await wait_until_indexed(client)
    assert any("tokenizer" in w for w in report["config"]["warnings"]), report["config"]
    result = await call(client, "ctx/bundle", {"query": "format_str", "budget": 4000})
    assert "format_str" in result["text"]
