"""One bundle, from a typed request to a result. "Why is this file in the bundle, and
with what share?" — read this module top to bottom, then the contributor that offered it.

1. **Policy** (`plan`): the context window type, the agent and the budget. Done before
   waiting for the index, so a bad request is refused at once.
2. **Shared inputs** (`prepare`): the working files, the reference graph ranked towards
   them and the query's identifiers, the search ranking of files, the symbols it hit and
   the working files' call neighbours — each computed once and read by every contributor
   that needs it.
3. **Conversation** (`window_conversation`): windowed into the share pass 3 would give it
   (asked of the orchestrator), shrinking a long newest turn from the inside, and rendered
   as the text's last part; its real tokens in the text are reserved out of the budget.
4. **Offers** (`collect_offers`): every registered contributor offers candidates with a
   salience and a reason. One that fails becomes a warning; the bundle still answers.
5. **Assembly**: the orchestrator's five passes fit the offers into the budget.
6. **Snapshot and explanation**: how the budget was spent, and why each candidate is in
   or out (`ctx.explain`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ctx_lsp import cancel
from ctx_lsp.assembly.adjustments import Signals
from ctx_lsp.assembly.budget import BudgetPlan, plan_budget
from ctx_lsp.assembly.orchestrator import Outcome, assemble, reserved_allocation
from ctx_lsp.assembly.render import render, render_conversation, with_conversation
from ctx_lsp.config import AgentConfig, Config, WindowTypeConfig
from ctx_lsp.contributors.base import AssemblyContext, RenderCache
from ctx_lsp.contributors.registry import CONTRIBUTORS
from ctx_lsp.contributors.retrieval import retrieve, top_hit_ratio
from ctx_lsp.contributors.working_files import call_neighbours, resolve_working_files, symbol_matches
from ctx_lsp.errors import CtxError, InvalidParam
from ctx_lsp.history.messages import message_tokens
from ctx_lsp.history.windowing import WindowError, WindowResult, essential_messages, window_messages
from ctx_lsp.index.graph import ReferenceGraph

if TYPE_CHECKING:
    from ctx_lsp.docs.library import LibraryDocs
    from ctx_lsp.index.history_signals import HistorySignals

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

CONVERSATION_JOIN_TOKENS = 2
"""Tokens of the blank line joining the conversation to the sections (merges vary by one)."""

CONVERSATION_RENDER_FITS = 6
"""Windowings tried to bring the rendered conversation within its room. The window counts
messages, the text shows them with headings and fences, so the first try is over by about
that framing; each retry shrinks the window by the overshoot, and two or three suffice."""

CONVERSATION_GROW_MIN_TOKENS = 32
"""Idle tokens worth re-windowing a shortened conversation for (less would not show one
more message)."""

SECTIONS_FITS = 3
"""Assemblies tried to fit the sections next to the conversation: if the sections' text
plus the conversation is over (token merges at the join), the next assembly reserves the
overshoot too."""


@dataclass(frozen=True, slots=True)
class Sources:
    """What the engine owns and a bundle reads: the indexes, shared caches and config."""

    workspace: Workspace
    search: SearchIndex
    bodies: SearchIndex
    """The body-terms index: files by the words in their code (`index/body_terms.py`)."""
    graph: ReferenceGraph
    renders: RenderCache
    counter: TokenCounter
    config: Config
    library_docs: Callable[[], LibraryDocs]
    absolute: Callable[[str], str]
    """A request path → its absolute path inside the workspace (refuses outside paths)."""
    history: Callable[[], HistorySignals | None] = lambda: None
    """The repository's history as far as it is read in the background (None: off, or not
    read yet: the bundle ranks without it). Never waits."""


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
    cancel.check()
    ctx = prepare(request, policy, sources)
    cancel.check()
    title = f"Context for: {request.query.strip()}" if request.query.strip() else "Context"
    conversation = window_conversation(request, policy, sources.counter, ctx.warnings, title)
    offers = collect_offers(ctx)
    cancel.check()
    outcome, conversation, text, total = assemble_with(conversation, offers, request, policy, sources, ctx, title)
    if conversation:
        ctx.warnings.extend(f"conversation: {n}" for n in conversation.window.notes)
    if not outcome.sections:
        empty = sources.workspace.empty_reason()
        ctx.warnings.append(empty or "nothing to show: give a query, open files, or a larger budget")
    result = BundleResult(
        sections=tuple(outcome.sections),
        text=text,
        total_tokens=total,
        budget=policy.budget.total,
        snapshot=snapshot_of(outcome, policy, total, sources.counter.name, ctx.warnings),
        messages=conversation.window.messages if conversation else (),
    )
    elapsed_ms = (time.perf_counter() - started) * 1000
    log.debug("bundle in %.1f ms", elapsed_ms)
    explanation = Explanation(
        query=request.query,
        agent=request.agent,
        budget=policy.budget.total,
        total_tokens=total,
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
        bodies=sources.bodies,
        counter=sources.counter,
        tier=Tier(min(request.tier or policy.agent.tier, max_tier)),
        max_tier=max_tier,
        focus_path=sources.absolute(request.focus.path) if request.focus else None,
        graph=sources.graph,
        mentioned=frozenset(identifiers(request.query)),
        renders=sources.renders,
        budget=policy.budget.total,
        docs_cap=policy.agent.docs_cap,
        artifacts_budget=sources.config.artifacts_budget,
        library_docs=sources.library_docs,
        history=sources.history(),
        warnings=list(policy.warnings),
    )
    ctx.working = resolve_working_files(ctx)
    personal = {w.entry.abs_path: w.salience for w in ctx.working}
    ctx.rank = sources.graph.rank(personal, ctx.mentioned, definition_files=0)
    ctx.ranked = retrieve(ctx)
    ctx.hit_symbols = symbol_matches(ctx)
    ctx.neighbours = call_neighbours(ctx, ctx.hit_symbols)
    return ctx


@dataclass(frozen=True, slots=True)
class WindowedConversation:
    """The windowed conversation of a bundle, and how it shows in the bundle's text."""

    window: WindowResult
    text: str
    """The rendered messages: the last part of the bundle's `text`."""
    tokens: int
    """Real count of `text`."""
    room: int
    """The most it may take in the text: the budget less the text's heading and the join."""
    system_tokens: int
    costs: dict[int, int]
    """Message costs counted so far, kept for windowing the same messages again."""


def window_conversation(
    request: BundleRequest, policy: Policy, counter: TokenCounter, warnings: list[str], title: str
) -> WindowedConversation | None:
    """Step 3: the conversation, windowed into its pass-3 share among the contributors
    taking part, with the same rules as ctx/window (a long newest turn is shrunk from the
    inside, never refused), and rendered for the bundle's text within that share.

    The share grows, up to the whole budget less the text's heading, when the system
    messages and the newest user message need more. The only refusal is system messages
    that alone do not fit the budget: `WindowError`, an `InvalidParam` on `messages`.
    """
    if not request.messages:
        return None
    taking_part = {HISTORY.value, *(c.name.value for c in CONTRIBUTORS if c.applies(request))}
    budget = policy.budget.total
    share = reserved_allocation(policy.window_type, taking_part, HISTORY.value, budget)
    if not share:
        warnings.append(f"messages ignored: conversation_history is inactive in {policy.profile}")
        return None
    fmt = request.format
    essential = essential_messages(request.messages)
    system = [m for m in essential if m["role"] == "system"]
    system_tokens = sum(message_tokens(m, counter) for m in system)
    if system_tokens > budget:
        raise WindowError(system_tokens, budget, "bundle budget")
    room = budget - counter.count(render([], title, fmt)) - CONVERSATION_JOIN_TOKENS
    system_text = counter.count(render_conversation(system, fmt))
    if system_text > room:
        raise WindowError(system_text, room, f"room the {budget:,}-token bundle budget leaves after its heading")
    floor = counter.count(render_conversation(essential, fmt))
    limit = min(room, max(share, floor))
    if limit > share:
        warnings.append(
            f"conversation: given {limit:,} tokens, over its {share:,}-token share, so that the system "
            "messages and the newest user message fit"
        )
    return fit_conversation(request, limit, room, system_tokens, counter, {})


def fit_conversation(
    request: BundleRequest, limit: int, room: int, system_tokens: int, counter: TokenCounter, costs: dict[int, int]
) -> WindowedConversation:
    """The window whose rendering takes at most `limit` tokens of the text.

    The window counts messages; the text adds headings and fences. So window at `limit`,
    render, and shrink the window's budget by the overshoot until the rendering fits. The
    system messages alone always fit (`window_conversation` checked), which ends it."""
    messages = list(request.messages)
    target = limit
    for _ in range(CONVERSATION_RENDER_FITS):
        windowed = window_messages(
            messages, max(target, system_tokens, 1), counter, summary=request.summary, costs=costs
        )
        text = render_conversation(windowed.messages, request.format)
        tokens = counter.count(text)
        if tokens <= limit or target <= system_tokens:
            break
        target -= tokens - limit
    if tokens > limit:  # not reached in practice: left with the system messages alone
        windowed = window_messages(messages, max(system_tokens, 1), counter, costs=costs)
        text = render_conversation(windowed.messages, request.format)
        tokens = counter.count(text)
    return WindowedConversation(windowed, text, tokens, room, system_tokens, costs)


def assemble_with(
    conversation: WindowedConversation | None,
    offers: dict[str, Offer],
    request: BundleRequest,
    policy: Policy,
    sources: Sources,
    ctx: AssemblyContext,
    title: str,
) -> tuple[Outcome, WindowedConversation | None, str, int]:
    """Step 5: the orchestrator's passes over what the conversation left, then the text
    with the conversation as its last part. Returns the outcome, the conversation as
    shown, the text and its real count, which never exceeds the budget.

    A conversation that had to be shortened gets what the sections left unused (a small
    workspace, say): the same surplus rule as pass 4, done here because its tokens are
    spent outside the orchestrator's text."""
    budget = policy.budget.total
    counter = sources.counter
    signals = signals_of(ctx, offers)

    def run(reserved: dict[str, int]) -> Outcome:
        return assemble(
            offers,
            policy.window_type,
            policy.profile,
            sources.config.weights,
            budget,
            counter,
            title,
            request.format,
            signals,
            reserved,
        )

    if conversation is None:
        outcome = run({})
        return outcome, None, outcome.text, outcome.total_tokens
    reserved = conversation.tokens + CONVERSATION_JOIN_TOKENS
    for _ in range(SECTIONS_FITS):
        outcome = run({HISTORY.value: reserved})
        text = with_conversation(outcome.text, conversation.text, request.format)
        total = counter.count(text)
        if total <= budget:
            break
        reserved += total - budget
    else:  # not reached in practice: the sections' text would not shrink next to the conversation
        ctx.warnings.append("sections left out: the conversation takes the whole budget")
        outcome.sections.clear()
        outcome.text = ""
        text = with_conversation("", conversation.text, request.format)
        total = counter.count(text)
    idle = budget - total
    if idle >= CONVERSATION_GROW_MIN_TOKENS and _shortened(conversation.window):
        limit = min(conversation.room, conversation.tokens + idle - CONVERSATION_JOIN_TOKENS)
        for _ in range(SECTIONS_FITS):
            grown = fit_conversation(
                request, limit, conversation.room, conversation.system_tokens, counter, conversation.costs
            )
            grown_text = with_conversation(outcome.text, grown.text, request.format)
            grown_total = counter.count(grown_text)
            if grown_total <= budget:
                break
            limit -= grown_total - budget
        if grown_total <= budget and grown.tokens > conversation.tokens:
            gained = grown.tokens - conversation.tokens
            outcome.reallocations.append(
                f"{HISTORY.value} received {gained} idle tokens (used {conversation.tokens} → {grown.tokens})"
            )
            outcome.contributions[:] = [
                replace(c, allocated=c.allocated + gained, used=c.used + gained)
                if c.contributor == HISTORY.value
                else c
                for c in outcome.contributions
            ]
            conversation, text, total = grown, grown_text, grown_total
    return outcome, conversation, text, total


def _shortened(window: WindowResult) -> bool:
    """Whether more room would show more of the conversation: messages were dropped (or
    orphans, which no room brings back, so a wasted retry at worst) or shortened."""
    meta = window.metadata
    return bool(window.dropped or meta.elided_tool_results or meta.cut_tool_results or meta.cut_user_message)


def collect_offers(ctx: AssemblyContext) -> dict[str, Offer]:
    """Step 4: every contributor's offer, in presentation order. A contributor that fails
    costs its sections, never the bundle; a `CtxError` is the request's own fault (an
    unknown library, say) and goes back to the caller, who can fix it."""
    offers: dict[str, Offer] = {}
    for contributor in CONTRIBUTORS:
        cancel.check()
        try:
            offers[contributor.name.value] = contributor.offer(ctx)
        except CtxError:
            raise
        except Exception as err:
            log.exception("contributor %s failed", contributor.name)
            ctx.warnings.append(f"{contributor.name} left out: it failed with {type(err).__name__}: {err}")
            offers[contributor.name.value] = Offer(contributor.name, [], contributor.strategy)
    return offers


def signals_of(ctx: AssemblyContext, offers: Mapping[str, Offer] | None = None) -> Signals:
    """What the dynamic adjustments (pass 2) look at."""
    request = ctx.request
    retrieval = (offers or {}).get(ContributorName.RETRIEVAL.value)
    return Signals(
        has_messages=bool(request.messages),
        has_working_files=bool(ctx.working),
        has_query=bool(request.query.strip()),
        top_hit_ratio=top_hit_ratio(ctx.ranked),
        working_focus=any(w.focus_symbols for w in ctx.working),
        code_units=retrieval is not None and bool(retrieval.units),
        budget=ctx.budget,
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
