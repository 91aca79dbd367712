"""Tests for ctx_lsp/mcp/output.py and arguments.py: the MCP output cap and argument shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the 'mcp' extra (in the test extra too)")

from ctx_lsp.config import Config
from ctx_lsp.errors import InvalidParam
from ctx_lsp.mcp.arguments import MCP_OUTPUT_CAP_TOKENS, absolute, absolute_all, capped_bundle, focus
from ctx_lsp.mcp.output import MAX_RESULT_CHARS, fit
from ctx_lsp.tokens import counter_for
from ctx_lsp.vocabulary import BundleRequest

COUNTER = counter_for()
HOW = "ask for less"


def test_a_text_within_the_cap_is_returned_as_it_is() -> None:
    """Ensure that fit leaves text under the cap alone, short or long."""
    assert fit("short\n", COUNTER, HOW) == "short\n"
    text = "".join(f"line {i} has a few words\n" for i in range(2000))
    assert COUNTER.count(text) < MCP_OUTPUT_CAP_TOKENS and fit(text, COUNTER, HOW) == text


def test_a_text_over_the_token_cap_is_cut_at_a_line_and_says_how_to_get_more() -> None:
    """Ensure that a text over the cap keeps whole first lines, then a marker with `how`."""
    text = "".join(f"word{i} " * 8 + "\n" for i in range(2000))  # ~42K tokens
    out = fit(text, COUNTER, HOW)
    assert COUNTER.count(out) <= MCP_OUTPUT_CAP_TOKENS
    *kept, marker = out.rstrip("\n").split("\n")
    assert text.startswith("\n".join(kept) + "\n")
    assert marker == f"… {2000 - len(kept)} more lines not shown (MCP output stops at 20000 tokens): {HOW}"


def test_a_text_over_the_character_limit_is_cut_too() -> None:
    """Ensure that a text with few tokens but over Claude Code's declared character limit is
    cut under it (runs of spaces are one token each, but still characters)."""
    text = "".join(" " * 300 + "x\n" for _ in range(400))  # 120,800 chars, ~2,000 tokens
    out = fit(text, COUNTER, HOW)
    assert len(out) <= MAX_RESULT_CHARS and COUNTER.count(out) <= MCP_OUTPUT_CAP_TOKENS
    *kept, marker = out.rstrip("\n").split("\n")
    assert text.startswith("\n".join(kept) + "\n") and marker.startswith(f"… {400 - len(kept)} more lines")


def test_paths_are_made_absolute_under_the_workspace(tmp_path: Path) -> None:
    """Ensure that relative paths join the workspace root; URIs, absolute paths and
    non-strings pass through for the parser to judge."""
    assert absolute(tmp_path, "pkg/mod.py") == str(tmp_path / "pkg/mod.py")
    assert absolute(tmp_path, "/elsewhere/mod.py") == "/elsewhere/mod.py"
    assert absolute(tmp_path, "file:///ws/mod.py") == "file:///ws/mod.py"
    assert absolute(tmp_path, 42) == 42
    assert absolute_all(tmp_path, ["a.py", "file:///b.py"]) == [str(tmp_path / "a.py"), "file:///b.py"]
    assert absolute_all(tmp_path, "a.py") == "a.py"


def test_focus_is_path_colon_one_based_line(tmp_path: Path) -> None:
    """Ensure that 'path:line' becomes the LSP focus (0-based), an object passes through,
    and anything else is refused naming focus."""
    assert focus(tmp_path, "pkg/mod.py:42") == {"uri": str(tmp_path / "pkg/mod.py"), "position": {"line": 41}}
    assert focus(tmp_path, {"uri": "file:///a.py"}) == {"uri": "file:///a.py"}
    for bad in ("pkg/mod.py", "pkg/mod.py:0", ":3", "pkg/mod.py:x"):
        with pytest.raises(InvalidParam, match="^focus: "):
            focus(tmp_path, bad)


def test_a_bundle_budget_is_capped_and_keeps_room_for_the_footer() -> None:
    """Ensure that an explicit budget, a model's window or the agent default become an
    explicit budget within the cap, less the reserve (never more than a tenth)."""
    config = Config()
    capped, kept, notes = capped_bundle(BundleRequest(budget=50_000), config, 80)
    assert (capped.budget, kept) == (MCP_OUTPUT_CAP_TOKENS - 80, 80) and "capped at 20000" in notes[0]
    small, kept, notes = capped_bundle(BundleRequest(budget=300), config, 80)
    assert (small.budget, kept, notes) == (270, 30, [])
    by_model, _, notes = capped_bundle(BundleRequest(model="gpt-4o"), config, 80)
    assert by_model.model is None and by_model.budget == MCP_OUTPUT_CAP_TOKENS - 80 and "model gpt-4o" in notes[0]
    default, _, notes = capped_bundle(BundleRequest(agent="planner"), config, 80)
    assert default.budget == config.agent("planner").budget - 80 and notes == []
