"""A property over one real server session: whatever JSON a client sends as the params of a
custom method (or of `workspace/executeCommand` with a ctx.* command), it gets exactly one
answer, a result or an error, within a bound, and the server keeps serving.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp.params import BUNDLE_KEYS, SYMBOL_KEYS, WINDOW_KEYS
from tests.e2e.helpers import write_workspace
from tests.e2e.raw_client import RawServer

ANSWER_S = 20.0
"""Generous: a valid bundle on a loaded machine may take a second or two; a hang never ends."""

KEYS = {
    "ctx/bundle": sorted(BUNDLE_KEYS),
    "ctx/outline": ["uri", "tier"],
    "ctx/search": ["query", "limit"],
    "ctx/symbol": sorted(SYMBOL_KEYS),
    "ctx/docs": ["library", "topic", "agent", "max_tokens"],
    "ctx/resolveLibrary": ["name", "limit"],
    "ctx/window": sorted(WINDOW_KEYS),
}
COMMANDS = ["ctx.status", "ctx.explain", "ctx.reindex", "ctx.prewarmDocs"]

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(["file:///etc/passwd", "pkg/tokens.py", "TokenCounter.count", "pygls", "user", "%2e%2e"]),
    st.sampled_from([{"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": 1, "method": "exit"}]),
)
keys = st.one_of(st.text(max_size=12), st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]))
"""Message-like keys often: a param that looks like a message was dropped by pygls."""
json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)


def params_for(method: str) -> st.SearchStrategy[Any]:
    """Objects with the method's own keys (so validation gets past "unknown parameter"),
    with other keys, or any JSON at all."""
    known = st.fixed_dictionaries({}, optional={key: json_values for key in KEYS[method]})
    return st.one_of(known, known, json_values)


calls = st.one_of(
    *(st.tuples(st.just(method), params_for(method)) for method in KEYS),
    st.tuples(
        st.just("workspace/executeCommand"),
        st.fixed_dictionaries(
            {"command": st.sampled_from(COMMANDS)},
            optional={"arguments": st.one_of(st.none(), st.lists(json_values, max_size=3))},
        ),
    ),
)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    with RawServer(write_workspace(tmp_path_factory.mktemp("property"))) as server:
        server.initialize()
        yield server


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls)
def test_any_params_get_exactly_one_answer(session: RawServer, call: tuple[str, Any]) -> None:
    """Ensure that every request, whatever its params, is answered once with a result or a
    JSON-RPC error, and that the server is still there."""
    method, params = call
    msg_id = session.request(method, params)
    reply = session.response(msg_id, ANSWER_S)
    assert ("result" in reply) != ("error" in reply), reply
    if "error" in reply:
        assert isinstance(reply["error"]["code"], int) and reply["error"]["message"]
    assert session.answered[msg_id] == 1
    assert session.proc.poll() is None


def test_no_request_was_answered_twice(session: RawServer) -> None:
    """Ensure that, over the whole session, no id got two answers."""
    session.quiet(0.5)
    assert [msg_id for msg_id, n in session.answered.items() if n != 1] == []
