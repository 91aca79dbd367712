"""Tests for ctx_lsp/server/errors.py: core errors → JSON-RPC, and quiet refusals."""

from __future__ import annotations

import logging
import sys

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ctx_lsp.errors import CtxError, InvalidParam, OutsideWorkspace
from ctx_lsp.server.errors import REQUEST_FAILED, RefusalsAreNotErrors, maps_errors, to_jsonrpc


def record_for(exc: BaseException) -> logging.LogRecord:
    try:
        raise exc
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord(
        "pygls.protocol.json_rpc", logging.ERROR, __file__, 1, 'Exception occurred for message "%s"', (7,), info
    )


def test_core_errors_map_to_their_codes_with_the_field() -> None:
    """Ensure that a bad parameter is -32602 naming the field, an outside path -32602, others RequestFailed."""
    bad = to_jsonrpc(InvalidParam("budget", "is out of range", "pass 1..2000000"))
    assert isinstance(bad, JsonRpcInvalidParams) and bad.data == {"field": "budget"}
    assert str(bad) == "budget: is out of range; pass 1..2000000"
    outside = to_jsonrpc(OutsideWorkspace("/etc/passwd"))
    assert isinstance(outside, JsonRpcInvalidParams) and outside.data["refused"] == "/etc/passwd"
    assert to_jsonrpc(CtxError("no bundle yet")).code == REQUEST_FAILED


def test_handlers_raise_jsonrpc_errors() -> None:
    """Ensure that a decorated handler turns a core error into its JSON-RPC error."""

    @maps_errors
    def handler() -> None:
        raise InvalidParam("query", "is empty", "pass words")

    with pytest.raises(JsonRpcInvalidParams, match="^query: is empty"):
        handler()


def test_refusals_are_not_logged_as_errors() -> None:
    """Ensure that pygls's traceback for a refused request is dropped (the client has the
    message), while a real failure is still logged at ERROR with its traceback."""
    quiet = RefusalsAreNotErrors()
    refused = record_for(JsonRpcInvalidParams("budget: is out of range; pass 1..2000000"))
    assert quiet.filter(refused) is False
    assert refused.levelno == logging.DEBUG and refused.exc_info is None
    assert "budget: is out of range" in refused.getMessage()
    failed = record_for(JsonRpcException("boom"))
    assert quiet.filter(failed) is True
    assert failed.levelno == logging.ERROR and failed.exc_info is not None
