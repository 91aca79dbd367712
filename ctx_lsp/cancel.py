"""Cooperative cancellation of work running off the event loop.

When an editor or agent sends `$/cancelRequest`, pygls cancels the request's task, but a
bundle already running in a worker thread would go on to the end and waste a core. The
server runs each request in a `cancellable()` scope; the long steps of the core call
`check()` between units of work, and a set token stops them with `Cancelled`.

The token travels in a context variable: `asyncio.to_thread` copies the caller's context
into the worker thread, so no signature in the core has to carry it, and a call with no
scope (the CLI, tests, the MCP server) is never cancelled.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ctx_lsp.errors import CtxError

_TOKEN: ContextVar[threading.Event | None] = ContextVar("ctx_lsp_cancel_token", default=None)


class Cancelled(CtxError):
    """The request this work was for was cancelled; its result would be thrown away."""


def check() -> None:
    """Raise `Cancelled` if the current request was cancelled (cheap: call it often)."""
    token = _TOKEN.get()
    if token is not None and token.is_set():
        raise Cancelled("the request was cancelled")


@contextmanager
def cancellable() -> Iterator[threading.Event]:
    """A scope whose work stops at its next `check()` once the yielded token is set."""
    token = threading.Event()
    reset = _TOKEN.set(token)
    try:
        yield token
    finally:
        _TOKEN.reset(reset)
