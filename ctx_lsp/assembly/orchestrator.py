"""Assembly: DESIGN's five passes, from contributors' candidates to a budgeted bundle.

1. resolve — inactive contributors are skipped, their share redistributed proportionally;
2. adjust — dynamic rules move shares (no conversation → working files, …), then shares of
   contributors with nothing to offer are redistributed;
3. allocate by priority — `clamp(available × target, min, max)`, and each contributes;
4. reallocate surplus — donors using < 30 % (or with everything they offer shown in full)
   give to recipients using > 80 % (by priority, up to their max), which contribute again;
5. condense — while the rendered text is over budget, step sections down a tier in
   `condensation_order` (3 → 2 → 1 → drop).

Every pass records what it did; the snapshot and `ctx.explain` show it. The invariant:
the real token count of the rendered text never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ctx_lsp.assembly.adjustments import Signals, apply_adjustments
from ctx_lsp.assembly.budget import tier_caps
from ctx_lsp.assembly.render import render
from ctx_lsp.code.tiers import TIER_CAP_TOKENS
from ctx_lsp.config import WindowTypeConfig
from ctx_lsp.relevance import (
    BREADTH_SHARE,
    MEDIUM_MIN_RELATIVE_SALIENCE,
    MEDIUM_OUTLINE_TOKENS,
    MIN_CUT_SECTION_TOKENS,
    SKELETON_TOKENS,
)
from ctx_lsp.tokens import TokenCounter
from ctx_lsp.vocabulary import (
    Candidate,
    Contribution,
    ContributorName,
    Decision,
    Format,
    LineRange,
    Offer,
    Rendering,
    Section,
    Strategy,
    Tier,
)

SURPLUS_DONOR_MAX_USE = 0.30
"""Contributors using < 30 % of their allocation donate the rest (DESIGN, pass 4)."""
SURPLUS_RECIPIENT_MIN_USE = 0.80
"""Contributors using > 80 % of their allocation may receive surplus (DESIGN, pass 4)."""
SECTION_JOIN_SLACK = 2
"""Tokens per section for the blank lines joining sections (merges vary by one)."""


@dataclass
class Placed:
    candidate: Candidate
    rendering: Rendering
    cost: int  # tokens of content + section overhead

    @property
    def tier(self) -> Tier:
        return self.rendering.tier


@dataclass
class Outcome:
    sections: list[Section]
    text: str
    total_tokens: int
    contributions: list[Contribution]
    condensations: list[str]
    adjustments: list[str]
    reallocations: list[str]
    skipped: list[str]
    decisions: list[Decision]


@dataclass
class _State:
    name: str
    offer: Offer
    allocation: int = 0
    placed: list[Placed] = field(default_factory=list)
    condensed: int = 0

    @property
    def used(self) -> int:
        return sum(p.cost for p in self.placed)


def section_of(c: Candidate, r: Rendering) -> Section:
    return Section(
        id=c.id,
        contributor=c.contributor,
        path=c.path,
        uri=c.uri,
        tier=int(r.tier),
        range=LineRange(r.start_line, r.end_line),
        tokens=r.tokens,
        salience=round(c.salience, 4),
        reason=c.reason,
        content=r.content,
    )


class _Pricer:
    """Section overhead (heading, fences) per candidate, counted once; and the per-section
    tier caps of this bundle's budget."""

    def __init__(self, counter: TokenCounter, fmt: Format, caps: Mapping[Tier, int] = TIER_CAP_TOKENS):
        self.counter = counter
        self.fmt = fmt
        self.caps = caps
        self._overhead: dict[tuple[str, int, int, int], int] = {}

    def cost(self, c: Candidate, r: Rendering) -> int:
        key = (c.id, int(r.tier), r.start_line, r.end_line)
        if key not in self._overhead:
            empty = replace(section_of(c, r), content="")
            self._overhead[key] = self.counter.count(render([empty], "", self.fmt)) + SECTION_JOIN_SLACK
        return r.tokens + self._overhead[key]


def _tiers_down(c: Candidate) -> list[Tier]:
    return [Tier(t) for t in range(int(c.tier), int(c.min_tier) - 1, -1)]


def _best_fit(c: Candidate, room: int, pricer: _Pricer, richest: Tier | None = None) -> Placed | None:
    """The richest tier of `c` (not above `richest`) whose rendering fits `room`."""
    for tier in _tiers_down(c):
        if richest is not None and tier > richest:
            continue
        r = c.render(tier, pricer.caps[tier])
        if not r.content:
            continue
        cost = pricer.cost(c, r)
        if cost <= room:
            return Placed(c, r, cost)
    return None


def _skeleton_fit(c: Candidate, room: int, pricer: _Pricer) -> Placed | None:
    """The candidate's outline at skeleton size (or less, if that is all the room)."""
    r = c.render(c.min_tier, SKELETON_TOKENS)
    if not r.content:
        return None
    cost = pricer.cost(c, r)
    return Placed(c, r, cost) if cost <= room else _cut_fit(c, room, pricer)


def _cut_fit(c: Candidate, room: int, pricer: _Pricer) -> Placed | None:
    """Last resort: the outline cut to what is left, if a useful amount still fits."""
    probe = c.render(c.min_tier, MIN_CUT_SECTION_TOKENS)
    if not probe.content:
        return None
    cap = room - (pricer.cost(c, probe) - probe.tokens)
    if cap < MIN_CUT_SECTION_TOKENS:
        return None
    r = c.render(c.min_tier, cap)
    if not r.content:
        return None
    cost = pricer.cost(c, r)
    return Placed(c, r, cost) if cost <= room else None


def _fill(state: _State, taken: dict[str, str], pricer: _Pricer, decisions: dict[str, Decision]) -> None:
    """Spend `state.allocation` on its offer's candidates; mark their paths taken."""
    state.placed = []
    budget = state.allocation
    fresh: list[Candidate] = []
    for c in state.offer.candidates:
        owner = taken.get(c.path)
        if owner is not None:
            decisions[c.id].outcome = f"out: {c.path} is already in the bundle (from {owner})"
            continue
        fresh.append(c)

    def place(p: Placed) -> None:
        state.placed.append(p)
        taken[p.candidate.path] = state.name

    if state.offer.strategy == Strategy.BREADTH:
        # Skeletons (each file's most relevant definitions) of as many candidates as fit in
        # BREADTH_SHARE of the allocation; then the best ones grow.
        breadth_room = int(budget * BREADTH_SHARE)
        for c in fresh:
            room = (budget if not state.placed else breadth_room) - state.used
            p = _skeleton_fit(c, room, pricer) if room >= MIN_CUT_SECTION_TOKENS else None
            if p is not None:
                place(p)
        # Grow in rounds, best first in each: every file to a medium outline, then to its
        # whole outline, then to richer tiers — ten useful outlines before two complete ones.
        best = max((p.candidate.salience for p in state.placed), default=0.0)
        for richest, limit in ((Tier.OUTLINE, MEDIUM_OUTLINE_TOKENS), (Tier.OUTLINE, None), (None, None)):
            for i, p in enumerate(list(state.placed)):
                if limit is not None and p.candidate.salience < MEDIUM_MIN_RELATIVE_SALIENCE * best:
                    continue  # a long tail of medium outlines would starve the best files
                room = budget - state.used + p.cost
                if limit is not None:
                    room = min(room, limit + p.cost - p.rendering.tokens)  # limit on content, plus overhead
                better = _best_fit(p.candidate, room, pricer, richest) or _cut_fit(p.candidate, room, pricer)
                if better is not None and better.cost > p.cost:
                    state.placed[i] = better
    for c in fresh:
        if c.path in taken:
            continue
        room = budget - state.used
        if room < MIN_CUT_SECTION_TOKENS:
            break
        p = _best_fit(c, room, pricer) or _cut_fit(c, room, pricer)
        if p is not None:
            place(p)
    placed_ids = {p.candidate.id for p in state.placed}
    for c in fresh:
        if c.id not in placed_ids:
            decisions[
                c.id
            ].outcome = f"out: outranked — {state.name}'s {budget} tokens were spent on higher-ranked items"


_SNAPSHOT_ORDER: list[str] = list(ContributorName)
"""Ties in priority go to the contributor listed first (DESIGN's order)."""


def _allocate(available: int, share: float, lo: float, hi: float) -> int:
    return int(min(max(available * share, available * lo), available * hi))


def reserved_allocation(policy: WindowTypeConfig, taking_part: Collection[str], name: str, budget: int) -> int:
    """What pass 3 gives `name` when the contributors `taking_part` share `budget` (before
    dynamic adjustments, which never move a share that is reserved). The pipeline asks
    this to window the conversation before assembly: its tokens are spent outside `text`
    and passed back to `assemble` as `reserved`."""
    shares = {n: p.target_pct for n, p in policy.contributors.items() if p.active and n in taking_part}
    _normalise(shares)
    if name not in shares:
        return 0
    pol = policy.contributors[name]
    return max(1, _allocate(budget, shares[name], pol.min_pct, pol.max_pct))


def assemble(
    offers: Mapping[str, Offer],
    policy: WindowTypeConfig,
    policy_name: str,
    weights: Mapping[str, float],
    budget: int,
    counter: TokenCounter,
    title: str,
    fmt: Format,
    signals: Signals,
    reserved: Mapping[str, int] | None = None,
) -> Outcome:
    """Run the five passes. `reserved` holds tokens already spent outside `text` (e.g. the
    windowed conversation), charged to those contributors' allocations."""
    pricer = _Pricer(counter, fmt, tier_caps(budget))
    reserved = dict(reserved or {})
    decisions: dict[str, Decision] = {}
    for name, offer in offers.items():
        for c in offer.candidates:
            decisions[c.id] = Decision(
                c.id, name, c.path, round(c.salience, 4), round(weights.get(name, 1.0) * c.salience, 4), c.reason
            )

    # Pass 1: resolve.
    skipped: list[str] = []
    shares: dict[str, float] = {}
    for name in ContributorName:
        pol = policy.contributors.get(name)
        if pol is None or not pol.active:
            skipped.append(f"{name}: inactive in {policy_name}")
        else:
            shares[name] = pol.target_pct
    _normalise(shares)

    # Pass 2: dynamic adjustments, then redistribute what has nothing to offer.
    fired = apply_adjustments(shares, signals, policy.adjustments)
    for name in list(shares):
        if name in reserved:
            del shares[name]  # already spent outside the text; charged before allocation
            continue
        if not offers.get(name) or not offers[name].candidates:
            skipped.append(f"{name}: nothing to contribute")
            del shares[name]
    _normalise(shares)

    # Pass 3: allocate by priority and contribute.
    title_cost = counter.count(render([], title, fmt))
    if title_cost > budget:
        title, title_cost = "", counter.count(render([], "", fmt))
    available = max(0, budget - title_cost - sum(reserved.values()))
    order = sorted(shares, key=lambda n: (policy.contributors[n].priority, _SNAPSHOT_ORDER.index(n)))
    states: dict[str, _State] = {name: _State(name, Offer(ContributorName(name), [])) for name in reserved}
    taken: dict[str, str] = {}
    remaining = available
    for name in order:
        pol = policy.contributors[name]
        state = _State(name, offers.get(name) or Offer(ContributorName(name), []))
        state.allocation = min(_allocate(available, shares[name], pol.min_pct, pol.max_pct), remaining)
        remaining -= state.allocation
        _fill(state, taken, pricer, decisions)
        states[name] = state

    # Pass 4: reallocate surplus from idle donors to busy recipients.
    reallocations: list[str] = []
    pool = remaining
    donors: set[str] = set()
    for name in order:
        s = states[name]
        idle = s.allocation and s.used < SURPLUS_DONOR_MAX_USE * s.allocation
        if idle or (s.allocation > s.used and _satisfied(s, taken)):
            gift = s.allocation - s.used
            pool += gift
            donors.add(name)
            why = "unused" if idle else "unneeded (everything it has is shown in full)"
            reallocations.append(f"{name} donated {gift} {why} tokens (used {s.used}/{s.allocation})")
            s.allocation = s.used
    # Busy recipients first (DESIGN); then, so budget is not left idle, anyone who still has
    # candidates that did not fit.
    busy = [
        n
        for n in order
        if n not in donors
        and states[n].allocation
        and states[n].used > SURPLUS_RECIPIENT_MIN_USE * states[n].allocation
    ]
    hungry = [n for n in order if n not in donors and n not in busy and not _satisfied(states[n], taken)]
    for name in [*busy, *hungry]:
        s = states[name]
        if pool <= 0 or name in reserved:
            continue
        room = _allocate(available, 1.0, 0.0, policy.contributors[name].max_pct) - s.allocation
        gift = min(room, pool)
        if gift <= 0:
            continue
        before = s.used
        for p in s.placed:
            taken.pop(p.candidate.path, None)
        s.allocation += gift
        _fill(s, taken, pricer, decisions)
        pool -= gift
        reallocations.append(f"{name} received {gift} tokens (used {before} → {s.used})")

    # Pass 5: render, and condense while over budget.
    condensations: list[str] = []
    presentation = list(offers)
    sections, text, total = _render_all(states, presentation, title, fmt, counter)
    while total > budget:
        if not _condense_one(states, policy.condensation_order, pricer, condensations, decisions):
            break
        sections, text, total = _render_all(states, presentation, title, fmt, counter)
    if total > budget:  # only the title is left and even it does not fit
        sections, text, total = [], "", 0

    for s in states.values():
        for p in s.placed:
            d = decisions[p.candidate.id]
            d.tier, d.tokens = int(p.tier), p.rendering.tokens
            wanted = p.candidate.tier
            d.included = True
            d.outcome = (
                f"in: tier {int(p.tier)}"
                if p.tier == wanted
                else f"in: condensed from tier {int(wanted)} to {int(p.tier)} to fit"
            )
            if p.rendering.truncated:
                d.outcome += " (cut to its cap)"
    contributions = [
        Contribution(
            name,
            states[name].allocation + reserved.get(name, 0),
            states[name].used + reserved.get(name, 0),
            len(states[name].placed) + (1 if reserved.get(name) else 0),
            states[name].condensed,
        )
        for name in ContributorName
        if name in states
    ]
    return Outcome(
        sections, text, total, contributions, condensations, fired, reallocations, skipped, list(decisions.values())
    )


def _satisfied(state: _State, taken: Mapping[str, str]) -> bool:
    """Everything the contributor offers is in the bundle, at the tier it wants, uncut:
    more room would change nothing, so its unused allocation is surplus (pass 4)."""
    placed = {p.candidate.id for p in state.placed}
    if any(c.id not in placed and taken.get(c.path, state.name) == state.name for c in state.offer.candidates):
        return False
    return all(p.tier >= p.candidate.tier and not p.rendering.truncated for p in state.placed)


def _normalise(shares: dict[str, float]) -> None:
    total = sum(shares.values())
    if total <= 0:
        return
    for name in shares:
        shares[name] /= total


def _render_all(
    states: Mapping[str, _State], presentation: Sequence[str], title: str, fmt: Format, counter: TokenCounter
) -> tuple[list[Section], str, int]:
    ordered = [n for n in presentation if n in states] + [n for n in states if n not in presentation]
    sections = [section_of(p.candidate, p.rendering) for n in ordered for p in states[n].placed]
    text = render(sections, title, fmt)
    return sections, text, counter.count(text)


def _condense_one(
    states: Mapping[str, _State], order: Sequence[str], pricer: _Pricer, log: list[str], decisions: dict[str, Decision]
) -> bool:
    """Step the lowest-ranked section of the first condensable contributor down a tier."""
    for name in [*order, *[n for n in states if n not in order]]:
        s = states.get(name)
        if s is None or not s.placed:
            continue
        for i in range(len(s.placed) - 1, -1, -1):
            p = s.placed[i]
            if p.tier > p.candidate.min_tier:
                lower = Tier(p.tier - 1)
                r = p.candidate.render(lower, pricer.caps[lower])
                if r.content:
                    s.placed[i] = Placed(p.candidate, r, pricer.cost(p.candidate, r))
                    s.condensed += 1
                    log.append(f"{p.candidate.path}: tier {int(p.tier)} → {int(lower)} (over budget)")
                    return True
        gone = s.placed.pop()
        s.condensed += 1
        decisions[gone.candidate.id].outcome = "out: dropped while condensing (over budget)"
        log.append(f"{gone.candidate.path}: dropped (over budget)")
        return True
    return False
