"""How one contributor spends its allocation: which candidates, at which tier.

The orchestrator decides how much each contributor gets (passes 3 and 4); this module
decides what that buys. A *depth* contributor (working files, instructions, docs) places
its candidates best first at the richest tier that fits. A *breadth* contributor
(retrieval, the map) shows the code of its best few first — the bodies of the symbols the
task hits — then skeletons of as many other files as fit, then grows the best: an agent
must read the code it will change, and know where the rest is.

Every placement records *why* it has the tier it has (`Placement`), so `ctx.explain`
says what was done, not what might have been.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from ctx_lsp import cancel
from ctx_lsp.assembly.render import render
from ctx_lsp.code.tiers import TIER_CAP_TOKENS
from ctx_lsp.relevance import (
    BREADTH_SHARE,
    DEPTH_MIN_RELATIVE_SALIENCE,
    MAX_DEPTH_FILES,
    MEDIUM_MIN_RELATIVE_SALIENCE,
    MEDIUM_OUTLINE_TOKENS,
    MIN_CUT_SECTION_TOKENS,
    MIN_DEPTH_TOKENS,
    MIN_GROWTH_TOKENS,
    MIN_UNITS_GROWTH_TOKENS,
    SKELETON_TOKENS,
    UNIT_OUTLINE_TOKENS,
)
from ctx_lsp.tokens import ELLIPSIS, TokenCounter
from ctx_lsp.vocabulary import Candidate, Decision, Format, LineRange, Offer, Rendering, Section, Strategy, Tier

SECTION_JOIN_SLACK = 2
"""Tokens per section for the blank lines joining sections (merges vary by one)."""


class Placement(Enum):
    """Why a placed section has the tier it has (explain's words)."""

    FIT = "the tier it asked for"
    SMALLER = "the richest tier that fit the room left"
    DEPTH = "the bodies the task hits, before breadth"
    UNITS = "the code units the task ranks best, whichever file they are in, before breadth"
    BREADTH = "an outline, so that more files fit (breadth first)"
    CUT = "cut to the room that was left"
    CONDENSED = "condensed while the bundle was over budget"
    WHOLE = "the whole file, with budget nothing else could use"


@dataclass
class Placed:
    candidate: Candidate
    rendering: Rendering
    cost: int  # tokens of content + section overhead
    how: Placement = Placement.FIT

    @property
    def tier(self) -> Tier:
        return self.rendering.tier


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


class Pricer:
    """Section overhead (heading, fences) per candidate, counted once; the per-section
    tier caps of this bundle's budget, and the sizes of its pointing (a skeleton, the
    outline around a file's units: `relevance.pointing_tokens`), and below which share of
    a breadth contributor's best file a file is only named (`relevance.growth_floor`)."""

    def __init__(
        self,
        counter: TokenCounter,
        fmt: Format,
        caps: Mapping[Tier, int] = TIER_CAP_TOKENS,
        pointing: tuple[int, int] = (SKELETON_TOKENS, UNIT_OUTLINE_TOKENS),
        growth_floor: float = 0.0,
    ):
        self.counter = counter
        self.fmt = fmt
        self.caps = caps
        self.skeleton_tokens, self.unit_outline_tokens = pointing
        self.growth_floor = growth_floor

    def cost(self, c: Candidate, r: Rendering) -> int:
        return r.tokens + self.heading(c, r)

    def heading(self, c: Candidate, r: Rendering) -> int:
        """Tokens a section of `r` costs besides its content (its heading and fences)."""
        # What a heading shows (render.py): path, line range and tier, and in XML the
        # contributor; an empty body's fence is the shortest. Kept across requests: a
        # bundle prices ~50 new sections, a tokenizer call and a render each (~4 ms).
        key = (self.counter.name, self.fmt, c.path, c.contributor, int(r.tier), r.start_line, r.end_line)
        overhead = _OVERHEADS.get(key)
        if overhead is None:
            empty = replace(section_of(c, r), content="")
            overhead = self.counter.count(render([empty], "", self.fmt)) + SECTION_JOIN_SLACK
            if len(_OVERHEADS) >= MAX_OVERHEADS_KEPT:
                _OVERHEADS.clear()
            _OVERHEADS[key] = overhead
        return overhead


_OVERHEADS: dict[tuple, int] = {}
"""Section overheads by what their headings show (any thread may add one: a dict's get
and set are atomic, and two threads that count the same heading get the same count)."""
MAX_OVERHEADS_KEPT = 65536


GUTTER = re.compile(r"^\s*\d*│ ?")
"""A rendered line's line-number gutter (`12│ `)."""


def shows_something(r: Rendering) -> bool:
    """Whether a rendering shows anything but markers (`… 2 more lines`): a section that
    only says what it left out is noise, not context."""
    for line in r.content.splitlines():
        text = GUTTER.sub("", line, count=1).strip()
        if text and not text.startswith(ELLIPSIS):
            return True
    return False


def only_named(c: Candidate, best: float, pricer: Pricer) -> bool:
    """Whether a breadth contributor's candidate is far enough below its `best` salience
    (`pricer.growth_floor`) to be named by its skeleton and never grown."""
    return c.salience < pricer.growth_floor * best


def _nothing_fits(c: Candidate, room: int, pricer: Pricer) -> bool:
    """Whether no rendering of `c` fits `room`: its outline is over MIN_CUT_SECTION_TOKENS
    (so only a cut could fit) and the room less the section's heading is under it (so no
    cut is worth placing). Learnt from the cut's own probe, which is cheap; the tail of a
    fill otherwise renders every remaining file's outline to find the same."""
    probe = c.render(c.min_tier, MIN_CUT_SECTION_TOKENS)
    return probe.truncated and room - pricer.heading(c, probe) < MIN_CUT_SECTION_TOKENS


def tiers_down(c: Candidate) -> list[Tier]:
    return [Tier(t) for t in range(int(c.tier), int(c.min_tier) - 1, -1)]


def best_fit(c: Candidate, room: int, pricer: Pricer, richest: Tier | None = None) -> Placed | None:
    """The richest tier of `c` (not above `richest`) whose rendering fits `room`."""
    for tier in tiers_down(c):
        if richest is not None and tier > richest:
            continue
        r = c.render(tier, pricer.caps[tier])
        if not shows_something(r):
            continue
        cost = pricer.cost(c, r)
        if cost <= room:
            how = Placement.FIT if tier == c.tier else Placement.BREADTH if richest else Placement.SMALLER
            return Placed(c, r, cost, how)
    return None


def cut_fit(c: Candidate, room: int, pricer: Pricer, tier: Tier | None = None) -> Placed | None:
    """Last resort: the candidate (its outline, unless `tier` says otherwise) cut to what
    is left, if a useful amount still fits."""
    tier = c.min_tier if tier is None else tier
    # The probe only learns the section's overhead (its heading names the tier and the
    # line range, which a tier's renderings share): at the candidate's lowest tier it is
    # a few outline rows, where a focused probe of a big module sheds bodies and excerpts
    # one by one to reach 80 tokens (~4 ms on Django's admin/options.py).
    probe = c.render(c.min_tier, MIN_CUT_SECTION_TOKENS)
    if not probe.content:
        return None
    cap = min(room - pricer.heading(c, replace(probe, tier=tier)), pricer.caps[tier])
    if cap < MIN_CUT_SECTION_TOKENS:
        return None
    r = c.render(tier, cap)
    if not shows_something(r):
        return None
    cost = pricer.cost(c, r)
    return Placed(c, r, cost, Placement.CUT) if cost <= room else None


def _skeleton_fit(c: Candidate, room: int, pricer: Pricer) -> Placed | None:
    """The candidate's outline at skeleton size (or less, if that is all the room)."""
    r = c.render(c.min_tier, pricer.skeleton_tokens)
    if not shows_something(r):
        return None
    cost = pricer.cost(c, r)
    how = Placement.FIT if c.tier == c.min_tier and not r.truncated else Placement.BREADTH
    return Placed(c, r, cost, how) if cost <= room else cut_fit(c, room, pricer)


def _depth_fit(c: Candidate, room: int, pricer: Pricer) -> Placed | None:
    """The whole file if it fits `room` — the file a task hits first is the one an agent
    edits, imports and module code included; else the candidate at its focused tier (the
    bodies its task hits, in its outline), cut to `room` if need be (bodies kept first).

    Whole when it fits, measured (seed 0, 8K, cold): line recall 39.9 → 43.3, fn 85.9 →
    83.5 (fewer outlines after it); whole only within 0.6 of the room: 42.2 / 84.2."""
    cannot_fit = c.whole_tokens is not None and c.whole_tokens > room
    entire = c.render(Tier.FULL, room) if c.min_tier < Tier.FULL and room > 0 and not cannot_fit else None
    if entire is not None and entire.content and not entire.truncated:
        cost = pricer.cost(c, entire)
        if cost <= room:
            return Placed(c, entire, cost, Placement.DEPTH)
    if room >= pricer.caps[Tier.FOCUSED]:
        whole = best_fit(c, room, pricer, Tier.FOCUSED)
        if whole is not None and whole.tier == Tier.FOCUSED:
            return replace(whole, how=Placement.DEPTH)
    # Less room than the tier's cap: fit the bodies to the room at once. Rendering at the
    # cap first to see whether it fits cost up to ~60 ms on a big module (Django's
    # autodetector.py), and a rendering cut to the room keeps the bodies first anyway.
    part = cut_fit(c, room, pricer, Tier.FOCUSED)
    if part is None or (part.rendering.truncated and not part.rendering.shown_symbols):
        return None  # a cut that shows no body is an outline, which breadth places better
    return replace(part, how=Placement.DEPTH)


def fill(
    name: str,
    offer: Offer,
    allocation: int,
    taken: dict[str, str],
    pricer: Pricer,
    decisions: dict[str, Decision],
    *,
    stretch: bool = False,
) -> list[Placed]:
    """Spend `allocation` on the offer's candidates; mark their paths taken by `name`.

    `stretch` (the last use of idle budget): a candidate that does not fit at the tier it
    asked for is shown at that tier cut to the room left, when that is more than the
    lower tier would show — unless the lower tier shows bodies (a cursor's, an edit's, the
    task's), which a cut prefix of the file could lose."""
    cancel.check()  # each fill renders candidates: the costly unit of an assembly
    placed: list[Placed] = []
    fresh: list[Candidate] = []
    for c in offer.candidates:
        owner = taken.get(c.path)
        if owner is not None:
            decisions[c.id].outcome = f"out: {c.path} is already in the bundle (from {owner})"
            continue
        fresh.append(c)

    def used() -> int:
        return sum(p.cost for p in placed)

    def place(p: Placed) -> None:
        placed.append(p)
        taken[p.candidate.path] = name

    if offer.strategy == Strategy.BREADTH and offer.units:
        _units_first(fresh, allocation, offer, pricer, place)
        _breadth(fresh, allocation, pricer, placed, place, taken, stretch)
    elif offer.strategy == Strategy.BREADTH:
        _depth_first(fresh, allocation, offer.depth_share, pricer, placed, place)
        _breadth(fresh, allocation, pricer, placed, place, taken, stretch)
    best = max((c.salience for c in fresh), default=0.0)
    misses = 0
    for c in fresh:
        if c.path in taken:
            continue
        room = allocation - used()
        if room < MIN_CUT_SECTION_TOKENS or misses >= MAX_TAIL_MISSES:
            break
        p = _tail_fit(c, room, pricer, best, offer.strategy, stretch)
        misses = 0 if p is not None else misses + 1
        if p is not None:
            place(p)
    placed_ids = {p.candidate.id for p in placed}
    for c in fresh:
        if c.id not in placed_ids:
            decisions[c.id].outcome = f"out: outranked — {name}'s {allocation} tokens were spent on higher-ranked items"
    return placed


def _tail_fit(c: Candidate, room: int, pricer: Pricer, best: float, strategy: Strategy, stretch: bool) -> Placed | None:
    """What of a candidate the passes before left out fits the `room` left, if anything."""
    if strategy == Strategy.BREADTH and only_named(c, best, pricer):
        return _skeleton_fit(c, room, pricer)  # the tail is pointed at, never grown
    if _nothing_fits(c, room, pricer):
        return None
    p = best_fit(c, room, pricer) or cut_fit(c, room, pricer)
    if (p is None or p.tier < Tier.FOCUSED) and c.tier >= Tier.FOCUSED:
        bodies = _depth_fit(c, room, pricer)  # its bodies, with as much outline as fits
        if bodies is not None:
            p = replace(bodies, how=Placement.FIT if bodies.tier == c.tier else Placement.SMALLER)
    if stretch and (p is None or (p.tier < c.tier and not p.rendering.shown_symbols)):
        partial = cut_fit(c, room, pricer, c.tier)
        if partial is not None and (p is None or partial.cost > p.cost):
            p = partial
    return p


MAX_TAIL_MISSES = 3
"""The tail of a fill stops after this many files in a row placed nothing: the room left
is the same for the rest, which rank lower, and each costs a render (its outline's layout,
its definitions ranked) to learn that nothing of it fits either. Django 8K: a bundle whose
units took most of the allocation rendered ~30 test modules (focused tier, outline, probe)
for ~100 tokens of room, 30–40 ms, placing none. With this and `_nothing_fits` the p95 of
`benchmarks/bundle_ab.py` went from 1.5x (session 13) to 1.00x `694ebaf`'s; every eval
cell unchanged (benchmarks/README.md, "Session 14")."""


def _units_first(fresh: list[Candidate], allocation: int, offer: Offer, pricer: Pricer, place) -> None:
    """The best code units across the offer's files, within its `depth_share` of the
    allocation (`relevance.units_share`, the one budget rule between showing and pointing):
    units are taken best first, whichever file each is in, skipping one that does not fit
    the room left for a smaller one further down; then each file that has units is placed,
    in the order of its best unit, at its focused tier sized to its units and a little of
    its outline (UNIT_OUTLINE_TOKENS, or less below MID_BUDGET_TOKENS: `pricer`) — or whole,
    if that costs no more."""
    room = int(allocation * offer.depth_share)
    by_id = {c.id: c for c in fresh}
    wants: dict[str, int] = {}
    for cid, cost in offer.units:
        if cid not in by_id:
            continue
        extra = cost if cid in wants else cost + pricer.unit_outline_tokens + UNIT_SECTION_TOKENS
        if extra > room:
            continue
        wants[cid] = wants.get(cid, 0) + extra
        room -= extra
    for cid, want in wants.items():
        c = by_id[cid]
        p = None
        if c.whole_tokens is not None and c.whole_tokens + UNIT_SECTION_TOKENS <= want:
            entire = c.render(Tier.FULL, want)
            cost = pricer.cost(c, entire)
            if entire.content and not entire.truncated and cost <= want:
                p = Placed(c, entire, cost, Placement.UNITS)
        if p is None:
            part = cut_fit(c, want, pricer, Tier.FOCUSED)
            if part is not None and shows_something(part.rendering):
                p = replace(part, how=Placement.UNITS)
        if p is not None:
            place(p)


UNIT_SECTION_TOKENS = 20
"""A section's heading and fences, estimated, when units are counted into files' room."""


def _depth_first(
    fresh: list[Candidate], allocation: int, share: float, pricer: Pricer, placed: list[Placed], place
) -> None:
    """Bodies before breadth: the best few candidates that want their focused tier get it,
    within `share` of the allocation (the offer's `depth_share`). The budget rule: a file qualifies if it is at
    least DEPTH_MIN_RELATIVE_SALIENCE as salient as the best, at most MAX_DEPTH_FILES of
    them, each while at least MIN_DEPTH_TOKENS of the depth room are left."""
    room = int(allocation * share)
    best = max((c.salience for c in fresh), default=0.0)
    for c in fresh:
        if len(placed) >= MAX_DEPTH_FILES or room < MIN_DEPTH_TOKENS:
            break
        if c.salience < DEPTH_MIN_RELATIVE_SALIENCE * best:
            break  # best first: the rest are less salient still
        if c.tier < Tier.FOCUSED:
            continue
        p = _depth_fit(c, room, pricer)
        if p is not None:
            place(p)
            room -= p.cost


def _breadth(
    fresh: list[Candidate],
    allocation: int,
    pricer: Pricer,
    placed: list[Placed],
    place,
    taken: dict[str, str],
    stretch: bool,
) -> None:
    """Skeletons (each file's most relevant definitions) of as many candidates as fit in
    BREADTH_SHARE of the allocation; then the best ones grow in rounds, best first in each:
    every file to a medium outline, then to its whole outline, then to richer tiers — ten
    useful outlines before two complete ones. Below a large budget, a file far below the
    best (`pricer.growth_floor`) keeps its skeleton: it is named, and what its whole outline
    would cost goes to the files the task is about."""
    depth_used = sum(p.cost for p in placed)
    breadth_room = depth_used + int((allocation - depth_used) * BREADTH_SHARE)
    for c in fresh:
        if c.path in taken:
            continue
        used = sum(p.cost for p in placed)
        room = (allocation if not placed else breadth_room) - used
        p = _skeleton_fit(c, room, pricer) if room >= MIN_CUT_SECTION_TOKENS else None
        if p is not None:
            place(p)
    best = max((p.candidate.salience for p in placed), default=0.0)
    for richest, limit in ((Tier.OUTLINE, MEDIUM_OUTLINE_TOKENS), (Tier.OUTLINE, None), (None, None)):
        # A file sized to its units grows last, in the last round: more of its outline is
        # worth less than another file's first bodies or outline.
        order = [i for i, p in enumerate(placed) if p.how != Placement.UNITS]
        if richest is None:
            order += [i for i, p in enumerate(placed) if p.how == Placement.UNITS]
        for i in order:
            p = placed[i]
            if richest is not None and p.tier > richest:
                continue  # already showing bodies: an outline would show less
            if limit is not None and p.candidate.salience < MEDIUM_MIN_RELATIVE_SALIENCE * best:
                continue  # a long tail of medium outlines would starve the best files
            if p.how != Placement.UNITS and only_named(p.candidate, best, pricer):
                continue  # named, and no more: its room is worth more in the best files
            left = allocation - sum(q.cost for q in placed)
            if left < MIN_GROWTH_TOKENS:
                break  # what is left is the same for every file of the round: none can grow
            if p.how == Placement.UNITS and left < MIN_UNITS_GROWTH_TOKENS:
                continue  # its whole focused tier is out of reach, and trying costs a render
            room = p.cost + left
            if limit is not None:
                room = min(room, limit + p.cost - p.rendering.tokens)  # limit on content, plus overhead
                if room - p.cost < MIN_GROWTH_TOKENS:
                    continue  # already (nearly) at the limit
            better = best_fit(p.candidate, room, pricer, richest)
            if stretch and richest is None and (better.tier if better else p.tier) < p.candidate.tier:
                partial = cut_fit(p.candidate, room, pricer, p.candidate.tier)  # some bodies, if not all
                if partial is not None and (better is None or partial.cost > better.cost):
                    better = partial
            if better is None:
                better = cut_fit(p.candidate, room, pricer)
            grows = better is not None and (better.cost > p.cost or (better.tier > p.tier and better.cost >= p.cost))
            if better is not None and grows and better.tier >= p.tier:
                if p.how in (Placement.DEPTH, Placement.UNITS) and better.tier == Tier.FOCUSED:
                    better = replace(better, how=p.how)
                placed[i] = better
