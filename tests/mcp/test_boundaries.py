"""The MCP SDK stays behind ctx_lsp/mcp: nothing else imports it, and `serve` never loads it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ctx_lsp"
SDK_MODULES = ("mcp", "mcp_types")


def test_only_the_mcp_adapter_imports_the_sdk() -> None:
    """Ensure that no module outside ctx_lsp/mcp imports the MCP SDK (an optional extra)."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "mcp":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            if any(n.split(".")[0] in SDK_MODULES for n in names):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert not offenders, offenders


def test_the_language_server_and_the_cli_load_without_the_sdk() -> None:
    """Ensure that building the LSP server and the CLI parser never imports the MCP SDK."""
    script = (
        "import sys\n"
        "from ctx_lsp.cli.parser import build_parser as _parser\n"
        "from ctx_lsp.server.app import create_server\n"
        "_parser(); create_server()\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
