"""How many tokens a bundle may use (DESIGN: Budget).

Either explicit (`budget`), or from a model: `context limit × utilization − output
reserve`. Configured limits may only lower a built-in one: a typo in config must never
produce a bundle the model cannot take. An unknown model gets 128K and a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ctx_lsp.code.tiers import TIER_CAP_TOKENS
from ctx_lsp.relevance import MAX_FOCUSED_CAP, MAX_OUTLINE_CAP, OUTLINE_CAP_SHARE
from ctx_lsp.vocabulary import Tier, Utilization

UNKNOWN_MODEL_LIMIT = 128_000

MODEL_CONTEXT_LIMITS: tuple[tuple[str, int], ...] = (
    # Longest matching prefix wins; names are matched case-insensitively without a
    # provider prefix ("openai/gpt-4o" → "gpt-4o").
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
    ("gemini-1.5-pro", 2_000_000),
    ("gemini", 1_048_576),
    ("llama-3", 128_000),
    ("llama3", 128_000),
    ("mistral-large", 128_000),
    ("codestral", 256_000),
    ("qwen", 128_000),
    ("deepseek", 128_000),
)

UTILIZATION: dict[str, float] = {Utilization.LOW: 0.33, Utilization.MEDIUM: 0.66, Utilization.FULL: 1.0}
"""DESIGN: how much of a model's window a bundle may fill."""


@dataclass(frozen=True, slots=True)
class BudgetPlan:
    total: int  # what the bundle may use
    model_context_limit: int | None
    output_reserve: int
    warnings: tuple[str, ...] = ()


def model_limit(model: str, overrides: Mapping[str, int] | None = None) -> tuple[int, str | None]:
    """(context limit, warning or None) for a model name."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    builtin = None
    best = -1
    for prefix, limit in MODEL_CONTEXT_LIMITS:
        if name.startswith(prefix) and len(prefix) > best:
            builtin, best = limit, len(prefix)
    warning = None
    if builtin is None:
        builtin = UNKNOWN_MODEL_LIMIT
        warning = f"unknown model {model!r}: assuming a {UNKNOWN_MODEL_LIMIT:,}-token context window"
    for key, limit in (overrides or {}).items():
        if key.lower() == name or key.lower() == model.lower():
            if limit < builtin:
                builtin = limit
            elif limit > builtin:
                warning = f"model_limits.{key} = {limit} ignored: overrides may only lower the limit ({builtin})"
    return builtin, warning


def plan_budget(
    *,
    budget: int | None,
    model: str | None,
    utilization: Utilization | None,
    agent_budget: int,
    output_reserve_pct: float,
    model_overrides: Mapping[str, int] | None = None,
) -> BudgetPlan:
    """Resolve the request's budget: explicit tokens, else a model's window, else the
    agent's budget. The request parser has already refused impossible combinations
    (`ctx_lsp.params.parse_budget_fields`)."""
    if budget is not None:
        return BudgetPlan(budget, None, 0)
    if model:
        limit, warning = model_limit(model, model_overrides)
        reserve = int(limit * output_reserve_pct)
        share = UTILIZATION[utilization or Utilization.FULL]
        total = max(1, int(limit * share) - reserve)
        return BudgetPlan(total, limit, reserve, (warning,) if warning else ())
    return BudgetPlan(agent_budget, None, 0)


def tier_caps(budget: int) -> dict[Tier, int]:
    """Per-section caps for a bundle of `budget` tokens: DESIGN's defaults (1K outline,
    5K focused, 20K full) up to 5K budgets, growing beyond. A big module's whole outline
    is 3–6K tokens (click's core.py: 5.9K); a 32K bundle can afford it, and a 1K cap
    would hide most of its methods."""
    outline = TIER_CAP_TOKENS[Tier.OUTLINE]
    focused = TIER_CAP_TOKENS[Tier.FOCUSED]
    return {
        Tier.OUTLINE: min(max(outline, budget // OUTLINE_CAP_SHARE), max(outline, MAX_OUTLINE_CAP)),
        Tier.FOCUSED: min(max(focused, budget * 2 // OUTLINE_CAP_SHARE), max(focused, MAX_FOCUSED_CAP)),
        Tier.FULL: TIER_CAP_TOKENS[Tier.FULL],
    }
