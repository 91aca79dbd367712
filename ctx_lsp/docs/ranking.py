"""Topic ranking and cap-bounded selection of doc sections.

Ranking is BM25 over each section's rendered text, with the title's terms counted
`TITLE_WEIGHT` extra times: a section *named* after the topic (`Server.feature` for
"feature") beats one that mentions it in passing. Terms come from
`ctx_lsp.index.terms`, so `send_request` meets "sending requests".

Selection walks the ranking and takes whole sections while they fit; a section that does
not fit is skipped and the next one is tried, so a long section never pushes out three
short relevant ones. Only when at least `MIN_CUT_TOKENS` are left over is the best
skipped section cut at a line boundary to fill them: a 150-token slice of the most
relevant remaining section is worth sending, a 40-token one is noise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctx_lsp.docs.sections import FENCE, HEADING_PATH_SEPARATOR, SEPARATOR, DocSection, Kind, overview_order
from ctx_lsp.index.terms import count_terms, terms
from ctx_lsp.tokens import TokenCounter, cut_to_tokens, line_count, more_lines_marker

__all__ = ["Picked", "SectionIndex", "Selection", "build_index", "overview", "rank", "select", "suggestions"]

BM25_K1 = 1.2
BM25_B = 0.75
"""The usual BM25 constants: sections are short and similar in length, nothing to tune."""

TITLE_WEIGHT = 3
"""Each title term counts as this many extra occurrences."""

RELEVANCE_FLOOR = 0.15
"""Sections scoring under this share of the best score are not candidates: with a topic
like "custom requests", a section that only says "request" once is noise, and leaving it
out keeps results short instead of padding them to the cap."""

COVERAGE_EXPONENT = 1.0
"""A section's score is multiplied by (query terms it contains / query terms) to this
power, as Lucene's classic "coord" factor did: for "workspace symbol completion", one
section about all three beats one that says "completion" very often."""

MIN_DUPLICATE_PROSE_CHARS = 40
"""Sections whose prose (the text after the title and signature) repeats one already
selected are skipped when at least this long: pygls documents each request method twice,
`x` and `x_async`, with the same docstring."""

MIN_CUT_TOKENS = 150
"""Least room worth filling with a cut section (see the module docstring)."""

HEADER_LINES = 2
"""A rendered section starts with its title and its source line; a cut that keeps no more
than these says nothing."""


@dataclass(frozen=True, slots=True, eq=False)
class SectionIndex:
    """BM25 postings of one library's sections, built once per library and version."""

    postings: dict[str, dict[int, int]]
    """term → {section index: weighted term frequency}."""
    lengths: tuple[int, ...]
    average_length: float
    weights: tuple[float, ...]


def _body(text: str) -> str:
    """A rendered section without its title and "Source: path:line" lines: the title is
    counted on its own, and the source line would make every section match "source"."""
    parts = text.split("\n", 2)
    return parts[2] if len(parts) == 3 else ""


def build_index(sections: Sequence[DocSection]) -> SectionIndex:
    postings: dict[str, dict[int, int]] = {}
    lengths: list[int] = []
    for i, section in enumerate(sections):
        body_terms = terms(_body(section.text))
        title_terms = terms(section.title)
        counts = count_terms(body_terms)
        for term in title_terms:
            counts[term] = counts.get(term, 0) + 1 + TITLE_WEIGHT
        for term, tf in counts.items():
            postings.setdefault(term, {})[i] = tf
        lengths.append(max(len(body_terms) + len(title_terms), 1))
    average = sum(lengths) / len(lengths) if lengths else 1.0
    return SectionIndex(postings, tuple(lengths), average, tuple(s.weight for s in sections))


def rank(index: SectionIndex, query: Sequence[str]) -> list[tuple[int, float]]:
    """(section index, score) of the sections that match, best first; ties keep the
    library's own order (description before API)."""
    n = len(index.lengths)
    unique = list(dict.fromkeys(query))
    scores: dict[int, float] = {}
    matched: dict[int, int] = {}
    for term in unique:
        postings = index.postings.get(term)
        if not postings:
            continue
        idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
        for i, tf in postings.items():
            norm = BM25_K1 * (1 - BM25_B + BM25_B * index.lengths[i] / index.average_length)
            scores[i] = scores.get(i, 0.0) + idf * tf * (BM25_K1 + 1) / (tf + norm)
            matched[i] = matched.get(i, 0) + 1
    for i in scores:
        scores[i] *= index.weights[i] * (matched[i] / len(unique)) ** COVERAGE_EXPONENT
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def relevant(ranked: Sequence[tuple[int, float]]) -> list[int]:
    if not ranked:
        return []
    floor = ranked[0][1] * RELEVANCE_FLOOR
    return [i for i, score in ranked if score >= floor]


MAX_SUGGESTIONS = 12
"""Topics offered when a topic matches nothing: enough to see what the library covers,
short enough to read in one line."""

_PART = re.compile(r" \(\d+/\d+\)$")
"""The " (2/3)" a split section's title ends with."""


def suggestions(sections: Sequence[DocSection], limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Topics a library's docs answer, for a topic that matched nothing: its public
    modules from the top down, then the chapters of its docs — the headings at the
    shallowest level that has more than one (a README's title is one heading; its
    chapters are the next level)."""
    modules: list[tuple[int, str]] = []
    chapters: dict[int, list[str]] = {}
    for section in sections:
        title = _PART.sub("", section.title)
        if section.kind == Kind.MODULE:
            if not any(part.startswith("_") for part in title.split(".")):
                modules.append((title.count("."), title))
        elif section.kind in (Kind.README, Kind.LLMS, Kind.GUIDE):
            path = title.split(HEADING_PATH_SEPARATOR)[1:]  # without the document's label
            if path:
                chapters.setdefault(len(path), []).append(path[-1])
    level = min((depth for depth, titles in chapters.items() if len(set(titles)) > 1), default=min(chapters, default=0))
    found = [title for _, title in sorted(modules, key=lambda m: m[0])] + chapters.get(level, [])
    return list(dict.fromkeys(found))[:limit]


def overview(sections: Sequence[DocSection]) -> list[int]:
    """The order for a request without a topic: description first, then llms.txt, docs
    folders, and the API from the top-level modules down."""

    def key(i: int) -> tuple[int, int, int]:
        section = sections[i]
        return (overview_order(section.kind), section.title.count("."), i)

    return sorted(range(len(sections)), key=key)


@dataclass(frozen=True, slots=True)
class Picked:
    section: DocSection
    text: str
    tokens: int
    cut: bool = False


@dataclass(frozen=True, slots=True)
class Selection:
    picked: tuple[Picked, ...]
    content: str
    tokens: int
    """Real count of `content`; never above the cap."""
    truncated: bool
    """A candidate was left out or cut."""


def _closes_fences(text: str) -> bool:
    return sum(1 for line in text.split("\n") if FENCE.match(line)) % 2 == 0


def cut_section(section: DocSection, room: int, counter: TokenCounter) -> Picked | None:
    """The section's first lines within `room`, or None when nothing past its header
    fits. An open code fence is closed inside the marker, so the cut stays valid
    markdown and the result still counts every token it sends."""
    cut = cut_to_tokens(section.text, room, counter)
    if not _closes_fences(cut.text):
        cut = cut_to_tokens(section.text, room, counter, marker=lambda n: f"```\n{more_lines_marker(n)}")
    kept = line_count(section.text) - cut.omitted_lines
    if not cut.text or kept <= HEADER_LINES or not _closes_fences(cut.text):
        return None
    return Picked(section, cut.text, cut.tokens, cut=cut.truncated)


def prose(text: str) -> str:
    """A rendered section without its title, source line and leading code block."""
    body = _body(text).strip()
    lines = body.split("\n")
    if lines and FENCE.match(lines[0]):
        close = next((k for k in range(1, len(lines)) if FENCE.match(lines[k])), len(lines) - 1)
        body = "\n".join(lines[close + 1 :]).strip()
    return body


def _greedy(sections: Sequence[DocSection], order: Sequence[int], cap: int, sep: int) -> tuple[list[Picked], list[int]]:
    picked: list[Picked] = []
    skipped: list[int] = []
    seen_prose: set[str] = set()
    used = 0
    for i in order:
        section = sections[i]
        said = prose(section.text)
        repeats = len(said) >= MIN_DUPLICATE_PROSE_CHARS
        if repeats and said in seen_prose:
            continue
        cost = section.tokens + (sep if picked else 0)
        if used + cost <= cap:
            picked.append(Picked(section, section.text, section.tokens))
            used += cost
            if repeats:
                seen_prose.add(said)
        else:
            skipped.append(i)
    return picked, skipped


def _join(picked: Sequence[Picked]) -> str:
    return SEPARATOR.join(p.text for p in picked)


def select(
    sections: Sequence[DocSection],
    order: Sequence[int],
    cap: int,
    counter: TokenCounter,
    *,
    preamble: str = "",
) -> Selection:
    """The sections of `order` that fit in `cap` tokens, in that order (a cut one last).

    Counts are per section; the joined text is counted once more for real, and if the
    joins cost more than estimated (BPE merges across a separator), the last section is
    dropped until it fits, so `tokens <= cap` always holds.
    """
    sep = counter.count(SEPARATOR)
    room = cap
    head: list[Picked] = []
    if preamble:
        tokens = counter.count(preamble)
        if tokens + sep <= cap:
            room -= tokens + sep
            head = [Picked(DocSection("", "", "", "", 0, "note", preamble, tokens), preamble, tokens)]
    picked, skipped = _greedy(sections, order, room, sep)
    used = sum(p.tokens for p in picked) + sep * max(len(picked) - 1, 0)
    left = room - used - (sep if picked else 0)
    if skipped and left >= MIN_CUT_TOKENS:
        best = cut_section(sections[skipped[0]], left, counter)
        if best is not None:
            picked.append(best)
    truncated = bool(skipped)
    while True:
        everything = head + picked
        content = _join(everything)
        tokens = counter.count(content) if content else 0
        if tokens <= cap or not picked:
            break
        picked.pop()
        truncated = True
    if tokens > cap:  # only the preamble is left and even it does not fit
        content, tokens = "", 0
    return Selection(tuple(picked), content, tokens, truncated)
