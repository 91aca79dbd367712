"""Tests for ctx_lsp/cli/, called in-process through `main(argv)`."""

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


def long_turn_file(tmp_path: Path, calls: int = 24) -> Path:
    """A JSON file of one user message and `calls` tool calls with their results."""
    code = "def parse_line(line):\n    return line.rstrip()\n" * 20
    msgs: list[dict] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Fix the CRLF bug."}]
    for k in range(calls):
        call = {"id": f"call_{k}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        msgs += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{k}", "content": code},
        ]
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(msgs))
    return path


def test_window_fits_a_long_turn_and_warns_on_stderr(tmp_path: Path, capsys) -> None:
    """Ensure that `window FILE --budget N` on one long turn prints a window within N
    tokens (every returned message counted) and one warning line saying what was elided."""
    from ctx_lsp.history.messages import message_tokens
    from ctx_lsp.tokens import counter_for

    assert main(["window", str(long_turn_file(tmp_path)), "--budget", "1500"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    counter = counter_for()
    assert sum(message_tokens(m, counter) for m in result["messages"]) == result["metadata"]["input_tokens_used"]
    assert result["metadata"]["input_tokens_used"] <= 1500
    assert result["metadata"]["elided_tool_results"] > 0
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctx-lsp: warning: to fit 1,500 tokens")
    assert f"{result['metadata']['elided_tool_results']} tool results elided" in lines[0]


def test_window_that_fits_prints_no_warning(tmp_path: Path, capsys) -> None:
    """Ensure that nothing is printed on stderr when the conversation fits whole."""
    assert main(["window", str(long_turn_file(tmp_path, calls=2)), "--budget", "4000"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["metadata"]["elided_tool_results"] == 0 and err == ""


def test_bundle_with_a_long_turn_answers_and_shows_the_conversation(
    sample_workspace: Path, tmp_path: Path, capsys
) -> None:
    """Ensure that `bundle --messages` with one long turn at a small budget is answered,
    within budget, with the conversation in the printed text."""
    conv = long_turn_file(tmp_path)
    args = ["bundle", "--workspace", str(sample_workspace), "--messages", str(conv), "--budget", "1200"]
    assert main([*args, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["total_tokens"] <= 1200 and "## Conversation" in result["text"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "### user\nFix the CRLF bug." in out


def test_bundle_ranks_with_the_history_only_when_asked_to_wait(tmp_path: Path, capsys) -> None:
    """Ensure that a one-shot `bundle` does not read the history unless `--wait-history`
    asks, and then ranks with it (a file changed with the best hit in every commit)."""
    from tests.contributors.test_history_prior import HISTORY, TASK
    from tests.index.git_fixtures import make_repo

    ws = tmp_path / "ws"
    make_repo(ws, HISTORY)
    args = ["bundle", "--workspace", str(ws), "--query", TASK, "--budget", "4000", "--no-daemon", "--explain"]
    assert main(args) == 0
    assert "history:" not in capsys.readouterr().err
    assert main([*args, "--wait-history"]) == 0
    assert "history: changed together with src/parser.py" in capsys.readouterr().err
