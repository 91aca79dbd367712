"""Dynamic adjustments (assembly pass 2): move budget shares to where this request needs them.

Each rule looks at a few facts about the request and moves target share between
contributors. Rules return a human line for the snapshot when they fire, so a user can see
why, say, the codebase map got smaller than its configured share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctx_lsp.relevance import (
    DOMINANT_HIT_MAP_SHRINK,
    DOMINANT_HIT_RATIO,
    LARGE_BUDGET_TOKENS,
    UNITS_MAP_SHRINK,
    UNITS_MAP_SHRINK_WITH_WORKING_FILES,
)
from ctx_lsp.vocabulary import AdjustmentRule, ContributorName

HISTORY = ContributorName.CONVERSATION_HISTORY
WORKING = ContributorName.WORKING_FILES
RETRIEVAL = ContributorName.RETRIEVAL
MAP = ContributorName.CODEBASE_MAP


@dataclass(frozen=True, slots=True)
class Signals:
    """What the rules may look at."""

    has_messages: bool
    has_working_files: bool
    has_query: bool
    top_hit_ratio: float  # best retrieval file score / second best (1.0 when < 2 hits)
    working_focus: bool = True  # a working file has a cursor or unsaved edits
    code_units: bool = False  # retrieval ranked code units for the task (issue 22)
    budget: int = 0  # the bundle's token budget


Shares = dict[str, float]
Rule = Callable[[Shares, Signals], str | None]


def _move(shares: Shares, source: str, target: str, fraction: float = 1.0) -> float:
    amount = shares.get(source, 0.0) * fraction
    if amount <= 0 or target not in shares:
        return 0.0
    shares[source] -= amount
    shares[target] += amount
    return amount


def no_conversation_to_working_files(shares: Shares, s: Signals) -> str | None:
    """Working files with a cursor or edits can use more room (focused bodies, callers);
    files only named as working files need their outline, and the extra share is better
    spent on their neighbourhood: the codebase map, which is ranked towards them."""
    if s.has_messages or not s.has_working_files:
        return None
    if not s.working_focus:
        moved = _move(shares, HISTORY, MAP)
        return (
            (
                f"no conversation, and no cursor or edits in the working files: its {moved:.0%} share "
                "goes to the codebase map around them"
            )
            if moved
            else None
        )
    moved = _move(shares, HISTORY, WORKING)
    return f"no conversation: its {moved:.0%} share goes to working files" if moved else None


def no_working_files_to_retrieval(shares: Shares, s: Signals) -> str | None:
    if s.has_working_files:
        return None
    moved = _move(shares, WORKING, RETRIEVAL if s.has_query else MAP)
    dest = "retrieval" if s.has_query else "the codebase map"
    return f"no working files: their {moved:.0%} share goes to {dest}" if moved else None


def no_query_to_codebase_map(shares: Shares, s: Signals) -> str | None:
    if s.has_query:
        return None
    moved = _move(shares, RETRIEVAL, MAP)
    return f"no query: the retrieval share ({moved:.0%}) goes to the codebase map" if moved else None


def dominant_hit_shrinks_map(shares: Shares, s: Signals) -> str | None:
    if s.top_hit_ratio < DOMINANT_HIT_RATIO:
        return None
    moved = _move(shares, MAP, RETRIEVAL, DOMINANT_HIT_MAP_SHRINK)
    return (
        (
            f"one retrieval hit {s.top_hit_ratio:.1f}× above the rest: codebase map shrunk by "
            f"{moved:.0%} of the budget, given to retrieval"
        )
        if moved
        else None
    )


def code_units_shrink_map(shares: Shares, s: Signals) -> str | None:
    """The codebase map points at files; code units show the lines a task touches and
    name their definitions too. When retrieval has units, part of the map's share goes to
    them (`relevance.UNITS_MAP_SHRINK`, half of the one budget rule between showing and
    pointing; `units_share` is the other half)."""
    if not s.code_units:
        return None
    # With working files the map is ranked towards them: it points well, and keeps more
    # until the budget is large enough that the best units' files are named anyway.
    keeps = s.has_working_files and s.budget < LARGE_BUDGET_TOKENS
    moved = _move(shares, MAP, RETRIEVAL, UNITS_MAP_SHRINK_WITH_WORKING_FILES if keeps else UNITS_MAP_SHRINK)
    return f"code units ranked: codebase map shrunk by {moved:.0%} of the budget, given to retrieval" if moved else None


RULES: dict[str, Rule] = {
    AdjustmentRule.NO_CONVERSATION_TO_WORKING_FILES: no_conversation_to_working_files,
    AdjustmentRule.NO_WORKING_FILES_TO_RETRIEVAL: no_working_files_to_retrieval,
    AdjustmentRule.NO_QUERY_TO_CODEBASE_MAP: no_query_to_codebase_map,
    AdjustmentRule.DOMINANT_HIT_SHRINKS_MAP: dominant_hit_shrinks_map,
    AdjustmentRule.CODE_UNITS_SHRINK_MAP: code_units_shrink_map,
}


def apply_adjustments(shares: Shares, signals: Signals, enabled: list[str]) -> list[str]:
    """Apply the enabled rules in order, in place; return the lines of those that fired."""
    fired = []
    for name in enabled:
        rule = RULES.get(name)
        if rule is None:
            continue
        line = rule(shares, signals)
        if line:
            fired.append(f"{name}: {line}")
    return fired
