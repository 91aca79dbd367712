"""The pygls server: state, the protocol tweak for raw params, and start-up indexing.

Custom `ctx/*` params must reach our validators as plain dicts: pygls would otherwise
turn them into namedtuples (renaming odd keys), and typed attrs params make the client
hang on a bad field (STYLE §2). So the protocol subclass gives those methods a message
type whose `params` is `Any`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from ctx_lsp import __version__
from ctx_lsp.engine import Engine
from ctx_lsp.errors import CtxError
from ctx_lsp.index.workspace import ProgressFn
from ctx_lsp.params import uri_to_path

log = logging.getLogger(__name__)

T = TypeVar("T")
PROGRESS_INTERVAL_S = 0.1
"""At most ten progress reports a second: more only floods the client's UI."""


@attrs.define
class RawRequest:
    """A request whose params stay a plain dict (see module docstring)."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


class CtxProtocol(LanguageServerProtocol):
    # pygls declares this an lru_cache'd method; overriding it with a plain one is the
    # documented extension point (STYLE §2), so the override's type differs.
    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        if method.startswith("ctx/"):
            return RawRequest
        return super().get_message_type(method)


class CtxServer(LanguageServer):
    """The language server; owns the engine once `initialize` names the folders."""

    def __init__(self) -> None:
        super().__init__("ctx-lsp", __version__, protocol_cls=CtxProtocol)
        self.engine: Engine | None = None
        self.init_options: Mapping[str, Any] = {}
        self.index_task: asyncio.Task[None] | None = None
        self._engine_ready = threading.Event()

    # ------------------------------------------------------------------ engine
    def require_engine(self) -> Engine:
        if self.engine is None:
            raise CtxError("no workspace folder: open a folder (or pass rootUri/workspaceFolders in initialize)")
        return self.engine

    def create_engine(self, folders: list[Path], options: Mapping[str, Any] | None) -> None:
        try:
            self.engine = Engine(folders, options)
        except CtxError as err:
            self.log(f"Invalid initializationOptions, using defaults: {err}", lsp.MessageType.Error)
            self.engine = Engine(folders, None)
        for warning in self.engine.loaded.warnings:
            self.log(f"config: {warning}", lsp.MessageType.Warning)

    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        log.info(message)
        with contextlib.suppress(Exception):
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))

    def supports_progress(self) -> bool:
        caps = self.protocol.client_capabilities
        return bool(caps and caps.window and caps.window.work_done_progress)

    # ------------------------------------------------------------------ indexing
    async def with_progress(self, title: str, kind: str, work: Callable[[ProgressFn], T]) -> T:
        """Run blocking `work(progress)` in a thread, reporting `$/progress` if the client can."""
        loop = asyncio.get_running_loop()
        token: str | None = None
        if self.supports_progress():
            token = f"ctx-lsp-{kind}-{uuid.uuid4().hex[:8]}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), timeout=5)
                self.work_done_progress.begin(
                    token, lsp.WorkDoneProgressBegin(title=title, percentage=0, cancellable=False)
                )
            except Exception as err:
                log.debug("progress not available: %s", err)
                token = None
        last = [0.0]

        def progress(done: int, total: int, message: str) -> None:
            now = time.monotonic()
            if token is None or (now - last[0] < PROGRESS_INTERVAL_S and done != total):
                return
            last[0] = now
            pct = int(100 * done / total) if total else 0
            report = lsp.WorkDoneProgressReport(message=f"{message} ({done}/{total})", percentage=pct)
            loop.call_soon_threadsafe(self.work_done_progress.report, token, report)

        try:
            return await asyncio.to_thread(work, progress)
        finally:
            if token is not None:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))

    async def run_index(self, *, force: bool = False, title: str = "Indexing workspace") -> None:
        """Index with progress; then build search postings and make sure the watcher runs."""
        engine = self.require_engine()
        started = time.perf_counter()
        try:
            stats = await self.with_progress(title, "index", lambda progress: engine.index(progress, force=force))
            elapsed = time.perf_counter() - started
            self.log(
                f"indexed {len(engine.workspace.files)} files in {elapsed:.2f}s "
                f"({stats.parsed} parsed, {stats.reused} from cache)"
            )
        except Exception as err:
            log.exception("indexing failed")
            self.log(f"indexing failed: {type(err).__name__}: {err}", lsp.MessageType.Error)
        await asyncio.to_thread(engine.warm_up)
        watcher = engine.start_watching(self._on_disk_change)
        if watcher.state == "failed":
            self.log(f"file watcher failed: {watcher.error}", lsp.MessageType.Warning)

    def _on_disk_change(self, removed: Any, updated: Any) -> None:
        log.debug("disk change: %d removed, %d updated", len(removed), len(updated))

    def path_of(self, uri: str, field: str = "uri") -> str:
        return str(uri_to_path(uri, field))


def create_server() -> CtxServer:
    """Build a server with every handler registered (a fresh one per call, for tests)."""
    from ctx_lsp.server import commands, requests, sync
    from ctx_lsp.server.errors import quiet_refusals

    quiet_refusals()
    server = CtxServer()
    sync.register(server)
    requests.register(server)
    commands.register(server)
    return server
