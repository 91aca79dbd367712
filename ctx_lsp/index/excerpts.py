"""Excerpts: the few runs of a file's lines where the task's words are densest.

A symbol's body is the unit a bundle shows when the task hits that symbol, but a hit
body can be 200 lines long and the lines a change touches are often outside any hit
body: an import, a module constant, the branch of a long method that handles the case
the task describes. Windows of lines ranked by the task's words show those lines for a
fraction of a body's tokens (retrieval-augmented generation's usual unit; on the
development evaluation, lexical 30-line windows alone reach line recall 55 % at 8K,
against 38.5 % for whole files).

The windows are ranked within one file: a term counts by its weight across the
workspace (`SearchIndex.term_weights`) times how rare it is within the file, so
`option` in click's `core.py`, on every tenth line, does not pick windows by itself.
"""

from __future__ import annotations

import itertools
import math
from array import array
from bisect import bisect_right
from collections.abc import Collection, Mapping, Sequence

from ctx_lsp.index.terms import terms
from ctx_lsp.relevance import EXCERPT_LINES_AFTER, EXCERPT_LINES_BEFORE, MAX_EXCERPTS

Span = tuple[int, int]
"""1-based inclusive line range."""


def hot_spans(
    lines: Sequence[str],
    weights: Mapping[str, float],
    *,
    covered: Sequence[Span] = (),
    limit: int = MAX_EXCERPTS,
) -> tuple[Span, ...]:
    """Up to `limit` disjoint windows of `lines`, best first, scored by the task's terms.

    A window opens EXCERPT_LINES_BEFORE lines above a line holding a task term and runs
    EXCERPT_LINES_AFTER below it; its score sums, per distinct term in it, the term's
    weight times its rarity in the file, with a little more for repeats. Lines in
    `covered` (bodies already shown) neither score nor are counted again: a window is
    clipped at either end where it meets them, and one that holds a body whole keeps it
    (the focused rendering shows each line once: the body's context above and below).
    """
    if not weights or not lines:
        return ()
    line_terms = task_terms_by_line(lines, weights)
    lines_with: dict[str, int] = {}
    for counts in line_terms.values():
        for t in counts:
            lines_with[t] = lines_with.get(t, 0) + 1
    if not line_terms:
        return ()
    total = len(lines)
    weight = {t: weights[t] * math.log(1 + total / n) for t, n in lines_with.items()}
    taken = _mask(covered, total)
    too_long = [n for n, line in enumerate(lines, 1) if len(line) > LONG_LINE_CHARS]
    for number in too_long:
        taken[number] = True
    # Windows open at the strongest lines only: a file can hold hundreds of lines with a
    # task word, and a dozen windows are wanted.
    strength = {n: sum(weight[t] for t in counts) for n, counts in line_terms.items() if not taken[n]}
    starts = sorted(strength, key=lambda n: (-strength[n], n))[: WINDOW_STARTS_PER_EXCERPT * limit]
    scored: list[tuple[float, int, int]] = []
    seen: set[int] = set()
    for hot in sorted(starts):
        start = max(1, hot - EXCERPT_LINES_BEFORE)
        if start in seen:
            continue
        seen.add(start)
        end = min(total, start + EXCERPT_LINES_BEFORE + EXCERPT_LINES_AFTER)
        score = _score(line_terms, weight, start, end, taken)
        if score > 0:
            scored.append((score, start, end))
    scored.sort(key=lambda s: (-s[0], s[1]))
    chosen: list[Span] = []
    for _score_value, start, end in scored:
        if len(chosen) >= limit:
            break
        if all(taken[n] for n in range(start, end + 1)):
            continue
        # What is already shown (a body, an earlier window) is clipped off either end; a
        # body inside the window stays inside it (the rendering shows each line once).
        while taken[start]:
            start += 1
        while taken[end]:
            end -= 1
        if too_long:  # never shown, not even inside a window: keep the best run between them
            runs, run_start = [], start
            for n in too_long:
                if start <= n <= end:
                    if run_start < n:
                        runs.append((run_start, n - 1))
                    run_start = n + 1
            runs.append((run_start, end))
            start, end = max(runs, key=lambda r: _score(line_terms, weight, r[0], r[1], taken))
            while start <= end and taken[start]:
                start += 1
            while end >= start and taken[end]:
                end -= 1
        if start > end or _score(line_terms, weight, start, end, taken) <= 0:
            continue
        chosen.append((start, end))
        for n in range(start, end + 1):
            taken[n] = True
    return tuple(chosen)


class LowerLines:
    """A text's lines in lower case as one string, with each line's offset in it."""

    __slots__ = ("starts", "text")

    def __init__(self, lines: Sequence[str]):
        text = "\n".join(lines)
        lowered = text.lower()
        if len(lowered) != len(text):  # lower() lengthened a character (`İ`): line by line
            each = [line.lower() for line in lines]
            lowered, lengths = "\n".join(each), map(len, each)
        else:
            lengths = map(len, lines)
        self.starts = array("i", [0, *itertools.accumulate(n + 1 for n in lengths)][: len(lines)])
        self.text = lowered

    def lines_with(self, term: str) -> list[int]:
        """Numbers of the lines that may hold `term`: those containing, in lower case, the
        term less its last letter (a stem's words all contain it: `entry` ← entries, `pars`
        ← parses). One C-speed `find` loop per term: a regular expression over 15 files'
        text per request took ~20 ms on Django."""
        needle = term[:-1] if len(term) > 3 else term
        text, starts, numbers = self.text, self.starts, []
        at = text.find(needle)
        while at >= 0:
            number = bisect_right(starts, at)
            numbers.append(number)
            at = text.find(needle, starts[number] if number < len(starts) else len(text))
        return numbers


def lines_with_terms(lines: Sequence[str], weights: Collection[str]) -> list[int]:
    """Line numbers that may hold a task term (`LowerLines.lines_with`), in order: most
    lines of a file hold none of a task's few words, and only these are split into terms."""
    lower = LowerLines(lines)
    return sorted({n for term in weights for n in lower.lines_with(term)})


def task_terms_by_line(lines: Sequence[str], weights: Collection[str]) -> dict[int, dict[str, int]]:
    """Each line (1-based) holding a task term, with how often it holds each: the cheap
    pre-filter (`lines_with_terms`) picks the lines, the search's own split (`terms`)
    confirms them (the pre-filter alone takes `surrender` for `render`)."""
    found: dict[int, dict[str, int]] = {}
    for number in lines_with_terms(lines, weights):
        counts: dict[str, int] = {}
        for t in terms(lines[number - 1]):
            if t in weights:
                counts[t] = counts.get(t, 0) + 1
        if counts:
            found[number] = counts
    return found


def densest_window(lines: Sequence[str], span: Span, size: int, weights: Mapping[str, float]) -> Span:
    """The `size` consecutive lines of `span` that hold the most of the task's words (by
    their weights), the earliest of equals (a definition's signature, when its words are
    there); the span itself when it is no longer. Lines hold words as `hot_spans` finds
    them (`task_terms_by_line`)."""
    start, end = span
    if end - start + 1 <= size or size < 1:
        return span
    score = [0.0] * (end - start + 1)
    for n, counts in task_terms_by_line(lines[start - 1 : end], weights).items():
        score[n - 1] = sum(weights[t] for t in counts)
    window = sum(score[:size])
    best, best_at = window, 0
    for i in range(1, len(score) - size + 1):
        window += score[i + size - 1] - score[i - 1]
        if window > best + 1e-9:
            best, best_at = window, i
    return start + best_at, start + best_at + size - 1


def _mask(covered: Sequence[Span], total: int) -> list[bool]:
    """taken[n] for lines 1..total (index 0 unused)."""
    taken = [False] * (total + 1)
    for start, end in covered:
        for n in range(max(1, start), min(total, end) + 1):
            taken[n] = True
    return taken


WINDOW_STARTS_PER_EXCERPT = 4
"""Windows scored per excerpt wanted, opened at the lines with the most task weight."""
LONG_LINE_CHARS = 160
"""A line longer than this (generated data, a minified blob, a hundred names imported on
one line) is never part of an excerpt: it would cost more than the window around it, and
a bundle shortens such lines everywhere else too."""
REPEAT_WEIGHT = 0.25
"""A term's second and third occurrence in a window add a quarter of its weight each:
density matters, but three different task words beat one word thrice."""


def _score(
    line_terms: Mapping[int, Mapping[str, int]], weight: Mapping[str, float], start: int, end: int, taken: list[bool]
) -> float:
    counts: dict[str, int] = {}
    for n in range(start, end + 1):
        if taken[n]:
            continue
        for t, c in line_terms.get(n, {}).items():
            counts[t] = counts.get(t, 0) + c
    return sum(weight[t] * (1 + REPEAT_WEIGHT * (min(c, 3) - 1)) for t, c in counts.items())
