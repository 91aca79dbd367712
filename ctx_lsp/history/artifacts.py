"""Artifacts: prior workflow outputs (spec, stories, architecture, API design) in one budget.

A later step (the implementer, say) needs what earlier steps decided, in priority order,
and each artifact either whole, cut where a reader can stop, or named so the agent can ask
for it (DESIGN: Artifacts). The rules that shape this module:

- Fill greedily in priority order. A later, smaller artifact may still fit whole after an
  earlier one had to be cut or summarised; budget left unused helps nobody.
- Cut only at a paragraph end, or failing that a sentence end, and only when at least
  `MIN_CUT_TOKENS` remain: a few lines of a spec mislead more than a pointer to it does.
  A text that is cut says so and how much is missing, in a marker line.
- Boundaries inside fenced code blocks do not count (the cut would leave a fence open),
  and neither does the end of a heading line (a heading with no body under it).
- `total_tokens` is a real count of `render_artifacts(result)`, and never above the
  budget: piece costs are estimates, so the rendered text is counted and, if over, the
  fill is redone with a smaller allowance.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from ctx_lsp.errors import InvalidParam, json_type, type_problem
from ctx_lsp.tokens import TokenCounter

DEFAULT_ARTIFACT_ORDER = ("spec", "user_stories", "architecture", "api_design")
"""DESIGN: spec → user stories → architecture → API design."""
DEFAULT_ARTIFACT_BUDGET = 4000
"""DESIGN: artifacts share one budget of 4000 tokens unless configured."""

MIN_CUT_TOKENS = 200
"""Cut an artifact only when at least this many tokens remain; below that the kept part is
a paragraph or two, and a one-line pointer serves the agent better."""

PARAGRAPH_CUT_SHARE = 0.30
"""A paragraph end is preferred over a later sentence end if it loses at most this share of
the text the sentence end would keep (the same trade-off as `tokens.CLEAN_CUT_SHARE`)."""

SEPARATOR_TOKENS = 1
"""The newline between two rendered artifacts, charged to each piece."""

MAX_FIT_ROUNDS = 4
"""Refills with a smaller allowance before falling back to dropping the last pieces; one
is almost always enough, since estimates are off by a token or two at most."""

MAX_KEY_CHARS = 100
"""An artifact key is a name shown in a heading, not content."""

FULL, CUT, SUMMARIZED, DROPPED = "full", "cut", "summarized", "dropped"

ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "eg",
        "ie",
        "etc",
        "vs",
        "cf",
        "al",
        "approx",
        "incl",
        "resp",
        "esp",
        "fig",
        "no",
        "nr",
        "vol",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "inc",
        "ltd",
        "co",
        "dept",
    }
)
"""Words whose trailing period does not end a sentence. Missing one only makes a cut point
unavailable (the cut moves earlier), never a cut mid-sentence, except for the abbreviation
itself; so the list covers the common ones, lowercased and without the final period."""


@dataclass(frozen=True, slots=True)
class ArtifactPiece:
    key: str
    content: str
    """What is rendered under the heading: the artifact, the kept part plus a marker line,
    the one-sentence summary, or "" when dropped."""
    tokens: int
    """Real count of `content` (headings are counted only in `ArtifactsResult.total_tokens`)."""
    original_tokens: int
    status: str
    """"full" | "cut" | "summarized" | "dropped"."""


@dataclass(frozen=True, slots=True)
class ArtifactsResult:
    pieces: tuple[ArtifactPiece, ...]
    """Every artifact, in priority order, dropped ones included so callers can say so."""
    total_tokens: int
    """Real count of `render_artifacts(self)`; always <= `budget`."""
    budget: int


# --- validation --------------------------------------------------------------------------


def validate_artifacts(value: Any) -> list[tuple[str, str]]:
    """`[{key, content}]` from a request → `[(key, content)]`; `None` means none.

    Raises `InvalidParam` naming the path (`artifacts[2].content`). Unknown fields are
    refused: a misspelt `contents` silently ignored would drop the artifact with no clue why.
    """
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise InvalidParam(
            "artifacts",
            f"expected an array, got {json_type(value)}",
            'send [{"key": "spec", "content": "…"}, …]',
        )
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        path = f"artifacts[{i}]"
        if not isinstance(item, Mapping):
            raise InvalidParam(
                path,
                f"expected an object, got {json_type(item)}",
                'send {"key": "spec", "content": "…"}',
            )
        for field in item:
            if field not in ("key", "content"):
                raise InvalidParam(f"{path}.{field}", "unknown field", "an artifact has only key and content")
        key = item.get("key")
        if not isinstance(key, str) or not key.strip():
            raise InvalidParam(
                f"{path}.key",
                type_problem(key, "a non-empty string"),
                "name the artifact, e.g. 'spec' or 'architecture'",
            )
        if len(key) > MAX_KEY_CHARS or any(ch in key for ch in "\r\n\t"):
            raise InvalidParam(
                f"{path}.key",
                f"must be one line of at most {MAX_KEY_CHARS} characters",
                "use a short name like 'spec'",
            )
        if key in seen:
            raise InvalidParam(f"{path}.key", f"duplicate key {key!r}", "send each artifact once")
        seen.add(key)
        content = item.get("content")
        if not isinstance(content, str):
            raise InvalidParam(
                f"{path}.content", type_problem(content, "a string"), "send the artifact's text as a string"
            )
        out.append((key, content))
    return out


# --- rendering ---------------------------------------------------------------------------


def render_block(key: str, content: str) -> str:
    return f"### Artifact: {key}\n\n{content.rstrip()}\n"


def render_artifacts(result: ArtifactsResult) -> str:
    """The pieces that are not dropped, each under its heading, one blank line apart."""
    return "\n".join(render_block(p.key, p.content) for p in result.pieces if p.status != DROPPED)


def cut_marker(key: str, omitted_tokens: int) -> str:
    return f"[… cut: {omitted_tokens:,} more tokens of '{key}']"


def summary_sentence(key: str, original_tokens: int) -> str:
    return f"Artifact '{key}' ({original_tokens:,} tokens) omitted for budget; ask for it by name."


# --- filling -----------------------------------------------------------------------------


def prioritize(artifacts: Sequence[tuple[str, str]], order: Sequence[str]) -> list[tuple[str, str]]:
    """Keys named in `order` first, in that order; the rest after, as given (stable)."""
    rank: dict[str, int] = {}
    for i, key in enumerate(order):
        rank.setdefault(key, i)
    return sorted(artifacts, key=lambda item: rank.get(item[0], len(rank)))


def fill_artifacts(
    artifacts: Sequence[tuple[str, str]],
    budget: int,
    counter: TokenCounter,
    order: Sequence[str] = DEFAULT_ARTIFACT_ORDER,
) -> ArtifactsResult:
    """Fill `budget` with the artifacts in priority order: whole, cut, summarised or dropped.

    Piece costs are counted block by block; the rendered whole is then counted for real
    (joined blocks can tokenize differently) and refilled with a smaller allowance in the
    rare case it is over, so `total_tokens <= budget` holds whatever the tokenizer does.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise InvalidParam("budget", f"expected a whole number of tokens >= 0, got {budget!r}", "pass e.g. 4000")
    ordered = prioritize(artifacts, order)
    originals = counter.count_many([content for _, content in ordered])
    allowance = budget
    for _ in range(MAX_FIT_ROUNDS):
        pieces = _fill(ordered, originals, allowance, counter)
        total = counter.count(render_artifacts(ArtifactsResult(pieces, 0, budget)))
        if total <= budget:
            return ArtifactsResult(pieces, total, budget)
        allowance -= total - budget
    return _drop_until_fits(list(pieces), budget, counter)


def _drop_until_fits(pieces: list[ArtifactPiece], budget: int, counter: TokenCounter) -> ArtifactsResult:
    """Last resort: drop the lowest-priority rendered pieces until the real count fits."""
    for i in reversed(range(len(pieces))):
        total = counter.count(render_artifacts(ArtifactsResult(tuple(pieces), 0, budget)))
        if total <= budget:
            return ArtifactsResult(tuple(pieces), total, budget)
        piece = pieces[i]
        pieces[i] = ArtifactPiece(piece.key, "", 0, piece.original_tokens, DROPPED)
    return ArtifactsResult(tuple(pieces), 0, budget)


def _fill(
    ordered: Sequence[tuple[str, str]],
    originals: Sequence[int],
    allowance: int,
    counter: TokenCounter,
) -> tuple[ArtifactPiece, ...]:
    remaining = allowance
    pieces = []
    for (key, content), original in zip(ordered, originals):
        piece, cost = _fit_one(key, content, original, remaining, counter)
        pieces.append(piece)
        remaining -= cost
    return tuple(pieces)


def _fit_one(key: str, content: str, original: int, room: int, counter: TokenCounter) -> tuple[ArtifactPiece, int]:
    """One artifact against the room left: the piece and what its block costs."""
    full = counter.count(render_block(key, content)) + SEPARATOR_TOKENS
    if full <= room:
        return ArtifactPiece(key, content, original, original, FULL), full
    if room >= MIN_CUT_TOKENS:
        cut = cut_at_boundary(key, content, original, room - SEPARATOR_TOKENS, counter)
        if cut is not None:
            text, cost = cut
            piece = ArtifactPiece(key, text, counter.count(text), original, CUT)
            return piece, cost + SEPARATOR_TOKENS
    sentence = summary_sentence(key, original)
    cost = counter.count(render_block(key, sentence)) + SEPARATOR_TOKENS
    if cost <= room:
        return ArtifactPiece(key, sentence, counter.count(sentence), original, SUMMARIZED), cost
    return ArtifactPiece(key, "", 0, original, DROPPED), 0


def cut_at_boundary(key: str, content: str, original: int, room: int, counter: TokenCounter) -> tuple[str, int] | None:
    """The longest clean prefix of `content` whose rendered block, with its marker line,
    fits `room`: `(text, block tokens)`, or None if not even one sentence fits.

    Segments between cut points are counted once each and summed to pick a candidate;
    the pick is then counted for real and the limit lowered by any excess until it fits.
    """
    points = cut_points(content)
    if not points:
        return None
    ends = [end for end, _ in points]
    segments = [content[start:end] for start, end in zip([0, *ends], ends)]
    prefix = list(accumulate(counter.count_many(segments)))
    frame = counter.count(render_block(key, "\n\n" + cut_marker(key, original)))
    limit = room - frame
    while limit > 0:
        best = _pick(points, prefix, limit)
        if best is None:
            return None
        kept = content[:best].rstrip()
        text = f"{kept}\n\n{cut_marker(key, max(original - counter.count(kept), 1))}"
        cost = counter.count(render_block(key, text))
        if cost <= room:
            return text, cost
        limit = min(limit - (cost - room), prefix[ends.index(best)] - 1)
    return None


def _pick(points: Sequence[tuple[int, bool]], prefix: Sequence[int], limit: int) -> int | None:
    """The cut end to use under `limit` estimated tokens: the last paragraph end, unless a
    later sentence end keeps much more (`PARAGRAPH_CUT_SHARE`)."""
    fitting = [(end, is_paragraph, tokens) for (end, is_paragraph), tokens in zip(points, prefix) if tokens <= limit]
    if not fitting:
        return None
    last_end, _, last_tokens = fitting[-1]
    paragraph = next(((end, tokens) for end, is_paragraph, tokens in reversed(fitting) if is_paragraph), None)
    if paragraph is not None and paragraph[1] >= (1 - PARAGRAPH_CUT_SHARE) * last_tokens:
        return paragraph[0]
    return last_end


# --- cut points --------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s|$)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d{1,3}[.)])\s")
_WORD_BEFORE = re.compile(r"([^\s(\[\"']*)$")


def cut_points(text: str) -> list[tuple[int, bool]]:
    """Offsets where `text` may be cut, ascending, each with whether it ends a paragraph.

    Paragraph ends: the end of a non-blank line followed by a blank line or a heading, and
    the end of a closing code fence. Sentence ends: `.`, `!` or `?` (with closing quotes or
    brackets) before whitespace, not after an abbreviation, an initial or a list number;
    and the end of a line followed by a list item. None inside fenced code, none that
    would leave a heading last. The end of the text itself is not a cut point.
    """
    points: dict[int, bool] = {}
    lines = text.split("\n")
    offset = 0
    in_fence = False
    for n, line in enumerate(lines):
        end = offset + len(line)
        next_line = lines[n + 1] if n + 1 < len(lines) else None
        if _FENCE.match(line):
            in_fence = not in_fence
            if not in_fence and next_line is not None:
                points[end] = True
        elif not in_fence and line.strip() and not _HEADING.match(line):
            for match in _SENTENCE_END.finditer(line):
                if _ends_sentence(line, match):
                    points.setdefault(offset + match.end(), False)
            if next_line is not None:
                if not next_line.strip() or _HEADING.match(next_line):
                    points[offset + len(line.rstrip())] = True
                elif _LIST_ITEM.match(next_line):
                    points.setdefault(offset + len(line.rstrip()), False)
        offset = end + 1
    rest = text.rstrip()
    return sorted((end, para) for end, para in points.items() if 0 < end < len(rest) and text[:end].strip())


def _ends_sentence(line: str, match: re.Match[str]) -> bool:
    punctuation = match.group()
    if not punctuation.startswith(".") or punctuation.startswith(".."):
        return True
    before = _WORD_BEFORE.search(line[: match.start()])
    word = before.group(1).lower() if before else ""
    is_initial = len(word) == 1 and word.isalpha()
    return bool(word) and word not in ABBREVIATIONS and not word.isdigit() and not is_initial
