"""The one mapping from core errors to JSON-RPC errors, applied to every handler.

`InvalidParam` and `OutsideWorkspace` are the caller's mistake: -32602 with the field in
`data`. Other core errors are -32803 (RequestFailed). Anything unexpected is left to
pygls, which answers -32603 with the traceback and keeps the server running. A value
quoted back in a message is cut (`clip`), so a huge param never comes back as a huge error.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ctx_lsp.errors import ConfigError, CtxError, InvalidParam, OutsideWorkspace

REQUEST_FAILED = -32803
"""LSP's RequestFailed: the request was valid but could not be answered."""
MAX_ECHO_CHARS = 200
"""A value quoted back in an error (a path, a name) is cut to this: a 1 MB path sent in a
param must not come back as a 1 MB error message."""
_LONG_WORD = re.compile(rf"\S{{{MAX_ECHO_CHARS + 1},}}")

F = TypeVar("F", bound=Callable[..., Any])


def to_jsonrpc(err: CtxError) -> JsonRpcException:
    message = clip(str(err))
    if isinstance(err, InvalidParam):
        return JsonRpcInvalidParams(message, data={"field": clip(err.field)})
    if isinstance(err, OutsideWorkspace):
        return JsonRpcInvalidParams(message, data={"field": "uri", "refused": clip(err.target)})
    if isinstance(err, ConfigError):
        return JsonRpcInvalidParams(message, data={"field": clip(err.key)})
    return JsonRpcException(message, code=REQUEST_FAILED)


def clip(text: str) -> str:
    """`text` with every run of more than `MAX_ECHO_CHARS` non-blank characters shortened."""
    return _LONG_WORD.sub(lambda m: f"{m.group()[: MAX_ECHO_CHARS // 2]}…({len(m.group())} characters)", text)


def maps_errors(handler: F) -> F:
    """Decorate a handler (sync or async) so core errors leave as JSON-RPC errors."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except CtxError as err:
                raise to_jsonrpc(err) from err

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except CtxError as err:
            raise to_jsonrpc(err) from err

    return wrapper  # type: ignore[return-value]


class RefusalsAreNotErrors(logging.Filter):
    """pygls logs every error response with a traceback at ERROR. A request refused for a
    bad parameter is the caller's mistake, answered with a message that says how to fix
    it: log it as one DEBUG line, so a server log's ERRORs are the server's own faults."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcInvalidParams):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.msg = f"{record.msg} refused: %s"
            record.args = (*(record.args if isinstance(record.args, tuple) else ()), exc.message)
            record.exc_info = record.exc_text = None
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def quiet_refusals() -> None:
    """Install `RefusalsAreNotErrors` on pygls's JSON-RPC logger (once)."""
    logger = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, RefusalsAreNotErrors) for f in logger.filters):
        logger.addFilter(RefusalsAreNotErrors())
