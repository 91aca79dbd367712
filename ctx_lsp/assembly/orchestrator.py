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
from dataclasses import dataclass, field

from ctx_lsp.assembly.adjustments import Signals, apply_adjustments
from ctx_lsp.assembly.budget import tier_caps
from ctx_lsp.assembly.fill import Placed, Placement, Pricer, fill, section_of
from ctx_lsp.assembly.render import render
from ctx_lsp.code.row_counts import row_counts
from ctx_lsp.config import WindowTypeConfig
from ctx_lsp.relevance import WHOLE_WORKING_MAX_SHARE, growth_floor, pointing_tokens
from ctx_lsp.tokens import TokenCounter
from ctx_lsp.vocabulary import (
    Contribution,
    ContributorName,
    Decision,
    Format,
    Offer,
    Section,
    Tier,
)

IDLE_TOLERANCE = 0.03
"""Idle budget below 3 % is not worth another fill (each costs a re-render of a
contributor's candidates): bundles use at least 95 % when anything is left out."""
SURPLUS_DONOR_MAX_USE = 0.30
"""Contributors using < 30 % of their allocation donate the rest (DESIGN, pass 4)."""
SURPLUS_RECIPIENT_MIN_USE = 0.80
"""Contributors using > 80 % of their allocation may receive surplus (DESIGN, pass 4)."""


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
    pricer = Pricer(counter, fmt, tier_caps(budget), pointing_tokens(budget), growth_floor(budget))
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
        if state.offer.whole_if_it_fits:
            whole = _whole_need(state.offer, pricer)
            if whole > state.allocation:
                state.allocation = min(whole, int(available * WHOLE_WORKING_MAX_SHARE), remaining)
        remaining -= state.allocation
        state.placed = fill(name, state.offer, state.allocation, taken, pricer, decisions)
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
            why = "unused" if idle else "unneeded (everything it offers is in, at the tier it asked for)"
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
        s.allocation += gift
        _refill(s, taken, pricer, decisions)
        kept = min(gift, s.used - before) if s.used > before else 0
        pool -= kept  # what it could not use goes on to the next recipient
        s.allocation -= gift - kept
        reallocations.append(f"{name} received {kept} tokens (used {before} → {s.used})")

    # Last resort, so no budget is left idle while something is left out or cut: what no
    # one could take within its max share goes to whoever still wants more — first within
    # the per-section caps, then past them (a cap keeps one section from crowding out the
    # rest; with nothing else to show, it has no reason left).
    for name in order:  # what a contributor holds but could not use is idle now
        pool += states[name].allocation - states[name].used
        states[name].allocation = states[name].used
    uncapped = Pricer(counter, fmt, dict.fromkeys(Tier, max(budget, 1)), growth_floor=pricer.growth_floor)
    for last_pricer in (pricer, uncapped):
        for name in order:
            s = states[name]
            if pool < IDLE_TOLERANCE * budget or name in reserved or _satisfied(s, taken):
                continue
            before = s.used
            s.allocation = before + pool
            _refill(s, taken, last_pricer, decisions, stretch=last_pricer is uncapped)
            pool -= s.used - before
            s.allocation = s.used
            if s.used > before:
                beyond = " and its sections' caps" if last_pricer is uncapped else ""
                reallocations.append(
                    f"{name} received {s.used - before} idle tokens beyond its max share{beyond}, "
                    f"as no one else could use them (used {before} → {s.used})"
                )

    # Still idle: everything anyone offered is in. Rather than leave it, show the best
    # code files whole, best first — the outline of a file the task hits is a map of
    # where to look; the file itself is what an agent reads (DESIGN: no idle budget).
    pool += sum(states[n].allocation - states[n].used for n in order)
    if pool >= IDLE_TOLERANCE * budget:
        pool -= _deepen(states, order, reserved, pool, uncapped, reallocations)

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
            d.tier, d.tokens, d.included = int(p.tier), p.rendering.tokens, True
            d.outcome = outcome_of(p)
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


DEEPENS = (ContributorName.RETRIEVAL, ContributorName.CODEBASE_MAP)
"""Contributors whose outlines grow to whole files with budget nobody else can use."""


def _deepen(
    states: Mapping[str, _State],
    order: Sequence[str],
    reserved: Mapping[str, int],
    pool: int,
    pricer: Pricer,
    log: list[str],
) -> int:
    """Grow placed code outlines to whole files while `pool` allows, most salient first;
    the tokens spent."""
    grown: list[tuple[float, str, int]] = [
        (p.candidate.salience, name, i)
        for name in order
        if name in DEEPENS and name not in reserved and name in states
        for i, p in enumerate(states[name].placed)
        if p.tier < Tier.FULL and p.candidate.min_tier < Tier.FULL
    ]
    spent = 0
    for _, name, i in sorted(grown, key=lambda g: -g[0]):
        s, p = states[name], states[name].placed[i]
        room = pool - spent + p.cost
        r = p.candidate.render(Tier.FULL, max(0, room))
        if not r.content or r.truncated:
            continue
        cost = pricer.cost(p.candidate, r)
        if cost <= p.cost or cost > room:
            continue
        s.placed[i] = Placed(p.candidate, r, cost, Placement.WHOLE)
        spent += cost - p.cost
        s.allocation += cost - p.cost
        log.append(f"{name}: {p.candidate.path} shown whole with idle budget ({p.cost} → {cost} tokens)")
    return spent


def _whole_need(offer: Offer, pricer: Pricer) -> int:
    """Tokens the offer's candidates take at the tier they ask for (whole files)."""
    need = 0
    for c in offer.candidates:
        r = c.render(c.tier, pricer.caps[c.tier])
        need += pricer.cost(c, r) if r.content and not r.truncated else 0
    return need


def outcome_of(p: Placed) -> str:
    """What was done with a placed candidate, in explain's words."""
    tier, wanted = int(p.tier), int(p.candidate.tier)
    cut = " and cut to its cap" if p.rendering.truncated and p.how is not Placement.CUT else ""
    if p.how is Placement.CONDENSED:
        return f"in: condensed to tier {tier} (it asked for {wanted}) while the bundle was over budget{cut}"
    if p.how is Placement.DEPTH and p.tier == Tier.FULL:
        return "in: tier 3 — the whole file, as it fits the room for bodies (before breadth)"
    if p.how is Placement.DEPTH:
        return f"in: tier {tier} — the bodies the task hits, shown before breadth{cut}"
    if p.how is Placement.BREADTH:
        return f"in: tier {tier} outline — breadth first: more files as outlines (it asked for tier {wanted}){cut}"
    if p.how is Placement.SMALLER:
        return f"in: tier {tier} — tier {wanted} did not fit the room left{cut}"
    if p.how is Placement.WHOLE:
        return f"in: tier {tier} — the whole file, with budget nothing else could use"
    if p.how is Placement.CUT:
        return f"in: tier {tier}, cut to the room that was left"
    return f"in: tier {tier}, as asked{cut}"


def _refill(
    s: _State, taken: dict[str, str], pricer: Pricer, decisions: dict[str, Decision], *, stretch: bool = False
) -> None:
    """Fill `s` again with its (larger) allocation, its own paths released first; if the
    refill comes out smaller than what it had, it keeps what it had."""
    previous, before = s.placed, s.used
    for p in previous:
        taken.pop(p.candidate.path, None)
    s.placed = fill(s.name, s.offer, s.allocation, taken, pricer, decisions, stretch=stretch)
    if s.used < before:
        for p in s.placed:
            taken.pop(p.candidate.path, None)
        s.placed = previous
        taken.update((p.candidate.path, s.name) for p in previous)


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
    shared = row_counts(counter)  # by the text's parts, most counted by earlier requests
    return sections, text, shared.whole(text) if shared is not None else counter.count(text)


def _condense_one(
    states: Mapping[str, _State], order: Sequence[str], pricer: Pricer, log: list[str], decisions: dict[str, Decision]
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
                    s.placed[i] = Placed(p.candidate, r, pricer.cost(p.candidate, r), Placement.CONDENSED)
                    s.condensed += 1
                    log.append(f"{p.candidate.path}: tier {int(p.tier)} → {int(lower)} (over budget)")
                    return True
        gone = s.placed.pop()
        s.condensed += 1
        decisions[gone.candidate.id].outcome = "out: dropped while condensing (over budget)"
        log.append(f"{gone.candidate.path}: dropped (over budget)")
        return True
    return False
