"""Lifecycle and document sync: initialize, open buffers, watched files, configuration.

pygls applies incremental `didChange` edits to its own copy of the document; we hand the
resulting full text to the engine (off the event loop, in order: buffers.py), where the
buffer overrides the disk until `didClose`. A buffer outside the workspace is ignored
(logged), never read or indexed; one over `index.max_file_bytes` is refused by the engine
like a file of that size on disk (`Workspace.open_document`: not analysed, in status).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ctx_lsp.errors import ConfigError, CtxError
from ctx_lsp.params import uri_to_path
from ctx_lsp.server.app import CtxServer
from ctx_lsp.server.buffers import BufferUpdate

log = logging.getLogger(__name__)

SETTINGS_SECTIONS = ("ctxLsp", "ctx-lsp", "ctx_lsp")
"""Where editors nest our settings in didChangeConfiguration payloads."""


def _folders(params: lsp.InitializeParams) -> list[Path]:
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    paths = []
    for uri in uris:
        try:
            paths.append(uri_to_path(uri, "workspaceFolders"))
        except CtxError as err:
            log.warning("ignoring workspace folder %s: %s", uri, err)
    if not paths and params.root_path:
        paths.append(Path(params.root_path))
    return paths


def _settings(payload: Any) -> Mapping[str, Any] | None:
    if not isinstance(payload, Mapping):
        return None
    for key in SETTINGS_SECTIONS:
        if isinstance(payload.get(key), Mapping):
            return payload[key]
    return payload


def _sync_document(ls: CtxServer, uri: str, *, edited: bool, closed: bool = False) -> None:
    """Queue the document's state for the engine (buffers.py); cheap, on the event loop."""
    engine = ls.engine
    if engine is None:
        return
    try:
        path = ls.path_of(uri)
    except CtxError as err:
        log.info("not tracking %s: %s", uri, err)
        return
    if closed:
        ls.buffers.put(BufferUpdate(path, None))
        return
    doc = ls.workspace.get_text_document(uri)
    ls.buffers.put(BufferUpdate(path, doc.source, doc.version or 0, edited))


def register(server: CtxServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: CtxServer, params: lsp.InitializeParams) -> None:
        ls.session.watch_parent(params.process_id)
        folders = _folders(params)
        options = _settings(params.initialization_options)
        ls.init_options = options or {}
        if folders:
            ls.create_engine(folders, options)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: CtxServer, params: lsp.InitializedParams) -> None:
        if ls.engine is None:
            ls.log("no workspace folder given; ctx-lsp is idle", lsp.MessageType.Warning)
            return
        ls.index_task = asyncio.create_task(ls.run_index())

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: CtxServer, *args: Any) -> None:
        if ls.engine is not None:
            ls.engine.close()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CtxServer, params: lsp.DidOpenTextDocumentParams) -> None:
        _sync_document(ls, params.text_document.uri, edited=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CtxServer, params: lsp.DidChangeTextDocumentParams) -> None:
        _sync_document(ls, params.text_document.uri, edited=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: CtxServer, params: lsp.DidSaveTextDocumentParams) -> None:
        _sync_document(ls, params.text_document.uri, edited=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CtxServer, params: lsp.DidCloseTextDocumentParams) -> None:
        _sync_document(ls, params.text_document.uri, edited=False, closed=True)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: CtxServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        engine = ls.engine
        if engine is None:
            return
        paths = []
        for change in params.changes:
            try:
                paths.append(ls.path_of(change.uri))
            except CtxError:
                continue
        await asyncio.to_thread(engine.refresh, paths)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CtxServer, params: lsp.DidChangeConfigurationParams) -> None:
        engine = ls.engine
        settings = _settings(params.settings)
        if engine is None or settings is None:
            return
        try:
            warnings = await asyncio.to_thread(engine.reconfigure, {**ls.init_options, **settings})
        except ConfigError as err:
            ls.log(f"configuration not applied: {err}", lsp.MessageType.Error)
            return
        for warning in warnings:
            ls.log(f"config: {warning}", lsp.MessageType.Warning)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(ls: CtxServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        removed = set()
        for folder in params.event.removed:
            try:
                removed.add(uri_to_path(folder.uri, "removed").resolve())
            except CtxError:
                continue
        added = []
        for folder in params.event.added:
            try:
                added.append(uri_to_path(folder.uri, "added"))
            except CtxError:
                continue
        if ls.engine is None:
            if added:
                ls.create_engine(added, ls.init_options)
                ls.index_task = asyncio.create_task(ls.run_index())
            return
        roots = [r for r in ls.engine.roots if r not in removed] + added
        if not roots:
            ls.log("all workspace folders removed; keeping the last one indexed", lsp.MessageType.Warning)
            return
        await asyncio.to_thread(ls.engine.set_folders, roots)
        ls.index_task = asyncio.create_task(ls.run_index())
