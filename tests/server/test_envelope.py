"""Tests for ctx_lsp/server/envelope.py: every body gets the answer JSON-RPC 2.0 calls for,
and an object nested in params is never mistaken for a message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctx_lsp.server.envelope import Message, Reply, parse_body, recover_id
from ctx_lsp.server.framing import INVALID_REQUEST, PARSE_ERROR


def error_of(body: bytes | str) -> tuple[Any, int, str]:
    parsed = parse_body(body.encode() if isinstance(body, str) else body)
    assert isinstance(parsed, Reply) and isinstance(parsed.payload, dict), parsed
    error = parsed.payload["error"]
    return parsed.payload["id"], error["code"], error["message"]


def test_a_param_holding_jsonrpc_stays_a_param() -> None:
    """Ensure that `{"query": {"jsonrpc": "2.0"}}` reaches the handler as a plain dict."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ctx/bundle", "params": {"query": {"jsonrpc": "2.0", "id": 9}}}
    parsed = parse_body(json.dumps(body).encode())
    assert isinstance(parsed, Message) and parsed.data == body and parsed.is_request and parsed.id == 1


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"jsonrpc": "2.0", "id": 3, "method": 5}', (3, INVALID_REQUEST, "'method' must be a non-empty string")),
        ('{"jsonrpc": "1.0", "id": 3, "method": "x"}', (3, INVALID_REQUEST, "'jsonrpc' must be \"2.0\"")),
        ('{"id": "a", "method": "x"}', ("a", INVALID_REQUEST, "'jsonrpc' is missing")),
        ('{"jsonrpc": "2.0", "id": true, "method": "x"}', (None, INVALID_REQUEST, "'id' must be an integer")),
        ('{"jsonrpc": "2.0", "method": 1}', (None, INVALID_REQUEST, "'method' must be")),
        ('{"jsonrpc": "2.0"}', (None, INVALID_REQUEST, "needs a 'method'")),
        ("[]", (None, INVALID_REQUEST, "an empty batch")),
        ('"hello"', (None, INVALID_REQUEST, "expected a JSON object, got string")),
        ("42", (None, INVALID_REQUEST, "expected a JSON object, got number")),
        ("{not json", (None, PARSE_ERROR, "Parse error")),
        ("", (None, PARSE_ERROR, "Parse error")),
        ('{"jsonrpc": "2.0", "id": 4, "method": "x", "params": {"q": "cut sh', (4, PARSE_ERROR, "Parse error")),
        ('{"jsonrpc": "2.0", "id": 5, "method": "x", "params": ' + "[" * 5000 + "]" * 5000 + "}", (5, PARSE_ERROR, "")),
    ],
    ids=lambda v: v[:40] if isinstance(v, str) else None,
)
def test_malformed_bodies_get_the_spec_error(body: str, expected: tuple[Any, int, str]) -> None:
    """Ensure that each malformed body is answered with the JSON-RPC error the spec names,
    under the request's id whenever the body shows it, else null."""
    msg_id, code, message = error_of(body)
    assert (msg_id, code) == expected[:2]
    assert expected[2] in message


def test_invalid_utf8_is_a_parse_error_under_the_requests_id() -> None:
    """Ensure that a body with invalid UTF-8 inside a string is answered -32700 with its id."""
    assert error_of(b'{"jsonrpc": "2.0", "id": 8, "method": "ctx/search", "params": {"query": "\xff\xfe"}}')[:2] == (
        8,
        PARSE_ERROR,
    )


def test_a_batch_is_refused_request_by_request() -> None:
    """Ensure that each request of a batch gets -32600 under its id, in one array, and that
    its notifications get nothing."""
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ctx/search", "params": {"query": "x"}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": "b", "method": "shutdown"},
        7,
    ]
    parsed = parse_body(json.dumps(batch).encode())
    assert isinstance(parsed, Reply) and isinstance(parsed.payload, list)
    assert [(r["id"], r["error"]["code"]) for r in parsed.payload] == [
        (1, INVALID_REQUEST),
        ("b", INVALID_REQUEST),
        (None, INVALID_REQUEST),
    ]
    assert parse_body(json.dumps([{"jsonrpc": "2.0", "method": "initialized"}]).encode()) is None


def test_a_malformed_response_is_never_answered() -> None:
    """Ensure that a response from the client with a bad envelope is dropped, not answered."""
    assert parse_body(b'{"jsonrpc": "1.0", "id": 3, "result": null}') is None


def test_the_id_is_recovered_only_from_the_top_level() -> None:
    """Ensure that an id nested in params is never taken for the message's own id."""
    assert recover_id('{"jsonrpc": "2.0", "params": {"id": 99}, "id": "top", "method": "x", ') == "top"
    assert recover_id('{"jsonrpc": "2.0", "params": {"id": 99}, "method": "x", "q": "cut') is None
    assert recover_id('{"method": "id", "params": ["id", {"id": 1}], "\\u0069d": 12') == 12
    assert recover_id('[{"id": 1}]') is None
    assert recover_id('{"id": {"x": 1}}') is None
