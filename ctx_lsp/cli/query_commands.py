"""`ctx-lsp outline`, `bundle` and `show`: a request answered by the daemon when one serves the
workspace, else by an engine in this process."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx_lsp.cli.arguments import artifact, docs_request, read_json
from ctx_lsp.cli.index_commands import open_engine
from ctx_lsp.cli.paths import NO_CACHE, find_root, glob_literal, resolve_cli_path, workspace_of
from ctx_lsp.errors import CtxError, InvalidParam

if TYPE_CHECKING:
    from ctx_lsp.engine import Engine

PARSE_NOTE_FILES = 400
"""A call with this many files to parse says so on stderr (a few seconds at least)."""

STARTED_AT = time.time()
"""When this CLI call began: a daemon answers only once every change made before it is
indexed (`Watcher.settle`)."""


def check_outlinable(file: Path, shown: Path) -> None:
    """Refuse, before any indexing, what cannot be outlined: a missing or special file (read
    through the gate, so a FIFO cannot block) or a binary one."""
    from ctx_lsp.gate import read_head
    from ctx_lsp.index.scan import BINARY_SNIFF_BYTES, is_binary_name, looks_binary

    try:
        head = read_head(file, None, BINARY_SNIFF_BYTES)
    except OSError as err:
        raise CtxError(f"{shown} is not a readable file ({err.strerror or err})") from err
    if is_binary_name(file.name) or looks_binary(head):
        raise CtxError(f"{shown} is a binary file; ctx-lsp outlines code and text files only")


def outline(args: argparse.Namespace) -> int:
    from ctx_lsp.engine import Engine

    file = args.file.resolve()
    check_outlinable(file, args.file)
    root = args.workspace or find_root(file)
    if root is not None:
        engine = open_engine(root)
    else:  # not in a project: this one file, and no cache in a directory nobody named
        ignore = ["/*", f"!/{glob_literal(file.name)}"]
        engine = Engine([file.parent], {"index": {**NO_CACHE["index"], "ignore": ignore}}, history_in_background=False)
    engine.index()
    result = engine.outline(str(file), args.tier)
    engine.close()
    print(result.content, end="" if result.content.endswith("\n") else "\n")
    print(
        f"-- {result.path}: tier {result.tier}, {result.tokens} tokens"
        + (" (cut to the tier cap)" if result.truncated else ""),
        file=sys.stderr,
    )
    return 0


def bundle(args: argparse.Namespace) -> int:
    workspace = workspace_of(args.workspace)
    params: dict[str, Any] = {
        "query": args.query,
        "agent": args.agent,
        "budget": args.budget,
        "model": args.model,
        "utilization": args.utilization,
        "profile": args.profile,
        "tier": args.tier,
        "open": [resolve_cli_path(workspace, p) for p in args.open],
        "format": "markdown" if args.format == "json" else args.format,
        "summary": args.summary,
    }
    if args.focus:
        path, _, line = args.focus.rpartition(":")
        if not path or not line.isdigit() or int(line) < 1:
            raise InvalidParam("focus", f"{args.focus!r} is not PATH:LINE", "e.g. --focus pkg/mod.py:42")
        params["focus"] = {"uri": resolve_cli_path(workspace, path), "position": {"line": int(line) - 1}}
    if args.messages:
        params["messages"] = read_json(args.messages, "messages")
    if args.artifact:
        params["artifacts"] = [artifact(a) for a in args.artifact]
    if args.docs:
        params["docs"] = [docs_request(d) for d in args.docs]
    params = {k: v for k, v in params.items() if v is not None}
    answer = ask_daemon(args, workspace, "bundle", params, explain=args.explain, wait_history=args.wait_history)
    if answer is None:
        from ctx_lsp.params import parse_bundle
        from ctx_lsp.wire import to_wire

        request = parse_bundle(params)
        engine = open_engine(workspace)
        index_for_answer(engine)
        if args.wait_history and not engine.wait_for_history():
            print("ctx-lsp: the history is still being read; bundling without it", file=sys.stderr)
        answer = {"result": to_wire(engine.bundle(request))}
        answer["explanation"] = to_wire(engine.explain()) if args.explain else None
        engine.close()
    result, explanation = answer["result"], answer.get("explanation")
    if args.format == "json":
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(result["text"])
        print(
            f"-- {len(result['sections'])} sections, {result['total_tokens']}/{result['budget']} tokens "
            f"({result['snapshot']['tokenizer']})",
            file=sys.stderr,
        )
        for warning in result["snapshot"]["warnings"]:
            print(f"warning: {warning}", file=sys.stderr)
    if explanation is not None:
        print(f"-- why ({explanation['elapsed_ms']} ms):", file=sys.stderr)
        for d in explanation["candidates"]:
            print(
                f"  {d['rank']:5.2f} {d['contributor']:14} {d['path']}: {d['outcome']} — {d['reason']}",
                file=sys.stderr,
            )
    return 0


def index_for_answer(engine: Engine) -> None:
    """Index in the background and answer within `CLI_INDEX_WAIT_S` from what is ready
    (a monorepo's fresh clone takes minutes); say on stderr when there is much to parse,
    since a call that usually takes a second then takes up to that long."""
    from ctx_lsp.engine import CLI_INDEX_WAIT_S

    told = [False]

    def progress(done: int, total: int, message: str) -> None:
        to_parse = total - done
        if not told[0] and message.endswith("files to parse") and to_parse >= PARSE_NOTE_FILES:
            told[0] = True
            print(
                f"ctx-lsp: indexing {to_parse:,} files of {engine.roots[0]}; answering within "
                f"{CLI_INDEX_WAIT_S:.0f} s from what is ready (`ctx-lsp index` fills the cache)",
                file=sys.stderr,
            )

    engine.index_in_background(CLI_INDEX_WAIT_S, progress)


def ask_daemon(
    args: argparse.Namespace, workspace: Path, method: str, params: dict[str, Any], **extra: Any
) -> dict[str, Any] | None:
    """The daemon's answer (errors raised as the in-process call would raise them), or
    None when the call runs in this process: --no-daemon, CTX_LSP_NO_DAEMON, or no daemon
    answering for the workspace."""
    if getattr(args, "no_daemon", False) or os.environ.get("CTX_LSP_NO_DAEMON"):
        return None
    from ctx_lsp.daemon.client import NoDaemon, request

    try:
        answer = request(workspace, method, params, since=STARTED_AT, **extra)
    except NoDaemon:
        return None
    error = answer.get("error")
    if error is None:
        return answer
    if error.get("kind") == "invalid_param":
        raise InvalidParam(error["field"], error["problem"], error["fix"])
    if error.get("kind") == "ctx":
        raise CtxError(error["message"])
    print(f"ctx-lsp: the daemon failed ({error.get('message')}); answering in-process", file=sys.stderr)
    return None


def show(args: argparse.Namespace) -> int:
    workspace = workspace_of(args.workspace)
    params: dict[str, Any] = {
        "name": args.name,
        "path": resolve_cli_path(workspace, args.path) if args.path else None,
        "include_body": not args.no_body,
        "max_tokens": args.max_tokens,
    }
    params = {k: v for k, v in params.items() if v is not None}
    answer = ask_daemon(args, workspace, "symbol", params)
    if answer is None:
        from ctx_lsp.index.symbols import render_markdown
        from ctx_lsp.params import parse_symbol
        from ctx_lsp.wire import to_wire

        request = parse_symbol(params)
        engine = open_engine(workspace)
        index_for_answer(engine)
        found = engine.symbol(request)
        answer = {"result": to_wire(found), "markdown": render_markdown(found, with_note=False)}
        engine.close()
    result = answer["result"]
    if args.format == "json":
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(answer["markdown"])
    if result.get("note"):
        print(f"ctx-lsp: {result['note']}", file=sys.stderr)
    for warning in result.get("warnings", ()):
        print(f"warning: {warning}", file=sys.stderr)
    return 0 if result["matches"] else 1  # like grep: a script must not take "no such name" for code
