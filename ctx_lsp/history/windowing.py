"""Conversation windowing: which of an agent's messages fit its history budget.

An agent's history grows without bound and a model's window does not, so something has
to go. Cutting at an arbitrary message breaks the conversation in ways models notice:
a tool result without the call that asked for it is rejected by chat APIs, and a reply
without its question reads as nonsense. So the unit we keep or drop is the *turn* (a
user message and everything up to the next one), newest first, and the rolling summary
the agent sends back stands in for what was dropped (DESIGN: Conversation windowing).

Choices this module makes, all deliberate:

- Whole turns, older than the last `min_turns`. An older turn is kept whole or not at
  all, so an assistant message with `tool_calls` and the `tool` messages answering it
  (same turn) stay together. When a result arrives after a later user message (its call
  is in an earlier turn), the turns in between are merged into one unit and kept or
  dropped together.
- The kept turns are a contiguous run ending at the newest: the first older turn that
  does not fit stops the scan, so the window never has a hole in the middle.
- The last `min_turns` turns are kept, and shrunk from the inside when they alone are
  over budget (`elision.py`: tool results elided oldest first as placeholders, a huge
  output cut head and tail, then older turns and steps dropped). An agent's long run of
  tool calls after one user message is the normal case, and a window without the work in
  progress is useless. Then nothing older is kept (it would sit next to elided newer
  results) and `metadata` counts what was elided and cut.
- The budget is never exceeded: the one input that cannot be windowed is system messages
  that alone exceed it (`WindowError`, an `InvalidParam` on `messages`).
- Priority when spending the budget: system messages (always) → the last `min_turns`
  turns (shrunk if need be) → the summary preamble (cut to whole lines, or left out, if
  it does not fit) → older turns, newest first.
- Orphan tool results (no earlier assistant call with that id) are dropped with a note:
  sending one to a model makes the request fail. Unanswered tool calls are kept as
  sent, since the newest turn is often waiting for exactly those results; only
  unanswered calls before the final turn get a note.

What one message is (its accepted shape and its token cost) lives in `messages.py`, and
the template summary of dropped turns in `summary_fallback.py`; this module owns turns,
their pairing and which of them fit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctx_lsp.errors import InvalidParam, json_type
from ctx_lsp.history.elision import Fitted, fit_forced
from ctx_lsp.history.messages import MESSAGE_OVERHEAD_TOKENS, message_tokens, validate_messages
from ctx_lsp.history.summary_fallback import summarize_dropped
from ctx_lsp.tokens import TokenCounter, cut_to_tokens, line_count

STRATEGY = "recent_turns"
"""`metadata.strategy`: whole turns, newest first, after the system messages."""

DEFAULT_MIN_TURNS = 3
"""DESIGN: at least the last 3 turns are kept."""

SUMMARIZE_AT_SHARE = 0.70
"""DESIGN: `should_summarize` once usage passes 70 % of the history budget, so the agent
summarises before turns start falling off rather than after."""

SUMMARY_HEADER = "[Summary of earlier conversation]\n"
"""Starts the preamble message, so neither the model nor a person mistakes the summary
for an instruction from the real system prompt."""


class WindowError(InvalidParam):
    """The system messages alone do not fit the budget.

    Not solvable by dropping or eliding anything (system messages are always kept), so the
    caller has to shorten the system prompt or raise the budget; we say by how much. An
    `InvalidParam` on `messages`, so every adapter reports it as the request's fault.
    """

    def __init__(self, system_tokens: int, budget: int, budget_name: str = "history budget") -> None:
        super().__init__(
            "messages",
            f"the system messages alone take {system_tokens:,} tokens, over the {budget:,}-token {budget_name}",
            f"shorten the system prompt by at least {system_tokens - budget:,} tokens or raise the budget",
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
    """Turns with at least one message returned (a shrunk newest turn counts)."""
    elided_tool_results: int = 0
    """Tool results returned as a placeholder (call kept, content replaced) to fit."""
    cut_tool_results: int = 0
    """Tool results returned cut head and tail (start and end kept) to fit."""
    cut_user_message: bool = False
    """The newest user message was alone over the budget and is returned cut head and tail."""


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
    """Human-readable reasons for anything surprising: orphans, unanswered calls, tool
    results elided or cut, messages dropped from the newest turns, a summary cut or left out."""


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
    answers: tuple[tuple[int, int], ...] = ()
    """(tool message index, index of the assistant message holding its call)."""

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
    answers: list[tuple[int, int]] = []
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
            answers.append((i, caller))
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
        answers=tuple(answers),
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
    costs: MutableMapping[int, int] | None = None,
) -> WindowResult:
    """Keep the system messages and as many of the newest whole turns as fit `budget`.

    Validates first, so any JSON-shaped input either windows or raises `InvalidParam`
    naming the field; raises `WindowError` if the system messages alone exceed the
    budget. Messages are counted lazily, newest first, and each at most once: turns
    older than the first one that does not fit are never counted. `costs` (message index
    → cost) keeps those counts across calls on the *same* messages, for a caller that
    windows one conversation at several budgets.
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
    cost = _LazyCosts(msgs, counter, {} if costs is None else costs)
    system_tokens = sum(cost(i) for i in convo.system)
    if system_tokens > budget:
        raise WindowError(system_tokens, budget)
    choice = choose_units(convo, cost, budget, system_tokens, min_turns, summary, counter, msgs)

    kept = set(convo.system).union(*(convo.messages_of(unit) for unit in choice.units)) - choice.removed
    out = [choice.replaced.get(i, msgs[i]) for i in sorted(kept)]
    if choice.preamble is not None:
        out.insert(_leading_system_count(out), choice.preamble)
    dropped_units = [unit for unit in convo.units if unit not in set(choice.units)]
    dropped_turns = sum(last - first + 1 for first, last in dropped_units)
    dropped_in_turns = [msgs[i] for unit in dropped_units for i in convo.messages_of(unit)]
    dropped_in_turns += [msgs[i] for i in sorted(choice.removed)]
    breakdown = Counter({"system": choice.preamble_tokens})
    for i in kept:
        breakdown[msgs[i]["role"]] += choice.costs[i] if i in choice.costs else cost(i)
    return WindowResult(
        messages=tuple(out),
        dropped=tuple(msgs[i] for i in range(len(msgs)) if i not in kept),
        should_summarize=bool(dropped_in_turns) or choice.shrunk or choice.used > SUMMARIZE_AT_SHARE * budget,
        summary_fallback=summarize_dropped(dropped_in_turns, dropped_turns, budget, counter),
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
            turns_included=sum(1 for turn in convo.turns if not kept.isdisjoint(turn)),
            elided_tool_results=choice.elided,
            cut_tool_results=choice.cut,
            cut_user_message=choice.user_cut,
        ),
        notes=(
            *[_orphan_note(msgs[i], i) for i in convo.orphans],
            *choice.notes,
            *_unanswered_notes(convo, kept),
        ),
    )


def essential_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The system messages and the newest user message, in order: what a window keeps
    whenever they fit. A caller sizing a budget for a conversation (the bundle, giving it
    more than its share) needs at least room for these. Validates like `window_messages`."""
    msgs = validate_messages(messages)
    users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
    return [m for i, m in enumerate(msgs) if m["role"] == "system" or (users and i == users[-1])]


class _LazyCosts:
    """Message costs, counted on first use: older turns past the window are never counted."""

    __slots__ = ("_costs", "_counter", "_messages")

    def __init__(
        self, messages: Sequence[Mapping[str, Any]], counter: TokenCounter, costs: MutableMapping[int, int]
    ) -> None:
        self._messages = messages
        self._counter = counter
        self._costs = costs

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
    """Tokens of the system messages, kept messages and preamble."""
    preamble: dict[str, Any] | None
    preamble_tokens: int
    notes: tuple[str, ...]
    removed: frozenset[int] = frozenset()
    """Messages of kept units left out to make the newest turns fit."""
    replaced: Mapping[int, dict[str, Any]] = field(default_factory=dict)
    """Message index → the message as returned, when it was elided or cut."""
    costs: Mapping[int, int] = field(default_factory=dict)
    """Costs of the replaced messages as returned (others cost what `cost` says)."""
    elided: int = 0
    cut: int = 0
    user_cut: bool = False

    @property
    def shrunk(self) -> bool:
        """Whether the newest turns had to be shrunk from the inside to fit."""
        return bool(self.removed or self.elided or self.cut or self.user_cut)


def choose_units(
    convo: Conversation,
    cost: Callable[[int], int],
    budget: int,
    system_tokens: int,
    min_turns: int,
    summary: str | None,
    counter: TokenCounter,
    messages: Sequence[Mapping[str, Any]] = (),
) -> UnitChoice:
    """Spend what the system messages left: the last `min_turns` turns (shrunk to fit if
    they alone are over), then the summary preamble, then older units newest first until
    one does not fit. `messages` are needed only to shrink (elision reads their text)."""
    first_forced = max(0, len(convo.turns) - min_turns)
    newest_first = list(reversed(convo.units))
    forced = [unit for unit in newest_first if unit[1] >= first_forced]
    forced_tokens = sum(cost(i) for unit in forced for i in convo.messages_of(unit))
    fitted: Fitted | None = None
    if system_tokens + forced_tokens > budget:
        fitted = fit_forced(
            messages,
            forced[::-1],
            convo.messages_of,
            dict(convo.answers),
            cost,
            budget - system_tokens,
            counter,
        )
        forced = list(fitted.kept_units[::-1])
        forced_tokens = fitted.used
    spent = system_tokens + forced_tokens
    notes = list(fitted.notes) if fitted else []
    preamble, preamble_tokens, summary_note = _summary_preamble(summary, budget - spent, counter)
    spent += preamble_tokens
    if summary_note:
        notes.append(summary_note)
    kept = list(forced)
    # After a shrink, an older turn would sit whole next to elided newer results: none is added.
    for unit in [] if fitted else newest_first[len(forced) :]:
        unit_tokens = _cost_within(convo.messages_of(unit), cost, budget - spent)
        if unit_tokens is None:
            break
        kept.append(unit)
        spent += unit_tokens
    if fitted is None:
        return UnitChoice(tuple(kept), spent, preamble, preamble_tokens, tuple(notes))
    return UnitChoice(
        units=tuple(kept),
        used=spent,
        preamble=preamble,
        preamble_tokens=preamble_tokens,
        notes=tuple(notes),
        removed=fitted.removed,
        replaced=fitted.replaced,
        costs=fitted.costs,
        elided=len(fitted.elided),
        cut=len(fitted.cut),
        user_cut=fitted.user_cut,
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
        raise InvalidParam(field, f"expected a whole number, got {json_type(value)}", f"pass e.g. {example}")
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
        cut = cut_to_tokens(text, limit, counter, marker=lambda n: f"[… {n} more summary lines cut for budget]")
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
