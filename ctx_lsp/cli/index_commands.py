"""`ctx-lsp index` and `ctx-lsp status`: filling the cache, and what the index holds."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ctx_lsp.errors import CtxError

if TYPE_CHECKING:
    from ctx_lsp.index.workspace import Workspace


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


def open_engine(directory: Path, *, warn_config: bool = True):
    """An engine for a command's workspace. A workspace config file's wrong values are
    dropped with a warning on stderr, and the command goes on (issue 20): only the user's
    own flags are errors. `status` lists the warnings itself."""
    from ctx_lsp.engine import Engine

    if not directory.is_dir():
        raise CtxError(f"{directory} is not a directory")
    engine = Engine([directory], history_in_background=False)  # one process, one request
    if warn_config:
        print_config_warnings(engine.loaded.warnings)
    return engine


def print_config_warnings(warnings: Sequence[str]) -> None:
    for warning in warnings:
        print(f"ctx-lsp: warning: config: {warning}", file=sys.stderr)


def index(args: argparse.Namespace) -> int:
    # Only the workspace: filling the cache needs no search, graph or assembly, and
    # importing them (~0.1 s) came before the first parse of a cold index.
    from ctx_lsp.config import load
    from ctx_lsp.index.workspace import Workspace

    if not args.directory.is_dir():
        raise CtxError(f"{args.directory} is not a directory")
    loaded = load(args.directory.resolve())
    print_config_warnings(loaded.warnings)
    workspace = Workspace([args.directory], loaded.config)
    started = time.perf_counter()
    stats = workspace.index(ProgressBar(enabled=not args.quiet), force=args.force)
    elapsed = time.perf_counter() - started
    files = len(workspace.files)
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(stats.skipped.items())) or "none"
    print(
        f"indexed {files} files in {elapsed:.2f}s ({stats.parsed} parsed, {stats.reused} from cache, "
        f"{stats.by_content} by content; "
        f"{files / elapsed if elapsed else 0:.0f} files/s); skipped: {skipped}"
    )
    if not args.files_only:
        started = time.perf_counter()
        derive(workspace)
        print(f"derived the search and body-terms postings and the graph in {time.perf_counter() - started:.2f}s")
    problems = workspace.problems()
    for problem in problems[:SHOWN_PROBLEMS]:
        print(f"problem: {problem}", file=sys.stderr)
    if len(problems) > SHOWN_PROBLEMS:
        print(f"problem: … and {len(problems) - SHOWN_PROBLEMS} more (ctx-lsp status --format json)", file=sys.stderr)
    for warning in workspace.cache_warnings():
        print(f"warning: {warning}", file=sys.stderr)
    workspace.close()
    return 0


def derive(workspace: Workspace) -> None:
    """Leave the cache as warm as a server leaves it: the search and body-terms postings, the graph and
    its global rank stored (`index/derived.py`), so the next process — a CLI call, a
    server's start — reads them instead of deriving them (~3.5 s on Django).

    One at a time, each dropped once its image is stored: held together they made the
    peak (a 7K-file kernel subtree: 808 -> 651 MB). The body terms go first, and then the
    units blobs they were read from (~10 KB a file) are dropped too. Meanwhile a worker
    counts the whole files (`PoolCounting`), so that the first bundles need not."""
    from ctx_lsp.code.outline import outlines_kept_decoded
    from ctx_lsp.index.body_terms import body_index
    from ctx_lsp.index.derived import DerivedCache
    from ctx_lsp.index.graph import ReferenceGraph
    from ctx_lsp.index.search import SearchIndex

    derived = DerivedCache(workspace.store_for)
    entries = list(workspace.files.values())
    counting = workspace.count_in_pool()  # on the core deriving leaves idle
    with outlines_kept_decoded():  # a short-lived process: more memory for less decoding
        bodies = body_index(derived.body_images)
        bodies.update((), entries)
        bodies.catch_up()
        del bodies
        workspace.release_units()
        search = SearchIndex(derived)
        search.update((), entries)
        search.catch_up()
        del search
        graph = ReferenceGraph(derived)
        graph.update((), entries)
        graph.warm_up()
    if counting is not None:
        counting.finish(workspace.whole_counts.record)


SHOWN_PROBLEMS = 10
"""Problems printed by `index` and `status`; the JSON status has every one."""


def status(args: argparse.Namespace) -> int:
    from ctx_lsp.wire import to_wire

    engine = open_engine(args.directory, warn_config=False)
    engine.index()
    engine.wait_for_history()  # status is a diagnosis: show what the history holds
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
    for problem in report.problems[:SHOWN_PROBLEMS]:
        print(f"  problem       : {problem}")
    if len(report.problems) > SHOWN_PROBLEMS:
        print(f"  problem       : … and {len(report.problems) - SHOWN_PROBLEMS} more (--format json lists them all)")
    print(
        f"  last index    : {report.last_index['seconds']}s "
        f"({report.last_index['parsed']} parsed, {report.last_index['reused']} from cache)"
    )
    print(f"  cache         : {', '.join(report.cache['locations']) or 'off'}")
    print(f"  history       : {report.history.get('status', 'off')}")
    for warning in [*report.cache["warnings"], *report.config["warnings"]]:
        print(f"  warning       : {warning}")
    return 0
