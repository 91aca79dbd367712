"""Each file's units and their terms, derived when it is indexed and kept in its cache row
(issue 22): what they hold, how they read back, and that bytes which do not hold to the
layout are refused rather than trusted."""

from __future__ import annotations

from array import array
from dataclasses import replace

import pytest

from ctx_lsp.code.outline import outline_for, split_lines
from ctx_lsp.index.files import analyse_uncounted
from ctx_lsp.index.store import IndexStore
from ctx_lsp.index.terms import count_terms, terms
from ctx_lsp.index.unit_postings import COUNT_CAP, UnitPostings, pack, unit_postings, unpack

PYTHON = '''import os
import sys

LIMIT = 10


class Parser:
    """Reads tokens."""

    mode = "strict"

    def parse_tokens(self, text):
        tokens = text.split()
        return [t for t in tokens if t]

    def reset(self):
        self.mode = "strict"


def count_tokens(text):
    return len(Parser().parse_tokens(text)) + LIMIT
'''

GO = """package main

import "fmt"

func countTokens(text string) int {
\tfmt.Println(text)
\treturn len(text)
}
"""


def postings_of(path: str, text: str) -> UnitPostings:
    return unit_postings(outline_for(path, text.encode()), text)


@pytest.mark.parametrize(("path", "text"), [("m.py", PYTHON), ("m.go", GO)])
def test_each_units_postings_are_the_term_counts_of_its_lines(path: str, text: str) -> None:
    """Ensure that a term's posting for a unit counts exactly its occurrences in the unit's
    lines, and that every term of every unit has one."""
    p = postings_of(path, text)
    lines = split_lines(text)
    assert p.units
    for i, u in enumerate(p.units):
        expected = count_terms(terms("\n".join(lines[u.start - 1 : u.end])))
        for term, count in expected.items():
            found = {posting // COUNT_CAP: posting % COUNT_CAP for posting in p.postings(term) or ()}
            assert found.get(i) == count, (term, u)
    assert p.postings("nowhere_in_the_file") is None


def test_owner_names_point_at_first_units_only() -> None:
    """Ensure that a definition's name points at its first unit (signature), not at others."""
    p = postings_of("m.py", PYTHON)
    (parse,) = terms("parse")  # stemmed as the index stems it
    named = [p.units[i] for i in p.named(parse) or ()]
    assert [(u.owner, u.first) for u in named] == [("Parser.parse_tokens", True)]
    assert {p.units[i].owner for i in p.named("count_tokens") or ()} == {"count_tokens"}


def test_module_constants_name_the_module_code_they_are_declared_in() -> None:
    """Ensure that a module constant's name points at the module unit that declares it, as
    a function's name points at its signature: "add a global EnableCaseInsensitive" is
    about the block of `Enable...` variables, whose words are names, not body text."""
    go = (
        "package cobra\n\n// EnablePrefixMatching allows prefix matching.\n"
        "var EnablePrefixMatching = false\n\nfunc run() {\n\treturn\n}\n"
    )
    p = postings_of("cobra.go", go)
    (enable,) = terms("enable")
    named = [p.units[i] for i in p.named(enable) or ()]
    assert [(u.kind, u.start, u.end) for u in named] == [("module", 1, 4)]
    (limit,) = terms("LIMIT")
    assert [p.units[i].kind for i in postings_of("m.py", PYTHON).named(limit) or ()] == ["module"]


def test_costs_and_lengths_follow_the_units_text() -> None:
    p = postings_of("m.py", PYTHON)
    lines = split_lines(PYTHON)
    for u, chars, cost in zip(p.units, p.chars, p.costs):
        text = "\n".join(lines[u.start - 1 : u.end]) + "\n"
        assert chars == len(text)
        assert cost >= len(text) / 4  # errs high: a selection must fit


def test_pack_and_unpack_round_trip() -> None:
    p = postings_of("m.py", PYTHON)
    back = unpack(pack(p))
    assert back == p


def test_bytes_that_do_not_hold_to_the_layout_are_refused() -> None:
    """Ensure that a cut-short blob, a posting naming a unit that does not exist, ends that
    descend and an unknown kind each read back as None (the units are then derived from the
    text), never as units that index out of range later."""
    p = postings_of("m.py", PYTHON)
    good = pack(p)
    assert unpack(good[:-3]) is None
    assert unpack(b"not a blob") is None
    beyond = array("i", p.post)
    beyond[0] = len(p.units) * COUNT_CAP + 1
    assert unpack(pack(replace(p, post=beyond))) is None
    descending = array("i", p.term_ends)
    descending[0], descending[1] = descending[1], descending[0]
    assert unpack(pack(replace(p, term_ends=descending))) is None
    bad_name = array("i", p.name_units)
    bad_name[0] = -1
    assert unpack(pack(replace(p, name_units=bad_name))) is None


def test_analysis_derives_units_for_code_and_none_for_prose() -> None:
    """Ensure that the indexing pass stores units for code (both the Python fast path and the
    tree-sitter path) and nothing for markdown or text."""
    for path, text in (("m.py", PYTHON), ("m.go", GO)):
        found = analyse_uncounted(path, text.encode(), len(text), 1)
        assert found is not None
        assert unpack(found[0].units) == postings_of(path, text)
    for path in ("README.md", "notes.txt"):
        found = analyse_uncounted(path, b"# Title\n\nwords words\n", 21, 1)
        assert found is not None and found[0].units == b""


def test_the_store_keeps_a_rows_units(tmp_path) -> None:
    row = analyse_uncounted("m.py", PYTHON.encode(), len(PYTHON), 1)
    assert row is not None
    store = IndexStore.open(tmp_path, "o200k_base", "test")
    store.put_many([row[0]])
    store.close()
    again = IndexStore.open(tmp_path, "o200k_base", "test")
    stored = again.load_all()["m.py"]
    assert stored.units is None  # rows are read without their units, which are read on use
    assert row[0].units and again.units_of(stored.key or stored.analysis_key) == row[0].units
    again.close()
