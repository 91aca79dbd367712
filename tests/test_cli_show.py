"""Tests for `ctx-lsp show` and `ctx-lsp mcp`'s missing-SDK message (ctx_lsp/cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctx_lsp.cli import main
from tests.conftest import SAMPLE_FILES


def test_show_prints_each_match_as_a_heading_and_a_code_block(sample_workspace: Path, capsys) -> None:
    """Ensure that `show NAME` prints qualname, path:lines and the exact source in a fence."""
    assert main(["show", "TokenCounter.count", "--workspace", str(sample_workspace)]) == 0
    out, err = capsys.readouterr()
    lines = SAMPLE_FILES["pkg/tokens.py"].split("\n")
    body = "\n".join(lines[14:17])
    assert out == f"## TokenCounter.count — pkg/tokens.py:15-17 (method)\n\n```python\n{body}\n```\n"
    assert err == ""


def test_show_json_is_the_ctx_symbol_result(sample_workspace: Path, capsys) -> None:
    """Ensure that `--format json` prints the ctx/symbol result object, snake_case fields."""
    code = main(["show", "count", "--workspace", str(sample_workspace), "--no-body", "--format", "json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"name", "matches", "ambiguous", "total_matches", "note", "warnings"}
    [match] = result["matches"]
    assert match["qualname"] == "TokenCounter.count" and match["body"] is None
    assert match["range"] == {"start_line": 15, "end_line": 17} and match["uri"].startswith("file://")


def test_show_path_and_max_tokens(sample_workspace: Path, capsys) -> None:
    """Ensure that --path restricts the lookup and --max-tokens cuts the body with a marker."""
    assert main(["show", "TokenCounter", "--workspace", str(sample_workspace), "--path", "pkg/bundle.py"]) == 1
    assert "no definition named 'TokenCounter' in pkg/bundle.py" in capsys.readouterr().err
    long_body = "".join(f"    step_{i} = {i} * 2\n" for i in range(100))
    (sample_workspace / "pkg" / "long.py").write_text(f"def long_one():\n{long_body}")
    code = main(["show", "long_one", "--workspace", str(sample_workspace), "--max-tokens", "100"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("## long_one — pkg/long.py:1-101 (function)\n\n```python\ndef long_one():\n")
    assert "# … " in out and "more lines not shown (lines " in out and "max_tokens=" in out


def test_show_an_unknown_name_exits_1_with_close_names(sample_workspace: Path, capsys) -> None:
    """Ensure that no match prints nothing on stdout, close names on stderr, and exits 1."""
    assert main(["show", "count_tokenz", "--workspace", str(sample_workspace)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "close names: count_tokens" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["show", " "], "NAME (name): is empty"),
        (["show", "x", "--max-tokens", "5"], "--max-tokens: 5 is out of range"),
        (["show", "x", "--path", "../outside.py"], "outside the workspace"),
    ],
)
def test_show_refuses_bad_flags_naming_them(sample_workspace: Path, capsys, argv: list[str], words: str) -> None:
    """Ensure that bad arguments exit 2 naming the option and the fix."""
    assert main([*argv, "--workspace", str(sample_workspace)]) == 2
    assert words in capsys.readouterr().err


def test_mcp_without_the_sdk_says_how_to_install_it() -> None:
    """Ensure that `ctx-lsp mcp` without the MCP SDK exits non-zero with the install command."""
    script = "import sys; sys.modules['mcp'] = None; from ctx_lsp.cli import main; sys.exit(main(['mcp']))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'ctx-lsp[mcp]'" in done.stderr and done.stdout == ""
