"""Command line: `ctx-lsp serve | mcp | index | status | outline | bundle | show | docs | …`.

The CLI calls the same engine the server does. In `serve` mode stdout belongs to
JSON-RPC, so logging goes to stderr (or `--log-file`), never stdout; other commands print
their result on stdout and progress on stderr, so `--format json` output can be piped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ctx_lsp import __version__
from ctx_lsp.errors import CtxError, InvalidParam
from ctx_lsp.server.framing import MAX_FRAME_BYTES

if TYPE_CHECKING:
    from ctx_lsp.index.workspace import Workspace

STARTED_AT = time.time()
"""When this CLI call began: a daemon answers only once every change made before it is
indexed (`Watcher.settle`)."""

ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", ".hg", "ctx-lsp.toml")
"""Files that mark a project root when `outline FILE` or `docs` is called without
`--workspace`. With none above it, a directory is not a workspace: nothing is indexed
beyond the file asked about, and no cache is written there (`ctx-lsp outline /bin/ls`
once indexed /usr/bin and wrote /usr/bin/.ctx-lsp/)."""
NO_CACHE = {"index": {"cache": False, "watch": False}}
"""Settings for a directory the user did not name as a workspace: no cache written in it."""


def _parser(with_help: bool = True) -> argparse.ArgumentParser:
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser(with_help=any(a in ("-h", "--help") for a in argv)).parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "mcp":
        return _mcp(args)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="ctx-lsp: %(message)s")
    try:
        if args.command == "index":
            return _index(args)
        if args.command == "status":
            return _status(args)
        if args.command == "outline":
            return _outline(args)
        if args.command == "bundle":
            return _bundle(args)
        if args.command == "show":
            return _show(args)
        if args.command == "docs":
            return _docs(args)
        if args.command == "daemon":
            return _daemon(args)
        if args.command == "resolve":
            return _resolve(args)
        if args.command == "window":
            return _window(args)
    except InvalidParam as err:
        option = option_for(err.field)
        where = option if err.field.replace("_", "-") == option[2:] else f"{option} ({err.field})"
        print(f"ctx-lsp: error: {where}: {err.problem}; {err.fix}", file=sys.stderr)
        return 2
    except CtxError as err:
        print(f"ctx-lsp: error: {err}", file=sys.stderr)
        return 2
    return 2  # pragma: no cover - argparse enforces a command


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


def _log_to_stderr_or_file(args: argparse.Namespace) -> None:
    """For the servers, whose stdout belongs to the protocol."""
    handler: logging.Handler
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(args.log_level)


def _serve(args: argparse.Namespace) -> int:
    """Serve until the client says exit, goes away or dies, then end the process at once
    with LSP's exit code (0 after shutdown, else 1). `os._exit`, because a normal exit
    would first wait for every worker thread still busy with a request nobody awaits."""
    if args.max_frame_bytes < 1:
        print("ctx-lsp: error: --max-frame-bytes must be a positive number of bytes", file=sys.stderr)
        return 2
    _log_to_stderr_or_file(args)
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


def _mcp(args: argparse.Namespace) -> int:
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
    _log_to_stderr_or_file(args)
    logging.getLogger("mcp").setLevel(max(logging.WARNING, logging.getLogger().level))
    try:
        return run(workspace)
    except CtxError as err:
        print(f"ctx-lsp: error: {err}", file=sys.stderr)
        return 2


class ProgressBar:
    """A one-line progress bar on stderr; plain periodic lines when stderr is not a TTY."""

    WIDTH = 30

    def __init__(self, stream: TextIO = sys.stderr, enabled: bool = True):
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int, message: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        final = total and done >= total
        if now - self._last < (0.05 if self.tty else 1.0) and not final:
            return
        self._last = now
        if total:
            filled = int(self.WIDTH * done / total)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            line = f"[{bar}] {done}/{total} {message}"
        else:
            line = message
        if self.tty:
            self.stream.write("\r\033[K" + line)
            if final:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _engine(directory: Path):
    from ctx_lsp.engine import Engine

    if not directory.is_dir():
        raise CtxError(f"{directory} is not a directory")
    return Engine([directory])


def _index(args: argparse.Namespace) -> int:
    # Only the workspace: filling the cache needs no search, graph or assembly, and
    # importing them (~0.1 s) came before the first parse of a cold index.
    from ctx_lsp.config import load
    from ctx_lsp.index.workspace import Workspace

    if not args.directory.is_dir():
        raise CtxError(f"{args.directory} is not a directory")
    workspace = Workspace([args.directory], load(args.directory.resolve()).config)
    started = time.perf_counter()
    stats = workspace.index(ProgressBar(enabled=not args.quiet), force=args.force)
    elapsed = time.perf_counter() - started
    files = len(workspace.files)
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(stats.skipped.items())) or "none"
    print(
        f"indexed {files} files in {elapsed:.2f}s ({stats.parsed} parsed, {stats.reused} from cache; "
        f"{files / elapsed if elapsed else 0:.0f} files/s); skipped: {skipped}"
    )
    if not args.files_only:
        started = time.perf_counter()
        _derive(workspace)
        print(f"derived the search postings and the reference graph in {time.perf_counter() - started:.2f}s")
    for warning in workspace.cache_warnings():
        print(f"warning: {warning}", file=sys.stderr)
    workspace.close()
    return 0


def _derive(workspace: Workspace) -> None:
    """Leave the cache as warm as a server leaves it: the search postings, the graph and
    its global rank stored (`index/derived.py`), so the next process — a CLI call, a
    server's start — reads them instead of deriving them (~3.5 s on Django)."""
    from ctx_lsp.code.outline import outlines_kept_decoded
    from ctx_lsp.index.derived import DerivedCache
    from ctx_lsp.index.graph import ReferenceGraph
    from ctx_lsp.index.search import SearchIndex

    derived = DerivedCache(workspace.store_for)
    search, graph = SearchIndex(derived), ReferenceGraph(derived)
    entries = list(workspace.files.values())
    search.update((), entries)
    graph.update((), entries)
    with outlines_kept_decoded():  # a short-lived process: more memory for less decoding
        search.catch_up()
        graph.warm_up()


def _status(args: argparse.Namespace) -> int:
    from ctx_lsp.wire import to_wire

    engine = _engine(args.directory)
    engine.index()
    report = engine.status()
    engine.close()
    if args.format == "json":
        print(json.dumps(to_wire(report), indent=2))
        return 0
    print(f"ctx-lsp {report.version} — {', '.join(report.folders)}")
    langs = ", ".join(f"{k} {v}" for k, v in report.files_by_language.items()) or "none"
    print(f"  files indexed : {report.files_indexed} ({langs})")
    by_language = ", ".join(f"{k} {v}" for k, v in report.symbols_by_language.items())
    print(f"  symbols       : {report.symbols}" + (f" ({by_language})" if by_language else ""))
    if report.syntax_errors:
        errors = ", ".join(f"{k} {v}" for k, v in report.syntax_errors.items())
        print(f"  syntax errors : {errors} (outlined from the parser's recovery)")
    print(f"  tokens        : {report.tokens} ({report.tokenizer})")
    skipped = ", ".join(f"{k} {v}" for k, v in report.skipped.items()) or "none"
    print(f"  skipped files : {skipped}; ignored directories: {report.ignored_dirs}")
    if report.too_large:
        print(f"  too large     : {', '.join(report.too_large[:10])}")
    for problem in report.problems[:10]:
        print(f"  problem       : {problem}")
    print(
        f"  last index    : {report.last_index['seconds']}s "
        f"({report.last_index['parsed']} parsed, {report.last_index['reused']} from cache)"
    )
    print(f"  cache         : {', '.join(report.cache['locations']) or 'off'}")
    for warning in [*report.cache["warnings"], *report.config["warnings"]]:
        print(f"  warning       : {warning}")
    return 0


WORKSPACE_HELP = "workspace root (default: the project the current directory is in, else the current directory)"


def workspace_of(given: Path | None) -> Path:
    """The workspace a command works on: the one named, else the project the current
    directory is in (so a run from a subfolder indexes the whole project, not a corner of
    it), else the current directory."""
    if given is not None:
        return given.resolve()
    cwd = Path.cwd().resolve()
    return project_root(cwd) or cwd


def project_root(directory: Path) -> Path | None:
    """The nearest of `directory` and its parents holding a project root marker, or None."""
    for candidate in [directory, *directory.parents]:
        if any((candidate / m).exists() for m in ROOT_MARKERS):
            return candidate
    return None


def find_root(path: Path) -> Path | None:
    """The project a file belongs to (None: it belongs to none)."""
    return project_root(path.parent)


def _glob_literal(name: str) -> str:
    """A file name as a gitignore pattern that matches only that name."""
    escaped = re.sub(r"([\\*?\[\]])", r"\\\1", name)
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped


def _outlinable(file: Path, shown: Path) -> None:
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


def _outline(args: argparse.Namespace) -> int:
    from ctx_lsp.engine import Engine

    file = args.file.resolve()
    _outlinable(file, args.file)
    root = args.workspace or find_root(file)
    if root is not None:
        engine = _engine(root)
    else:  # not in a project: this one file, and no cache in a directory nobody named
        ignore = ["/*", f"!/{_glob_literal(file.name)}"]
        engine = Engine([file.parent], {"index": {**NO_CACHE["index"], "ignore": ignore}})
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


def _resolve_cli_path(workspace: Path, raw: str) -> str:
    p = Path(raw)
    if p.is_absolute():
        return str(p)
    in_ws = workspace / p
    return str(in_ws if in_ws.exists() or not p.exists() else p.resolve())


def _bundle(args: argparse.Namespace) -> int:
    workspace = workspace_of(args.workspace)
    params: dict[str, Any] = {
        "query": args.query,
        "agent": args.agent,
        "budget": args.budget,
        "model": args.model,
        "utilization": args.utilization,
        "profile": args.profile,
        "tier": args.tier,
        "open": [_resolve_cli_path(workspace, p) for p in args.open],
        "format": "markdown" if args.format == "json" else args.format,
        "summary": args.summary,
    }
    if args.focus:
        path, _, line = args.focus.rpartition(":")
        if not path or not line.isdigit() or int(line) < 1:
            raise InvalidParam("focus", f"{args.focus!r} is not PATH:LINE", "e.g. --focus pkg/mod.py:42")
        params["focus"] = {"uri": _resolve_cli_path(workspace, path), "position": {"line": int(line) - 1}}
    if args.messages:
        params["messages"] = _read_json(args.messages, "messages")
    if args.artifact:
        params["artifacts"] = [_artifact(a) for a in args.artifact]
    if args.docs:
        params["docs"] = [_docs_request(d) for d in args.docs]
    params = {k: v for k, v in params.items() if v is not None}
    answer = _ask_daemon(args, workspace, "bundle", params, explain=args.explain)
    if answer is None:
        from ctx_lsp.params import parse_bundle
        from ctx_lsp.wire import to_wire

        request = parse_bundle(params)
        engine = _engine(workspace)
        engine.index()
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


def _ask_daemon(
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


def _show(args: argparse.Namespace) -> int:
    workspace = workspace_of(args.workspace)
    params: dict[str, Any] = {
        "name": args.name,
        "path": _resolve_cli_path(workspace, args.path) if args.path else None,
        "include_body": not args.no_body,
        "max_tokens": args.max_tokens,
    }
    params = {k: v for k, v in params.items() if v is not None}
    answer = _ask_daemon(args, workspace, "symbol", params)
    if answer is None:
        from ctx_lsp.index.symbols import render_markdown
        from ctx_lsp.params import parse_symbol
        from ctx_lsp.wire import to_wire

        request = parse_symbol(params)
        engine = _engine(workspace)
        engine.index()
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
    return 0 if result["matches"] else 1  # like grep: a script must not take "no such name" for code


def _daemon(args: argparse.Namespace) -> int:
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


def _read_json(path: Path, field: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InvalidParam(
            field, f"cannot read JSON from {path}: {err}", "pass a file holding a JSON list of messages"
        ) from err


def _artifact(raw: str) -> dict[str, str]:
    key, sep, file = raw.partition("=")
    if not sep or not key or not file:
        raise InvalidParam("artifacts", f"{raw!r} is not KEY=FILE", "e.g. --artifact spec=docs/spec.md")
    try:
        return {"key": key, "content": Path(file).read_text(encoding="utf-8", errors="replace")}
    except OSError as err:
        raise InvalidParam("artifacts", f"cannot read {file}: {err.strerror}", "pass a readable file") from err


def _docs_request(raw: str) -> dict[str, str]:
    library, _, topic = raw.partition(":")
    return {"library": library.strip(), **({"topic": topic.strip()} if topic.strip() else {})}


def _docs(args: argparse.Namespace) -> int:
    from ctx_lsp.params import parse_docs
    from ctx_lsp.wire import to_wire

    request = parse_docs(
        {"library": args.library, "topic": args.topic, "agent": args.agent, "max_tokens": args.max_tokens}
    )
    engine = _docs_engine(args.workspace)
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


def _docs_engine(workspace: Path | None):
    """The engine `docs` and `resolve` ask: the workspace named with --workspace, else the
    project the current directory is in, else the current directory for its environment
    only, with no cache written into it (it is nobody's workspace)."""
    from ctx_lsp.engine import Engine

    if workspace is not None:
        return Engine([workspace.resolve()], {"index": {"watch": False}})
    cwd = Path.cwd().resolve()
    root = project_root(cwd)
    return Engine([root], {"index": {"watch": False}}) if root is not None else Engine([cwd], NO_CACHE)


def _resolve(args: argparse.Namespace) -> int:
    engine = _docs_engine(args.workspace)
    for m in engine.resolve_library(args.name):
        print(f"{m.library} {m.version}  {m.summary}")
    return 0


def _window(args: argparse.Namespace) -> int:
    from ctx_lsp.engine import Engine
    from ctx_lsp.params import parse_window
    from ctx_lsp.wire import to_wire

    params = {
        "messages": _read_json(args.messages, "messages"),
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
