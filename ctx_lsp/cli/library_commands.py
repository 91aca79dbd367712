"""`ctx-lsp docs`, `resolve` and `window`: library docs and conversation windowing."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ctx_lsp.cli.arguments import read_json
from ctx_lsp.cli.paths import NO_CACHE, project_root


def docs(args: argparse.Namespace) -> int:
    from ctx_lsp.params import parse_docs
    from ctx_lsp.wire import to_wire

    request = parse_docs(
        {"library": args.library, "topic": args.topic, "agent": args.agent, "max_tokens": args.max_tokens}
    )
    engine = docs_engine(args.workspace)
    result = engine.docs(request.library, request.topic, request.agent, request.max_tokens)
    if args.format == "json":
        print(json.dumps(to_wire(result), indent=2, ensure_ascii=False))
    elif result.matched:
        print(result.content)
        print(
            f"-- {result.library} {result.version}: {result.tokens}/{result.cap} tokens, cache {result.cache}, "
            f"{result.elapsed_ms:.1f} ms" + (" (truncated)" if result.truncated else ""),
            file=sys.stderr,
        )
    if not result.matched:  # like grep: a script must not take "no docs" for docs
        print(f"ctx-lsp: {result.note}", file=sys.stderr)
        return 1
    return 0


def docs_engine(workspace: Path | None):
    """The engine `docs` and `resolve` ask: the workspace named with --workspace, else the
    project the current directory is in, else the current directory for its environment
    only, with no cache written into it (it is nobody's workspace)."""
    from ctx_lsp.engine import Engine

    if workspace is not None:
        return Engine([workspace.resolve()], {"index": {"watch": False}})
    cwd = Path.cwd().resolve()
    root = project_root(cwd)
    return Engine([root], {"index": {"watch": False}}) if root is not None else Engine([cwd], NO_CACHE)


def resolve(args: argparse.Namespace) -> int:
    engine = docs_engine(args.workspace)
    for m in engine.resolve_library(args.name):
        print(f"{m.library} {m.version}  {m.summary}")
    return 0


def window(args: argparse.Namespace) -> int:
    from ctx_lsp.engine import Engine
    from ctx_lsp.params import parse_window
    from ctx_lsp.wire import to_wire

    params = {
        "messages": read_json(args.messages, "messages"),
        "budget": args.budget,
        "model": args.model,
        "utilization": args.utilization,
        "summary": args.summary,
    }
    request = parse_window({k: v for k, v in params.items() if v is not None})
    engine = Engine([Path(".").resolve()], {"index": {"watch": False}})
    result = engine.window(request)
    print(json.dumps(to_wire(result), indent=2, ensure_ascii=False))
    meta = result.metadata
    if meta.elided_tool_results or meta.cut_tool_results or meta.cut_user_message:
        shrunk = [
            f"{meta.elided_tool_results} tool results elided" if meta.elided_tool_results else "",
            f"{meta.cut_tool_results} cut head and tail" if meta.cut_tool_results else "",
            "the newest user message cut" if meta.cut_user_message else "",
            f"{len(result.dropped)} messages dropped" if result.dropped else "",
        ]
        print(
            f"ctx-lsp: warning: to fit {meta.max_input_tokens:,} tokens the newest turns were shortened: "
            f"{', '.join(part for part in shrunk if part)} (see notes)",
            file=sys.stderr,
        )
    return 0
