"""One bundle, from a typed request to a result. "Why is this file in the bundle, and
with what share?" — read this module top to bottom, then the contributor that offered it.

1. **Policy** (`plan`): the context window type, the agent and the budget. Done before
   waiting for the index, so a bad request is refused at once.
2. **Shared inputs** (`prepare`): the working files, the reference graph ranked towards
   them and the query's identifiers, and the search ranking of files — each computed
   once and read by every contributor that needs it.
3. **Conversation** (`window_conversation`): windowed at turn boundaries into the share
   pass 3 would give it (asked of the orchestrator), and reserved out of the budget.
4. **Offers** (`collect_offers`): every registered contributor offers candidates with a
   salience and a reason. One that fails becomes a warning; the bundle still answers.
5. **Assembly**: the orchestrator's five passes fit the offers into the budget.
6. **Snapshot and explanation**: how the budget was spent, and why each candidate is in
   or out (`ctx.explain`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ctx_lsp.assembly.adjustments import Signals
from ctx_lsp.assembly.budget import BudgetPlan, plan_budget
from ctx_lsp.assembly.orchestrator import Outcome, assemble, reserved_allocation
from ctx_lsp.config import AgentConfig, Config, WindowTypeConfig
from ctx_lsp.contributors.base import AssemblyContext, RenderCache
from ctx_lsp.contributors.registry import CONTRIBUTORS
from ctx_lsp.contributors.retrieval import retrieve, top_hit_ratio
from ctx_lsp.contributors.working_files import resolve_working_files
from ctx_lsp.docs.library import LibraryDocs
from ctx_lsp.errors import CtxError, InvalidParam
from ctx_lsp.history.windowing import WindowResult, window_messages
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.search import SearchIndex
from ctx_lsp.index.terms import identifiers
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.tokens import TokenCounter
from ctx_lsp.vocabulary import (
    BundleRequest,
    BundleResult,
    ContributorName,
    Explanation,
    Offer,
    Snapshot,
    Tier,
)

log = logging.getLogger(__name__)

HISTORY = ContributorName.CONVERSATION_HISTORY


@dataclass(frozen=True, slots=True)
class Sources:
    """What the engine owns and a bundle reads: the indexes, shared caches and config."""

    workspace: Workspace
    search: SearchIndex
    graph: ReferenceGraph
    renders: RenderCache
    counter: TokenCounter
    config: Config
    library_docs: Callable[[], LibraryDocs]
    absolute: Callable[[str], str]
    """A request path → its absolute path inside the workspace (refuses outside paths)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """Step 1: the rules this request is assembled under."""

    profile: str
    window_type: WindowTypeConfig
    agent: AgentConfig
    budget: BudgetPlan
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Built:
    result: BundleResult
    explanation: Explanation


def plan(request: BundleRequest, config: Config) -> Policy:
    """The window type, agent and budget of a request; raises InvalidParam on a profile
    the configuration does not define."""
    profile = request.profile or config.default_context_window_type
    window_type = config.context_window_types.get(profile)
    if window_type is None:
        raise InvalidParam(
            "profile",
            f"unknown context window type {profile!r}",
            f"use one of {', '.join(config.context_window_types)}",
        )
    agent = config.agent(request.agent)
    budget = plan_budget(
        budget=request.budget,
        model=request.model,
        utilization=request.utilization,
        agent_budget=agent.budget,
        output_reserve_pct=window_type.output_reserve_pct,
        model_overrides=config.model_limits,
    )
    warnings = list(budget.warnings)
    if request.agent not in config.agents:
        warnings.append(f"agent {request.agent!r} is not in the agent table: using the default agent's settings")
    return Policy(profile, window_type, agent, budget, tuple(warnings))


def build(request: BundleRequest, policy: Policy, sources: Sources) -> Built:
    """Steps 2–6 (the index must be ready)."""
    started = time.perf_counter()
    ctx = prepare(request, policy, sources)
    windowed = window_conversation(request, policy, sources.counter, ctx.warnings)
    reserved = {HISTORY.value: windowed.metadata.input_tokens_used} if windowed else {}
    offers = collect_offers(ctx)
    title = f"Context for: {request.query.strip()}" if request.query.strip() else "Context"
    outcome = assemble(
        offers,
        policy.window_type,
        policy.profile,
        sources.config.weights,
        policy.budget.total,
        sources.counter,
        title,
        request.format,
        signals_of(ctx),
        reserved,
    )
    if not outcome.sections:
        ctx.warnings.append("nothing to show: give a query, open files, or a larger budget")
    total = outcome.total_tokens + reserved.get(HISTORY.value, 0)
    result = BundleResult(
        sections=tuple(outcome.sections),
        text=outcome.text,
        total_tokens=total,
        budget=policy.budget.total,
        snapshot=snapshot_of(outcome, policy, total, sources.counter.name, ctx.warnings),
        messages=windowed.messages if windowed else (),
    )
    elapsed_ms = (time.perf_counter() - started) * 1000
    log.debug("bundle in %.1f ms", elapsed_ms)
    explanation = Explanation(
        query=request.query,
        agent=request.agent,
        budget=policy.budget.total,
        total_tokens=outcome.total_tokens,
        elapsed_ms=round(elapsed_ms, 1),
        candidates=tuple(sorted(outcome.decisions, key=lambda d: (not d.included, -d.rank, d.id))),
    )
    return Built(result, explanation)


def prepare(request: BundleRequest, policy: Policy, sources: Sources) -> AssemblyContext:
    """Step 2: the request's facts and the shared inputs, in dependency order — the graph
    is personalised to the working files, the search ranking blends in the graph."""
    max_tier = Tier(policy.window_type.max_tier)
    ctx = AssemblyContext(
        request=request,
        workspace=sources.workspace,
        search=sources.search,
        counter=sources.counter,
        tier=Tier(min(request.tier or policy.agent.tier, max_tier)),
        max_tier=max_tier,
        focus_path=sources.absolute(request.focus.path) if request.focus else None,
        graph=sources.graph,
        mentioned=frozenset(identifiers(request.query)),
        renders=sources.renders,
        docs_cap=policy.agent.docs_cap,
        artifacts_budget=sources.config.artifacts_budget,
        library_docs=sources.library_docs,
        warnings=list(policy.warnings),
    )
    ctx.working = resolve_working_files(ctx)
    personal = {w.entry.abs_path: w.salience for w in ctx.working}
    ctx.rank = sources.graph.rank(personal, ctx.mentioned, definition_files=0)
    ctx.ranked = retrieve(ctx)
    return ctx


def window_conversation(
    request: BundleRequest, policy: Policy, counter: TokenCounter, warnings: list[str]
) -> WindowResult | None:
    """Step 3: the conversation, windowed into its pass-3 share among the contributors
    taking part. Its tokens are reserved: the rest of the bundle gets what is left."""
    if not request.messages:
        return None
    taking_part = {HISTORY.value, *(c.name.value for c in CONTRIBUTORS if c.applies(request))}
    share = reserved_allocation(policy.window_type, taking_part, HISTORY.value, policy.budget.total)
    if not share:
        warnings.append(f"messages ignored: conversation_history is inactive in {policy.profile}")
        return None
    windowed = window_messages(list(request.messages), share, counter, summary=request.summary)
    if windowed.metadata.input_tokens_used > policy.budget.total:
        raise InvalidParam(
            "messages",
            f"the system messages and last turns need {windowed.metadata.input_tokens_used} "
            f"tokens, more than the whole budget ({policy.budget.total})",
            "raise the budget, or send fewer or shorter messages",
        )
    warnings.extend(f"conversation: {n}" for n in windowed.notes)
    return windowed


def collect_offers(ctx: AssemblyContext) -> dict[str, Offer]:
    """Step 4: every contributor's offer, in presentation order. A contributor that fails
    costs its sections, never the bundle; a `CtxError` is the request's own fault (an
    unknown library, say) and goes back to the caller, who can fix it."""
    offers: dict[str, Offer] = {}
    for contributor in CONTRIBUTORS:
        try:
            offers[contributor.name.value] = contributor.offer(ctx)
        except CtxError:
            raise
        except Exception as err:
            log.exception("contributor %s failed", contributor.name)
            ctx.warnings.append(f"{contributor.name} left out: it failed with {type(err).__name__}: {err}")
            offers[contributor.name.value] = Offer(contributor.name, [], contributor.strategy)
    return offers


def signals_of(ctx: AssemblyContext) -> Signals:
    """What the dynamic adjustments (pass 2) look at."""
    request = ctx.request
    return Signals(
        has_messages=bool(request.messages),
        has_working_files=bool(ctx.working),
        has_query=bool(request.query.strip()),
        top_hit_ratio=top_hit_ratio(ctx.ranked),
        working_focus=any(w.focus_symbols for w in ctx.working),
    )


def snapshot_of(outcome: Outcome, policy: Policy, total: int, tokenizer: str, warnings: list[str]) -> Snapshot:
    budget = policy.budget
    return Snapshot(
        context_window_type=policy.profile,
        model_context_limit=budget.model_context_limit,
        output_reserve=budget.output_reserve,
        available_budget=budget.total,
        total_used=total,
        utilization_pct=round(100.0 * total / budget.total, 1) if budget.total else 0.0,
        tokenizer=tokenizer,
        contributions=tuple(outcome.contributions),
        condensations=tuple(outcome.condensations),
        dynamic_adjustments_fired=tuple(outcome.adjustments),
        reallocation_events=tuple(outcome.reallocations),
        skipped_contributors=tuple(outcome.skipped),
        warnings=tuple(warnings),
    )
