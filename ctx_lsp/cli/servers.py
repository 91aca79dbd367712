"""`ctx-lsp serve`, `mcp` and `daemon`: the long-running processes."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time

from ctx_lsp.cli.paths import workspace_of
from ctx_lsp.errors import CtxError


def log_to_stderr_or_file(args: argparse.Namespace) -> None:
    """For the servers, whose stdout belongs to the protocol."""
    handler: logging.Handler
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(args.log_level)


def serve(args: argparse.Namespace) -> int:
    """Serve until the client says exit, goes away or dies, then end the process at once
    with LSP's exit code (0 after shutdown, else 1). `os._exit`, because a normal exit
    would first wait for every worker thread still busy with a request nobody awaits."""
    if args.max_frame_bytes < 1:
        print("ctx-lsp: error: --max-frame-bytes must be a positive number of bytes", file=sys.stderr)
        return 2
    log_to_stderr_or_file(args)
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLogger().level))

    from ctx_lsp.allocator import limit_malloc_arenas
    from ctx_lsp.server.app import create_server

    limit_malloc_arenas()
    server = create_server(args.max_frame_bytes)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            print("ctx-lsp: error: --tcp expects HOST:PORT, e.g. 127.0.0.1:2087", file=sys.stderr)
            return 2
        code = server.start_tcp(host, int(port))
    else:
        code = server.start_io()
    server.stop()
    logging.shutdown()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(code)


MCP_MISSING = "ctx-lsp: error: `ctx-lsp mcp` needs the MCP SDK, an optional extra: pip install 'ctx-lsp[mcp]'"


def mcp(args: argparse.Namespace) -> int:
    """The MCP server. The SDK is imported here only: `serve` and the other commands never
    pay for it, and work without it."""
    try:
        from ctx_lsp.mcp.server import run
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in ("mcp", "mcp_types", "pydantic"):
            raise
        print(MCP_MISSING, file=sys.stderr)
        return 2
    workspace = workspace_of(args.workspace)
    if not workspace.is_dir():
        print(f"ctx-lsp: error: --workspace: {args.workspace} is not a directory", file=sys.stderr)
        return 2
    log_to_stderr_or_file(args)
    logging.getLogger("mcp").setLevel(max(logging.WARNING, logging.getLogger().level))
    try:
        return run(workspace)
    except CtxError as err:
        print(f"ctx-lsp: error: {err}", file=sys.stderr)
        return 2


def daemon(args: argparse.Namespace) -> int:
    from ctx_lsp.daemon import client

    workspace = workspace_of(args.workspace)
    if args.action == "run":
        from ctx_lsp.allocator import limit_malloc_arenas
        from ctx_lsp.daemon.server import Daemon

        limit_malloc_arenas()  # a warm engine serving requests from threads, like `serve`
        return Daemon(workspace, idle_timeout=args.idle_timeout).run()
    if args.action == "start":
        try:
            report = client.start(workspace, args.idle_timeout)
        except RuntimeError as err:
            raise CtxError(str(err)) from err
        daemon = report.get("daemon", {})
        print(f"ctx-lsp daemon for {workspace}: pid {daemon.get('pid')}, {report.get('files_indexed')} files indexed")
        return 0
    if args.action == "stop":
        pid = client.stop(workspace)
        print(f"stopped the daemon (pid {pid})" if pid else "no daemon was running for this workspace")
        return 0
    try:
        report = client.request(workspace, "status")["result"]
    except client.NoDaemon:
        print(f"no daemon for {workspace}")
        return 1
    daemon = report.get("daemon", {})
    up = time.time() - daemon.get("since", time.time())
    print(
        f"ctx-lsp daemon for {workspace}: pid {daemon.get('pid')}, up {up:.0f} s, {daemon.get('requests')} requests, "
        f"{report.get('files_indexed')} files, watcher {report['watcher']['state']}"
    )
    return 0
