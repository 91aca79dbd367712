"""Tests for ctx_lsp/contributors/working_files.py, through the Contributor protocol."""

from __future__ import annotations

import os
import textwrap

from ctx_lsp.contributors.working_files import WorkingFiles
from ctx_lsp.params import parse_bundle
from ctx_lsp.relevance import SMALL_FILE_TOKENS
from ctx_lsp.vocabulary import ContributorName, Strategy, Tier
from tests.conftest import SAMPLE_FILES
from tests.contributors.conftest import context, offer_of, paths, rendered, uri

CALLS = textwrap.dedent(
    """\
    def helper(x):
        return x + 1


    def main(x):
        y = helper(x)
        return y * 2


    def unrelated():
        return 0
    """
)

BIG = "\n\n".join(
    f'def function_{i}(x: int) -> int:\n    """Step {i}."""\n    total = x\n'
    + "".join(f"    total += {j} * x  # accumulate step {j}\n" for j in range(10))
    + "    return total\n"
    for i in range(40)
)

FILES = {**SAMPLE_FILES, "pkg/calls.py": CALLS, "pkg/big.py": BIG, "blob.bin": b"\x00\x01\x02\xff" * 64}

CONTRIBUTOR = WorkingFiles()


def focus(engine, rel: str, line: int) -> dict:
    """A cursor on a 0-based line, as LSP sends it."""
    return {"uri": uri(engine, rel), "position": {"line": line, "character": 4}}


def test_protocol_identity() -> None:
    """Ensure that working files name themselves, spend depth first and take part in every request."""
    assert CONTRIBUTOR.name == ContributorName.WORKING_FILES
    assert CONTRIBUTOR.strategy == Strategy.DEPTH
    assert CONTRIBUTOR.applies(parse_bundle({}))
    assert CONTRIBUTOR.applies(parse_bundle({"query": "anything", "docs": [{"library": "pygls", "topic": "x"}]}))


def test_no_working_files_offers_nothing(make_engine) -> None:
    """Ensure that a request with no focus, open files or buffers offers no working files."""
    engine = make_engine(FILES)
    offer = offer_of(CONTRIBUTOR, context(engine, {"query": "assemble bundle"}))
    assert offer.candidates == []


def test_focus_file_comes_first(make_engine) -> None:
    """Ensure that the file under the cursor is the first candidate, above the `open` files,
    whatever their order in the request."""
    engine = make_engine(FILES)
    ctx = context(
        engine,
        {
            "open": [uri(engine, "pkg/tokens.py"), uri(engine, "README.md")],
            "focus": focus(engine, "pkg/bundle.py", 9),
        },
    )
    offer = offer_of(CONTRIBUTOR, ctx)
    assert paths(offer)[0] == "pkg/bundle.py"
    assert set(paths(offer)) == {"pkg/bundle.py", "pkg/tokens.py", "README.md"}
    first, rest = offer.candidates[0], offer.candidates[1:]
    assert "focus file" in first.reason
    assert all(first.salience > c.salience for c in rest)
    assert all("named as a working file" in c.reason for c in rest)


def test_focus_file_named_again_in_open_is_offered_once(make_engine) -> None:
    """Ensure that a focus file also listed in `open` is one candidate, with the focus reason."""
    engine = make_engine(FILES)
    ctx = context(engine, {"open": [uri(engine, "pkg/bundle.py")], "focus": focus(engine, "pkg/bundle.py", 9)})
    offer = offer_of(CONTRIBUTOR, ctx)
    assert paths(offer) == ["pkg/bundle.py"]
    assert "cursor in assemble_bundle" in offer.candidates[0].reason


def test_cursor_symbol_in_full_at_tier_2(make_engine) -> None:
    """Ensure that the symbol under the cursor is wanted at tier 2 and its whole body shown there."""
    engine = make_engine(FILES)
    ctx = context(engine, {"focus": focus(engine, "pkg/bundle.py", 9)})
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    assert candidate.tier == Tier.FOCUSED
    assert "cursor in assemble_bundle" in candidate.reason
    r = rendered(candidate, Tier.FOCUSED, 4000, engine.counter)
    assert r.tier == Tier.FOCUSED
    assert "assemble_bundle" in r.shown_symbols
    for line in ("for section in sections:", "used += cost", "return kept"):
        assert line in r.content


def test_cursor_symbol_brings_its_same_file_callees_not_bystanders(make_engine) -> None:
    """Ensure that tier 2 of the focus file shows the cursor's function and what it calls in
    that file in full, while an unrelated function stays a signature."""
    engine = make_engine(FILES)
    ctx = context(engine, {"focus": focus(engine, "pkg/calls.py", 5)})  # inside main()
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    r = rendered(candidate, Tier.FOCUSED, 4000, engine.counter)
    assert {"main", "helper"} <= set(r.shown_symbols)
    assert "unrelated" not in r.shown_symbols
    assert "return x + 1" in r.content and "y = helper(x)" in r.content
    assert "def unrelated()" in r.content and "return 0" not in r.content


def test_small_open_file_is_offered_whole(make_engine) -> None:
    """Ensure that a small working file without a cursor is wanted whole (tier 3)."""
    engine = make_engine(FILES)
    ctx = context(engine, {"open": [uri(engine, "pkg/tokens.py")]})
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    assert candidate.tier == Tier.FULL
    r = rendered(candidate, candidate.tier, 4000, engine.counter)
    assert r.content.strip() == SAMPLE_FILES["pkg/tokens.py"].strip()
    assert not r.truncated


def test_small_file_whole_only_within_the_window_types_tier(make_engine) -> None:
    """Ensure that "whole" means the richest tier the window type allows (token-efficient
    stops at 2), and that an outline-tier agent keeps its outline."""
    engine = make_engine(FILES)
    efficient = context(engine, {"open": [uri(engine, "pkg/tokens.py")], "profile": "token-efficient"})
    assert offer_of(CONTRIBUTOR, efficient).candidates[0].tier == Tier.FOCUSED
    planner = context(engine, {"open": [uri(engine, "pkg/tokens.py")], "agent": "planner"})
    assert offer_of(CONTRIBUTOR, planner).candidates[0].tier == Tier.OUTLINE


def test_large_open_file_is_outlined(make_engine) -> None:
    """Ensure that a large working file without a cursor is outlined: signatures, no bodies."""
    engine = make_engine(FILES)
    entry = engine.workspace.get(str(engine.roots[0] / "pkg/big.py"))
    assert engine.workspace.whole_tokens(entry, engine.counter) > SMALL_FILE_TOKENS  # the premise: "large"
    ctx = context(engine, {"open": [uri(engine, "pkg/big.py")]})
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    assert candidate.tier < Tier.FULL
    r = rendered(candidate, candidate.tier, 8000, engine.counter)
    assert "def function_0(x: int) -> int" in r.content and "def function_39(x: int) -> int" in r.content
    assert "accumulate step" not in r.content
    assert r.shown_symbols == ()
    assert r.tokens < engine.workspace.whole_tokens(entry, engine.counter) / 3


def test_unreadable_open_files_become_warnings(make_engine) -> None:
    """Ensure that `open` files that cannot be shown (missing, binary) are warnings in the
    context, not errors, and the readable ones are still offered."""
    engine = make_engine(FILES)
    ctx = context(engine, {"open": [uri(engine, "missing.py"), uri(engine, "blob.bin"), uri(engine, "pkg/tokens.py")]})
    offer = offer_of(CONTRIBUTOR, ctx)
    assert paths(offer) == ["pkg/tokens.py"]
    skipped = [w for w in ctx.warnings if "working file skipped" in w]
    assert len(skipped) == 2
    assert any("missing.py" in w for w in skipped) and any("blob.bin" in w for w in skipped)


def test_open_file_deleted_after_indexing_is_a_warning_not_a_failed_bundle(make_engine) -> None:
    """Ensure that an `open` file removed from disk since it was indexed costs its section and
    a warning, never the bundle (DESIGN: unreadable files are warnings)."""
    engine = make_engine(FILES)
    os.remove(engine.roots[0] / "pkg" / "tokens.py")
    result = engine.bundle(
        parse_bundle({"open": [uri(engine, "pkg/tokens.py")], "query": "assemble bundle", "budget": 3000})
    )
    assert any("pkg/tokens.py" in w for w in result.snapshot.warnings)
    assert "pkg/tokens.py" not in [s.path for s in result.sections if s.contributor == "working_files"]


def test_editor_buffers_most_recently_edited_first(make_engine) -> None:
    """Ensure that edited editor buffers are working files, the latest edit first, each below a
    file the request names, and that their unsaved symbols are named and shown in full."""
    engine = make_engine(FILES)
    root = engine.roots[0]
    tokens_text = SAMPLE_FILES["pkg/tokens.py"].replace("len(text) / 4", "len(text) / 3")
    engine.open_document(str(root / "pkg/tokens.py"), tokens_text, 2, edited=True)
    bundle_text = SAMPLE_FILES["pkg/bundle.py"].replace("kept = []", "kept: list[str] = []")
    engine.open_document(str(root / "pkg/bundle.py"), bundle_text, 2, edited=True)
    ctx = context(engine, {"open": [uri(engine, "README.md")]})
    offer = offer_of(CONTRIBUTOR, ctx)
    assert paths(offer) == ["README.md", "pkg/bundle.py", "pkg/tokens.py"]
    by_path = {c.path: c for c in offer.candidates}
    assert "unsaved edits in assemble_bundle" in by_path["pkg/bundle.py"].reason
    assert "unsaved edits in TokenCounter.count" in by_path["pkg/tokens.py"].reason
    r = rendered(by_path["pkg/tokens.py"], Tier.FOCUSED, 4000, engine.counter)
    assert "TokenCounter.count" in r.shown_symbols and "len(text) / 3" in r.content


def test_search_hits_decide_what_a_pruned_outline_keeps(make_engine) -> None:
    """Ensure that when a large working file's outline must be pruned, the symbols the task
    matches are kept first."""
    engine = make_engine(FILES)
    ctx = context(engine, {"open": [uri(engine, "pkg/big.py")], "query": "function_37"})
    (candidate,) = offer_of(CONTRIBUTOR, ctx).candidates
    r = rendered(candidate, Tier.OUTLINE, 120, engine.counter)
    assert r.truncated
    assert "function_37" in r.content


CHOICE_FILES = {
    "pkg/types.py": textwrap.dedent(
        """\
        class Choice:
            def get_metavar(self, param):
                return "[" + "|".join(self.choices) + "]"

            def normalize(self, value):
                return value.lower()


        class Path:
            def get_metavar(self, param):
                return "PATH"
        """
    ),
    "pkg/core.py": textwrap.dedent(
        """\
        from pkg import types


        class Parameter:
            def make_metavar(self):
                return self.type.get_metavar(self)

            def unrelated(self):
                return 0
        """
    ),
    "tests/test_types.py": (
        "from pkg.types import Choice\n\n\ndef test_choice():\n    assert Choice().get_metavar(None)\n"
    ),
}


def test_a_named_class_reaches_the_callers_of_its_methods(make_engine) -> None:
    """Ensure that when the task names a class of an open file, the code elsewhere calling
    its methods is a call neighbour (kept first in that file's outline), and tests are not
    unless the task is about tests."""
    engine = make_engine(CHOICE_FILES)
    params = {"open": [uri(engine, "pkg/types.py")], "query": "Choice normalization"}
    neighbours = context(engine, params).neighbours
    assert neighbours == {str(engine.roots[0] / "pkg/core.py"): ("Parameter.make_metavar",)}
    about_tests = context(engine, {**params, "query": "Choice normalization tests"}).neighbours
    assert str(engine.roots[0] / "tests/test_types.py") in about_tests
