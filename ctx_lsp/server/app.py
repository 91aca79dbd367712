"""The pygls server: state, start-up indexing, and how it is served.

The protocol (raw params for `ctx/*`, lifecycle errors) is in protocol.py; reading the
stream (framing.py, envelope.py), when the process ends and with which code in session.py;
editor buffers in buffers.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ctx_lsp import __version__
from ctx_lsp.config import MAX_DROPPED_SETTINGS, without_key
from ctx_lsp.engine import REQUEST_INDEX_WAIT_S, Engine
from ctx_lsp.errors import ConfigError, CtxError
from ctx_lsp.index.workspace import ProgressFn
from ctx_lsp.params import uri_to_path
from ctx_lsp.server.buffers import BufferQueue, BufferUpdate
from ctx_lsp.server.framing import MAX_FRAME_BYTES
from ctx_lsp.server.protocol import CtxProtocol
from ctx_lsp.server.session import Session, run_stdio, run_tcp

log = logging.getLogger(__name__)

T = TypeVar("T")
PROGRESS_INTERVAL_S = 0.1
"""At most ten progress reports a second: more only floods the client's UI."""


class CtxServer(LanguageServer):
    """The language server; owns the engine once `initialize` names the folders."""

    protocol: CtxProtocol

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        super().__init__("ctx-lsp", __version__, protocol_cls=CtxProtocol)
        self.engine: Engine | None = None
        self.init_options: Mapping[str, Any] = {}
        self.index_task: asyncio.Task[None] | None = None
        self._engine_ready = threading.Event()
        self.session = Session(self.protocol, max_frame_bytes)
        self.buffers = BufferQueue(self._apply_buffer)

    # ------------------------------------------------------------------ serving
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
        """Serve over stdio until the session ends; the exit code (session.py)."""
        return run_stdio(self.protocol, self.session, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    def start_tcp(self, host: str, port: int) -> int:  # type: ignore[override]
        """Serve one client over TCP; the exit code."""
        return run_tcp(self.protocol, self.session, host, port)

    def stop(self, timeout_s: float = 3.0) -> None:
        """Release the engine (watcher, index pool, database) before the process exits,
        waiting at most `timeout_s`: a hung close must not keep a dead server alive."""
        engine = self.engine
        if engine is None:
            return
        closing = threading.Thread(target=engine.close, name="ctx-lsp-close", daemon=True)
        closing.start()
        closing.join(timeout_s)

    # ------------------------------------------------------------------ engine
    def require_engine(self) -> Engine:
        if self.engine is None:
            raise CtxError("no workspace folder: open a folder (or pass rootUri/workspaceFolders in initialize)")
        return self.engine

    def create_engine(self, folders: list[Path], options: Mapping[str, Any] | None) -> None:
        """An engine with the client's settings. A setting of the wrong type is left out
        (and logged, naming it), not the whole of them: one typo must not silently reset
        every other setting to its default."""
        for _ in range(MAX_DROPPED_SETTINGS):
            try:
                self.engine = Engine(folders, options)
                self.engine.index_wait_s = REQUEST_INDEX_WAIT_S  # answered from a partial index meanwhile
                self._log_config_warnings()
                return
            except ConfigError as err:
                lighter = without_key(options, err.key) if options else None
                if lighter is None:  # nothing of the client's left to drop
                    self.log(f"Invalid configuration, using defaults: {err}", lsp.MessageType.Error)
                    break
                self.log(f"config: {err}; that setting is ignored, the others apply", lsp.MessageType.Error)
                options = lighter
            except CtxError as err:
                self.log(f"Invalid initializationOptions, using defaults: {err}", lsp.MessageType.Error)
                break
        self.engine = Engine(folders, None)
        self.engine.index_wait_s = REQUEST_INDEX_WAIT_S
        self._log_config_warnings()

    def _log_config_warnings(self) -> None:
        assert self.engine is not None
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
                f"({stats.parsed} parsed, {stats.reused} from cache, {stats.by_content} by content)"
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

    def _apply_buffer(self, update: BufferUpdate) -> None:
        """Runs in a worker thread (buffers.py)."""
        engine = self.engine
        if engine is None:
            return
        try:
            if update.text is None:
                engine.close_document(update.path)
            else:
                engine.open_document(update.path, update.text, update.version, update.edited)
        except CtxError as err:
            log.info("not tracking %s: %s", update.path, err)

    def path_of(self, uri: str, field: str = "uri") -> str:
        return str(uri_to_path(uri, field))


def create_server(max_frame_bytes: int = MAX_FRAME_BYTES) -> CtxServer:
    """Build a server with every handler registered (a fresh one per call, for tests)."""
    from ctx_lsp.server import commands, requests, sync
    from ctx_lsp.server.errors import quiet_refusals

    quiet_refusals()
    server = CtxServer(max_frame_bytes)
    sync.register(server)
    requests.register(server)
    commands.register(server)
    return server
