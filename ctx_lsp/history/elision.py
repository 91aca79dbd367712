"""Making the newest turns fit when they alone are over budget.

An agent's context is mostly one long turn: a user message, then dozens of tool calls and
their results. "Keep the last turns whole" cannot be the rule then, and neither can
dropping them: the newest turn is the work in progress. So the turns are shrunk from the
inside, the way Anthropic's context editing ("clear tool uses") does it: the oldest tool
results give way first, each replaced by a placeholder that says what it was, and the
call that asked for it stays, so the model still sees what it did and can ask again.

The ladder, each rung only while the turns are still over:

1. **Structure** (the fewest drops that can work): the forced turns are kept whole if
   eliding every tool result would make them fit (the newest result keeping up to
   `NEWEST_RESULT_SHARE` of the room); otherwise the oldest of them go, whole; then, inside
   the newest turn, its oldest steps (an assistant message with the results of its calls,
   or an earlier user message). The system messages and the newest user message are never
   dropped here.
2. **Cap huge outputs**: a tool result over `HUGE_RESULT_SHARE` of the room is cut head and
   tail (start and end kept, a marker line between) to that share, or less if that alone
   makes the turns fit. One 40K-token log must not push out twenty useful results.
3. **Elide oldest first**: each tool result becomes a placeholder, oldest first, until the
   turns fit; the one whose head-and-tail cut is what makes them fit is cut instead.
4. **Cut the newest user message** head and tail if it alone is over; drop it only when
   not even a cut of it fits.

A call is never separated from its result: results are replaced, never removed alone, and
a dropped step takes all of its results with it. Every shrink is real-counted with the
window's own cost (`message_tokens`), so the sum of what is returned never passes the room.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctx_lsp.history.messages import content_text, message_tokens
from ctx_lsp.tokens import ELLIPSIS, TokenCounter, line_count

HUGE_RESULT_SHARE = 0.5
"""No single tool result keeps more than this share of the room while the turns are over
budget: past it, one output would decide alone what else the model sees."""

NEWEST_RESULT_SHARE = 0.25
"""The newest tool result keeps up to this share of the room (cut head and tail if it is
bigger) before older steps are dropped to make room: it is what the agent is about to act
on, and a run of calls whose results are all placeholders tells it little."""

CUT_MIN_KEPT_TOKENS = 48
"""A head-and-tail cut keeping less content than this is no better than the placeholder,
which at least says plainly what is gone."""

CUT_HEAD_SHARE = 0.5
"""Share of a cut's kept tokens given to the head. The start of an output says what it is
(the file's imports, the command line); its end says how it went (the failure, the total)."""

FIT_ATTEMPTS = 4
"""Recounts allowed to bring a cut message under its target: framing tokens and marker
digits make the first estimate off by a few tokens, never by much."""


COUNT_CHUNK_LINES = 32
"""Lines counted at once from each end of a text being cut; doubled at each step."""


def elision_placeholder(tokens: int, lines: int, tool: str) -> str:
    """What stands in for an elided tool result: enough for the model to know what it no
    longer sees and whether to call the tool again. `tokens` is what the result cost in
    the window (its message, as `message_tokens` counts it), `lines` its content's lines."""
    plural = "" if lines == 1 else "s"
    return f"[tool result elided to fit the context budget: {tokens:,} tokens, {lines:,} line{plural} of {tool} output]"


def cut_marker(lines: int, tokens: int, what: str) -> str:
    """The line between the head and the tail of a cut text."""
    plural = "" if lines == 1 else "s"
    cut = f"{lines:,} line{plural} ({tokens:,} tokens) of {what} cut here to fit the context budget"
    return f"[{ELLIPSIS} {cut} {ELLIPSIS}]"


@dataclass(frozen=True, slots=True)
class HeadTail:
    text: str
    kept_lines: int
    omitted_lines: int
    omitted_tokens: int
    """Per-line counts of the omitted lines: what the marker reports."""


def cut_head_tail(
    text: str, max_tokens: int, counter: TokenCounter, what: str, text_tokens: int | None = None
) -> HeadTail | None:
    """`text` cut to at most `max_tokens`: its first and last whole lines, with a marker
    line between saying how much was cut. None if not even one line fits with the marker.

    The head and the tail share the room (`CUT_HEAD_SHARE`); a side that needs less gives
    the rest to the other. Only the lines near each end are counted (a 40K-token log cut
    to 2K reads about 2K tokens of it), so `text_tokens`, the whole text's count if the
    caller has it, saves the one full count the marker needs. The result is counted for
    real and shrunk while over.
    """
    lines = _split_lines(text)
    total = len(lines)
    if total < 2 or max_tokens <= 0:
        return None
    if text_tokens is None:
        text_tokens = counter.count(text)
    room = max_tokens - counter.count(cut_marker(total, text_tokens, what)) - 1
    if room <= 0:
        return None
    head_counts = _count_until(lines, counter, room)
    tail_counts = _count_until(lines[::-1], counter, room)
    head = _take(head_counts, room * CUT_HEAD_SHARE)
    tail = _take(tail_counts[: total - head - 1], room - sum(head_counts[:head]))
    head = _take(head_counts[: total - tail - 1], room - sum(tail_counts[:tail]))
    while head + tail > 0:
        omitted = total - head - tail
        omitted_tokens = max(0, text_tokens - sum(head_counts[:head]) - sum(tail_counts[:tail]))
        cut = _join(lines, head, tail, cut_marker(omitted, omitted_tokens, what))
        if counter.count(cut) <= max_tokens:
            return HeadTail(cut, head + tail, omitted, omitted_tokens)
        if head >= tail:
            head -= 1
        else:
            tail -= 1
    return None


def _split_lines(text: str) -> list[str]:
    """Lines with their `\\n`, as `line_count` counts them."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _count_until(lines: Sequence[str], counter: TokenCounter, limit: int) -> list[int]:
    """Per-line counts of the first `lines`, in chunks, until they pass `limit`."""
    counts: list[int] = []
    spent = 0
    step = COUNT_CHUNK_LINES
    while spent <= limit and len(counts) < len(lines):
        chunk = counter.count_many(lines[len(counts) : len(counts) + step])
        counts += chunk
        spent += sum(chunk)
        step *= 2
    return counts


def _take(counts: Sequence[int], room: float) -> int:
    """How many of the first `counts` fit in `room`."""
    spent = 0
    for n, tokens in enumerate(counts):
        spent += tokens
        if spent > room:
            return n
    return len(counts)


def _join(lines: Sequence[str], head: int, tail: int, marker: str) -> str:
    tail_lines = lines[len(lines) - tail :] if tail else []
    return "".join(lines[:head]) + marker + "\n" + "".join(tail_lines)


# --- the ladder --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fitted:
    """How the forced turns were made to fit their room."""

    kept_units: tuple[tuple[int, int], ...]
    """The forced units still kept, oldest first."""
    removed: frozenset[int]
    """Messages of kept units that were dropped (older steps of the newest turn)."""
    replaced: Mapping[int, dict[str, Any]]
    """Message index → the message as returned (tool results elided or cut, a cut user message)."""
    costs: Mapping[int, int]
    """Cost of every kept message of the kept units, as returned."""
    elided: tuple[int, ...]
    cut: tuple[int, ...]
    """Tool results cut head and tail (not elided)."""
    user_cut: bool
    notes: tuple[str, ...] = field(default=())

    @property
    def used(self) -> int:
        return sum(self.costs.values())


@dataclass
class _Region:
    """The forced turns while they are being shrunk: which messages are kept, and each
    one's current form and cost."""

    messages: Sequence[Mapping[str, Any]]
    counter: TokenCounter
    kept: list[int]
    costs: dict[int, int]
    original: Callable[[int], int]
    """Cost of a message as sent (the window's count)."""
    replaced: dict[int, dict[str, Any]] = field(default_factory=dict)
    elided: list[int] = field(default_factory=list)
    cut: list[int] = field(default_factory=list)

    @property
    def used(self) -> int:
        return sum(self.costs[i] for i in self.kept)

    def put(self, i: int, message: dict[str, Any], cost: int) -> None:
        self.replaced[i] = message
        self.costs[i] = cost


def fit_forced(
    messages: Sequence[Mapping[str, Any]],
    units: Sequence[tuple[int, int]],
    indexes_of: Callable[[tuple[int, int]], list[int]],
    callers: Mapping[int, int],
    cost: Callable[[int], int],
    room: int,
    counter: TokenCounter,
) -> Fitted:
    """Shrink the forced `units` (oldest first) until their messages cost at most `room`.

    `callers` maps each tool result to the assistant message holding its call; `cost` is
    the window's cost of an unchanged message. See the module docstring for the ladder.
    """
    tool_of = {i: _tool_name(messages[caller], messages[i].get("tool_call_id")) for i, caller in callers.items()}
    newest = [i for i in indexes_of(units[-1]) if i in tool_of] if units else []
    newest_result = newest[-1] if newest and _cuttable(messages[newest[-1]].get("content")) else None
    floor: dict[int, int] = {}
    placeholders: dict[int, tuple[dict[str, Any], int]] = {}

    def cheapest(i: int) -> int:
        """The least message `i` may cost while older steps are kept: a placeholder for a
        tool result, except the newest keeps up to `NEWEST_RESULT_SHARE` of the room."""
        if i not in floor:
            floor[i] = cost(i)
            if i in tool_of:
                elided = _elided(messages[i], cost(i), tool_of[i])
                placeholders[i] = (elided, message_tokens(elided, counter))
                keep = int(room * NEWEST_RESULT_SHARE) if i == newest_result else 0
                floor[i] = min(floor[i], max(placeholders[i][1], keep))
        return floor[i]

    kept_units, removed, keep = _choose_structure(units, indexes_of, callers, messages, cheapest, room)
    region = _Region(messages, counter, list(keep), {i: cost(i) for i in keep}, cost)
    notes: list[str] = []
    results = [i for i in keep if i in tool_of]
    _cap_huge(region, results, tool_of, room)
    for i in results:
        excess = region.used - room
        if excess <= 0:
            break
        if _cut_result(region, i, region.costs[i] - excess, tool_of[i]):
            continue
        elided, elided_cost = placeholders[i]
        if elided_cost < region.costs[i]:
            region.put(i, elided, elided_cost)
            if i in region.cut:
                region.cut.remove(i)
            region.elided.append(i)
    user_cut = region.used > room and _shrink_last_user(region, room, notes)
    if region.used > room:  # not reachable by the rungs above; kept so the budget holds regardless
        notes.append(f"the newest turns could not be made to fit {room:,} tokens; left out")
        region.kept.clear()
    if region.elided:
        saved = sum(cost(i) - region.costs[i] for i in region.elided)
        notes.insert(
            0,
            f"{len(region.elided)} tool results elided (oldest first, {saved:,} tokens) to fit the "
            f"{room:,} tokens left for the newest turns: {_index_list(region.elided)}",
        )
    notes += [
        f"messages[{i}]: {tool_of[i]} output cut head and tail from {cost(i):,} to {region.costs[i]:,} tokens "
        "to fit the budget"
        for i in sorted(region.cut)
    ]
    dropped_units = [unit for unit in units if unit not in kept_units]
    if dropped_units:
        turns = sum(last - first + 1 for first, last in dropped_units)
        notes.append(f"{turns} of the newest turns dropped whole: not even with every tool result elided did they fit")
    if removed:
        notes.append(
            f"{len(removed)} older messages of the newest turn dropped (with their tool results) to fit: "
            f"{_index_list(sorted(removed))}"
        )
    return Fitted(
        kept_units=tuple(kept_units),
        removed=frozenset(removed) | frozenset(i for i in keep if i not in region.kept),
        replaced=dict(region.replaced),
        costs={i: region.costs[i] for i in region.kept},
        elided=tuple(i for i in region.elided if i in region.kept),
        cut=tuple(i for i in region.cut if i in region.kept),
        user_cut=user_cut,
        notes=tuple(notes),
    )


def _choose_structure(
    units: Sequence[tuple[int, int]],
    indexes_of: Callable[[tuple[int, int]], list[int]],
    callers: Mapping[int, int],
    messages: Sequence[Mapping[str, Any]],
    cheapest: Callable[[int], int],
    room: int,
) -> tuple[list[tuple[int, int]], set[int], list[int]]:
    """The fewest drops after which eliding every tool result would fit `room` (rung 1):
    (kept units, messages removed inside the newest unit, kept message indexes in order).

    When nothing but the newest user message is left and even it does not fit, that is
    what is returned: rung 4 cuts it.
    """
    kept_units = list(units)
    total = sum(cheapest(i) for unit in kept_units for i in indexes_of(unit))
    while len(kept_units) > 1 and total > room:
        total -= sum(cheapest(i) for i in indexes_of(kept_units.pop(0)))
    last = indexes_of(kept_units[-1]) if kept_units else []
    removed: set[int] = set()
    if total > room:
        for step in _steps(last, messages, callers):
            removed.update(step)
            total -= sum(cheapest(i) for i in step)
            if total <= room:
                break
    keep = [i for unit in kept_units for i in indexes_of(unit) if i not in removed]
    return kept_units, removed, keep


def _steps(
    indexes: Sequence[int], messages: Sequence[Mapping[str, Any]], callers: Mapping[int, int]
) -> list[list[int]]:
    """The droppable steps of one unit, oldest first: each assistant message with the tool
    results answering it, and each user message but the newest."""
    users = [i for i in indexes if messages[i]["role"] == "user"]
    newest_user = users[-1] if users else None
    steps: dict[int, list[int]] = {}
    for i in indexes:
        if i == newest_user:
            continue
        owner = callers.get(i, i)
        steps.setdefault(owner, []).append(i)
    return [steps[key] for key in sorted(steps)]


def _cap_huge(region: _Region, results: Sequence[int], tool_of: Mapping[int, str], room: int) -> None:
    """Rung 2: cut any tool result over `HUGE_RESULT_SHARE` of the room, largest first, down
    to that share, or only as far as makes the turns fit when that leaves it bigger."""
    cap = int(room * HUGE_RESULT_SHARE)
    for i in sorted(results, key=lambda i: -region.costs[i]):
        excess = region.used - room
        if excess <= 0 or region.costs[i] <= cap:
            break
        _cut_result(region, i, max(cap, region.costs[i] - excess), tool_of[i])


def _cut_result(region: _Region, i: int, target: int, tool: str) -> bool:
    if not _cut_to(region, i, target, f"{tool} output"):
        return False
    if i not in region.cut:
        region.cut.append(i)
    return True


def _cut_to(region: _Region, i: int, target: int, what: str) -> bool:
    """Replace message `i` by its head-and-tail cut costing at most `target` (cut from the
    original, never from an earlier cut). False, and nothing changed, if no cut keeping at
    least `CUT_MIN_KEPT_TOKENS` of content fits."""
    original = region.messages[i]
    content = original.get("content")
    if target < CUT_MIN_KEPT_TOKENS or target >= region.costs[i] or not _cuttable(content):
        return False
    text = content_text(content)
    framing = message_tokens({**original, "content": ""}, region.counter)
    limit = target - framing
    for _ in range(FIT_ATTEMPTS):
        if limit < CUT_MIN_KEPT_TOKENS:
            return False
        cut = cut_head_tail(text, limit, region.counter, what, max(0, region.original(i) - framing))
        if cut is None:
            return False
        message = {**original, "content": cut.text}
        tokens = message_tokens(message, region.counter)
        if tokens <= target:
            region.put(i, message, tokens)
            return True
        limit -= tokens - target
    return False


def _shrink_last_user(region: _Region, room: int, notes: list[str]) -> bool:
    """Rung 4: only the newest user message is left over the room (everything else was
    dropped or elided). Cut it head and tail, or drop it if no cut fits. True if cut."""
    users = [i for i in region.kept if region.messages[i]["role"] == "user"]
    if not users:
        return False
    i = users[-1]
    before = region.costs[i]
    target = room - (region.used - before)
    if _cut_to(region, i, target, "the user message"):
        notes.append(
            f"messages[{i}]: the newest user message cut head and tail from {before:,} to "
            f"{region.costs[i]:,} tokens: alone it was over the budget"
        )
        return True
    region.kept.remove(i)
    notes.append(
        f"messages[{i}]: the newest user message ({before:,} tokens) dropped: not even its cut fits the budget"
    )
    return False


def _cuttable(content: Any) -> bool:
    """Text can be cut at lines; images and other parts cannot, so those are only elided."""
    if isinstance(content, str):
        return "\n" in content
    return bool(content) and all(part.get("type") == "text" for part in content)


def _elided(message: Mapping[str, Any], tokens: int, tool: str) -> dict[str, Any]:
    """The tool message with its content replaced; `tool_call_id` and any other keys stay."""
    lines = line_count(content_text(message.get("content")))
    return {**message, "content": elision_placeholder(tokens, lines, tool)}


def _tool_name(caller: Mapping[str, Any], call_id: Any) -> str:
    for call in caller.get("tool_calls") or ():
        if call["id"] == call_id:
            return str(call["function"]["name"]) or "tool"
    return "tool"


def _index_list(indexes: Sequence[int], limit: int = 12) -> str:
    shown = ", ".join(str(i) for i in indexes[:limit])
    more = f", … {len(indexes) - limit} more" if len(indexes) > limit else ""
    return f"messages[{shown}{more}]"
