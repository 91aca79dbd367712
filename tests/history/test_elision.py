"""Tests for ctx_lsp/history/elision.py: making the newest turns fit when they alone are
over budget (an agent's long turn of tool calls), through `window_messages`."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp.errors import InvalidParam
from ctx_lsp.history.elision import (
    HUGE_RESULT_SHARE,
    NEWEST_RESULT_SHARE,
    cut_head_tail,
    cut_marker,
    elision_placeholder,
)
from ctx_lsp.history.windowing import WindowError, window_messages
from tests.history.conftest import COUNTER, assistant, cost, system, tool, user

CODE = "def parse_line(line):\n    stripped = line.rstrip()\n    return classify(stripped)\n"
LOG = "".join(f"line {i}: collected item {i} ok\n" for i in range(3000))
PLACEHOLDER = re.compile(
    r"^\[tool result elided to fit the context budget: ([\d,]+) tokens, ([\d,]+) lines? of (\w+) output\]$"
)


def long_turn(results: list[str], name: str = "read_file") -> list[dict]:
    """One user message, then one assistant call and its result per item of `results`."""
    msgs = [system(), user("Find why the parser test fails on CRLF input and fix it.")]
    for k, text in enumerate(results):
        msgs.append(assistant(f"Step {k}.", (f"call_{k}", name, f'{{"path": "src/mod{k}.py"}}')))
        msgs.append(tool(f"call_{k}", text))
    return msgs


def total(messages) -> int:
    return sum(cost(m) for m in messages)


def assert_paired(messages) -> None:
    """Every call in the window has its result after it, every result its call before it."""
    seen_calls: set[str] = set()
    answered: set[str] = set()
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in seen_calls, m
            answered.add(m["tool_call_id"])
        seen_calls.update(c["id"] for c in m.get("tool_calls") or ())
    assert seen_calls == answered


# --- the placeholder and the cut ---------------------------------------------------------


def test_placeholder_says_what_was_elided_and_how_big_it_was():
    """Ensure that the placeholder names the tool, the tokens and the lines of the output."""
    assert elision_placeholder(12_480, 310, "read_file") == (
        "[tool result elided to fit the context budget: 12,480 tokens, 310 lines of read_file output]"
    )
    assert elision_placeholder(5, 1, "grep").endswith("1 line of grep output]")


def test_elided_results_keep_their_message_and_report_their_size():
    """Ensure that an elided result keeps its tool message, tool_call_id and extra keys,
    and that its placeholder gives the tokens it took in the window and its line count."""
    msgs = long_turn([CODE * 30] * 6)
    msgs[3]["x-provider"] = {"cache": True}
    result = window_messages(msgs, total(msgs) - cost(msgs[3]) - 50, COUNTER)
    elided = result.messages[3]
    assert elided["tool_call_id"] == "call_0" and elided["x-provider"] == {"cache": True}
    match = PLACEHOLDER.match(elided["content"])
    assert match, elided["content"]
    assert match.groups() == (f"{cost(msgs[3]):,}", "90", "read_file")


def test_cut_head_tail_keeps_whole_first_and_last_lines_and_marks_the_middle():
    """Ensure that the head-and-tail cut keeps whole lines from the start and the end,
    puts one marker line between saying how many lines and tokens were cut, and fits."""
    cut = cut_head_tail(LOG, 300, COUNTER, "run_tests output")
    assert cut is not None
    lines = cut.text.splitlines()
    marker = next(k for k, line in enumerate(lines) if line.startswith("[…"))
    original = LOG.splitlines()
    assert lines[:marker] == original[:marker]
    assert lines[marker + 1 :] == original[len(original) - (len(lines) - marker - 1) :]
    assert marker > 0 and len(lines) - marker - 1 > 0
    assert lines[marker] == cut_marker(cut.omitted_lines, cut.omitted_tokens, "run_tests output")
    assert cut.omitted_lines == 3000 - cut.kept_lines
    assert COUNTER.count(cut.text) <= 300


def test_cut_head_tail_refuses_what_cannot_be_cut_at_lines():
    """Ensure that one long line, or a budget too small for a line and the marker, gives
    None (the caller elides instead)."""
    assert cut_head_tail("x" * 5000, 100, COUNTER, "grep output") is None
    assert cut_head_tail(LOG, 10, COUNTER, "grep output") is None


# --- the ladder, through window_messages -------------------------------------------------


def test_tool_results_are_elided_oldest_first_and_calls_are_kept():
    """Ensure that in one long turn over budget the oldest tool results are elided first
    (a run from the start), the newest kept whole, every call kept, and it fits."""
    msgs = long_turn([CODE * 12] * 24)
    budget = total(msgs) // 2
    result = window_messages(msgs, budget, COUNTER)
    results = [m for m in result.messages if m["role"] == "tool"]
    elided = [PLACEHOLDER.match(m["content"]) is not None for m in results]
    assert len(results) == 24 and sum(elided) == result.metadata.elided_tool_results > 0
    assert elided == sorted(elided, reverse=True)  # a prefix: oldest first
    assert results[-1] == msgs[-1]
    assert [m for m in result.messages if m["role"] != "tool"] == [m for m in msgs if m["role"] != "tool"]
    assert result.metadata.input_tokens_used == total(result.messages) <= budget
    assert result.should_summarize and result.dropped == ()
    assert result.notes[0].startswith(f"{sum(elided)} tool results elided (oldest first")


def test_one_huge_output_is_cut_head_and_tail_when_that_makes_the_turn_fit():
    """Ensure that a single huge output is cut head and tail (not elided) when cutting it is
    what makes the turn fit, using the room up to the budget."""
    msgs = long_turn([LOG], name="run_tests")
    result = window_messages(msgs, 1_000, COUNTER)
    meta = result.metadata
    assert (meta.cut_tool_results, meta.elided_tool_results) == (1, 0)
    content = result.messages[3]["content"]
    assert content.startswith("line 0: collected item 0 ok\n")
    assert content.endswith("line 2999: collected item 2999 ok\n")
    assert "of run_tests output cut here to fit the context budget" in content
    assert 900 < meta.input_tokens_used == total(result.messages) <= 1_000
    assert any("run_tests output cut head and tail from" in n for n in result.notes)


def test_a_huge_newest_output_is_capped_before_older_results_go():
    """Ensure that a huge newest output is cut to at most half the room, so several
    recent small results survive instead of all of them being elided for it."""
    msgs = long_turn([CODE * 5] * 10 + [LOG])
    budget = 2_000
    result = window_messages(msgs, budget, COUNTER)
    room = budget - cost(msgs[0])
    assert cost(result.messages[-1]) <= room * HUGE_RESULT_SHARE
    assert "cut here to fit" in result.messages[-1]["content"]
    intact = [m for m in result.messages[:-1] if m["role"] == "tool" and m in msgs]
    assert len(intact) >= 3
    assert total(result.messages) <= budget


def test_the_result_that_makes_the_turn_fit_is_cut_rather_than_elided():
    """Ensure that when a little too much is left, the next oldest result is shortened
    head and tail instead of disappearing."""
    msgs = long_turn([CODE * 40] * 3)
    budget = total(msgs) - 100
    result = window_messages(msgs, budget, COUNTER)
    assert (result.metadata.elided_tool_results, result.metadata.cut_tool_results) == (0, 1)
    assert "cut here to fit" in result.messages[3]["content"]
    assert result.messages[5:] == tuple(msgs[5:])
    assert total(result.messages) <= budget


def test_results_smaller_than_their_placeholder_are_left_alone():
    """Ensure that eliding never makes a result bigger: tiny results stay as they are."""
    msgs = long_turn(["ok"] * 3 + [CODE * 40])
    result = window_messages(msgs, total(msgs) - 150, COUNTER)
    assert [m["content"] for m in result.messages if m["role"] == "tool"][:3] == ["ok"] * 3


def test_non_text_results_are_elided_not_cut():
    """Ensure that a result with an image part is replaced whole, never cut into JSON."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 4000}}
    msgs = long_turn(["placeholder"])
    msgs[3] = {**msgs[3], "content": [{"type": "text", "text": "screenshot:\n"}, image]}
    result = window_messages(msgs, 200, COUNTER)
    assert PLACEHOLDER.match(result.messages[3]["content"])


def test_last_three_turns_are_kept_by_eliding_their_results():
    """Ensure that the last 3 turns all stay (each user message kept) when eliding tool
    results makes them fit, and that nothing older is then added."""
    msgs = [system()]
    for t in range(5):
        msgs.append(user(f"request {t}"))
        for k in range(4):
            msgs.append(assistant(None, (f"c{t}_{k}", "read_file", "{}")))
            msgs.append(tool(f"c{t}_{k}", CODE * 20))
    budget = total(msgs) // 4
    result = window_messages(msgs, budget, COUNTER)
    users = [m["content"] for m in result.messages if m["role"] == "user"]
    assert users == ["request 2", "request 3", "request 4"]
    assert result.metadata.turns_included == 3 and result.metadata.elided_tool_results > 0
    assert total(result.messages) <= budget
    assert_paired(result.messages)


def test_steps_of_the_newest_turn_go_oldest_first_when_placeholders_alone_are_too_many():
    """Ensure that when even every result elided does not fit, the oldest steps (a call
    with its result) are dropped, keeping the newest user message, pairs and the budget,
    and that the newest result keeps some of its content (cut head and tail) rather than
    becoming one more placeholder."""
    msgs = long_turn([CODE * 12] * 24)
    result = window_messages(msgs, 400, COUNTER)
    kept = result.messages
    assert kept[0] == msgs[0] and kept[1] == msgs[1]
    assert total(kept) <= 400
    assert_paired(kept)
    assert kept[-1]["tool_call_id"] == "call_23"
    assert kept[-1]["content"].startswith(CODE) and "of read_file output cut here" in kept[-1]["content"]
    assert cost(kept[-1]) >= (400 - cost(msgs[0])) * NEWEST_RESULT_SHARE
    dropped_ids = [m["tool_call_id"] for m in result.dropped if m["role"] == "tool"]
    assert dropped_ids == [f"call_{k}" for k in range(len(dropped_ids))]  # oldest first
    assert result.summary_fallback.startswith(f"Earlier conversation ({len(result.dropped)} messages of the newest")
    assert any("older messages of the newest turn dropped" in n for n in result.notes)


def test_a_newest_user_message_alone_over_budget_is_cut_head_and_tail():
    """Ensure that a pasted log in the newest user message that alone is over the budget
    is cut head and tail (system kept), and flagged."""
    msgs = [system(), user("Why does this fail?\n" + LOG)]
    result = window_messages(msgs, 500, COUNTER)
    content = result.messages[1]["content"]
    assert content.startswith("Why does this fail?\n") and "of the user message cut here" in content
    assert result.metadata.cut_user_message
    assert total(result.messages) <= 500


def test_system_messages_alone_over_budget_are_an_invalid_messages_param():
    """Ensure that the one case that cannot fit raises InvalidParam on messages, with the fix."""
    msgs = [system("rules " * 400), *long_turn([LOG])[1:]]
    with pytest.raises(InvalidParam) as info:
        window_messages(msgs, 300, COUNTER)
    assert isinstance(info.value, WindowError) and info.value.field == "messages"
    assert "shorten the system prompt" in str(info.value)


# --- property: fits and pairs, whatever the conversation ---------------------------------

OUTPUTS = st.one_of(
    st.sampled_from(["", "ok", "naïve café — 日本語 🙂", CODE]),
    st.text(max_size=60),
    st.integers(1, 80).map(lambda n: CODE * n),
    st.integers(200, 3000).map(lambda n: "huge output line\n" * n),
    st.integers(500, 20_000).map(lambda n: "x" * n),  # one long line: elided, never cut
)
USER_TEXTS = st.one_of(
    st.sampled_from(["Fix the failing test.", "Now add logging."]),
    st.text(max_size=40),
    st.integers(100, 2000).map(lambda n: "pasted log line\n" * n),
)
SYSTEM_TEXTS = st.sampled_from(["", "Be brief.", "Rules:\n" + "- follow the style guide\n" * 20, "rule " * 600])


@st.composite
def agent_conversations(draw):
    """Well-formed agent sessions (every call answered, in order): system prompts, a few
    turns, each a user message and up to 30 steps of text replies or tool calls (one to
    three, results possibly huge) — the long single turn is the usual shape."""
    msgs: list[dict] = [system(draw(SYSTEM_TEXTS)) for _ in range(draw(st.integers(0, 2)))]
    call_no = 0
    for _ in range(draw(st.integers(1, 4))):
        msgs.append(user(draw(USER_TEXTS)))
        for _ in range(draw(st.integers(0, 30))):
            if draw(st.integers(0, 4)) == 0:
                msgs.append(assistant(draw(st.text(max_size=40) | st.just(CODE * 20))))
                continue
            names = draw(st.lists(st.sampled_from(["read_file", "grep", "run_tests"]), min_size=1, max_size=3))
            ids = [f"call_{call_no + k}" for k in range(len(names))]
            call_no += len(names)
            msgs.append(assistant(draw(st.none() | st.just("Checking.")), *[(i, n, "{}") for i, n in zip(ids, names)]))
            msgs += [tool(i, draw(OUTPUTS)) for i in ids]
    return msgs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    msgs=agent_conversations(),
    budget=st.integers(1, 300) | st.integers(300, 6_000) | st.integers(6_000, 60_000),
    min_turns=st.integers(1, 4),
    summary=st.none() | st.sampled_from(["short summary", "line of summary\n" * 300]),
)
def test_every_window_fits_its_budget_and_keeps_calls_with_results(msgs, budget, min_turns, summary):
    """Ensure that, for any agent session and budget, the window's real token count (each
    returned message counted as the window counts it) never passes the budget, no call is
    separated from its result, system messages are kept, and the newest user message is
    kept whole whenever it fits next to them; unless the system messages alone are over
    the budget, which raises InvalidParam on messages."""
    system_tokens = sum(cost(m) for m in msgs if m["role"] == "system")
    if system_tokens > budget:
        with pytest.raises(InvalidParam, match=r"^messages: the system messages alone take") as info:
            window_messages(msgs, budget, COUNTER, summary=summary, min_turns=min_turns)
        assert info.value.field == "messages"
        return
    result = window_messages(msgs, budget, COUNTER, summary=summary, min_turns=min_turns)
    assert total(result.messages) == result.metadata.input_tokens_used <= budget
    assert_paired(result.messages)
    assert [m for m in result.messages if m["role"] == "system" and m in msgs] == [
        m for m in msgs if m["role"] == "system"
    ]
    newest_user = [m for m in msgs if m["role"] == "user"][-1]
    if system_tokens + cost(newest_user) <= budget:
        assert newest_user in result.messages
