"""`workspace/executeCommand` commands: ctx.status, ctx.explain, ctx.reindex, ctx.prewarmDocs.

Arguments are left un-annotated and checked here: pygls's converter errors for annotated
arguments do not name the field (STYLE §2).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ctx_lsp.errors import InvalidParam
from ctx_lsp.server.app import CtxServer
from ctx_lsp.server.errors import maps_errors
from ctx_lsp.wire import to_wire


def _no_args(command: str, args: tuple[Any, ...]) -> None:
    # Editors sometimes pass a context object (e.g. the active document); accept one object.
    if len(args) > 1 or (args and not isinstance(args[0], (dict, type(None)))):
        raise InvalidParam(
            "arguments", f"{command} takes no arguments, got {len(args)}", "call it with an empty arguments list"
        )


def register(server: CtxServer) -> None:
    @server.command("ctx.status")
    @maps_errors
    async def status(ls: CtxServer, *args: Any) -> dict[str, Any]:
        """Index size, skipped files by reason, watcher state, tokenizer, cache health (after
        the buffers sent before it are applied)."""
        _no_args("ctx.status", args)
        engine = ls.require_engine()
        await ls.buffers.settled()
        return to_wire(engine.status())

    @server.command("ctx.explain")
    @maps_errors
    def explain(ls: CtxServer, *args: Any) -> dict[str, Any]:
        """Why each candidate of the last bundle went in or out, with its score and reason."""
        _no_args("ctx.explain", args)
        return to_wire(ls.require_engine().explain())

    @server.command("ctx.prewarmDocs")
    @maps_errors
    async def prewarm_docs(ls: CtxServer, *args: Any) -> dict[str, Any]:
        """Parse and cache the docs of the dependencies the workspace declares, with progress."""
        _no_args("ctx.prewarmDocs", args)
        engine = ls.require_engine()
        result = await ls.with_progress("Prewarming library docs", "docs", engine.prewarm_docs)
        return {**result, "cache": engine.library_docs.stats()}

    @server.command("ctx.reindex")
    @maps_errors
    async def reindex(ls: CtxServer, *args: Any) -> dict[str, Any]:
        """Re-scan and re-parse everything (the cache is bypassed), with progress."""
        _no_args("ctx.reindex", args)
        engine = ls.require_engine()
        if ls.index_task is not None and not ls.index_task.done():
            await ls.index_task
        ls.index_task = asyncio.create_task(ls.run_index(force=True, title="Re-indexing workspace"))
        await ls.index_task
        return to_wire(engine.status())
