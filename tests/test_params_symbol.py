"""Tests for ctx_lsp/params.py's `parse_symbol`: ctx/symbol's one parser (LSP, CLI and MCP)."""

from __future__ import annotations

from typing import Any

import pytest

from ctx_lsp.errors import InvalidParam
from ctx_lsp.params import parse_path, parse_symbol
from ctx_lsp.vocabulary import SymbolRequest


def test_every_symbol_field_is_parsed_into_its_type() -> None:
    """Ensure that a full ctx/symbol request becomes a typed request, field by field."""
    request = parse_symbol(
        {
            "name": " Client.send ",
            "path": "file:///ws/pkg/client%20one.py",
            "include_body": False,
            "max_tokens": 1200,
            "workDoneToken": "t1",
        }
    )
    assert request == SymbolRequest("Client.send", "/ws/pkg/client one.py", False, 1200)


def test_a_name_alone_takes_the_defaults() -> None:
    """Ensure that only `name` is needed: bodies on, the core's default budget, any file."""
    assert parse_symbol({"name": "send"}) == SymbolRequest("send", None, True, None)


def test_paths_may_be_relative_absolute_or_file_uris() -> None:
    """Ensure that path keeps a relative or absolute path as given and decodes a file URI."""
    assert parse_symbol({"name": "x", "path": "pkg/mod.py"}).path == "pkg/mod.py"
    assert parse_symbol({"name": "x", "path": "/ws/pkg"}).path == "/ws/pkg"
    assert parse_path("file:///ws/a%23b.py", "path") == "/ws/a#b.py"


BAD: list[tuple[Any, str, str]] = [
    ({}, "name", "is required"),
    ({"name": "   "}, "name", "pass a qualname such as 'Client.send'"),
    ({"name": 42}, "name", "expected a string, got number"),
    ({"name": "def send(self):\n    pass"}, "name", "search instead"),
    ({"name": "x" * 301}, "name", "too long"),
    ({"name": "x", "path": ""}, "path", "workspace-relative path"),
    ({"name": "x", "path": ["a.py"]}, "path", "expected a string, got array"),
    ({"name": "x", "path": "http://example.com/a.py"}, "path", "unsupported URI scheme"),
    ({"name": "x", "include_body": "yes"}, "include_body", "true or false"),
    ({"name": "x", "max_tokens": 50}, "max_tokens", "between 100 and 20000"),
    ({"name": "x", "max_tokens": 50_000}, "max_tokens", "between 100 and 20000"),
    ({"name": "x", "max_tokens": "4k"}, "max_tokens", "expected an integer"),
    ({"name": "x", "max_token": 100}, "max_token", "did you mean 'max_tokens'"),
    (["send"], "params", "send ctx/symbol params as an object"),
]


@pytest.mark.parametrize(("params", "field", "words"), BAD)
def test_bad_symbol_params_name_the_field_and_the_fix(params: Any, field: str, words: str) -> None:
    """Ensure that every bad field is refused with its name first and words saying what to send."""
    with pytest.raises(InvalidParam) as raised:
        parse_symbol(params)
    assert raised.value.field == field
    assert str(raised.value).startswith(f"{field}: ") and words in str(raised.value)
