"""The template summary of dropped turns (`WindowResult.summary_fallback`).

Separate from windowing because it answers a different question: not which messages
fit, but what to say about the ones that did not, for agents that have no LLM-written
summary yet. It is deterministic text built from the dropped messages alone, capped so
that, when the agent passes it back as `summary`, it does not crowd out real turns.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ctx_lsp.history.messages import content_text
from ctx_lsp.tokens import TokenCounter, cut_to_tokens, ellipsize

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


def summarize_dropped(dropped: Sequence[Mapping[str, Any]], turns: int, budget: int, counter: TokenCounter) -> str:
    """A deterministic summary of dropped turns, for agents with no LLM summary yet.

    Lists what a model most needs to stay oriented: which tools ran, what the assistant
    last concluded, and what the user asked (first line of each request). Cut to whole
    lines at `SUMMARY_FALLBACK_SHARE` of the budget, keeping the earliest requests: the
    first one usually states the task the rest of the conversation serves.
    """
    if not dropped:
        return ""
    if turns:
        lines = [f"Earlier conversation ({turns} turns, {len(dropped)} messages) dropped to fit the budget."]
    else:  # only steps inside the newest turns went (an agent's long turn)
        lines = [f"Earlier conversation ({len(dropped)} messages of the newest turns) dropped to fit the budget."]
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
    return cut_to_tokens("\n".join(lines), cap, counter, marker=lambda n: f"[… {n} more lines]").text


_WHITESPACE = re.compile(r"\s+")
_NON_BLANK_LINE = re.compile(r"[^\S\n]*\S[^\n]*")


def _first_line(text: str) -> str:
    """First non-blank line, whitespace collapsed, cut to `FIRST_LINE_MAX_CHARS`.

    Reads only up to that line: a dropped message may be a 100 KB paste."""
    match = _NON_BLANK_LINE.search(text)
    line = _WHITESPACE.sub(" ", match.group()).strip() if match else ""
    return ellipsize(line, FIRST_LINE_MAX_CHARS)
