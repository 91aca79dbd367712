"""Explain one eval result: what the answer was, what the bundle showed, what was missed.

For engine work: after run.py shows a miss, see *why* — was the file absent, or
present but condensed past the function's definition?

    python benchmarks/eval/explain.py --repo REPO_PATH --commit SHA_PREFIX \\
        --system ctxlsp --mode open --budget 8000 [--show-content]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import metrics
import tokens
from bm25_baseline import list_files
from gitrepo import DEFAULT_WS_ROOT, GitRepo
from run import find_instance
from systems import make_system


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", required=True, help="commit sha (prefix)")
    ap.add_argument("--system", default="ctxlsp")
    ap.add_argument("--mode", default="cold", choices=["cold", "open"])
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--pool", type=int, default=400)
    ap.add_argument("--show-content", action="store_true", help="print the pieces of answer files")
    ap.add_argument("--ctx-root", default=None, help="the ctx-lsp checkout to run (as run.py --ctx-root)")
    ap.add_argument("--ctx-python", default=None, help="interpreter for the ctxlsp CLI system")
    args = ap.parse_args(argv)
    if args.ctx_root:
        os.environ["CTX_EVAL_CTXLSP_ROOT"] = args.ctx_root
    if args.ctx_python:
        os.environ["CTX_EVAL_CTXLSP_PYTHON"] = args.ctx_python

    inst = find_instance(args.repo, args.pool, args.commit)
    if inst is None:
        print(f"no instance for {args.commit} in the newest {args.pool}", file=sys.stderr)
        return 1
    repo = GitRepo(args.repo)
    ws = repo.workspace(inst.parent, Path(DEFAULT_WS_ROOT))
    files = list_files(ws)
    system = make_system(args.system)
    system.set_language(inst.lang)
    open_file = inst.open_file if args.mode == "open" else None
    system.prepare(ws, files)
    bundle = system.bundle(ws, files, inst.task, args.budget, open_file)
    system.close()
    ans_files, ans_funcs = inst.answer(args.mode)

    print(f"# {inst.id} {inst.date[:10]}  workspace {ws}")
    print(f"task: {inst.task[:400]}")
    print(f"open: {open_file}")
    print(
        f"bundle: {tokens.count(bundle.text)} tokens / {args.budget}, "
        f"{len(bundle.pieces)} pieces, {1000 * bundle.latency_s:.0f} ms"
    )
    for p in bundle.pieces:
        rng = f" [{p.start_line}-{p.end_line}]" if p.start_line is not None else ""
        print(f"  piece {p.path}{rng}: {tokens.count(p.content)} tokens")
    have = bundle.paths()
    print("answer files:")
    for f in ans_files:
        print(f"  {'FOUND' if f in have else 'miss '} {f} ({inst.changed_lines.get(f, '?')} lines changed)")
    found = {id(fn) for fn in metrics.found_functions(bundle, ans_funcs)}
    print("answer functions:")
    for fn in ans_funcs:
        print(
            f"  {'FOUND' if id(fn) in found else 'miss '} {fn['path']}::{fn['qualname']} "
            f"(def line {fn['def_line']}: {fn['chain'][-1]['text']})"
        )
    ans_lines = inst.lines(args.mode)
    lfound = {(ln["path"], ln["line"]) for ln in metrics.found_lines(bundle, ans_lines)}
    print(f"answer lines: {len(lfound)}/{len(ans_lines)} found")
    for ln in ans_lines:
        hit = (ln["path"], ln["line"]) in lfound
        print(f"  {'FOUND' if hit else 'miss '} {ln['path']}:{ln['line']}: {ln['text'][:100]}")
    if args.show_content:
        for p in bundle.pieces:
            if p.path in ans_files:
                print(f"\n----- {p.path} -----\n{p.content}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
