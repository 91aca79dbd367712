"""Tests for ctx_lsp/history/artifacts.py: prior-step outputs within one budget."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp.errors import InvalidParam
from ctx_lsp.history.artifacts import (
    CUT,
    DEFAULT_ARTIFACT_BUDGET,
    DEFAULT_ARTIFACT_ORDER,
    DROPPED,
    FULL,
    MIN_CUT_TOKENS,
    SUMMARIZED,
    ArtifactsResult,
    cut_points,
    fill_artifacts,
    prioritize,
    render_artifacts,
    render_block,
    summary_sentence,
    validate_artifacts,
)
from ctx_lsp.tokens import counter_for

COUNTER = counter_for()
CUT_MARKER = re.compile(r"\n\n\[… cut: [\d,]+ more tokens of '[^']*'\]$")


def paragraph(i: int, sentences: int = 4) -> str:
    return " ".join(f"Paragraph {i} sentence {j} explains one more design decision." for j in range(sentences))


def document(paragraphs: int, sentences: int = 4) -> str:
    return "\n\n".join(paragraph(i, sentences) for i in range(paragraphs))


def block_cost(key: str, content: str) -> int:
    return COUNTER.count(render_block(key, content)) + 1


def kept_part(content: str) -> str:
    """The artifact text a cut piece kept, without its marker line."""
    match = CUT_MARKER.search(content)
    assert match, content
    return content[: match.start()]


BOUNDARY_AFTER = re.compile(r"[ \t]*\n([ \t]*\n|\s{0,3}#{1,6}\s|\s*([-*+]|\d{1,3}[.)])\s)")


def ends_cleanly(kept: str, original: str) -> bool:
    """The documented cut rule, checked independently: the kept text is a prefix of the
    original that ends a sentence, a paragraph (blank line or heading next), a list item
    (list item next) or a closed code fence."""
    if not original.startswith(kept) or not kept.strip():
        return False
    rest = original[len(kept) :]
    last_line = kept.rsplit("\n", 1)[-1]
    return bool(
        re.search(r"[.!?][\"'\u201d\u2019)\]]*$", kept)
        or BOUNDARY_AFTER.match(rest)
        or re.match(r"\s{0,3}(```|~~~)", last_line)
    )


# --- priority ----------------------------------------------------------------------------


def test_default_order_is_the_design_order():
    """Ensure that the defaults are DESIGN's: spec → user stories → architecture → API
    design, within 4000 tokens."""
    assert DEFAULT_ARTIFACT_ORDER == ("spec", "user_stories", "architecture", "api_design")
    assert DEFAULT_ARTIFACT_BUDGET == 4000


def test_known_keys_come_first_in_order_then_the_rest_as_given():
    """Ensure that keys named in the order come first, in that order, and the others
    follow in the order they were given."""
    given_ = [("notes", "n"), ("api_design", "a"), ("zeta", "z"), ("spec", "s"), ("alpha", "x")]
    assert [k for k, _ in prioritize(given_, DEFAULT_ARTIFACT_ORDER)] == [
        "spec",
        "api_design",
        "notes",
        "zeta",
        "alpha",
    ]
    assert [k for k, _ in prioritize(given_, ("zeta", "notes"))] == [
        "zeta",
        "notes",
        "api_design",
        "spec",
        "alpha",
    ]


def test_everything_fits_whole_with_a_real_total():
    """Ensure that artifacts within the budget come back whole, in priority order, with
    total_tokens the real count of the rendered text."""
    arts = [("architecture", "Layers point down."), ("spec", "Build a context engine.")]
    result = fill_artifacts(arts, 4000, COUNTER)
    assert [(p.key, p.status) for p in result.pieces] == [("spec", FULL), ("architecture", FULL)]
    assert result.pieces[0].tokens == result.pieces[0].original_tokens == COUNTER.count("Build a context engine.")
    text = render_artifacts(result)
    assert text == (
        "### Artifact: spec\n\nBuild a context engine.\n\n### Artifact: architecture\n\nLayers point down.\n"
    )
    assert result.total_tokens == COUNTER.count(text)
    assert result.budget == 4000


# --- cutting -----------------------------------------------------------------------------


def test_an_artifact_that_does_not_fit_is_cut_at_a_paragraph_end_with_a_marker():
    """Ensure that an artifact too big for the room left is cut at the last paragraph end
    that fits, followed by a marker line naming it and how many tokens are missing."""
    spec = document(40)
    result = fill_artifacts([("spec", spec)], 1000, COUNTER)
    piece = result.pieces[0]
    assert piece.status == CUT
    kept = kept_part(piece.content)
    assert spec.startswith(kept) and spec[len(kept) :].startswith("\n\n")
    missing = int(re.search(r"cut: ([\d,]+) more", piece.content).group(1).replace(",", ""))
    assert missing == piece.original_tokens - COUNTER.count(kept)
    assert piece.tokens == COUNTER.count(piece.content)
    assert 800 < result.total_tokens <= 1000


def test_a_sentence_end_is_used_when_it_keeps_much_more_than_the_last_paragraph():
    """Ensure that a long paragraph is cut at a sentence end rather than losing most of
    what fits by going back to the previous paragraph end."""
    spec = "Intro sentence.\n\n" + paragraph(1, sentences=200)
    piece = fill_artifacts([("spec", spec)], 800, COUNTER).pieces[0]
    kept = kept_part(piece.content)
    assert piece.status == CUT
    assert kept.endswith("design decision.") and len(kept) > 1000


def test_abbreviations_initials_and_list_numbers_are_not_sentence_ends():
    """Ensure that "e.g.", "etc.", an initial or "1." never count as sentence ends."""
    text = "Use a cache, e.g. an LRU, etc. and ask J. Smith about step 1. later. Done here. More"
    ends = [text[:end] for end, _ in cut_points(text)]
    assert ends == [
        "Use a cache, e.g. an LRU, etc. and ask J. Smith about step 1. later.",
        "Use a cache, e.g. an LRU, etc. and ask J. Smith about step 1. later. Done here.",
    ]


def test_no_cut_points_inside_code_fences_or_after_a_bare_heading():
    """Ensure that a cut never leaves a code fence open or a heading with nothing under it."""
    text = "Intro.\n\n## Heading\n\n```python\nx = 1.\n\ny = 2.\n```\nAfter the code. End"
    ends = {text[:end] for end, _ in cut_points(text)}
    assert ends == {
        "Intro.",
        "Intro.\n\n## Heading\n\n```python\nx = 1.\n\ny = 2.\n```",
        text[: text.index(" End")],
    }


def test_paragraph_and_list_item_ends_are_cut_points():
    """Ensure that a line before a blank line or heading ends a paragraph, and that a line
    before a list item is a cut point too (lists rarely end items with periods)."""
    text = "Goals\n- fast startup\n- low memory\n\nNext part\n# Title\nbody"
    points = {text[:end]: para for end, para in cut_points(text)}
    assert points == {
        "Goals": False,
        "Goals\n- fast startup": False,
        "Goals\n- fast startup\n- low memory": True,
        "Goals\n- fast startup\n- low memory\n\nNext part": True,
    }


def test_too_little_room_gives_a_one_sentence_summary():
    """Ensure that with fewer than MIN_CUT_TOKENS left, an artifact that does not fit is
    replaced by one sentence that names it and its size."""
    spec = document(4)
    arch = document(20)
    budget = block_cost("spec", spec) + MIN_CUT_TOKENS - 20
    result = fill_artifacts([("spec", spec), ("architecture", arch)], budget, COUNTER)
    assert [p.status for p in result.pieces] == [FULL, SUMMARIZED]
    piece = result.pieces[1]
    assert piece.content == summary_sentence("architecture", piece.original_tokens)
    assert piece.content == (
        f"Artifact 'architecture' ({piece.original_tokens:,} tokens) omitted for budget; ask for it by name."
    )
    assert result.total_tokens <= budget


def test_a_text_with_no_sentence_that_fits_is_summarized_not_cut():
    """Ensure that when not even the first sentence fits, the artifact is summarised
    rather than cut mid-sentence."""
    run_on = "word " * 3000
    piece = fill_artifacts([("spec", run_on)], 1000, COUNTER).pieces[0]
    assert piece.status == SUMMARIZED


def test_a_summary_that_does_not_fit_means_dropped():
    """Ensure that an artifact whose summary sentence does not fit either is dropped, kept
    in the pieces with empty content, and not rendered."""
    spec = document(4)
    result = fill_artifacts([("spec", spec), ("architecture", document(20))], block_cost("spec", spec) + 5, COUNTER)
    assert [p.status for p in result.pieces] == [FULL, DROPPED]
    assert result.pieces[1].content == "" and result.pieces[1].tokens == 0
    assert "architecture" not in render_artifacts(result)


def test_a_later_small_artifact_still_fits_after_a_bigger_one_was_summarized():
    """Ensure that filling is greedy: budget a big artifact could not use goes to a later
    one that fits whole."""
    spec = document(4)
    small = "Use JSON-RPC over stdio."
    budget = block_cost("spec", spec) + 150
    result = fill_artifacts([("spec", spec), ("architecture", document(30)), ("api_design", small)], budget, COUNTER)
    assert [p.status for p in result.pieces] == [FULL, SUMMARIZED, FULL]


def test_zero_budget_drops_everything_and_bad_budget_is_refused():
    """Ensure that a zero budget renders nothing and a negative one raises InvalidParam."""
    result = fill_artifacts([("spec", "x")], 0, COUNTER)
    assert result.total_tokens == 0 and result.pieces[0].status == DROPPED
    with pytest.raises(InvalidParam):
        fill_artifacts([("spec", "x")], -1, COUNTER)


# --- validation --------------------------------------------------------------------------


def test_validate_artifacts_accepts_key_and_content():
    """Ensure that [{key, content}] becomes (key, content) pairs and None means none."""
    assert validate_artifacts([{"key": "spec", "content": "S"}, {"key": "x", "content": ""}]) == [
        ("spec", "S"),
        ("x", ""),
    ]
    assert validate_artifacts(None) == []


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"key": "spec"}, "artifacts"),
        ("spec", "artifacts"),
        ([3], "artifacts[0]"),
        ([{"content": "x"}], "artifacts[0].key"),
        ([{"key": "", "content": "x"}], "artifacts[0].key"),
        ([{"key": 5, "content": "x"}], "artifacts[0].key"),
        ([{"key": "a\nb", "content": "x"}], "artifacts[0].key"),
        ([{"key": "k" * 101, "content": "x"}], "artifacts[0].key"),
        ([{"key": "spec", "content": "x"}, {"key": "spec", "content": "y"}], "artifacts[1].key"),
        ([{"key": "spec"}], "artifacts[0].content"),
        ([{"key": "spec", "content": ["x"]}], "artifacts[0].content"),
        ([{"key": "spec", "contents": "x"}], "artifacts[0].contents"),
    ],
)
def test_malformed_artifacts_name_the_field(value, field):
    """Ensure that malformed artifacts raise InvalidParam naming the JSON path."""
    with pytest.raises(InvalidParam) as info:
        validate_artifacts(value)
    assert info.value.field == field


# --- properties --------------------------------------------------------------------------

WORDS = [
    "the",
    "index",
    "naïve",
    "日本語",
    "cache",
    "e.g.",
    "etc.",
    "v1.2",
    "API",
    "🙂",
    "J.",
    "1.",
    "(see",
    "it)",
]
ENDINGS = [".", "!", "?", ".)", "", ":", '."']


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(1, 25))).capitalize() + rng.choice(ENDINGS)


def block(kind: str, seed: int) -> str:
    """One markdown block built from a seed: hypothesis draws the shape, a seeded RNG the
    words (drawing every word through hypothesis made this test 5x slower)."""
    rng = random.Random(seed)
    if kind == "paragraph":
        return " ".join(sentence(rng) for _ in range(rng.randint(1, 12)))
    if kind == "list":
        return "\n".join(f"- {sentence(rng)}" for _ in range(rng.randint(1, 5)))
    if kind == "code":
        return "```\n" + "\n\n".join(sentence(rng) for _ in range(rng.randint(1, 3))) + "\n```"
    if kind == "heading":
        return "## " + sentence(rng)
    return "long run-on words " * rng.randint(50, 400)


BLOCK = st.builds(
    block,
    st.sampled_from(["paragraph", "paragraph", "list", "code", "heading", "run-on"]),
    st.integers(0, 10**6),
)
ARTIFACT_TEXT = st.lists(BLOCK, max_size=10).map("\n\n".join) | st.text(max_size=300)
KEYS = st.sampled_from(["spec", "user_stories", "architecture", "api_design", "notes", "review"])


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    arts=st.lists(st.tuples(KEYS, ARTIFACT_TEXT), max_size=5, unique_by=lambda kv: kv[0]),
    budget=st.integers(0, 6000),
)
def test_artifact_properties(arts, budget):
    """Ensure that for any artifacts and budget: the total is the real count of the render
    and within budget; pieces follow priority order; every cut ends at a paragraph or
    sentence boundary with a marker; a non-full piece before a full one is bigger than
    it; and results are deterministic."""
    result = fill_artifacts(arts, budget, COUNTER)
    assert result == fill_artifacts(arts, budget, COUNTER)
    assert result.total_tokens == COUNTER.count(render_artifacts(result)) <= budget
    assert [p.key for p in result.pieces] == [k for k, _ in prioritize(arts, DEFAULT_ARTIFACT_ORDER)]
    originals = dict(arts)
    for piece in result.pieces:
        assert piece.original_tokens == COUNTER.count(originals[piece.key])
        assert piece.tokens == COUNTER.count(piece.content)
        if piece.status == FULL:
            assert piece.content == originals[piece.key]
        elif piece.status == CUT:
            assert ends_cleanly(kept_part(piece.content), originals[piece.key])
        elif piece.status == SUMMARIZED:
            assert piece.content == summary_sentence(piece.key, piece.original_tokens)
        else:
            assert piece.status == DROPPED and piece.content == ""
    for i, earlier in enumerate(result.pieces):
        for later in result.pieces[i + 1 :]:
            if earlier.status != FULL and later.status == FULL:
                assert block_cost(earlier.key, originals[earlier.key]) > block_cost(later.key, later.content)


def test_render_of_an_empty_result_is_empty():
    """Ensure that no artifacts render as nothing, costing nothing."""
    result = fill_artifacts([], 4000, COUNTER)
    assert result == ArtifactsResult((), 0, 4000)
    assert render_artifacts(result) == ""
