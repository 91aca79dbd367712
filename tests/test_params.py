"""Tests for ctx_lsp/params.py: the one parser every adapter calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctx_lsp.errors import InvalidParam
from ctx_lsp.params import (
    parse_bundle,
    parse_docs,
    parse_outline,
    parse_resolve,
    parse_search,
    parse_window,
)
from ctx_lsp.vocabulary import DocsRequest, Focus, Format, Tier, Utilization

WS = "/ws"
URI = "file:///ws/pkg/mod.py"
MESSAGES = [{"role": "user", "content": "hello"}]


def test_every_bundle_field_is_parsed_into_its_type() -> None:
    """Ensure that a full ctx/bundle request becomes a typed request, field by field."""
    request = parse_bundle(
        {
            "query": "fix the budget",
            "agent": "implementer",
            "model": "gpt-4o",
            "utilization": "medium",
            "profile": "balanced",
            "focus": {"uri": URI, "position": {"line": 4, "character": 2}},
            "open": [URI, "file:///ws/other.py"],
            "tier": 3,
            "messages": MESSAGES,
            "summary": "so far",
            "artifacts": [{"key": "spec", "content": "The spec."}],
            "docs": [{"library": "pygls", "topic": "commands"}],
            "format": "xml",
            "workDoneToken": "t1",
        }
    )
    assert request.query == "fix the budget" and request.agent == "implementer"
    assert (request.budget, request.model, request.utilization) == (None, "gpt-4o", Utilization.MEDIUM)
    assert request.profile == "balanced" and request.tier is Tier.FULL and request.format is Format.XML
    assert request.focus == Focus("/ws/pkg/mod.py", 4, 2)
    assert request.open == ("/ws/pkg/mod.py", "/ws/other.py")
    assert request.messages == tuple(MESSAGES) and request.summary == "so far"
    assert request.artifacts == (("spec", "The spec."),)
    assert request.docs == (DocsRequest("pygls", "commands"),)


def test_an_empty_bundle_request_takes_the_defaults() -> None:
    """Ensure that no params at all is a valid request with DESIGN's defaults."""
    for empty in (None, {}):
        request = parse_bundle(empty)
        assert request.agent == "default" and request.format is Format.MARKDOWN
        assert request.budget is None and request.focus is None and request.open == () and request.docs == ()


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ([1, 2], "params", "JSON object"),
        ({"bugdet": 10}, "bugdet", "did you mean 'budget'"),
        ({"budget": "8k"}, "budget", "expected an integer"),
        ({"budget": 0}, "budget", "out of range"),
        ({"budget": True}, "budget", "expected an integer"),
        ({"budget": 8000, "model": "gpt-4o"}, "model", "cannot be combined with budget"),
        ({"budget": 8000, "utilization": "low"}, "utilization", "cannot be combined with budget"),
        ({"utilization": "low"}, "utilization", "needs a model"),
        ({"model": "gpt-4o", "utilization": "most"}, "utilization", "unknown value"),
        ({"model": " "}, "model", "is empty"),
        ({"agent": " "}, "agent", "is empty"),
        ({"agent": 3}, "agent", "expected a string"),
        ({"query": ["a"]}, "query", "expected a string"),
        ({"tier": 4}, "tier", "out of range"),
        ({"format": "html"}, "format", "unknown value"),
        ({"open": "file:///ws/a.py"}, "open", "list of file URIs"),
        ({"open": ["http://x/a.py"]}, "open[0]", "unsupported URI scheme"),
        ({"open": ["file://host/a.py"]}, "open[0]", "remote file URI host"),
        ({"focus": "a.py"}, "focus", "expected an object"),
        ({"focus": {"position": {}}}, "focus.uri", "is required"),
        ({"focus": {"uri": URI, "position": {"line": -1}}}, "focus.position.line", "out of range"),
        ({"focus": {"uri": URI, "position": {"row": 1}}}, "focus.position.row", "unknown parameter"),
        ({"messages": "hi"}, "messages", ""),
        ({"artifacts": {"key": "spec"}}, "artifacts", "expected an array"),
        ({"docs": {"library": "x"}}, "docs", "expected a list"),
        ({"docs": [{"topic": "x"}]}, "docs[0].library", "is required"),
        ({"docs": [{"library": "x", "version": 1}]}, "docs[0].version", "unknown parameter"),
        ({"summary": 5}, "summary", "expected a string"),
        ({"profile": 5}, "profile", "expected a string"),
    ],
)
def test_bad_bundle_params_name_the_field_and_the_fix(params: Any, field: str, words: str) -> None:
    """Ensure that every bad field is refused with its dotted path, the problem and a fix."""
    with pytest.raises(InvalidParam) as raised:
        parse_bundle(params)
    assert raised.value.field == field
    assert words in str(raised.value) and raised.value.fix


def test_window_shares_the_budget_rules() -> None:
    """Ensure that ctx/window follows the same budget/model rules as ctx/bundle."""
    assert parse_window({"messages": MESSAGES, "budget": 500}).budget == 500
    assert parse_window({"messages": MESSAGES, "model": "gpt-4o", "utilization": "low"}).utilization is Utilization.LOW
    with pytest.raises(InvalidParam, match="^model: cannot be combined with budget"):
        parse_window({"messages": MESSAGES, "budget": 500, "model": "gpt-4o"})
    with pytest.raises(InvalidParam, match="^messages: is required"):
        parse_window({"budget": 500})


def test_outline_search_docs_and_resolve_requests() -> None:
    """Ensure that the smaller requests parse their fields and defaults, and refuse bad ones."""
    outline = parse_outline({"uri": URI, "tier": 2})
    assert (Path(outline.path), outline.tier) == (Path("/ws/pkg/mod.py"), Tier.FOCUSED)
    assert parse_outline({"uri": URI}).tier is Tier.OUTLINE
    with pytest.raises(InvalidParam, match="^uri: is required"):
        parse_outline({})
    search = parse_search({"query": "budget"})
    assert (search.query, search.limit) == ("budget", 20)
    with pytest.raises(InvalidParam, match="^query: is empty"):
        parse_search({"query": "  "})
    with pytest.raises(InvalidParam, match="^limit: 999 is out of range"):
        parse_search({"query": "x", "limit": 999})
    docs = parse_docs({"library": "pygls", "topic": "commands", "agent": "tester", "max_tokens": 300})
    assert (docs.library, docs.topic, docs.agent, docs.max_tokens) == ("pygls", "commands", "tester", 300)
    with pytest.raises(InvalidParam, match="^library: is required"):
        parse_docs({"topic": "x"})
    resolve = parse_resolve({"name": "pygls"})
    assert (resolve.name, resolve.limit) == ("pygls", 10)
    with pytest.raises(InvalidParam, match="^name: is empty"):
        parse_resolve({"name": ""})


def test_percent_encoded_uris_decode_to_paths() -> None:
    """Ensure that a URI's percent-encoding is decoded (the workspace decides later whether
    the path is inside it)."""
    request = parse_bundle({"open": ["file:///ws/my%20pkg/a.py"]})
    assert request.open == ("/ws/my pkg/a.py",)
