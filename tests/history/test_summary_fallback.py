"""Tests for ctx_lsp/history/summary_fallback.py: the template summary of dropped turns."""

from __future__ import annotations

from ctx_lsp.history.summary_fallback import SUMMARY_FALLBACK_MAX_TOKENS
from ctx_lsp.history.windowing import window_messages
from tests.history.conftest import COUNTER, assistant, cost, simple_turns, tool, user


def test_summary_fallback_names_requests_and_tools_of_dropped_turns():
    """Ensure that the template summary counts dropped turns and messages, lists the tools
    used with counts, the assistant's last words and each request's first line, cut to
    ~100 characters."""
    long_request = "Refactor the parser " + "x" * 300 + "\nsecond line"
    msgs = [
        user(long_request),
        assistant(None, ("c1", "read_file", "{}"), ("c2", "read_file", "{}")),
        tool("c1", "..."),
        tool("c2", "..."),
        assistant(None, ("c3", "run_tests", "{}")),
        tool("c3", "ok"),
        assistant("The parser now handles nested tuples."),
        user("  \n  Then add tests"),
        assistant("Added."),
        *simple_turns(3, words=200),
    ]
    result = window_messages(msgs, sum(cost(m) for m in msgs[-6:]) + 5, COUNTER)
    fallback = result.summary_fallback
    lines = fallback.splitlines()
    assert lines[0] == "Earlier conversation (2 turns, 9 messages) dropped to fit the budget."
    assert "Tools used: read_file×2, run_tests×1." in lines
    assert "Assistant last said: Added." in lines
    first_ask = next(line for line in lines if line.startswith("- Refactor"))
    assert len(first_ask) <= 2 + 100 and first_ask.endswith("…")
    assert "- Then add tests" in lines
    assert window_messages(msgs, 100_000, COUNTER).summary_fallback == ""


def test_summary_fallback_is_capped():
    """Ensure that the template summary stays within 15 % of the budget (at least the
    floor) and at most 500 tokens, however many turns were dropped."""
    msgs = [m for i in range(300) for m in (user(f"request {i}: " + "word " * 30), assistant("ok"))]
    small = window_messages(msgs, 2_000, COUNTER).summary_fallback
    big = window_messages(msgs, 5_000, COUNTER).summary_fallback  # 15 % would be 750
    assert COUNTER.count(small) <= 300
    assert COUNTER.count(big) <= SUMMARY_FALLBACK_MAX_TOKENS
    assert big.endswith("more lines]")
