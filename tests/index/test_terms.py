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
