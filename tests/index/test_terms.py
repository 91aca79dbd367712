"""Tests for ctx_lsp/index/terms.py: identifiers split the same way in every language."""

from __future__ import annotations

from ctx_lsp.index.terms import query_terms, terms


def test_camel_pascal_and_snake_case_split_alike() -> None:
    """Ensure that `getState` (TS), `GetState` (Go, C#), `get_state` (Python, Rust, Ruby)
    and a task's "get state" give the same terms, plus the whole identifier."""
    parts = ["get", "stat"]
    assert terms("getState") == [*parts, "getstate"]
    assert terms("GetState") == [*parts, "getstate"]
    assert terms("get_state") == [*parts, "get_state"]
    assert query_terms("get state") == parts
    assert terms("parseHTTPResponse")[:3] == ["pars", "http", "respons"]


def test_english_quantifiers_are_no_terms_even_inside_a_compound() -> None:
    """Ensure that "all", "only", "more" and the like carry no weight: the task "Prefer
    ReplaceAll instead of Replace(..., -1)" is about `Replace`, not about every `hasAllFlags`
    and `MatchAll` in the repository; the compound itself still matches."""
    assert query_terms("Prefer ReplaceAll instead of Replace(..., -1)") == ["prefer", "replac", "replaceall"]
    assert terms("MatchAll") == ["match", "matchall"]
    assert query_terms("only show more of any other") == ["show"]
