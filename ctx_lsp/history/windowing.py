"""Conversation windowing: which of an agent's messages fit its history budget.

An agent's history grows without bound and a model's window does not, so something has
to go. Cutting at an arbitrary message breaks the conversation in ways models notice:
a tool result without the call that asked for it is rejected by chat APIs, and a reply
without its question reads as nonsense. So the unit we keep or drop is the *turn* (a
user message and everything up to the next one), newest first, and the rolling summary
the agent sends back stands in for what was dropped (DESIGN: Conversation windowing).

Choices this module makes, all deliberate:

- Whole turns only. A turn is never partly kept, so an assistant message with
  `tool_calls` and the `tool` messages answering it (same turn) stay together. When a
  result arrives after a later user message (its call is in an earlier turn), the turns
  in between are merged into one unit and kept or dropped together.
- The kept turns are a contiguous run ending at the newest: the first older turn that
  does not fit stops the scan, so the window never has a hole in the middle.
- The last `min_turns` turns are always kept, even over budget: a window without the
  question being worked on is useless. Then `metadata.over_budget` is true, a note says
  by how much, the summary preamble is left out and nothing older is kept, so the
  overshoot is exactly the newest turns' own size.
- Priority when spending the budget: system messages (always) → the last `min_turns`
  turns → the summary preamble (cut to whole lines, or left out, if it does not fit) →
  older turns, newest first.
- Orphan tool results (no earlier assistant call with that id) are dropped with a note:
  sending one to a model makes the request fail. Unanswered tool calls are kept as
  sent, since the newest turn is often waiting for exactly those results; only
  unanswered calls before the final turn get a note.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctx_lsp.errors import CtxError, InvalidParam, json_type, type_problem
from ctx_lsp.tokens import TokenCounter, cut_to_tokens, ellipsize, line_count

ROLES = ("system", "user", "assistant", "tool")
STRATEGY = "recent_turns"
"""`metadata.strategy`: whole turns, newest first, after the system messages."""

DEFAULT_MIN_TURNS = 3
"""DESIGN: at least the last 3 turns are kept."""

MESSAGE_OVERHEAD_TOKENS = 4
"""Framing tokens per message (role and separators), as in OpenAI's published chat-format
count (3-4 per message). Added so a window of many short messages is not under-counted."""

TOOL_CALL_OVERHEAD_TOKENS = 4
"""Framing per tool call (its type and the JSON around id, name and arguments), on top of
counting the id, name and arguments themselves."""

SUMMARIZE_AT_SHARE = 0.70
"""DESIGN: `should_summarize` once usage passes 70 % of the history budget, so the agent
summarises before turns start falling off rather than after."""

SUMMARY_HEADER = "[Summary of earlier conversation]\n"
"""Starts the preamble message, so neither the model nor a person mistakes the summary
for an instruction from the real system prompt."""

SUMMARY_FALLBACK_SHARE = 0.15
"""The template summary is cut to this share of the budget: it is meant to be passed back
as `summary` next time, and then it competes with real turns for the same budget."""
SUMMARY_FALLBACK_MAX_TOKENS = 500
"""A template summary longer than this is a list of questions nobody reads."""
SUMMARY_FALLBACK_MIN_TOKENS = 48
"""Room for at least the header and tools lines, even under a tiny budget."""

FIRST_LINE_MAX_CHARS = 100
"""How much of each dropped user message the template summary quotes."""
MAX_TOOLS_LISTED = 12
"""Tools named in the template summary; the rest are counted, not named."""

TOOL_CALL_EXAMPLE = (
    '{"id": "call_1", "type": "function", "function": {"name": "…", "arguments": "{}"}}'
)
"""Quoted in error fixes, so an agent sees the exact shape expected."""

KNOWN_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
"""Other keys (`refusal`, provider extensions) are passed through unchanged and counted as
their JSON: whatever we return may be sent to the model, so it must be in the count."""


class WindowError(CtxError):
    """The system messages alone do not fit the history budget.

    Not solvable by dropping turns (system messages are always kept), so the caller has
    to shorten the system prompt or raise the budget; we say by how much.
    """

    def __init__(self, system_tokens: int, budget: int) -> None:
        super().__init__(
            f"messages: the system messages alone take {system_tokens:,} tokens, over the "
            f"{budget:,}-token history budget; shorten the system prompt by at least "
            f"{system_tokens - budget:,} tokens or raise the budget"
        )
        self.system_tokens = system_tokens
        self.budget = budget


@dataclass(frozen=True, slots=True)
class RoleBreakdown:
    """Tokens (not message counts) per role among the returned messages; the summary
    preamble counts as system. The four add up to `input_tokens_used`."""

    system_messages: int
    user_messages: int
    assistant_messages: int
    tool_messages: int


@dataclass(frozen=True, slots=True)
class WindowMetadata:
    strategy: str
    max_input_tokens: int
    """The history budget."""
    input_tokens_used: int
    """Sum of the returned messages' costs (text + framing), preamble included."""
    messages_included: int
    """Input messages returned; the preamble is not an input message, so
    `messages_included + messages_excluded` is always the number of input messages."""
    messages_excluded: int
    breakdown: RoleBreakdown
    turns_total: int
    turns_included: int
    over_budget: bool
    """True only when the system messages plus the last `min_turns` turns exceed the
    budget; they are kept anyway and nothing else is."""


@dataclass(frozen=True, slots=True)
class WindowResult:
    messages: tuple[dict[str, Any], ...]
    """Kept messages in their original order; the summary preamble, if any, is a system
    message placed right after the leading system messages (so the real system prompt
    stays first, as chat templates and prompt caches expect)."""
    dropped: tuple[dict[str, Any], ...]
    """Every input message not returned, in order: dropped turns and orphan tool results."""
    should_summarize: bool
    summary_fallback: str
    """Template summary of the dropped turns ("" if none): a stand-in the agent may send
    back as `summary`, or replace with an LLM-written one. Covers only the turns dropped
    by this call; it does not repeat the `summary` that was passed in."""
    metadata: WindowMetadata
    notes: tuple[str, ...] = ()
    """Human-readable reasons for anything surprising: orphans, unanswered calls, over
    budget, a summary cut or left out."""


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
        raise InvalidParam(
            path, f"expected a tool call object, got {json_type(call)}", f"send {example}"
        )
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidParam(f"{path}.id", type_problem(call_id, "a string"),
                           "send the id the tool result's tool_call_id refers to")
    kind = call.get("type")
    if kind is not None and not isinstance(kind, str):
        raise InvalidParam(
            f"{path}.type", f"expected a string, got {json_type(kind)}", 'send "function"'
        )
    function = call.get("function")
    if not _is_object(function):
        problem = (
            "is required" if function is None else f"expected an object, got {json_type(function)}"
        )
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
    return "\n".join(
        part["text"] if part.get("type") == "text" else _to_json(part) for part in content
    )


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
    pieces += [
        f"{key}: {_to_json(value)}" for key, value in message.items() if key not in KNOWN_KEYS
    ]
    return "\n".join(piece for piece in pieces if piece)


def message_tokens(message: Mapping[str, Any], counter: TokenCounter) -> int:
    """What one message costs in the window: its text plus framing."""
    calls = len(message.get("tool_calls") or ())
    return (
        counter.count(message_text(message))
        + MESSAGE_OVERHEAD_TOKENS
        + TOOL_CALL_OVERHEAD_TOKENS * calls
    )


def _to_json(value: Any) -> str:
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


# --- structure ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Conversation:
    """Message indexes grouped the way windowing needs them; no text, no counts."""

    system: tuple[int, ...]
    orphans: tuple[int, ...]
    """Tool results whose tool_call_id matches no earlier assistant tool call."""
    turns: tuple[tuple[int, ...], ...]
    """Non-system, non-orphan messages by turn, oldest first."""
    units: tuple[tuple[int, int], ...]
    """(first turn, last turn) ranges kept or dropped as one: a turn on its own, or turns
    merged because a tool result came after a later user message."""
    unanswered: tuple[tuple[int, str], ...]
    """(assistant message index, call id) of tool calls no later tool message answers."""

    def messages_of(self, unit: tuple[int, int]) -> list[int]:
        first, last = unit
        return [i for turn in self.turns[first : last + 1] for i in turn]


def structure(messages: Sequence[Mapping[str, Any]]) -> Conversation:
    """Group validated messages into turns and pair tool results with their calls.

    A result answers the most recent earlier call with its id: some models reuse ids
    such as `call_0` in every turn, so ids are not unique across a conversation.
    """
    system: list[int] = []
    orphans: list[int] = []
    turns: list[list[int]] = []
    reach: list[int] = []  # per turn: the last turn holding a result of one of its calls
    turn_of: dict[int, int] = {}
    caller_of: dict[str, int] = {}
    answered: set[tuple[int, str]] = set()
    for i, message in enumerate(messages):
        role = message["role"]
        if role == "system":
            system.append(i)
            continue
        caller = None
        if role == "tool":
            caller = caller_of.get(message["tool_call_id"])
            if caller is None:
                orphans.append(i)
                continue
            answered.add((caller, message["tool_call_id"]))
        if role == "user" or not turns:
            turns.append([])
            reach.append(len(turns) - 1)
        turn = len(turns) - 1
        turns[turn].append(i)
        turn_of[i] = turn
        if caller is not None:
            reach[turn_of[caller]] = max(reach[turn_of[caller]], turn)
        for call in message.get("tool_calls") or ():
            caller_of[call["id"]] = i
    unanswered = [
        (i, call["id"])
        for i, message in enumerate(messages)
        for call in message.get("tool_calls") or ()
        if (i, call["id"]) not in answered
    ]
    return Conversation(
        system=tuple(system),
        orphans=tuple(orphans),
        turns=tuple(tuple(turn) for turn in turns),
        units=_merge_units(reach),
        unanswered=tuple(unanswered),
    )


def _merge_units(reach: Sequence[int]) -> tuple[tuple[int, int], ...]:
    units = []
    start = 0
    while start < len(reach):
        end = reach[start]
        turn = start
        while turn < end:
            turn += 1
            end = max(end, reach[turn])
        units.append((start, end))
        start = end + 1
    return tuple(units)


# --- windowing ---------------------------------------------------------------------------


def window_messages(
    messages: Sequence[Mapping[str, Any]],
    budget: int,
    counter: TokenCounter,
    *,
    summary: str | None = None,
    min_turns: int = DEFAULT_MIN_TURNS,
) -> WindowResult:
    """Keep the system messages and as many of the newest whole turns as fit `budget`.

    Validates first, so any JSON-shaped input either windows or raises `InvalidParam`
    naming the field; raises `WindowError` if the system messages alone exceed the
    budget. Messages are counted lazily, newest first, and each at most once: turns
    older than the first one that does not fit are never counted.
    """
    _check_int("budget", budget, lo=1, example=4000)
    _check_int("min_turns", min_turns, lo=0, example=DEFAULT_MIN_TURNS)
    if summary is not None and not isinstance(summary, str):
        raise InvalidParam(
            "summary",
            f"expected a string, got {json_type(summary)}",
            "send the rolling summary as text",
        )
    msgs = validate_messages(messages)
    convo = structure(msgs)
    cost = _LazyCosts(msgs, counter)
    system_tokens = sum(cost(i) for i in convo.system)
    if system_tokens > budget:
        raise WindowError(system_tokens, budget)
    choice = choose_units(convo, cost, budget, system_tokens, min_turns, summary, counter)

    kept = set(convo.system).union(*(convo.messages_of(unit) for unit in choice.units))
    out = [msgs[i] for i in sorted(kept)]
    if choice.preamble is not None:
        out.insert(_leading_system_count(out), choice.preamble)
    dropped_units = [unit for unit in convo.units if unit not in set(choice.units)]
    dropped_turns = sum(last - first + 1 for first, last in dropped_units)
    breakdown = Counter({"system": choice.preamble_tokens})
    for i in kept:
        breakdown[msgs[i]["role"]] += cost(i)
    return WindowResult(
        messages=tuple(out),
        dropped=tuple(msgs[i] for i in range(len(msgs)) if i not in kept),
        should_summarize=dropped_turns > 0 or choice.used > SUMMARIZE_AT_SHARE * budget,
        summary_fallback=summarize_dropped(
            [msgs[i] for unit in dropped_units for i in convo.messages_of(unit)],
            dropped_turns,
            budget,
            counter,
        ),
        metadata=WindowMetadata(
            strategy=STRATEGY,
            max_input_tokens=budget,
            input_tokens_used=choice.used,
            messages_included=len(kept),
            messages_excluded=len(msgs) - len(kept),
            breakdown=RoleBreakdown(
                system_messages=breakdown["system"],
                user_messages=breakdown["user"],
                assistant_messages=breakdown["assistant"],
                tool_messages=breakdown["tool"],
            ),
            turns_total=len(convo.turns),
            turns_included=sum(last - first + 1 for first, last in choice.units),
            over_budget=choice.over_budget,
        ),
        notes=(
            *[_orphan_note(msgs[i], i) for i in convo.orphans],
            *choice.notes,
            *_unanswered_notes(convo, kept),
        ),
    )


class _LazyCosts:
    """Message costs, counted on first use: older turns past the window are never counted."""

    __slots__ = ("_messages", "_counter", "_costs")

    def __init__(self, messages: Sequence[Mapping[str, Any]], counter: TokenCounter) -> None:
        self._messages = messages
        self._counter = counter
        self._costs: dict[int, int] = {}

    def __call__(self, i: int) -> int:
        cost = self._costs.get(i)
        if cost is None:
            cost = self._costs[i] = message_tokens(self._messages[i], self._counter)
        return cost


@dataclass(frozen=True, slots=True)
class UnitChoice:
    units: tuple[tuple[int, int], ...]
    """Kept units, newest first."""
    used: int
    """Tokens of the system messages, kept units and preamble."""
    over_budget: bool
    preamble: dict[str, Any] | None
    preamble_tokens: int
    notes: tuple[str, ...]


def choose_units(
    convo: Conversation,
    cost: Callable[[int], int],
    budget: int,
    system_tokens: int,
    min_turns: int,
    summary: str | None,
    counter: TokenCounter,
) -> UnitChoice:
    """Spend what the system messages left: the last `min_turns` turns (whatever they
    cost), then the summary preamble, then older units newest first until one does not fit."""
    first_forced = max(0, len(convo.turns) - min_turns)
    newest_first = list(reversed(convo.units))
    forced = [unit for unit in newest_first if unit[1] >= first_forced]
    spent = system_tokens + sum(cost(i) for unit in forced for i in convo.messages_of(unit))
    over_budget = spent > budget
    notes = []
    if over_budget:
        turns = min(min_turns, len(convo.turns))
        notes.append(
            f"the last {turns} turns take {spent - system_tokens:,} tokens (with "
            f"{system_tokens:,} of system messages: {spent:,}), over the {budget:,}-token "
            "budget; kept anyway (min_turns), nothing older and no summary"
        )
    preamble, preamble_tokens, summary_note = _summary_preamble(summary, budget - spent, counter)
    spent += preamble_tokens
    if summary_note:
        notes.append(summary_note)
    kept = list(forced)
    for unit in newest_first[len(forced) :]:
        unit_tokens = _cost_within(convo.messages_of(unit), cost, budget - spent)
        if unit_tokens is None:
            break
        kept.append(unit)
        spent += unit_tokens
    return UnitChoice(
        units=tuple(kept),
        used=spent,
        over_budget=over_budget,
        preamble=preamble,
        preamble_tokens=preamble_tokens,
        notes=tuple(notes),
    )


def _cost_within(indexes: Sequence[int], cost: Callable[[int], int], room: int) -> int | None:
    """The summed cost of `indexes`, or None as soon as it passes `room` (the rest of a
    unit that cannot fit is not counted)."""
    total = 0
    for i in indexes:
        total += cost(i)
        if total > room:
            return None
    return total


def _unanswered_notes(convo: Conversation, kept: set[int]) -> list[str]:
    final_turn = set(convo.turns[-1]) if convo.turns else set()
    return [
        f"messages[{i}]: tool call {call_id!r} has no tool result; kept as sent"
        for i, call_id in convo.unanswered
        if i in kept and i not in final_turn
    ]


def _check_int(field: str, value: Any, *, lo: int, example: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParam(
            field, f"expected a whole number, got {json_type(value)}", f"pass e.g. {example}"
        )
    if value < lo:
        raise InvalidParam(field, f"{value} is below the minimum {lo}", f"pass e.g. {example}")


def _leading_system_count(messages: Sequence[Mapping[str, Any]]) -> int:
    count = 0
    while count < len(messages) and messages[count]["role"] == "system":
        count += 1
    return count


def _orphan_note(message: Mapping[str, Any], i: int) -> str:
    return (
        f"messages[{i}]: tool result for {message['tool_call_id']!r} answers no earlier tool call; "
        "dropped (chat APIs reject a result without its call)"
    )


def _summary_preamble(
    summary: str | None, room: int, counter: TokenCounter
) -> tuple[dict[str, Any] | None, int, str | None]:
    """The preamble message, its cost and a note if it had to be cut or left out.

    Cut at whole lines (never mid-line) so what is left still reads as a summary.
    """
    text = (summary or "").strip()
    if not text:
        return None, 0, None
    whole = counter.count(SUMMARY_HEADER + text) + MESSAGE_OVERHEAD_TOKENS
    if whole <= room:
        return {"role": "system", "content": SUMMARY_HEADER + text}, whole, None
    limit = room - MESSAGE_OVERHEAD_TOKENS - counter.count(SUMMARY_HEADER)
    lines = line_count(text)
    for _ in range(4):  # the header can merge with the first line; recount and shrink
        if limit <= 0:
            break
        cut = cut_to_tokens(
            text, limit, counter, marker=lambda n: f"[… {n} more summary lines cut for budget]"
        )
        if cut.omitted_lines >= lines:
            break
        tokens = counter.count(SUMMARY_HEADER + cut.text) + MESSAGE_OVERHEAD_TOKENS
        if tokens <= room:
            note = f"summary cut from {whole:,} to {tokens:,} tokens to fit the budget"
            return {"role": "system", "content": SUMMARY_HEADER + cut.text}, tokens, note
        limit -= tokens - room
    return (
        None,
        0,
        f"summary ({whole:,} tokens) left out: only {max(room, 0):,} tokens were left for it",
    )


# --- template summary --------------------------------------------------------------------


def summarize_dropped(
    dropped: Sequence[Mapping[str, Any]], turns: int, budget: int, counter: TokenCounter
) -> str:
    """A deterministic summary of dropped turns, for agents with no LLM summary yet.

    Lists what a model most needs to stay oriented: which tools ran, what the assistant
    last concluded, and what the user asked (first line of each request). Cut to whole
    lines at `SUMMARY_FALLBACK_SHARE` of the budget, keeping the earliest requests: the
    first one usually states the task the rest of the conversation serves.
    """
    if not dropped:
        return ""
    lines = [
        f"Earlier conversation ({turns} turns, {len(dropped)} messages) dropped to fit the budget."
    ]
    tools = Counter(
        _first_line(call["function"]["name"]) or "(unnamed)"
        for message in dropped
        for call in message.get("tool_calls") or ()
    )
    if tools:
        ranked = sorted(tools.items(), key=lambda item: (-item[1], item[0]))
        listed = ", ".join(f"{name}×{n}" for name, n in ranked[:MAX_TOOLS_LISTED])
        rest = len(ranked) - MAX_TOOLS_LISTED
        lines.append(f"Tools used: {listed}" + (f" and {rest} more" if rest > 0 else "") + ".")
    last_reply = next(
        (
            line
            for m in reversed(dropped)
            if m["role"] == "assistant" and (line := _first_line(content_text(m.get("content"))))
        ),
        "",
    )
    if last_reply:
        lines.append(f"Assistant last said: {last_reply}")
    asks = [_first_line(content_text(m.get("content"))) for m in dropped if m["role"] == "user"]
    asks = [ask for ask in asks if ask]
    if asks:
        lines.append("User asked:")
        lines += [f"- {ask}" for ask in asks]
    cap = min(
        SUMMARY_FALLBACK_MAX_TOKENS,
        max(SUMMARY_FALLBACK_MIN_TOKENS, int(budget * SUMMARY_FALLBACK_SHARE)),
    )
    return cut_to_tokens(
        "\n".join(lines), cap, counter, marker=lambda n: f"[… {n} more lines]"
    ).text


_WHITESPACE = re.compile(r"\s+")
_NON_BLANK_LINE = re.compile(r"[^\S\n]*\S[^\n]*")


def _first_line(text: str) -> str:
    """First non-blank line, whitespace collapsed, cut to `FIRST_LINE_MAX_CHARS`.

    Reads only up to that line: a dropped message may be a 100 KB paste."""
    match = _NON_BLANK_LINE.search(text)
    line = _WHITESPACE.sub(" ", match.group()).strip() if match else ""
    return ellipsize(line, FIRST_LINE_MAX_CHARS)
