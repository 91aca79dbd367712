"""Command line: `ctx-lsp serve | mcp | index | status | outline | bundle | show | docs | …`.

The CLI calls the same engine the server does. In `serve` mode stdout belongs to
JSON-RPC, so logging goes to stderr (or `--log-file`), never stdout; other commands print
their result on stdout and progress on stderr, so `--format json` output can be piped.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from ctx_lsp.cli import index_commands, library_commands, query_commands, servers
from ctx_lsp.cli.parser import build_parser
from ctx_lsp.errors import CtxError, InvalidParam

SERVERS: dict[str, Callable[[argparse.Namespace], int]] = {"serve": servers.serve, "mcp": servers.mcp}
"""Commands that own the process's stdout and logging (the protocol is on stdout)."""
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "index": index_commands.index,
    "status": index_commands.status,
    "outline": query_commands.outline,
    "bundle": query_commands.bundle,
    "show": query_commands.show,
    "docs": library_commands.docs,
    "daemon": servers.daemon,
    "resolve": library_commands.resolve,
    "window": library_commands.window,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(with_help=any(a in ("-h", "--help") for a in argv)).parse_args(argv)
    if args.command in SERVERS:
        return SERVERS[args.command](args)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="ctx-lsp: %(message)s")
    try:
        return COMMANDS[args.command](args)
    except InvalidParam as err:
        option = option_for(err.field)
        where = option if err.field.replace("_", "-") == option[2:] else f"{option} ({err.field})"
        print(f"ctx-lsp: error: {where}: {err.problem}; {err.fix}", file=sys.stderr)
        return 2
    except CtxError as err:
        print(f"ctx-lsp: error: {err}", file=sys.stderr)
        return 2


OPTION_OF_FIELD = {
    "artifacts": "--artifact",
    "messages": "--messages",
    "focus": "--focus",
    "open": "--open",
    "uri": "FILE",
    "name": "NAME",
    "include_body": "--no-body",
}
"""Request fields whose option is not simply `--field` (the parser names wire fields)."""


def option_for(field: str) -> str:
    """The CLI option behind a request field: `docs[0].topic` → `--docs`, `max_tokens` → `--max-tokens`."""
    root = field.split(".", 1)[0].split("[", 1)[0]
    return OPTION_OF_FIELD.get(root, "--" + root.replace("_", "-"))
