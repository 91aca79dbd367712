"""Tests for ctx_lsp/code/tiers.py: tier 1-3 renderings under token caps."""

from __future__ import annotations

import re
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.code.languages.python import outline_python
from ctx_lsp.code.outline import Outline, outline_for
from ctx_lsp.code.row_counts import GUTTER, LINE_ADDITIVE_ENCODINGS
from ctx_lsp.code.tiers import TIER_CAP_TOKENS, render
from ctx_lsp.tokens import TokenCounter, counter_for
from ctx_lsp.vocabulary import Rendering, Tier

MODULE = textwrap.dedent(
    '''\
    """Token counting with the shipped encodings."""

    from __future__ import annotations

    import gzip
    import hashlib
    from dataclasses import dataclass
    from functools import lru_cache

    DEFAULT_ENCODING = "o200k_base"


    class TokenCounter(Protocol):
        """Counts tokens for budgets."""

        def count(self, text: str) -> int:
            return len(text.split())

        def count_many(self, texts):
            def each(t):
                return helper(t)
            return [each(t) for t in texts]


    @lru_cache
    def counter_for(encoding: str = DEFAULT_ENCODING) -> TokenCounter:
        """Cached per process."""
        body_marker_counter_for = 1
        return TokenCounter()


    def other(a, b):
        body_marker_other = 2
        return a + b
    '''
)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return counter_for()


@pytest.fixture(scope="module")
def module_outline() -> Outline:
    return outline_python(MODULE.encode())


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if needle in line)


def check(r: Rendering, counter: TokenCounter, cap: int) -> None:
    assert r.tokens == counter.count(r.content)
    assert r.tokens <= cap


def test_default_caps() -> None:
    """Ensure that the default caps are DESIGN's 1K / 5K / 20K tokens."""
    assert TIER_CAP_TOKENS == {Tier.OUTLINE: 1000, Tier.FOCUSED: 5000, Tier.FULL: 20000}


def test_tier1_lists_every_top_level_signature(module_outline: Outline, counter: TokenCounter) -> None:
    """Ensure that tier 1 shows the docstring, imports, constants and every top-level
    signature with its line number, methods indented, nested functions hidden."""
    r = render("tokens.py", MODULE, module_outline, Tier.OUTLINE, counter)
    check(r, counter, 1000)
    assert (r.tier, r.start_line, r.end_line, r.truncated, r.shown_symbols) == (
        Tier.OUTLINE,
        1,
        module_outline.line_count,
        False,
        (),
    )
    lines = r.content.splitlines()
    assert lines[0] == ' 1│ """Token counting with the shipped encodings."""'
    assert lines[1] == (" 5│ import gzip, hashlib; from dataclasses import dataclass; from functools import lru_cache")
    assert "__future__" not in r.content
    for symbol in module_outline.symbols:
        if symbol.depth == 0:
            header = line_of(MODULE, symbol.signature.split("(")[0] + "(")
            assert any(line.startswith(f"{header:>2}│ {symbol.signature}") for line in lines), symbol.qualname
    n = line_of(MODULE, "DEFAULT_ENCODING =")
    assert f'{n}│ DEFAULT_ENCODING = "o200k_base"' in r.content
    assert "class TokenCounter(Protocol):  # Counts tokens for budgets." in r.content
    n = line_of(MODULE, "def count(")
    assert f"{n}│     def count(self, text: str) -> int\n" in r.content
    assert f"{line_of(MODULE, '@lru_cache')}│ @lru_cache\n" in r.content
    assert "# Cached per process." in r.content
    assert "def each" not in r.content  # a function inside a function
    assert "body_marker" not in r.content


def test_tier2_shows_focused_bodies_only(module_outline: Outline, counter: TokenCounter) -> None:
    """Ensure that tier 2 replaces a focused function's outline line by its numbered
    source and leaves the other functions as signatures."""
    r = render("tokens.py", MODULE, module_outline, Tier.FOCUSED, counter, focus=["counter_for"])
    check(r, counter, 5000)
    assert r.shown_symbols == ("counter_for",)
    assert "body_marker_counter_for" in r.content
    assert "body_marker_other" not in r.content
    n = line_of(MODULE, "body_marker_counter_for")
    assert f"{n}│     body_marker_counter_for = 1\n" in r.content
    assert r.content.count("def counter_for") == 1
    assert "def other(a, b)" in r.content  # still outlined


def test_tier2_focused_class_shows_all_of_it(module_outline: Outline, counter: TokenCounter) -> None:
    """Ensure that a focused class shows its whole body, nested defs included, and that a
    focused method inside it counts as shown too."""
    r = render(
        "tokens.py",
        MODULE,
        module_outline,
        Tier.FOCUSED,
        counter,
        focus={"TokenCounter", "TokenCounter.count", "no.such.symbol"},
    )
    assert set(r.shown_symbols) == {"TokenCounter", "TokenCounter.count"}
    assert "return helper(t)" in r.content and "def each(t):" in r.content
    assert r.content.count("def count(self, text: str) -> int") == 1


def test_tier2_without_focus_is_tier1(module_outline: Outline, counter: TokenCounter) -> None:
    """Ensure that tier 2 with no (or unknown) focus renders like tier 1."""
    one = render("t.py", MODULE, module_outline, Tier.OUTLINE, counter)
    for focus in ((), ["missing"]):
        two = render("t.py", MODULE, module_outline, Tier.FOCUSED, counter, focus=focus)
        assert two.content == one.content and two.shown_symbols == ()


def test_tier3_is_the_file(module_outline: Outline, counter: TokenCounter) -> None:
    """Ensure that tier 3 is the file verbatim and shows every symbol."""
    r = render("tokens.py", MODULE, module_outline, Tier.FULL, counter)
    assert r.content == MODULE
    check(r, counter, 20000)
    assert (r.start_line, r.end_line, r.truncated) == (1, module_outline.line_count, False)
    assert r.shown_symbols == tuple(s.qualname for s in module_outline.symbols)


def test_tier3_cut_prefers_symbol_starts(module_outline: Outline, counter: TokenCounter) -> None:
    """Ensure that a capped tier 3 is a prefix of the file plus a marker, within the cap."""
    r = render("tokens.py", MODULE, module_outline, Tier.FULL, counter, cap_tokens=120)
    check(r, counter, 120)
    assert r.truncated and r.end_line < module_outline.line_count
    body = r.content.rsplit("\n", 1)[0] + "\n"
    assert MODULE.startswith(body)
    assert r.content.endswith("more lines")
    assert all(s.end_line <= r.end_line for s in module_outline.symbols if s.qualname in r.shown_symbols)


def _folded(content: str, header: str) -> int:
    """How many members the fold note on `header`'s row says were left out (0 if none)."""
    for row in content.splitlines():
        text = row.split("│ ", 1)[-1]
        if text.startswith(header):
            match = re.search(r"\(\+(\d+) (?:member|subsection)s?\)", text)
            return int(match.group(1)) if match else 0
    raise AssertionError(f"{header!r} not shown")


def test_tier1_keeps_top_level_then_members_breadth_first(counter: TokenCounter) -> None:
    """Ensure that an outline over its cap keeps every top-level class, then members
    breadth-first (each class's first method before any class's second), and that each
    class's fold note counts exactly the members left out."""
    src = "".join(
        f"class C{i}:\n" + "".join(f"    def method_{j}(self, a, b): pass\n" for j in range(8)) for i in range(12)
    )
    o = outline_python(src.encode())
    full = render("m.py", src, o, Tier.OUTLINE, counter, cap_tokens=100_000)
    assert not full.truncated and "method_7" in full.content
    small = render("m.py", src, o, Tier.OUTLINE, counter, cap_tokens=full.tokens // 2)
    check(small, counter, full.tokens // 2)
    assert small.truncated
    blocks = re.split(r"^\s*\d+│ class ", small.content, flags=re.M)[1:]
    assert len(blocks) == 12
    shown = [len(re.findall(r"def method_", b)) for b in blocks]
    assert 0 < sum(shown) < 96
    assert max(shown) - min(shown) <= 1  # breadth-first
    for i, block in enumerate(blocks):
        assert all(f"method_{j}(" in block for j in range(shown[i]))  # the first ones
        assert _folded(small.content, f"class C{i}:") == 8 - shown[i]


def test_tier1_keeps_ranked_and_focused_symbols_first(counter: TokenCounter) -> None:
    """Ensure that under a tight cap the focused symbol and then the ranked ones are what
    an outline keeps, each with its class, and that the rest is counted, not lost."""
    src = (
        "".join(
            f"class C{i}:\n" + "".join(f"    def method_{j}(self, a, b): pass\n" for j in range(8)) for i in range(12)
        )
        + "def tail(): pass\n"
    )
    o = outline_python(src.encode())
    r = render(
        "m.py",
        src,
        o,
        Tier.OUTLINE,
        counter,
        focus=["C9.method_5"],
        ranks={"C3.method_7": 0.9, "tail": 0.5},
        cap_tokens=90,
    )
    check(r, counter, 90)
    text = r.content
    for wanted in ("class C9:", "def method_5", "class C3:", "def method_7", "def tail"):
        assert wanted in text
    assert text.index("class C3:") < text.index("def method_7") < text.index("class C9:")
    assert _folded(text, "class C9:") == 7
    assert re.search(r"… \d+ more definitions not shown", text)


def test_cap_zero_gives_empty(module_outline: Outline, counter: TokenCounter) -> None:
    """Ensure that a cap of zero gives an empty, truncated rendering at every tier."""
    for tier in Tier:
        r = render("t.py", MODULE, module_outline, tier, counter, cap_tokens=0)
        assert (r.content, r.tokens, r.truncated) == ("", 0, True)


def test_crlf_renders_clean_lines(counter: TokenCounter) -> None:
    """Ensure that CRLF files render tier 1 and 2 without stray carriage returns, and tier
    3 verbatim."""
    crlf = MODULE.replace("\n", "\r\n")
    o = outline_python(crlf.encode())
    r2 = render("t.py", crlf, o, Tier.FOCUSED, counter, focus=["other"])
    assert "\r" not in r2.content and "body_marker_other" in r2.content
    assert render("t.py", crlf, o, Tier.FULL, counter).content == crlf


MARKDOWN = "# Guide\n\nIntro.\n\n## Install\n\nRun pip.\n\n### Extras\n\nMore.\n\n## Use\n\nCall it.\n"


def test_markdown_tiers(counter: TokenCounter) -> None:
    """Ensure that markdown renders a heading outline, focused sections in full, and the
    whole file."""
    o = outline_for("README.md", MARKDOWN.encode())
    one = render("README.md", MARKDOWN, o, Tier.OUTLINE, counter)
    assert one.content == " 1│ # Guide\n 5│ ## Install\n 9│ ### Extras\n13│ ## Use\n"
    two = render("README.md", MARKDOWN, o, Tier.FOCUSED, counter, focus=["Guide > Install"])
    assert " 7│ Run pip.\n" in two.content and "11│ More.\n" in two.content
    assert "Call it." not in two.content and "13│ ## Use\n" in two.content
    assert two.shown_symbols == ("Guide > Install",)
    three = render("README.md", MARKDOWN, o, Tier.FULL, counter)
    assert three.content == MARKDOWN
    check(three, counter, 20000)


def test_text_is_whole_or_nothing(counter: TokenCounter) -> None:
    """Ensure that plain text (and markdown without headings) is whole or empty."""
    text = "key = value\n" * 50
    o = outline_for("settings.ini", text.encode())
    for tier in Tier:
        whole = render("settings.ini", text, o, tier, counter)
        assert whole.content == text and not whole.truncated
        assert (whole.start_line, whole.end_line) == (1, 50)
        check(whole, counter, TIER_CAP_TOKENS[tier])
        nothing = render("settings.ini", text, o, tier, counter, cap_tokens=whole.tokens - 1)
        assert (nothing.content, nothing.tokens, nothing.truncated) == ("", 0, True)
    plain_md = "Just words.\n" * 5
    o = outline_for("NOTES.md", plain_md.encode())
    assert render("NOTES.md", plain_md, o, Tier.OUTLINE, counter).content == plain_md


def test_empty_file(counter: TokenCounter) -> None:
    """Ensure that an empty file renders empty at every tier without being 'truncated'."""
    for path in ("e.py", "e.md", "e.txt"):
        o = outline_for(path, b"")
        for tier in Tier:
            r = render(path, "", o, tier, counter)
            assert (r.content, r.tokens, r.truncated) == ("", 0, False)


def test_stdlib_decoder_tier1_is_much_smaller(counter: TokenCounter) -> None:
    """Ensure that a real module's tier 1 is a fraction of tier 3 and within its cap."""
    import json.decoder

    with open(json.decoder.__file__, encoding="utf-8") as f:
        text = f.read()
    o = outline_python(text.encode())
    one = render(json.decoder.__file__, text, o, Tier.OUTLINE, counter)
    three = render(json.decoder.__file__, text, o, Tier.FULL, counter)
    check(one, counter, 1000)
    assert not one.truncated and one.tokens * 3 < three.tokens
    assert "def raw_decode(self, s, idx=0)" in one.content


LINE = st.sampled_from(
    [
        "def f(a, b=1):",
        "    return g(a)",
        "class C(B):",
        '    """Doc line."""',
        "    @staticmethod",
        "    def m(self, *a, **k) -> int:  # c",
        "        pass",
        "        def inner(): return 1",
        "import os",
        "from . import x as y",
        "X = 1",
        "if True:",
        "    Y = {1: 2}",
        "@decorator",
        "async def h(",
        "    a: int,",
        ") -> None: ...",
        "",
        "# comment ✓",
        "(",
        "x = 'a' * 100",
    ]
)


@given(
    lines=st.lists(LINE, max_size=60),
    cap=st.integers(min_value=0, max_value=400),
    tier=st.sampled_from(list(Tier)),
    crlf=st.booleans(),
    pick=st.integers(min_value=0, max_value=10),
)
@settings(max_examples=120, deadline=None)
def test_random_modules_respect_caps(lines: list[str], cap: int, tier: Tier, crlf: bool, pick: int) -> None:
    """Ensure that for random Python-ish modules, caps and focus, every tier's tokens are
    the real count of its content and never above the cap."""
    counter = counter_for()
    text = ("\r\n" if crlf else "\n").join(lines) + ("\n" if lines else "")
    o = outline_python(text.encode())
    focus = [s.qualname for s in o.symbols[pick::3]]
    r = render("m.py", text, o, tier, counter, focus=focus, cap_tokens=cap)
    check(r, counter, cap)
    assert set(r.shown_symbols) <= {s.qualname for s in o.symbols}
    if not r.truncated and tier == Tier.FULL:
        assert r.content == text


@given(
    a=st.lists(LINE, max_size=30),
    b=st.lists(LINE, max_size=30),
    tier=st.sampled_from(list(Tier)),
)
@settings(max_examples=60, deadline=None)
def test_stale_outline_does_not_crash(a: list[str], b: list[str], tier: Tier) -> None:
    """Ensure that rendering a text with another text's outline (a stale cache) still
    returns a rendering within the cap instead of raising."""
    counter = counter_for()
    text_a, text_b = "\n".join(a) + "\n", "\n".join(b) + "\n"
    o = outline_python(text_a.encode())
    focus = [s.qualname for s in o.symbols]
    r = render("m.py", text_b, o, tier, counter, focus=focus, cap_tokens=300)
    check(r, counter, 300)


def test_script_without_outline_is_whole_or_nothing(counter: TokenCounter) -> None:
    """Ensure that Python with nothing to outline (bare statements) renders whole when it
    fits, rather than as an empty outline."""
    text = "print('hello')\nfor i in range(3):\n    print(i)\n"
    o = outline_python(text.encode())
    r = render("script.py", text, o, Tier.OUTLINE, counter)
    assert r.content == text and not r.truncated
    assert render("script.py", text, o, Tier.OUTLINE, counter, cap_tokens=3).content == ""


def test_folding_keeps_focused_source_verbatim(counter: TokenCounter) -> None:
    """Ensure that folding an over-cap tier 2 keeps the focused method's source lines
    exactly as in the file and notes folded members only on outline rows."""
    src = (
        "class Big:\n"
        + "".join(f"    def method_{j}(self, a, b):\n        return a + b + {j}\n" for j in range(40))
        + "class One:\n    def only(self): pass\n"
    )
    o = outline_python(src.encode())
    lines = src.split("\n")
    focus = ["Big.method_20"]
    full = render("b.py", src, o, Tier.FOCUSED, counter, focus=focus, cap_tokens=10**6)
    r = render("b.py", src, o, Tier.FOCUSED, counter, focus=focus, cap_tokens=full.tokens - 1)
    check(r, counter, full.tokens - 1)
    assert r.truncated and r.shown_symbols == ("Big.method_20",)
    shown_methods = len(re.findall(r"def method_\d+\(self, a, b\)\n", r.content))  # outline rows, not the body
    assert _folded(r.content, "class Big:") == 39 - shown_methods > 0
    assert "class One:" in r.content
    for row in r.content.splitlines():
        number, text = row.split("│ ", 1)
        if "method_20" in text or "+ 20" in text:
            assert lines[int(number) - 1] == text


def test_markdown_folds_deep_headings(counter: TokenCounter) -> None:
    """Ensure that an over-cap markdown outline folds level-3+ headings first."""
    md = "".join(f"# Part {i}\n\n" + "".join(f"### Detail {i}.{j}\n\ntext\n\n" for j in range(10)) for i in range(5))
    o = outline_for("BIG.md", md.encode())
    full = render("BIG.md", md, o, Tier.OUTLINE, counter, cap_tokens=10**6)
    r = render("BIG.md", md, o, Tier.OUTLINE, counter, cap_tokens=full.tokens // 2)
    check(r, counter, full.tokens // 2)
    shown = [len(re.findall(rf"### Detail {i}\.", r.content)) for i in range(5)]
    assert all(_folded(r.content, f"# Part {i}") == 10 - shown[i] for i in range(5))
    assert 0 < sum(shown) < 50 and max(shown) - min(shown) <= 1


def test_compact_outline_lists_definitions_only(counter: TokenCounter) -> None:
    """Ensure that a compact (map) outline drops imports and docstrings, shortens long
    signatures, keeps the module docstring line, and costs less than the outline."""
    src = textwrap.dedent(
        '''\
        """A module."""
        import os
        from typing import Any

        LIMIT = 3


        def configure(first_option: int = 1, second_option: str = "two", third_option: float = 3.0, fourth_option: Any = None) -> None:
            """Configure everything."""


        class Thing:
            """A thing."""

            def method(self) -> int:
                """Return one."""
                return 1
        '''  # noqa: E501
    )
    o = outline_python(src.encode())
    full = render("m.py", src, o, Tier.OUTLINE, counter)
    compact = render("m.py", src, o, Tier.OUTLINE, counter, compact=True)
    assert "import os" in full.content and "import os" not in compact.content
    assert "Configure everything" in full.content and "Configure everything" not in compact.content
    assert "A module." in compact.content and "LIMIT = 3" in compact.content
    assert "def configure(…) -> None" in compact.content  # the name and the return type, not 90 chars
    assert "class Thing:" in compact.content and "def method(self) -> int" in compact.content
    assert compact.tokens < full.tokens and not compact.truncated


LONG_MODULE = "\n".join(
    ["import os", "", "", "def long_function(items):", '    """Walk the items."""']
    + [f"    step_{n} = items[{n}]" for n in range(1, 120)]
    + ["    charset_marker = detect(step_60)", "    return step_1", "", "", "def short(a):", "    return a", ""]
)


def test_tier2_excerpts_show_lines_between_the_outline_rows(counter: TokenCounter) -> None:
    """Ensure that an excerpt's lines are shown as written with their numbers, the outline
    around them kept, and that an excerpt is not a shown symbol."""
    outline = outline_python(LONG_MODULE.encode())
    n = line_of(LONG_MODULE, "charset_marker")
    r = render("m.py", LONG_MODULE, outline, Tier.FOCUSED, counter, excerpts=[(n - 2, n + 1)])
    check(r, counter, 5000)
    assert f"{n}│     charset_marker = detect(step_60)" in r.content
    assert "def long_function(items)" in r.content and "def short(a)" in r.content
    assert "step_10 =" not in r.content  # the rest of the long body is not shown
    assert r.shown_symbols == ()


def test_tier2_excerpts_are_shed_before_bodies_and_stay_in_their_share(counter: TokenCounter) -> None:
    """Ensure that excerpts come after the focused bodies: a cap that holds the body and
    the outline but not the excerpts drops the excerpts, never the body."""
    outline = outline_python(LONG_MODULE.encode())
    n = line_of(LONG_MODULE, "charset_marker")
    excerpts = [(n - 2, n + 1)]
    full = render("m.py", LONG_MODULE, outline, Tier.FOCUSED, counter, focus=["short"], excerpts=excerpts)
    assert "charset_marker" in full.content and full.shown_symbols == ("short",)
    tight = render(
        "m.py", LONG_MODULE, outline, Tier.FOCUSED, counter, focus=["short"], excerpts=excerpts, cap_tokens=40
    )
    check(tight, counter, 40)
    assert "charset_marker" not in tight.content
    assert tight.shown_symbols == ("short",)


def _renderer(text: str, o: Outline, counter: TokenCounter, basis, focus, ranks, compact: bool):
    from ctx_lsp.code.tiers import OutlineRenderer

    return OutlineRenderer("m.py", text, o, counter, focus=focus, ranks=ranks, compact=compact, basis=basis)


@given(
    requests=st.lists(
        st.tuples(
            st.lists(st.sampled_from(["JSONDecoder", "JSONDecoder.decode", "py_scanstring", "JSONObject", "nope"])),
            st.dictionaries(st.sampled_from(["JSONArray", "JSONDecoder.raw_decode", "_decode_uXXXX"]), st.floats(0, 1)),
            st.booleans(),
            st.sampled_from([Tier.OUTLINE, Tier.FOCUSED]),
            st.integers(min_value=20, max_value=1500),
        ),
        min_size=1,
        max_size=6,
    )
)
@settings(max_examples=40, deadline=None)
def test_a_shared_basis_renders_exactly_like_a_fresh_one(requests) -> None:
    """Ensure that a file basis kept across requests (issue 11: prepared renderers) gives
    every later request, whatever its focus, ranks, compactness, tier and cap, exactly the
    rendering a renderer built from scratch gives: nothing one request orders leaks into
    the next."""
    import json.decoder

    from ctx_lsp.code.tiers import FileBasis

    counter = counter_for()
    with open(json.decoder.__file__, encoding="utf-8") as f:
        text = f.read()
    o = outline_python(text.encode())
    basis = FileBasis(text, o)
    for focus, ranks, compact, tier, cap in requests:
        shared = _renderer(text, o, counter, basis, focus, ranks, compact).render(tier, cap)
        fresh = _renderer(text, o, counter, None, focus, ranks, compact).render(tier, cap)
        assert shared == fresh
    assert basis.layouts(), "outline layouts were built into the shared basis"


ROW_TEXT = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=40)


@pytest.mark.parametrize("encoding", sorted(LINE_ADDITIVE_ENCODINGS))
@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 99999), ROW_TEXT), min_size=1, max_size=12),
    width=st.integers(1, 5),
)
def test_rendered_rows_count_as_the_sum_of_their_counts(encoding: str, rows: list[tuple[int, str]], width: int) -> None:
    """The identity `OutlineRenderer._count` relies on for these encodings: rows as
    rendered (gutter, text, newline) are counted exactly by summing their own counts,
    whatever the text holds (carriage returns, odd spaces, marks, symbols, CJK)."""
    counter = counter_for(encoding)
    rendered = [f"{n:>{width}}{GUTTER}{t}\n" if n else f"{'':>{width}}{GUTTER}{t}\n" for n, t in rows]
    assert sum(counter.count_many(rendered)) == counter.count("".join(rendered))


def test_an_outline_is_counted_like_its_text_when_counts_are_summed() -> None:
    counter = counter_for("o200k_base")
    outline = outline_python(MODULE.encode())
    for cap in (60, 200, 1000):
        for tier in (Tier.OUTLINE, Tier.FOCUSED):
            r = render("m.py", MODULE, outline, tier, counter, focus=("TokenCounter.count",), cap_tokens=cap)
            assert r.tokens == counter.count(r.content)


@given(
    spans=st.lists(st.tuples(st.integers(1, 340), st.integers(0, 40)), min_size=1, max_size=8),
    caps=st.lists(st.integers(min_value=40, max_value=5000), min_size=1, max_size=4),
)
@settings(max_examples=30, deadline=None)
def test_a_renderer_at_several_caps_renders_each_like_a_fresh_one(spans, caps) -> None:
    """Ensure that what a focused renderer keeps between its renders and shares through its
    basis (the import lines, each excerpt's count) gives at every cap, in any order, the
    rendering a fresh renderer gives: assembly renders a unit file at its units' size and
    then at the tier's cap."""
    import json.decoder

    from ctx_lsp.code.tiers import FileBasis, OutlineRenderer

    counter = counter_for()
    with open(json.decoder.__file__, encoding="utf-8") as f:
        text = f.read()
    o = outline_python(text.encode())
    excerpts = [(start, start + length) for start, length in spans]
    basis = FileBasis(text, o)

    def renderer(kept: FileBasis | None) -> OutlineRenderer:
        return OutlineRenderer("m.py", text, o, counter, excerpts=excerpts, excerpt_share=1.0, basis=kept)

    shared, other = renderer(basis), renderer(basis)
    for cap in caps:
        fresh = renderer(None).render(Tier.FOCUSED, cap)
        assert shared.render(Tier.FOCUSED, cap) == fresh
        assert other.render(Tier.FOCUSED, cap) == fresh
