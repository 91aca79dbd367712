"""OpenAI-style chat messages: the shape we accept and what each one costs.

Separate from windowing because it is about one message at a time: `validate_messages`
is also what request parsing calls on its own (ctx/bundle validates messages before any
windowing happens), and a message's token cost is the same wherever it is counted. The
checks name the exact JSON path of a bad value (`messages[3].tool_calls[0].id`) and say
how to fix it, because the caller is an agent that can correct and resend.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctx_lsp.errors import InvalidParam, json_type, type_problem
from ctx_lsp.tokens import TokenCounter

ROLES = ("system", "user", "assistant", "tool")

MESSAGE_OVERHEAD_TOKENS = 4
"""Framing tokens per message (role and separators), as in OpenAI's published chat-format
count (3-4 per message). Added so a window of many short messages is not under-counted."""

TOOL_CALL_OVERHEAD_TOKENS = 4
"""Framing per tool call (its type and the JSON around id, name and arguments), on top of
counting the id, name and arguments themselves."""

TOOL_CALL_EXAMPLE = '{"id": "call_1", "type": "function", "function": {"name": "…", "arguments": "{}"}}'
"""Quoted in error fixes, so an agent sees the exact shape expected."""

KNOWN_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
"""Other keys (`refusal`, provider extensions) are passed through unchanged and counted as
their JSON: whatever we return may be sent to the model, so it must be in the count."""


# --- validation --------------------------------------------------------------------------


def validate_messages(messages: Any) -> list[dict[str, Any]]:
    """Check OpenAI-style messages and return shallow copies of them.

    Raises `InvalidParam` naming the exact JSON path (`messages[3].tool_calls[0].id`), so
    an agent can fix what it sent. Unknown keys are allowed and passed through.
    """
    if not _is_array(messages):
        raise InvalidParam(
            "messages",
            f"expected an array of message objects, got {json_type(messages)}",
            'send [{"role": "user", "content": "…"}, …]',
        )
    return [_validate_message(message, f"messages[{i}]") for i, message in enumerate(messages)]


def _validate_message(message: Any, path: str) -> dict[str, Any]:
    if not _is_object(message):
        raise InvalidParam(
            path,
            f"expected a message object, got {json_type(message)}",
            'send {"role": "user", "content": "…"}',
        )
    role = message.get("role")
    if role not in ROLES:
        problem = "is required" if role is None else f"unknown role {role!r}"
        raise InvalidParam(
            f"{path}.role",
            problem,
            "use one of system, user, assistant, tool (send developer messages as system)",
        )
    _validate_content(message.get("content"), f"{path}.content")
    for key in ("name", "tool_call_id"):
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            raise InvalidParam(
                f"{path}.{key}",
                f"expected a string, got {json_type(value)}",
                f"send {key} as a string",
            )
    if role == "tool" and not message.get("tool_call_id"):
        raise InvalidParam(
            f"{path}.tool_call_id",
            "is required on tool messages",
            "send the id of the tool call this result answers",
        )
    calls = message.get("tool_calls")
    if calls is not None:
        if role != "assistant":
            raise InvalidParam(
                f"{path}.tool_calls",
                f"only assistant messages carry tool calls, not {role}",
                "remove the field",
            )
        if not _is_array(calls):
            raise InvalidParam(
                f"{path}.tool_calls",
                f"expected an array of tool calls, got {json_type(calls)}",
                f"send [{TOOL_CALL_EXAMPLE}]",
            )
        for j, call in enumerate(calls):
            _validate_tool_call(call, f"{path}.tool_calls[{j}]")
    return dict(message)


def _validate_content(content: Any, path: str) -> None:
    if content is None or isinstance(content, str):
        return
    if not _is_array(content):
        raise InvalidParam(
            path,
            f"expected a string, null or an array of content parts, got {json_type(content)}",
            'send the text as a string, or parts like [{"type": "text", "text": "…"}]',
        )
    for k, part in enumerate(content):
        if not _is_object(part):
            raise InvalidParam(
                f"{path}[{k}]",
                f"expected a content part object, got {json_type(part)}",
                'send {"type": "text", "text": "…"}',
            )
        if part.get("type") == "text" and not isinstance(part.get("text"), str):
            raise InvalidParam(
                f"{path}[{k}].text",
                f"expected a string, got {json_type(part.get('text'))}",
                "send the text of a text part as a string",
            )


def _validate_tool_call(call: Any, path: str) -> None:
    example = TOOL_CALL_EXAMPLE
    if not _is_object(call):
        raise InvalidParam(path, f"expected a tool call object, got {json_type(call)}", f"send {example}")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidParam(
            f"{path}.id", type_problem(call_id, "a string"), "send the id the tool result's tool_call_id refers to"
        )
    kind = call.get("type")
    if kind is not None and not isinstance(kind, str):
        raise InvalidParam(f"{path}.type", f"expected a string, got {json_type(kind)}", 'send "function"')
    function = call.get("function")
    if not _is_object(function):
        problem = "is required" if function is None else f"expected an object, got {json_type(function)}"
        raise InvalidParam(f"{path}.function", problem, 'send {"name": "…", "arguments": "{}"}')
    name = function.get("name")
    if not isinstance(name, str):
        problem = "is required" if name is None else f"expected a string, got {json_type(name)}"
        raise InvalidParam(f"{path}.function.name", problem, "send the tool's name as a string")
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, (str, Mapping)):
        raise InvalidParam(
            f"{path}.function.arguments",
            f"expected a JSON string or an object, got {json_type(arguments)}",
            'send the arguments as a JSON string, e.g. "{\\"path\\": \\"a.py\\"}"',
        )


def _is_object(value: Any) -> bool:
    """`isinstance(value, Mapping)`, with a fast path: JSON objects are dicts, and the ABC
    check alone was a third of the validation time on a 200-message conversation."""
    return type(value) is dict or isinstance(value, Mapping)


def _is_array(value: Any) -> bool:
    return type(value) is list or isinstance(value, tuple)


# --- cost --------------------------------------------------------------------------------


def content_text(content: Any) -> str:
    """The text of a content field: text parts as text, other parts (images, audio) as
    their JSON, because we cannot know what a provider charges for them and must not
    count them as free."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] if part.get("type") == "text" else _to_json(part) for part in content)


def message_text(message: Mapping[str, Any]) -> str:
    """Every string of a message a model may see: content, name, tool call ids, names and
    arguments, and any extra keys (as JSON)."""
    pieces = [content_text(message.get("content"))]
    for key in ("name", "tool_call_id"):
        if message.get(key):
            pieces.append(message[key])
    for call in message.get("tool_calls") or ():
        function = call["function"]
        arguments = function.get("arguments")
        pieces += [
            call["id"],
            function["name"],
            arguments if isinstance(arguments, str) else _to_json(arguments),
        ]
    pieces += [f"{key}: {_to_json(value)}" for key, value in message.items() if key not in KNOWN_KEYS]
    return "\n".join(piece for piece in pieces if piece)


def message_tokens(message: Mapping[str, Any], counter: TokenCounter) -> int:
    """What one message costs in the window: its text plus framing."""
    calls = len(message.get("tool_calls") or ())
    return counter.count(message_text(message)) + MESSAGE_OVERHEAD_TOKENS + TOOL_CALL_OVERHEAD_TOKENS * calls


def _to_json(value: Any) -> str:
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
