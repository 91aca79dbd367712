"""Tests for ctx_lsp/assembly/budget.py and adjustments.py."""

from __future__ import annotations

import pytest

from ctx_lsp.assembly.adjustments import Signals, apply_adjustments
from ctx_lsp.assembly.budget import MAX_OUTLINE_CAP, UNKNOWN_MODEL_LIMIT, model_limit, plan_budget, tier_caps
from ctx_lsp.code.tiers import TIER_CAP_TOKENS
from ctx_lsp.config import ADJUSTMENT_RULES
from ctx_lsp.vocabulary import AdjustmentRule, Tier


def test_explicit_budget_wins() -> None:
    """Ensure that an explicit token budget is used as is."""
    plan = plan_budget(budget=5000, model=None, utilization=None, agent_budget=4000, output_reserve_pct=0.1)
    assert (plan.total, plan.model_context_limit, plan.output_reserve) == (5000, None, 0)


def test_agent_budget_is_the_default() -> None:
    """Ensure that without budget or model the agent's budget applies."""
    assert (
        plan_budget(budget=None, model=None, utilization=None, agent_budget=6000, output_reserve_pct=0.1).total == 6000
    )


@pytest.mark.parametrize(("utilization", "share"), [("low", 0.33), ("medium", 0.66), ("full", 1.0), (None, 1.0)])
def test_model_budget(utilization, share) -> None:
    """Ensure that a model budget is limit × utilization − output reserve."""
    plan = plan_budget(
        budget=None, model="openai/gpt-4o-2024-08-06", utilization=utilization, agent_budget=1, output_reserve_pct=0.1
    )
    assert plan.model_context_limit == 128_000 and plan.output_reserve == 12_800
    assert plan.total == int(128_000 * share) - 12_800


def test_unknown_model_warns() -> None:
    """Ensure that an unknown model gets 128K and a warning."""
    plan = plan_budget(budget=None, model="my-local-model", utilization=None, agent_budget=1, output_reserve_pct=0)
    assert plan.total == UNKNOWN_MODEL_LIMIT and "unknown model" in plan.warnings[0]


def test_overrides_only_lower_the_limit() -> None:
    """Ensure that configured model limits can lower a limit but never raise it."""
    assert model_limit("gpt-4o", {"gpt-4o": 32_000})[0] == 32_000
    limit, warning = model_limit("gpt-4o", {"gpt-4o": 1_000_000})
    assert limit == 128_000 and "only lower" in (warning or "")


def test_adjustments_move_shares() -> None:
    """Ensure that each adjustment rule moves share only when its condition holds."""
    base = {"working_files": 0.3, "retrieval": 0.3, "codebase_map": 0.2, "conversation_history": 0.2}
    shares = dict(base)
    fired = apply_adjustments(shares, Signals(False, True, True, 3.0), list(ADJUSTMENT_RULES))
    assert shares["conversation_history"] == 0 and shares["working_files"] == pytest.approx(0.5)
    assert shares["codebase_map"] == pytest.approx(0.1) and shares["retrieval"] == pytest.approx(0.4)
    assert len(fired) == 2 and abs(sum(shares.values()) - 1.0) < 1e-9
    shares = dict(base)
    assert apply_adjustments(shares, Signals(True, True, True, 1.0), list(ADJUSTMENT_RULES)) == []
    assert shares == base
    shares = dict(base)
    fired = apply_adjustments(shares, Signals(True, False, False, 1.0), list(ADJUSTMENT_RULES))
    assert shares["working_files"] == 0 and shares["retrieval"] == 0
    assert shares["codebase_map"] == pytest.approx(0.8)


@pytest.mark.parametrize(("working", "budget", "kept"), [(False, 8000, 0.2), (True, 8000, 1.0), (True, 32000, 0.2)])
def test_code_units_shrink_the_map_with_working_files_only_at_a_large_budget(working, budget, kept) -> None:
    """Ensure that ranked units take most of the map's share, except with working files
    below LARGE_BUDGET_TOKENS, where the map points at their neighbourhood."""
    shares = {"working_files": 0.3, "retrieval": 0.3, "codebase_map": 0.2, "conversation_history": 0.2}
    signals = Signals(True, working, True, 1.0, code_units=True, budget=budget)
    apply_adjustments(shares, signals, [AdjustmentRule.CODE_UNITS_SHRINK_MAP])
    assert shares["codebase_map"] == pytest.approx(0.2 * kept)


def test_tier_caps_are_design_defaults_then_grow_with_the_budget() -> None:
    """Ensure that small bundles use DESIGN's caps and large ones let a big outline through,
    never below the defaults and never without a ceiling."""
    assert tier_caps(2000) == tier_caps(5000) == TIER_CAP_TOKENS
    big = tier_caps(32_000)
    assert big[Tier.OUTLINE] == 6400 and big[Tier.FOCUSED] == 10_000 and big[Tier.FULL] == TIER_CAP_TOKENS[Tier.FULL]
    caps = [tier_caps(b) for b in range(1000, 400_000, 7000)]
    for tier in Tier:
        values = [c[tier] for c in caps]
        assert values == sorted(values) and values[0] == TIER_CAP_TOKENS[tier]
    assert tier_caps(10**7)[Tier.OUTLINE] == MAX_OUTLINE_CAP
