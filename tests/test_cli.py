"""Tests for ctx_lsp/cli.py, called in-process through `main(argv)`."""

from __future__ import annotations

import json
from pathlib import Path

from ctx_lsp.cli import main


def test_index_then_status_json(sample_workspace: Path, capsys) -> None:
    """Ensure that `index` fills the cache and `status --format json` reports from it."""
    assert main(["index", str(sample_workspace), "--quiet"]) == 0
    assert "indexed 5 files" in capsys.readouterr().out
    assert (sample_workspace / ".ctx-lsp" / ".gitignore").exists()
    assert main(["status", str(sample_workspace), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files_indexed"] == 5 and report["last_index"]["reused"] == 5
    assert report["files_by_language"] == {"markdown": 1, "python": 3, "text": 1}


def test_outline_tiers(sample_workspace: Path, capsys) -> None:
    """Ensure that `outline FILE --tier N` prints that tier and its token count."""
    target = sample_workspace / "pkg" / "tokens.py"
    assert main(["outline", str(target), "--tier", "1"]) == 0
    out, err = capsys.readouterr()
    assert "def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int" in out
    assert "tier 1" in err
    assert main(["outline", str(target), "--tier", "3"]) == 0
    assert capsys.readouterr().out == target.read_text()


def test_bundle_json_and_explain(sample_workspace: Path, capsys) -> None:
    """Ensure that `bundle --format json` prints the ctx/bundle result and --explain the reasons."""
    code = main(
        [
            "bundle",
            "--workspace",
            str(sample_workspace),
            "--query",
            "assemble bundle",
            "--budget",
            "900",
            "--open",
            "pkg/tokens.py",
            "--format",
            "json",
            "--explain",
        ]
    )
    assert code == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result["total_tokens"] <= 900 and result["budget"] == 900
    assert {s["path"] for s in result["sections"]} >= {"pkg/tokens.py", "pkg/bundle.py"}
    assert "working_files" in err and "named as a working file" in err


def test_bad_flags_are_refused_with_the_fix(sample_workspace: Path, capsys) -> None:
    """Ensure that conflicting or malformed flags exit 2 naming the flag."""
    assert main(["bundle", "--workspace", str(sample_workspace), "--budget", "100", "--model", "gpt-4o"]) == 2
    assert "--model: cannot be combined with budget" in capsys.readouterr().err
    assert main(["bundle", "--workspace", str(sample_workspace), "--focus", "pkg/tokens.py"]) == 2
    assert "--focus" in capsys.readouterr().err
    assert main(["status", str(sample_workspace / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
