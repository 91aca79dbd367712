"""Custom `ctx/*` requests: validate at the edge, run the engine off the event loop.

Requests that read the workspace first wait for the editor buffers sent before them
(`buffers.settled()`, buffers.py); docs, library and windowing requests never wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from ctx_lsp.cancel import cancellable
from ctx_lsp.params import (
    parse_bundle,
    parse_docs,
    parse_outline,
    parse_resolve,
    parse_search,
    parse_symbol,
    parse_window,
)
from ctx_lsp.server.app import CtxServer
from ctx_lsp.server.errors import maps_errors
from ctx_lsp.wire import to_wire

T = TypeVar("T")


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a worker thread, cancellable: when pygls cancels this request's task
    (`$/cancelRequest`, or shutdown), the work stops at its next `cancel.check()` instead
    of running to the end for nobody."""
    with cancellable() as token:
        try:
            return await asyncio.to_thread(fn, *args)
        except asyncio.CancelledError:
            token.set()
            raise


def register(server: CtxServer) -> None:
    @server.feature("ctx/outline")
    @maps_errors
    async def outline(ls: CtxServer, params: Any) -> dict[str, Any]:
        """ctx/outline: one file at a tier; the URI must be inside a workspace folder."""
        request = parse_outline(params)
        engine = ls.require_engine()
        await ls.buffers.settled()
        return to_wire(await off_loop(engine.outline, request.path, request.tier))

    @server.feature("ctx/search")
    @maps_errors
    async def search(ls: CtxServer, params: Any) -> dict[str, Any]:
        request = parse_search(params)
        engine = ls.require_engine()
        await ls.buffers.settled()
        hits, warnings = await off_loop(engine.search_with_warnings, request.query, request.limit)
        return {
            "warnings": list(warnings),
            "hits": [
                {
                    "path": h.path,
                    "symbol": h.symbol,
                    "kind": h.kind,
                    "range": {"start_line": h.start_line, "end_line": h.end_line},
                    "score": h.score,
                }
                for h in hits
            ],
        }

    @server.feature("ctx/symbol")
    @maps_errors
    async def symbol(ls: CtxServer, params: Any) -> dict[str, Any]:
        """ctx/symbol: one symbol's code, for an agent a bundle pointed at it."""
        request = parse_symbol(params)
        engine = ls.require_engine()
        await ls.buffers.settled()
        return to_wire(await off_loop(engine.symbol, request))

    @server.feature("ctx/bundle")
    @maps_errors
    async def bundle(ls: CtxServer, params: Any) -> dict[str, Any]:
        request = parse_bundle(params)
        engine = ls.require_engine()
        await ls.buffers.settled()
        return to_wire(await off_loop(engine.bundle, request))

    @server.feature("ctx/docs")
    @maps_errors
    async def docs(ls: CtxServer, params: Any) -> dict[str, Any]:
        """ctx/docs: library docs on a topic, capped at the agent's docs cap."""
        request = parse_docs(params)
        engine = ls.require_engine()
        return to_wire(await off_loop(engine.docs, request.library, request.topic, request.agent, request.max_tokens))

    @server.feature("ctx/resolveLibrary")
    @maps_errors
    async def resolve_library(ls: CtxServer, params: Any) -> dict[str, Any]:
        request = parse_resolve(params)
        engine = ls.require_engine()
        return {"matches": to_wire(await off_loop(engine.resolve_library, request.name, request.limit))}

    @server.feature("ctx/window")
    @maps_errors
    async def window(ls: CtxServer, params: Any) -> dict[str, Any]:
        """ctx/window: conversation windowing at turn boundaries."""
        request = parse_window(params)
        engine = ls.require_engine()
        return to_wire(await off_loop(engine.window, request))
