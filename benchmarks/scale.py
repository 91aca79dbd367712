"""Scale benchmark for issue 11: every path an agent or an editor takes, on big workspaces.

    python benchmarks/scale.py --workspace /tmp/django-ws/django-5.2.19 --generate 20000 --out /tmp/scale.json
    python benchmarks/scale.py --workspace /tmp/django-dl/django-5.2.19 --workspace /tmp/typeorm --no-aider
    python benchmarks/scale.py --smoke          # a 200-file generated workspace, one repetition (< 60 s)
    python benchmarks/scale.py --kernel --ctx-lsp-root /tmp/ctxlsp-main --timeout 2400   # Linux 6.12

For each workspace (`--workspace DIR`, repeatable; `--generate [N]` adds a generated one of
N files, default 20,000, written under `--gen-dir`): baselines, cold `ctx-lsp index`,
warm start → first bundle for the CLI and the server, CLI bundle wall time, LSP
`ctx/bundle` p50/p95 at 2K/8K/32K, didChange → bundle, `ctx/docs` hit, peak RSS, and Aider's
repo map per new query if `/tmp/aider-venv` exists. Prints a markdown table per workspace
(path | value | target | vs baseline) headed by the machine (cores, Python, load average)
and the ctx-lsp commit; `--out F.json` keeps every sample, `--md F.md` the report.

Any language ctx-lsp reads is measured the same way (issue 21): a workspace's code is what
the language layer's extension table claims (`ctx_lsp.code.languages.language_for`), so
the report gives its files and bytes per language, the parse floor per grammar beside
ctx-lsp's own per-file cost (and that ratio beside Python's), queries naming definitions
of any language, and didOpen/didChange in the edit target's language. Generated
workspaces stay Python.

Fresh processes run `python -m ctx_lsp` with this interpreter; `--ctx-lsp-root DIR` puts
DIR first on their PYTHONPATH (and on this process's, for the language table) to measure
another tree (e.g. a `git archive` of HEAD while the working tree is being edited). The
header says whether the tree measured is HEAD. See `benchmarks/README.md` for what each row
means and the baseline numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from scalebench import generate, kernel, measure, procs, report, workspaces

SMOKE_FILES = 200
KERNEL_DEFAULTS = {
    "repeat": 1,
    "cold_runs": 1,
    "queries": 10,
    "edits": 5,
    "floor_sample": 3000,
    "only": "floor,ctags,imports,cold,warm,cache,cli,server,switch,fresh",
    "no_aider": True,
    "max_server_rss_mb": 14_000,
}
"""With `--kernel`, for the options not given: one run of each slow path (a cold index is
~20 min on main), the parse floor on a sample, and neither the naive scan (it tokenizes
1.5 GB per query), the daemon nor Aider. A server past 14 GB resident is killed and the
row says so (main's switch server grew past 12 GB on this shared 24 GB machine). The fresh
clone runs last: its server may be killed at `--fresh-timeout` with a half-written cache,
which no later row should read."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, action="append", default=[], help="a workspace to measure (repeatable)")
    ap.add_argument(
        "--generate", type=int, nargs="?", const=20_000, metavar="N", help="also a generated N-file workspace"
    )
    ap.add_argument("--gen-dir", type=Path, help="where to write it (default /tmp/ctx-scale-ws-N-sSEED)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help=f"a {SMOKE_FILES}-file generated workspace, few repetitions")
    ap.add_argument("--out", type=Path, help="write the results (every sample) as JSON here")
    ap.add_argument("--md", type=Path, help="write the markdown report here too")
    ap.add_argument("--repeat", type=int, help="CLI calls, server warm starts, naive scans (default 3)")
    ap.add_argument("--cold-runs", type=int, help="cold index runs (default 2)")
    ap.add_argument("--queries", type=int, help="queries per budget on the warm server (default 20)")
    ap.add_argument("--edits", type=int, help="didChange → bundle samples (default 10)")
    ap.add_argument("--aider-queries", type=int, help="Aider maps asked (default 8)")
    ap.add_argument("--aider-python", type=Path, default=None, help="Aider's interpreter (default /tmp/aider-venv)")
    ap.add_argument("--no-aider", action="store_true")
    ap.add_argument("--timeout", type=float, default=900.0, help="limit for one process or first answer (s)")
    ap.add_argument("--ctx-lsp-root", type=Path, help="import ctx_lsp from this directory in every child process")
    ap.add_argument(
        "--kernel",
        type=Path,
        nargs="?",
        const=kernel.DEFAULT_BASE,
        metavar="BASE",
        help=f"also the Linux kernel, prepared under BASE (default {kernel.DEFAULT_BASE}) if not already; "
        "sets the kernel's defaults (see KERNEL_DEFAULTS) for options not given",
    )
    ap.add_argument(
        "--only",
        help=f"run only these steps, comma-separated, in that order, of: {', '.join(measure.STEPS)} "
        "(the others' rows are skipped)",
    )
    ap.add_argument("--fresh-timeout", type=float, help="limit of the fresh-clone session (s; default --timeout)")
    ap.add_argument("--floor-sample", type=int, help="parse floor over a seeded sample of N files (extrapolated)")
    ap.add_argument("--switch-files", type=int, help="files the branch switch changes (default 2000, ≤ 10 %% of them)")
    ap.add_argument("--switch-timeout", type=float, help="how long a bundle may take to show a switch (s; 900)")
    ap.add_argument(
        "--max-server-rss-mb",
        type=float,
        help="kill a server past this resident size and record it (a shared machine's guard; default none)",
    )
    ap.add_argument("--scratch", type=Path, help="where the branch switch's copy and second tree go (default /tmp)")
    args = ap.parse_args(argv)
    if args.only:
        unknown = sorted(set(args.only.split(",")) - set(measure.STEPS))
        if unknown:
            ap.error(f"--only: unknown step(s) {', '.join(unknown)}; choose from {', '.join(measure.STEPS)}")
    return args


def options(args: argparse.Namespace, logs: Path) -> measure.Options:
    smoke = args.smoke
    aider_python = None
    if not args.no_aider and (not smoke or args.aider_python):
        from scalebench.aider_map import DEFAULT_PYTHON

        aider_python = args.aider_python or DEFAULT_PYTHON

    def pick(value: int | None, normal: int, small: int) -> int:
        return value if value is not None else (small if smoke else normal)

    return measure.Options(
        repeat=pick(args.repeat, 3, 1),
        cold_runs=pick(args.cold_runs, 2, 1),
        queries=pick(args.queries, 20, 3),
        edits=pick(args.edits, 10, 2),
        docs_hits=2 if smoke else 5,
        aider_queries=pick(args.aider_queries, 8, 2),
        aider_python=aider_python,
        timeout=args.timeout,
        request_timeout=min(args.timeout, 120.0),
        seed=args.seed,
        ctx_root=args.ctx_lsp_root.resolve() if args.ctx_lsp_root else None,
        logs=logs,
        only=frozenset(args.only.split(",")) if args.only else None,
        order=tuple(args.only.split(",")) if args.only else (),
        fresh_timeout=args.fresh_timeout or args.timeout,
        floor_sample=args.floor_sample,
        switch_files=args.switch_files or 2000,
        switch_timeout=args.switch_timeout or min(args.timeout, 900.0),
        max_server_rss_mb=args.max_server_rss_mb,
        scratch=(args.scratch or (logs if smoke else Path(tempfile.gettempdir()))).resolve(),
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.kernel is not None:
        for name, value in KERNEL_DEFAULTS.items():
            if getattr(args, name) in (None, False):
                setattr(args, name, value)
    if args.ctx_lsp_root:  # the language table the workspaces are described with: the measured tree's
        sys.path.insert(0, str(args.ctx_lsp_root.resolve()))
    command = "python benchmarks/scale.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"{time.perf_counter() - started:7.1f}s {message}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="ctx-scale-") as tmp:
        roots = [w.resolve() for w in args.workspace]
        if args.kernel is not None:
            log(f"kernel: preparing (or reusing) {kernel.tree_of(args.kernel.resolve())} …")
            roots.append(kernel.prepare(args.kernel))
        if args.smoke and not roots and args.generate is None:
            args.generate = SMOKE_FILES
            args.gen_dir = args.gen_dir or Path(tmp) / "ws"
        if args.generate is not None:
            gen_dir = args.gen_dir or Path(f"/tmp/ctx-scale-ws-{args.generate}-s{args.seed}")
            log(f"generating {args.generate:,} files in {gen_dir} …")
            stamp = generate.generate(gen_dir, args.generate, args.seed, quiet=True)
            log(f"  {stamp['written']:,} files ({stamp['python_files']:,} .py), generated in {stamp['seconds']} s")
            roots.append(gen_dir.resolve())
        if not roots:
            print("scale.py: give --workspace DIR, --generate [N] or --smoke", file=sys.stderr)
            return 2
        logs = Path(tmp) if args.smoke else Path(tempfile.gettempdir())
        opts = options(args, logs)
        env = procs.ctx_env(opts.ctx_root)
        meta = {"machine": report.machine(), "ctx_lsp": report.ctx_lsp_version(env, opts.ctx_root), "command": command}
        print(report.header(meta, command), flush=True)
        results = []
        for root in roots:
            info = workspaces.describe(root, args.seed)
            log(f"workspace {root} ({info.kind}; {info.summary()}; edit target in {info.main_language})")
            results.append(measure.WorkspaceBench(info, opts, log).run())
            print("\n" + report.workspace_table(results[-1]), flush=True)
        text = report.markdown(meta, command, results)
        if args.md:
            args.md.write_text(text)
        if args.out:
            payload = {**meta, "options": {k: str(v) for k, v in vars(opts).items()}, "workspaces": results}
            args.out.write_text(json.dumps(payload, indent=2, default=str) + "\n")
        log(f"done; load average now {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    failed = [r["key"] for ws in results for r in ws["rows"] if r["status"] == "failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
