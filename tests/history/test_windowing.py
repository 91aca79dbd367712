"""Tests for ctx_lsp/history/windowing.py: turn-safe conversation windowing."""

from __future__ import annotations

import copy
import json
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp.errors import InvalidParam
from ctx_lsp.history.messages import validate_messages
from ctx_lsp.history.windowing import (
    STRATEGY,
    SUMMARY_HEADER,
    WindowError,
    WindowResult,
    structure,
    window_messages,
)
from tests.history.conftest import COUNTER, assistant, cost, simple_turns, system, tool, user


def contents(result: WindowResult) -> list:
    return [m.get("content") for m in result.messages]


# --- turns and pairing -------------------------------------------------------------------


def test_turns_start_at_user_messages_and_leading_messages_form_a_turn():
    """Ensure that a turn is a user message plus everything up to the next one, that
    non-system messages before the first user message form a leading turn, and that
    system messages belong to no turn."""
    msgs = [
        system(),
        assistant("hello, how can I help?"),
        user("a"),
        assistant("b"),
        system("mid"),
        user("c"),
    ]
    convo = structure(validate_messages(msgs))
    assert convo.system == (0, 4)
    assert convo.turns == ((1,), (2, 3), (5,))
    assert convo.units == ((0, 0), (1, 1), (2, 2))


def test_tool_result_after_a_later_user_message_merges_the_turns_between():
    """Ensure that when a tool result arrives after a later user message, the turns from
    its call to it form one unit, so the call and its result stay together."""
    msgs = [
        user("q0"),
        assistant(None, ("c1", "run", "{}")),
        user("q1 (interrupting)"),
        tool("c1", "result"),
        user("q2"),
    ]
    convo = structure(validate_messages(msgs))
    assert convo.turns == ((0, 1), (2, 3), (4,))
    assert convo.units == ((0, 1), (2, 2))


def test_reused_call_ids_pair_with_the_most_recent_call():
    """Ensure that a result answers the latest earlier call with its id, since some models
    reuse ids such as call_0 in every turn."""
    msgs = [
        user("q0"),
        assistant(None, ("call_0", "a", "{}")),
        tool("call_0", "r0"),
        user("q1"),
        assistant(None, ("call_0", "b", "{}")),
        tool("call_0", "r1"),
    ]
    convo = structure(validate_messages(msgs))
    assert convo.orphans == ()
    assert convo.units == ((0, 0), (1, 1))
    assert convo.unanswered == ()


def test_orphan_tool_results_are_dropped_with_a_note():
    """Ensure that a tool result matching no earlier call (unknown id, or before its call)
    is never returned, is listed in dropped, and is explained in a note."""
    msgs = [
        user("q0"),
        tool("ghost", "no call made this"),
        tool("c1", "arrives before its call"),
        assistant(None, ("c1", "run", "{}")),
        tool("c1", "ok"),
    ]
    result = window_messages(msgs, 10_000, COUNTER)
    assert [m.get("content") for m in result.dropped] == [
        "no call made this",
        "arrives before its call",
    ]
    assert "no call made this" not in contents(result)
    assert len(result.notes) == 2 and all("answers no earlier tool call" in n for n in result.notes)
    assert result.notes[0].startswith("messages[1]:")
    assert result.metadata.messages_included + result.metadata.messages_excluded == len(msgs)
    assert not result.should_summarize  # orphans are not history falling off the window


def test_unanswered_tool_calls_are_kept_and_noted_only_before_the_final_turn():
    """Ensure that tool calls without results are kept as sent (the final turn may be
    waiting for them), with a note only when they are in an earlier turn."""
    msgs = [
        user("q0"),
        assistant(None, ("lost", "grep", "{}")),
        user("q1"),
        assistant(None, ("pending", "run_tests", "{}")),
    ]
    result = window_messages(msgs, 10_000, COUNTER)
    assert len(result.messages) == 4
    assert result.notes == ("messages[1]: tool call 'lost' has no tool result; kept as sent",)


# --- budget rules ------------------------------------------------------------------------


def test_everything_fits_nothing_dropped():
    """Ensure that a conversation under budget comes back whole, with exact accounting."""
    msgs = [system(), *simple_turns(5)]
    result = window_messages(msgs, 100_000, COUNTER)
    assert list(result.messages) == msgs
    assert result.dropped == ()
    assert result.summary_fallback == ""
    assert not result.should_summarize
    meta = result.metadata
    assert meta.strategy == STRATEGY
    assert meta.max_input_tokens == 100_000
    assert meta.input_tokens_used == sum(cost(m) for m in msgs)
    assert (meta.messages_included, meta.messages_excluded) == (11, 0)
    assert (meta.turns_total, meta.turns_included) == (5, 5)
    assert (meta.elided_tool_results, meta.cut_tool_results, meta.cut_user_message) == (0, 0, False)


def test_newest_turns_are_kept_while_they_fit():
    """Ensure that turns are kept newest first until the next older one does not fit, and
    that older turns are dropped whole and in order."""
    msgs = [system(), *simple_turns(10)]
    per_turn = cost(msgs[1]) + cost(msgs[2])
    budget = cost(msgs[0]) + 6 * per_turn + per_turn // 2
    result = window_messages(msgs, budget, COUNTER)
    assert result.metadata.turns_included == 6
    assert list(result.messages) == [msgs[0], *msgs[-12:]]
    assert list(result.dropped) == msgs[1:9]
    assert result.metadata.input_tokens_used <= budget
    assert result.should_summarize


def test_kept_turns_are_contiguous_even_if_an_older_small_turn_would_fit():
    """Ensure that the first older turn that does not fit ends the window, so there is
    never a hole in the middle of the kept conversation."""
    msgs = [user("tiny"), assistant("ok"), user("huge " * 3000), assistant("ok"), *simple_turns(3)]
    budget = sum(cost(m) for m in msgs[4:]) + cost(msgs[0]) + cost(msgs[1]) + 5
    result = window_messages(msgs, budget, COUNTER)
    assert list(result.messages) == msgs[4:]


def test_system_messages_are_always_kept_in_place():
    """Ensure that system messages anywhere in the conversation are kept at their
    position even when the turns around them are dropped."""
    msgs = [system("top"), *simple_turns(4), system("mid-conversation rule"), *simple_turns(4)]
    result = window_messages(msgs, cost(msgs[0]) + cost(msgs[9]) + 200, COUNTER, min_turns=1)
    roles = [m["role"] for m in result.messages]
    assert result.messages[0]["content"] == "top"
    assert "mid-conversation rule" in contents(result)
    assert roles.count("system") == 2


def test_last_turns_that_cannot_fit_lose_their_oldest_turns_whole():
    """Ensure that when the last min_turns turns do not fit even with every tool result
    elided, their oldest turns are dropped whole (newest first kept), the budget holds,
    nothing older is kept, and the fallback summary and notes say what went."""
    msgs = [
        system(),
        *simple_turns(3),
        user("big " * 2000),
        assistant("a"),
        user("b"),
        assistant("c"),
    ]
    result = window_messages(msgs, 500, COUNTER, summary="old stuff")
    assert list(result.messages[:1]) == [msgs[0]]
    assert [m for m in result.messages if m["role"] != "system"] == msgs[-2:]
    meta = result.metadata
    assert meta.input_tokens_used == sum(cost(m) for m in result.messages) <= 500
    assert meta.turns_included == 1
    assert result.should_summarize
    assert result.summary_fallback.startswith("Earlier conversation (4 turns, 8 messages)")
    assert any("2 of the newest turns dropped whole" in n for n in result.notes)


def test_min_turns_zero_can_drop_everything_but_system():
    """Ensure that min_turns=0 keeps no turn that does not fit."""
    msgs = [system(), user("x " * 500)]
    result = window_messages(msgs, cost(msgs[0]) + 10, COUNTER, min_turns=0)
    assert list(result.messages) == [msgs[0]]
    assert result.metadata.input_tokens_used <= cost(msgs[0]) + 10


def test_min_turns_larger_than_the_conversation_keeps_it_all_when_it_fits():
    """Ensure that asking for more turns than exist keeps every turn, and that a budget
    too small for them still is never exceeded."""
    msgs = simple_turns(2)
    assert list(window_messages(msgs, 10_000, COUNTER, min_turns=5).messages) == msgs
    tiny = window_messages(msgs, 1, COUNTER, min_turns=5)
    assert tiny.messages == () and tiny.metadata.input_tokens_used == 0
    assert any("dropped" in n for n in tiny.notes)


def test_tool_call_and_results_are_kept_or_dropped_together():
    """Ensure that an assistant message with tool calls and the tool messages answering
    them are never separated by the window."""
    msgs = [
        user("read both files"),
        assistant(None, ("c1", "read_file", '{"path": "a.py"}'), ("c2", "read_file", '{"path": "b.py"}')),
        tool("c1", "a " * 300),
        tool("c2", "b " * 300),
        assistant("done"),
        *simple_turns(3),
    ]
    for budget in (50, 300, 600, 700, 10_000):
        result = window_messages(msgs, budget, COUNTER)
        kept = contents(result)
        together = [msgs[i].get("content") in kept for i in (1, 2, 3)]
        assert all(together) or not any(together)


def test_system_messages_over_budget_raise_a_clear_error():
    """Ensure that system messages alone over the budget raise WindowError saying how many
    tokens they take, the budget, and what to do."""
    msgs = [system("rules " * 300), user("hi")]
    with pytest.raises(WindowError) as info:
        window_messages(msgs, 100, COUNTER)
    assert isinstance(info.value, InvalidParam) and info.value.field == "messages"
    assert info.value.system_tokens == cost(msgs[0])
    assert info.value.budget == 100
    message = str(info.value)
    assert f"{cost(msgs[0]):,} tokens" in message and "100-token" in message
    assert "shorten the system prompt" in message


# --- summary preamble --------------------------------------------------------------------


def test_summary_is_a_marked_system_preamble_after_the_system_prompt():
    """Ensure that a supplied summary becomes a clearly marked system message right after
    the leading system messages, counted within the budget."""
    msgs = [system(), *simple_turns(3)]
    result = window_messages(msgs, 10_000, COUNTER, summary="User is fixing a parser bug.")
    preamble = result.messages[1]
    assert preamble == {
        "role": "system",
        "content": SUMMARY_HEADER + "User is fixing a parser bug.",
    }
    assert result.messages[0] == msgs[0]
    assert list(result.messages[2:]) == msgs[1:]
    meta = result.metadata
    assert meta.input_tokens_used == sum(cost(m) for m in result.messages)
    assert meta.breakdown.system_messages == cost(msgs[0]) + cost(preamble)
    assert meta.messages_included == len(msgs)  # the preamble is not an input message


def test_summary_goes_first_without_system_messages_and_blank_summary_is_ignored():
    """Ensure that the preamble leads when there is no system prompt, and that an empty
    summary adds nothing."""
    msgs = simple_turns(2)
    assert window_messages(msgs, 10_000, COUNTER, summary="S").messages[0]["role"] == "system"
    assert list(window_messages(msgs, 10_000, COUNTER, summary="  \n").messages) == msgs


def test_summary_is_cut_to_whole_lines_when_it_does_not_fit():
    """Ensure that a summary too big for what is left after the newest turns is cut at
    whole lines with a marker, and older turns then get nothing."""
    msgs = simple_turns(6)
    summary = "\n".join(f"- fact number {i} about the earlier work" for i in range(200))
    forced = sum(cost(m) for m in msgs[-6:])
    budget = forced + 150
    result = window_messages(msgs, budget, COUNTER, summary=summary)
    preamble = result.messages[0]["content"]
    assert preamble.startswith(SUMMARY_HEADER + "- fact number 0")
    assert "more summary lines cut for budget]" in preamble
    assert result.metadata.input_tokens_used <= budget
    assert list(result.messages[1:]) == msgs[-6:]
    assert any(n.startswith("summary cut from") for n in result.notes)


# --- should_summarize --------------------------------------------------------------------


def test_should_summarize_when_usage_passes_70_percent():
    """Ensure that should_summarize turns on past 70 % of the budget with nothing dropped,
    and stays off below it."""
    msgs = simple_turns(2)
    used = sum(cost(m) for m in msgs)
    assert window_messages(msgs, int(used / 0.7) - 1, COUNTER).should_summarize
    assert not window_messages(msgs, int(used / 0.7) + 2, COUNTER).should_summarize


# --- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"budget": 0}, "budget"),
        ({"budget": "4000"}, "budget"),
        ({"budget": True}, "budget"),
        ({"min_turns": -1}, "min_turns"),
        ({"summary": 3}, "summary"),
    ],
)
def test_bad_options_name_the_field(kwargs, field):
    """Ensure that a bad budget, min_turns or summary raises InvalidParam naming it."""
    args = {"budget": 1000, **kwargs}
    budget = args.pop("budget")
    with pytest.raises(InvalidParam) as info:
        window_messages([user("x")], budget, COUNTER, **args)
    assert info.value.field == field


def test_valid_variants_are_accepted_and_input_is_not_mutated():
    """Ensure that accepted variants (null content, object arguments, unknown keys, empty
    list) window fine, and that the caller's messages are never modified."""
    msgs = [
        user("q"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {"x": 1}}}],
        },
        {
            "role": "tool",
            "tool_call_id": "a",
            "content": [{"type": "text", "text": "r"}],
            "x-provider": {"k": 1},
        },
    ]
    before = copy.deepcopy(msgs)
    result = window_messages(msgs, 1000, COUNTER, summary="s")
    assert msgs == before
    assert list(result.messages[1:]) == msgs
    assert window_messages([], 10, COUNTER).messages == ()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
message_like = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "bot"])},
    optional={
        "content": st.none() | st.text(max_size=20) | json_values,
        "tool_calls": json_values
        | st.lists(
            st.fixed_dictionaries(
                {"id": st.sampled_from(["a", "b", ""]) | json_values},
                optional={"function": json_values | st.fixed_dictionaries({"name": st.text(max_size=5)})},
            ),
            max_size=2,
        ),
        "tool_call_id": st.sampled_from(["a", "b"]) | json_values,
        "name": json_values,
    },
)


@settings(max_examples=150, deadline=None)
@given(
    messages=json_values | st.lists(message_like | json_values, max_size=8),
    budget=st.integers(1, 300),
)
def test_any_json_input_windows_or_raises_a_ctx_error(messages, budget):
    """Ensure that no JSON-shaped input crashes the windowing: it either returns a result
    or raises InvalidParam / WindowError."""
    try:
        result = window_messages(messages, budget, COUNTER, summary="s")
    except (InvalidParam, WindowError):
        return
    assert result.metadata.messages_included + result.metadata.messages_excluded == len(messages)


# --- properties over random conversations ------------------------------------------------

TEXTS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["ok", "Looking at it.", "naïve café — 日本語 🙂", "def f():\n    return 1\n"]),
    st.integers(200, 3000).map(lambda n: "huge output line\n" * n),
)
SYSTEM_TEXTS = st.text(max_size=40) | st.sampled_from(["Be brief.", "Rules:\n" + "- follow the style guide\n" * 20])
"""No huge system prompts here: they only exercise WindowError, which has its own test."""


@st.composite
def conversations(draw):
    """Random conversations: system messages anywhere, turns with text replies and tool
    calls with results (some missing, some late, some orphaned), unicode and huge texts.
    Every message carries a unique `mid` (an extra key, passed through and counted) so
    properties can track it."""
    msgs: list[dict] = []
    call_no = 0
    if draw(st.booleans()):
        msgs.append(system(draw(SYSTEM_TEXTS)))
    for turn in range(draw(st.integers(0, 8))):
        if turn > 0 or draw(st.booleans()):
            msgs.append(user(draw(TEXTS)))
        late: list[str] = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["text", "calls", "calls", "system", "orphan"]))
            if kind == "text":
                msgs.append(assistant(draw(TEXTS)))
            elif kind == "system":
                msgs.append(system(draw(SYSTEM_TEXTS)))
            elif kind == "orphan":
                msgs.append(tool(f"ghost{call_no}", draw(TEXTS)))
                call_no += 1
            else:
                ids = [f"c{call_no + k}" for k in range(draw(st.integers(1, 3)))]
                call_no += len(ids)
                msgs.append(assistant(draw(st.none() | TEXTS), *[(cid, "read_file", "{}") for cid in ids]))
                for cid in ids:
                    fate = draw(st.sampled_from(["answer", "answer", "answer", "late", "never"]))
                    if fate == "answer":
                        msgs.append(tool(cid, draw(TEXTS)))
                    elif fate == "late":
                        late.append(cid)
        if late:
            msgs.append(user("interrupting"))
            msgs += [tool(cid, "late result") for cid in late]
    for i, message in enumerate(msgs):
        message["mid"] = i
    return msgs


def reference(msgs: list[dict]) -> tuple[set[int], dict[int, int]]:
    """Orphan indexes, and each answered tool message's caller index: written separately
    from the module, from the rule "a result answers the latest earlier call with its id"."""
    orphans: set[int] = set()
    caller: dict[int, int] = {}
    for i, message in enumerate(msgs):
        if message["role"] != "tool":
            continue
        earlier = [j for j in range(i) for c in msgs[j].get("tool_calls") or () if c["id"] == message["tool_call_id"]]
        if earlier:
            caller[i] = max(earlier)
        else:
            orphans.add(i)
    return orphans, caller


def forced_start(msgs: list[dict], orphans: set[int], caller: dict[int, int], min_turns: int) -> int:
    """Index from which every non-system, non-orphan message must be kept: the start of the
    min_turns-th last turn, moved back to take in the calls of results after it."""
    users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
    turn_starts = users
    first_other = next((i for i, m in enumerate(msgs) if m["role"] != "system" and i not in orphans), None)
    if first_other is not None and (not users or first_other < users[0]):
        turn_starts = [first_other, *users]
    if min_turns == 0:
        start = len(msgs)
    elif len(turn_starts) <= min_turns:
        start = 0
    else:
        start = turn_starts[-min_turns]
    moved = True
    while moved:
        moved = False
        for result, call in caller.items():
            if result >= start > call:
                start = max([s for s in turn_starts if s <= call], default=0)
                moved = True
    return start


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    msgs=conversations(),
    budget=st.integers(1, 300) | st.integers(300, 20_000),
    min_turns=st.integers(0, 4),
    summary=st.none() | st.sampled_from(["short summary", "line of summary\n" * 300]),
)
def test_window_properties(msgs, budget, min_turns, summary):
    """Ensure that, for any conversation and budget: calls and results are kept or dropped
    together; orphans are never kept; kept messages are an ordered subsequence (plus the
    preamble); system messages are kept; usage never passes the budget; when the last
    min_turns turns fit they are kept unchanged, and when they do not they are shrunk
    (only tool results and the newest user message rewritten, nothing older kept);
    accounting adds up; and the result is deterministic."""
    system_tokens = sum(cost(m) for m in msgs if m["role"] == "system")
    if system_tokens > budget:
        with pytest.raises(WindowError):
            window_messages(msgs, budget, COUNTER, summary=summary, min_turns=min_turns)
        return
    result = window_messages(msgs, budget, COUNTER, summary=summary, min_turns=min_turns)
    assert result == window_messages(msgs, budget, COUNTER, summary=summary, min_turns=min_turns)

    preambles = [m for m in result.messages if "mid" not in m]
    assert len(preambles) <= 1
    for p in preambles:
        assert p["role"] == "system" and p["content"].startswith(SUMMARY_HEADER)
    kept = [m["mid"] for m in result.messages if "mid" in m]
    dropped = [m["mid"] for m in result.dropped]
    assert kept == sorted(kept) and dropped == sorted(dropped)
    assert sorted(kept + dropped) == list(range(len(msgs)))
    rewritten = {m["mid"] for m in result.messages if "mid" in m and m != msgs[m["mid"]]}
    for m in result.messages:
        if m.get("mid") in rewritten:
            assert {k: v for k, v in m.items() if k != "content"} == {
                k: v for k, v in msgs[m["mid"]].items() if k != "content"
            }
            assert m["role"] in ("tool", "user") and isinstance(m["content"], str)

    orphans, caller = reference(msgs)
    kept_set = set(kept)
    assert not kept_set & orphans
    for res, call in caller.items():
        assert (res in kept_set) == (call in kept_set)
    assert {i for i, m in enumerate(msgs) if m["role"] == "system"} <= kept_set
    start = forced_start(msgs, orphans, caller, min_turns)
    forced = {i for i in range(start, len(msgs)) if i not in orphans and msgs[i]["role"] != "system"}

    meta = result.metadata
    assert meta.input_tokens_used == sum(cost(m) for m in result.messages) <= budget
    b = meta.breakdown
    assert b.system_messages + b.user_messages + b.assistant_messages + b.tool_messages == meta.input_tokens_used
    assert meta.messages_included == len(kept) and meta.messages_excluded == len(dropped)
    shrunk = system_tokens + sum(cost(msgs[i]) for i in forced) > budget
    if not shrunk:
        assert forced <= kept_set and not rewritten
    else:
        assert kept_set - forced <= {i for i, m in enumerate(msgs) if m["role"] == "system"}
        elided = [m for m in result.messages if m.get("mid") in rewritten and m["content"].startswith("[tool result")]
        assert len(elided) == meta.elided_tool_results
        cut_users = [m for m in result.messages if m.get("mid") in rewritten and m["role"] == "user"]
        assert len(cut_users) == int(meta.cut_user_message)
        assert len(rewritten) == meta.elided_tool_results + meta.cut_tool_results + len(cut_users)
    dropped_turn_messages = any(msgs[i]["role"] != "system" and i not in orphans for i in dropped)
    assert result.should_summarize == (
        dropped_turn_messages or bool(rewritten) or meta.input_tokens_used > 0.7 * budget
    )
    assert (result.summary_fallback != "") == dropped_turn_messages


# --- a realistic conversation ------------------------------------------------------------


def tool_heavy_conversation(n_messages: int = 200, seed: int = 7) -> list[dict]:
    """An agent session: a system prompt, user requests, and assistant steps that mostly
    call tools (read_file, grep, run_tests, edit) with outputs from a line to a few
    hundred lines, plus short explanations."""
    rng = random.Random(seed)
    code = "def handler(request):\n    value = parse(request.body)\n    return respond(value)\n"
    msgs = [system("You are an autonomous coding agent. Use tools. Keep answers short.\n" * 5)]
    call = 0
    while len(msgs) < n_messages:
        msgs.append(
            user(
                rng.choice(
                    [
                        "Fix the failing test in tests/test_api.py",
                        "Now add logging to the handler",
                        "Why is the parser slow on big inputs?",
                        "Refactor parse() into two functions",
                    ]
                )
            )
        )
        for _ in range(rng.randint(1, 4)):
            if len(msgs) >= n_messages - 2:
                break
            names = rng.sample(["read_file", "grep", "run_tests", "edit_file"], rng.randint(1, 2))
            ids = [f"call_{call + k}" for k in range(len(names))]
            call += len(names)
            msgs.append(
                assistant(
                    rng.choice([None, "Let me check."]),
                    *[(cid, name, json.dumps({"path": f"src/mod{call}.py"})) for cid, name in zip(ids, names)],
                )
            )
            for cid in ids:
                msgs.append(tool(cid, code * rng.choice([1, 3, 10, 40, 120])))
        msgs.append(assistant("Done: the change is in place and the tests pass. " * rng.randint(1, 6)))
    return msgs[:n_messages]


@pytest.mark.parametrize("budget", [1_000, 4_000, 16_000, 64_000])
def test_realistic_tool_heavy_conversation(budget):
    """Ensure that a 200-message tool-heavy session windows at 1K-64K budgets with every
    invariant: pairs intact, system kept, the last 3 turns kept (shrunk if need be) and
    always within budget."""
    msgs = tool_heavy_conversation()
    assert len(msgs) == 200
    start = time.perf_counter()
    result = window_messages(msgs, budget, COUNTER, summary="The user is hardening the API handler.")
    elapsed_ms = (time.perf_counter() - start) * 1000
    print(f"budget {budget}: {elapsed_ms:.1f} ms, {result.metadata}")
    meta = result.metadata
    assert result.messages[0] == msgs[0]
    assert meta.turns_included >= min(3, meta.turns_total)
    assert meta.input_tokens_used == sum(cost(m) for m in result.messages) <= budget
    kept_calls = {c["id"] for m in result.messages for c in m.get("tool_calls") or ()}
    kept_results = {m["tool_call_id"] for m in result.messages if m["role"] == "tool"}
    assert kept_calls == kept_results
    assert meta.messages_included + meta.messages_excluded == 200
    if result.dropped:
        assert result.summary_fallback.startswith("Earlier conversation (")
        assert COUNTER.count(result.summary_fallback) <= min(500, max(48, int(budget * 0.15)))


def test_bigger_budgets_keep_more_turns():
    """Ensure that a larger budget never keeps fewer turns of the same conversation."""
    msgs = tool_heavy_conversation()
    kept = [window_messages(msgs, b, COUNTER).metadata.turns_included for b in (1_000, 4_000, 16_000, 64_000, 10**6)]
    assert kept == sorted(kept)
    assert kept[-1] == window_messages(msgs, 10**6, COUNTER).metadata.turns_total
