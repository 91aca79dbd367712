"""Tests for ctx_lsp/history/messages.py: message validation and per-message token cost."""

from __future__ import annotations

import pytest

from ctx_lsp.errors import InvalidParam
from ctx_lsp.history.messages import MESSAGE_OVERHEAD_TOKENS, TOOL_CALL_OVERHEAD_TOKENS, validate_messages
from ctx_lsp.history.windowing import window_messages
from tests.history.conftest import COUNTER, assistant, cost, user

# --- costs -------------------------------------------------------------------------------


def test_message_cost_counts_text_framing_and_tool_calls():
    """Ensure that a message costs its counted strings plus the documented framing: per
    message and per tool call."""
    plain = user("hello world")
    assert cost(plain) == COUNTER.count("hello world") + MESSAGE_OVERHEAD_TOKENS
    call = assistant(None, ("c1", "read_file", '{"path": "a.py"}'))
    text = "\n".join(["c1", "read_file", '{"path": "a.py"}'])
    assert cost(call) == COUNTER.count(text) + MESSAGE_OVERHEAD_TOKENS + TOOL_CALL_OVERHEAD_TOKENS


def test_content_parts_count_text_and_other_parts_as_json():
    """Ensure that text parts count as their text and other parts (images) as their JSON,
    and that extra keys are counted too, since they may reach the model."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 400}}
    parts = user([{"type": "text", "text": "look"}, image])  # type: ignore[arg-type]
    assert cost(parts) > cost(user("look")) + 50
    assert cost({**user("hi"), "refusal": "I can't " * 20}) > cost(user("hi")) + 20


# --- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ({"role": "user"}, "messages"),
        ("hello", "messages"),
        (None, "messages"),
        ([user("a"), 3], "messages[1]"),
        ([{"content": "x"}], "messages[0].role"),
        ([{"role": "developer", "content": "x"}], "messages[0].role"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": "user", "content": {"text": "x"}}], "messages[0].content"),
        ([{"role": "user", "content": ["x"]}], "messages[0].content[0]"),
        (
            [{"role": "user", "content": [{"type": "text", "text": 1}]}],
            "messages[0].content[0].text",
        ),
        ([{"role": "user", "content": "x", "name": 3}], "messages[0].name"),
        ([user("a"), {"role": "assistant", "tool_calls": {"id": "x"}}], "messages[1].tool_calls"),
        ([{"role": "user", "content": "x", "tool_calls": []}], "messages[0].tool_calls"),
        ([{"role": "assistant", "tool_calls": ["x"]}], "messages[0].tool_calls[0]"),
        (
            [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}],
            "messages[0].tool_calls[0].id",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": 7, "function": {"name": "f"}}]}],
            "messages[0].tool_calls[0].id",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a"}]}],
            "messages[0].tool_calls[0].function",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a", "function": {}}]}],
            "messages[0].tool_calls[0].function.name",
        ),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": 3}}],
                }
            ],
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            [user("a"), user("b"), user("c"), {"role": "tool", "content": "r"}],
            "messages[3].tool_call_id",
        ),
    ],
)
@pytest.mark.parametrize(
    "check",
    [validate_messages, lambda messages: window_messages(messages, 1000, COUNTER)],
    ids=["validate_messages", "window_messages"],
)
def test_malformed_messages_name_the_exact_field(messages, field, check):
    """Ensure that malformed input raises InvalidParam whose field is the JSON path of the
    offending value, with a message in the "field: problem; fix" form, both from the
    validator itself and from window_messages, which validates first."""
    with pytest.raises(InvalidParam) as info:
        check(messages)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
