"""The argument parser of every command, and the help texts that need the engine's tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctx_lsp import __version__
from ctx_lsp.server.framing import MAX_FRAME_BYTES


def build_parser(with_help: bool = True) -> argparse.ArgumentParser:
    """The argument parser; `with_help=False` leaves out the help texts that import the
    engine's modules (the agent table, the symbol limits), for the daemon's fast path."""
    parser = argparse.ArgumentParser(
        prog="ctx-lsp",
        description="Context engine for coding agents: budgeted, tiered code context over LSP, MCP or the CLI.",
    )
    parser.add_argument("--version", action="version", version=f"ctx-lsp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    serve.add_argument(
        "--stdio", action="store_true", help="speak LSP over stdio (the default; accepted because clients pass it)"
    )
    serve.add_argument("--log-file", type=Path, help="write logs here instead of stderr")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    serve.add_argument(
        "--max-frame-bytes",
        type=int,
        default=MAX_FRAME_BYTES,
        metavar="N",
        help=f"refuse (-32600) messages larger than N bytes without reading them into memory "
        f"(default {MAX_FRAME_BYTES}, 16 MiB: a message is decoded on the event loop, ~0.02 s per MiB at worst)",
    )

    mcp = sub.add_parser(
        "mcp",
        help="run the MCP server over stdio (needs the 'mcp' extra)",
        description="Serve the engine as MCP tools over stdio: get_context_bundle, get_symbol, search_code, "
        "get_library_docs, window_conversation, workspace_status.",
    )
    mcp.add_argument("--workspace", type=Path, help=WORKSPACE_HELP)
    mcp.add_argument("--log-file", type=Path, help="write logs here instead of stderr")
    mcp.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])

    index = sub.add_parser("index", help="index a workspace (fills the .ctx-lsp/ cache)")
    index.add_argument("directory", type=Path)
    index.add_argument("--force", action="store_true", help="ignore the cache and re-parse everything")
    index.add_argument("--quiet", action="store_true", help="no progress bar")
    index.add_argument(
        "--files-only",
        action="store_true",
        help="fill the file cache only; the first bundle then derives the search postings and the graph",
    )

    status = sub.add_parser("status", help="index (from the cache) and show workspace status")
    status.add_argument("directory", type=Path)
    status.add_argument("--format", choices=["human", "json"], default="human")

    outline = sub.add_parser("outline", help="show one file at a tier")
    outline.add_argument("file", type=Path)
    outline.add_argument("--tier", type=int, choices=[1, 2, 3], default=1)
    outline.add_argument("--workspace", type=Path, help="workspace root (default: nearest project root)")

    bundle = sub.add_parser(
        "bundle",
        help="assemble a context bundle for a query",
        description="Assemble a budgeted context bundle for a task.",
        epilog=bundle_epilog() if with_help else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bundle.add_argument("--workspace", type=Path, help=WORKSPACE_HELP)
    bundle.add_argument("--query", default="", help="the task, in words and identifiers")
    bundle.add_argument("--agent", default="default", help="agent name (sets tier and budget defaults)")
    bundle.add_argument("--budget", type=int, help="token budget for the whole bundle")
    bundle.add_argument("--model", help="budget from this model's context window (instead of --budget)")
    bundle.add_argument("--utilization", help="share of the model's window to fill: low, medium or full (default)")
    bundle.add_argument(
        "--profile",
        help="context window type: balanced, knowledge-heavy, conversation-first, token-efficient, or one from config",
    )
    bundle.add_argument("--tier", type=int, choices=[1, 2, 3], help="override the agent's tier")
    bundle.add_argument(
        "--open",
        action="append",
        default=[],
        metavar="PATH",
        help="a working file (repeatable); relative paths are relative to the workspace",
    )
    bundle.add_argument("--focus", metavar="PATH:LINE", help="file and 1-based line under the cursor")
    bundle.add_argument("--format", choices=["markdown", "xml", "json"], default="markdown")
    bundle.add_argument(
        "--messages",
        type=Path,
        metavar="FILE",
        help="a JSON file with the conversation (OpenAI-style messages) to window into the bundle",
    )
    bundle.add_argument("--summary", help="rolling summary of earlier conversation, prepended as a preamble")
    bundle.add_argument(
        "--artifact",
        action="append",
        default=[],
        metavar="KEY=FILE",
        help="a prior workflow output, e.g. spec=docs/spec.md (repeatable)",
    )
    bundle.add_argument(
        "--docs",
        action="append",
        default=[],
        metavar="LIBRARY:TOPIC",
        help="library docs to include, e.g. 'pygls:custom requests' (repeatable)",
    )
    bundle.add_argument(
        "--explain", action="store_true", help="after the bundle, print on stderr why each candidate went in or out"
    )
    bundle.add_argument(
        "--wait-history",
        action="store_true",
        help="read the repository's history (.git) and wait for it before ranking; without it a one-shot "
        "bundle ranks without history, and a daemon uses it once its background read is done",
    )
    bundle.add_argument("--no-daemon", action="store_true", help=NO_DAEMON_HELP)

    show = sub.add_parser(
        "show",
        help="one symbol's code by name (ctx/symbol)",
        description="Print the source of the definitions a name means, best first.",
        epilog="exit status: 0 found, 1 no definition has that name (close names are on stderr), 2 error",
    )
    show.add_argument("name", help="a qualname (Client.send), module-qualified (pkg.mod.Client.send) or bare (send)")
    show.add_argument("--workspace", type=Path, help=WORKSPACE_HELP)
    show.add_argument("--path", help="only this file or folder (relative to the workspace)")
    show.add_argument("--no-body", action="store_true", help="list the matches with their signatures only")
    show.add_argument("--max-tokens", type=int, help=max_tokens_help() if with_help else None)
    show.add_argument("--format", choices=["markdown", "json"], default="markdown")
    show.add_argument("--no-daemon", action="store_true", help=NO_DAEMON_HELP)

    daemon = sub.add_parser(
        "daemon",
        help="keep a warm engine for a workspace, so that bundle and show answer in ~0.1 s",
        description=(
            "A daemon per workspace keeps the index, search postings and graph in memory and "
            "watches the disk; `bundle`, `show` and `status` use it when it is running "
            "(--no-daemon or CTX_LSP_NO_DAEMON=1 to run in-process). It exits after "
            "--idle-timeout seconds without a call, or when its workspace is gone."
        ),
    )
    daemon.add_argument("action", choices=["start", "stop", "status", "run"], help="run: in the foreground")
    daemon.add_argument("--workspace", type=Path, help=WORKSPACE_HELP)
    daemon.add_argument(
        "--idle-timeout", type=float, default=1800.0, help="seconds without a call before it exits (default 1800)"
    )

    docs = sub.add_parser(
        "docs",
        help="library docs on a topic (offline, Context7-style)",
        epilog="exit status: 0 docs found, 1 nothing matched the topic (topics that would are on stderr), 2 error",
    )
    docs.add_argument("library")
    docs.add_argument("--topic", help="what you need from the library (required unless allowed in config)")
    docs.add_argument("--agent", default="default", help="whose docs cap applies")
    docs.add_argument("--max-tokens", type=int, help="lower the cap further")
    docs.add_argument(
        "--workspace", type=Path, help="whose environment (default: the project the current directory is in)"
    )
    docs.add_argument("--format", choices=["markdown", "json"], default="markdown")

    resolve = sub.add_parser("resolve", help="which installed libraries a name may mean")
    resolve.add_argument("name")
    resolve.add_argument(
        "--workspace", type=Path, help="whose environment (default: the project the current directory is in)"
    )

    window = sub.add_parser("window", help="window a conversation (JSON file of messages) to a budget")
    window.add_argument("messages", type=Path)
    window.add_argument("--budget", type=int)
    window.add_argument("--model")
    window.add_argument("--utilization", help="low, medium or full (default), with --model")
    window.add_argument("--summary")
    return parser


TIER_WORDS = {1: "outlines", 2: "outlines + bodies that matter", 3: "whole files"}


NO_DAEMON_HELP = "run in this process even if a daemon (`ctx-lsp daemon start`) serves the workspace"


WORKSPACE_HELP = "workspace root (default: the project the current directory is in, else the current directory)"


def max_tokens_help() -> str:
    from ctx_lsp.index.symbols import DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP

    return f"tokens for all bodies together (default {DEFAULT_MAX_TOKENS}, at most {MAX_TOKENS_CAP})"


def bundle_epilog() -> str:
    """The agent table and how to get code bodies, from the built-in configuration (a
    workspace's config may change them; `ctx-lsp status` shows its sources)."""
    from ctx_lsp.config import Config

    rows = [f"  {'agent':<12} {'tier':<34} {'budget':>7} {'docs cap':>9}"]
    for name, agent in Config().agents.items():
        rows.append(
            f"  {name:<12} {f'{agent.tier} ({TIER_WORDS[agent.tier]})':<34} {agent.budget:>7} {agent.docs_cap:>9}"
        )
    return "\n".join(
        [
            "agents (--agent NAME; any other name gets the default row):",
            *rows,
            "",
            "getting code bodies, not only outlines:",
            "  with only --query, the best few files show the bodies of the symbols the task",
            "  names (tier 2), the rest are outlines so that many files fit;",
            "  --open PATH        a file you work on: shown whole if small, else outlined with the",
            "                     bodies of the symbols the task names;",
            "  --focus PATH:LINE  the cursor: that symbol, its callers and callees in full;",
            "  --tier 3           working files whole when they fit (up to 80 % of the budget);",
            "  ctx-lsp outline FILE --tier 3   one file whole.",
            "",
            "calling bundle once per turn? `ctx-lsp daemon start` keeps the engine warm: later",
            "calls use it (a few hundred ms instead of seconds) and see every change on disk.",
        ]
    )
