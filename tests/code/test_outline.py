"""Tests for ctx_lsp/code/outline.py: the outline model, dispatch by suffix, and JSON."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.code import outline as outline_module
from ctx_lsp.code.languages import python as python_module
from ctx_lsp.code.outline import (
    OUTLINE_JSON_VERSION,
    Outline,
    outline_for,
    outline_from_json,
    outline_in_store,
    outline_text,
    outline_to_json,
)
from ctx_lsp.vocabulary import Tier


def test_tier_values() -> None:
    """Ensure that tiers compare and convert as the protocol's 1-3 integers."""
    assert [int(t) for t in Tier] == [1, 2, 3]
    assert Tier(2) is Tier.FOCUSED and Tier.OUTLINE < Tier.FULL


PYTHONISH = st.lists(
    st.sampled_from(
        [
            "def f(a, b=1):\n",
            "    return g(a)\n",
            "class C(B):\n",
            "    @staticmethod\n",
            "    def m(self, *a, **k) -> int:  # c\n",
            "        pass\n",
            "import os\n",
            "from . import x as y\n",
            "X = 1\n",
            "if True:\n",
            "try:\n",
            "except E:\n",
            "async def h():\n",
            '"""doc"""\n',
            "(\n",
            ")\n",
            "\n",
            "# comment\n",
            "    ",
        ]
    ),
    max_size=40,
)


@given(PYTHONISH)
@settings(max_examples=150, deadline=None)
def test_json_round_trip_python(parts: list[str]) -> None:
    """Ensure that outline_from_json(outline_to_json(o)) == o for Python-ish sources."""
    o = python_module._outline_python("".join(parts).encode())
    assert outline_from_json(outline_to_json(o)) == o


def test_json_round_trip_sample_and_markdown(sample: Outline) -> None:
    """Ensure that the JSON round trip is exact for a rich outline, markdown and unicode."""
    assert outline_from_json(outline_to_json(sample)) == sample
    md = outline_for("README.md", '# Tïtle ✓\n\ntext\n## Sub "quoted"\n'.encode())
    assert outline_from_json(outline_to_json(md)) == md
    text = outline_text("naïve\n")
    assert outline_from_json(outline_to_json(text)) == text
    assert "\n" not in outline_to_json(sample)


def test_json_other_version_is_refused(sample: Outline) -> None:
    """Ensure that JSON of another format version raises ValueError (a cache miss)."""
    data = outline_to_json(sample)
    with pytest.raises(ValueError):
        outline_from_json("[999" + data[data.index(",") :])


def test_outline_for_dispatch() -> None:
    """Ensure that outline_for picks Python, markdown or text by suffix."""
    assert outline_for("a/b.py", b"def f(): pass\n").symbols[0].name == "f"
    assert outline_for("stub.PYI", b"def f() -> int: ...\n").language == "python"
    md = outline_for("docs/guide.markdown", b"# Guide\n")
    assert md.language == "markdown" and md.symbols[0].kind == "heading"
    assert outline_for("x.mdx", b"# X\n").language == "markdown"
    for path in ("notes.txt", "setup.cfg", "index.rst", "Makefile"):
        o = outline_for(path, b"first line\nsecond\n")
        assert (o.language, o.docstring, o.symbols, o.line_count) == ("text", "first line", (), 2)
    assert outline_for("bad.txt", b"\xff\xfeoops").docstring == "\ufffd\ufffdoops"


def test_outline_text() -> None:
    """Ensure that plain text outlines have no symbols and count lines like the index."""
    assert outline_text("") == Outline("text", "", (), (), (), (), 0, False)
    o = outline_text("\n\n  hello  \nworld")
    assert o.docstring == "hello" and o.line_count == 4


# -- outlines from the cache: kept as JSON, decoded when read (issue 11, memory) --------


def test_a_stored_outline_is_decoded_on_first_read(sample: Outline) -> None:
    """Ensure that an outline read from JSON equals the original, and that its language,
    line count and error flag are read without decoding the rest."""
    stored = outline_from_json(outline_to_json(sample))
    assert stored._parts is None
    assert (stored.language, stored.line_count, stored.has_errors) == (
        sample.language,
        sample.line_count,
        sample.has_errors,
    )
    assert stored._parts is None
    assert stored.symbols == sample.symbols and stored._parts is not None
    assert stored == sample and hash(stored) == hash(sample)
    assert stored.names == frozenset([*(s.name for s in sample.symbols), *(c.name for c in sample.constants)])
    assert outline_to_json(stored) == outline_to_json(sample)
    assert pickle.loads(pickle.dumps(stored)) == sample


def test_decoded_outlines_are_bounded(sample: Outline, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that past the limit the oldest decoded outline is dropped back to its JSON
    (and decoded again, equal, when read), that one read since it was last looked at gets
    a second chance, and that dropping keeps the object (caches keyed by it stay valid)."""
    text = outline_to_json(sample)
    decoded = outline_module._DecodedOutlines(max_chars=2 * len(text))
    monkeypatch.setattr(outline_module, "_DECODED", decoded)
    a, b, c = (outline_from_json(text) for _ in range(3))
    assert a.symbols and b.symbols  # two fit
    assert a._parts is not None and b._parts is not None
    a.imports  # noqa: B018 — read again: a gets a second chance
    assert c.symbols
    assert a._parts is not None and b._parts is None and c._parts is not None
    assert b == sample and b._parts is not None  # decoded again on read
    names = a.names
    decoded.clear()
    assert a._parts is None and a.names is names  # names are kept
    assert a == sample


def test_a_stored_outline_with_odd_json_still_reads_right() -> None:
    """Ensure that the fields read without decoding fall back to decoding when the JSON
    does not have the expected shape."""
    odd = outline_from_json(f'[{OUTLINE_JSON_VERSION},"py\\u0074hon","",[],[],[],[],3 ,1]')
    assert odd.language == "python" and odd.line_count == 3 and odd.has_errors is True


def test_an_outline_with_a_source_holds_its_json_only_while_recent(
    sample: Outline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ensure that an outline read from a source (the index cache, by key) reads it only
    when a field is needed and keeps it only until decoded, that past the limit it drops
    the decoded fields and names (memory per file must not grow with the workspace), and
    that it reads them again, equal, into the same object (caches keyed by it stay valid)."""
    text = outline_to_json(sample)
    reads: list[str] = []

    def source(key: str) -> str | None:
        reads.append(key)
        return text

    decoded = outline_module._DecodedOutlines(max_chars=2 * len(text))
    monkeypatch.setattr(outline_module, "_DECODED", decoded)
    c = outline_from_json(text, source, "c")  # a fresh row's JSON: held while recent
    a, b = outline_in_store(source, "a"), outline_in_store(source, "b")
    assert reads == [] and (a._json, b._json) == (None, None) and c._json == text
    assert a.language == sample.language and a._parts is None and reads == ["a"]  # the JSON, not decoded
    assert b.symbols == sample.symbols and reads == ["a", "b"]
    assert b._json is None and b._parts is not None  # decoded: the JSON is read again only once dropped
    assert c._json is None and c._parts is None  # two fit: the oldest went, JSON and all
    assert b.imports and c.symbols and reads == ["a", "b", "c"]  # b read again: a second chance
    assert a._json is None
    assert a.names == sample.names and reads == ["a", "b", "c", "a"]
    assert c._json is None and c._names is None and b._parts is not None
    assert c == sample and (c.line_count, c.has_errors) == (sample.line_count, sample.has_errors)
    assert outline_to_json(c) == text
    decoded.clear()
    assert all(o._json is None and o._parts is None and o._names is None for o in (a, b, c))


def test_an_outline_its_source_lost_reads_as_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that an outline whose source no longer has it (a cache rebuilt under a live
    entry) reads as an empty outline instead of failing the request that reads it."""
    lost = outline_in_store(lambda key: None, "gone")
    assert (lost.symbols, lost.imports, lost.line_count, lost.language) == ((), (), 0, "text")
