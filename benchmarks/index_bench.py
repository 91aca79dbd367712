"""Benchmark `ctx-lsp index`: cold, warm (from the cache) and after one edit.

Each measurement runs `python -m ctx_lsp index DIR` in a fresh subprocess, as a user
would, and reads its wall time, its CPU (user + system of the child and its pool workers)
and peak RSS (ru_maxrss of the child). A baseline runs in the same session for comparison:
a plain read + tree-sitter parse of every `.py` file in one process (the floor DESIGN
quotes: ~445 files/s per core), so the report gives ratios that survive a faster or slower
machine.

CPU is reported beside wall because the machines this is run on are shared: another
process on one of two cores doubles a run's wall time but hardly moves its CPU time.
`--against ROOT` times the cold index of another checkout (its `ctx_lsp` put first on
PYTHONPATH) alternately with this one, so both sides see the same load.

    python benchmarks/index_bench.py /path/to/django-5.2.x [--runs 3] [--files-only]
    python benchmarks/index_bench.py DIR --runs 5 --files-only --cold-only --against /tmp/base

Get a real workspace with `pip download --no-deps --no-binary :all: Django` (~2,800 .py
files) or generate one with `benchmarks/scalebench/generate.py DIR --files N`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def run_index(directory: Path, *extra: str, root: Path | None = None) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS MB, stdout) of one `ctx-lsp index` subprocess,
    with `root`'s ctx_lsp first on the path when given."""
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ctx_lsp", "index", str(directory), "--quiet", *extra],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # ru_maxrss of children is the max over all children so far: only grows. Report it as
    # an upper bound of this run when it did not change.
    return wall, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024, proc.stdout.strip()


def cold_runs(
    directory: Path, runs: int, extra: Sequence[str], roots: Sequence[Path | None]
) -> list[list[tuple[float, float, float]]]:
    """`runs` cold indexes for each root, alternating between them; (wall, CPU, peak RSS)
    of each run."""
    cache = directory / ".ctx-lsp"
    out: list[list[tuple[float, float, float]]] = [[] for _ in roots]
    for _ in range(runs):
        for i, root in enumerate(roots):
            shutil.rmtree(cache, ignore_errors=True)
            wall, cpu, peak, text = run_index(directory, *extra, root=root)
            out[i].append((wall, cpu, peak))
            print(f"  cold{'' if root is None else f' [{root}]'}: {wall:.2f}s wall, {cpu:.2f}s CPU  {text}")
    return out


def baseline_parse(directory: Path) -> tuple[float, int]:
    """Read + parse every .py file with tree-sitter in one process (no outline, no tokens)."""
    import tree_sitter_python
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_python.language()))
    files = [p for p in directory.rglob("*.py") if p.is_file()]
    started = time.perf_counter()
    for path in files:
        parser.parse(path.read_bytes())
    return time.perf_counter() - started, len(files)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files-only", action="store_true", help="pass --files-only: time the file cache alone")
    ap.add_argument("--cold-only", action="store_true", help="skip the warm and one-edit runs")
    ap.add_argument("--against", type=Path, help="another checkout to time cold, alternately with this one")
    args = ap.parse_args()
    directory = args.directory.resolve()
    extra = ["--files-only"] if args.files_only else []

    base_s, n_py = baseline_parse(directory)
    print(f"workspace: {directory} ({n_py} .py files); cores: {os.cpu_count()}")
    print(f"baseline: read+parse every .py, one process: {base_s:.2f}s ({n_py / base_s:.0f} files/s)")

    roots: list[Path | None] = [None] if args.against is None else [None, args.against.resolve()]
    colds = cold_runs(directory, args.runs, extra, roots)
    print()
    print(f"| measure | median of {args.runs} (wall) | CPU (user+sys, with workers) | vs baseline parse |")
    print("| --- | --- | --- | --- |")
    for root, runs in zip(roots, colds):
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        label = "cold index" if root is None else f"cold index, {root}"
        print(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {wall / base_s:.2f}x |")
    print(
        f"peak RSS of a cold run (an upper bound: max over the children so far): {max(r[2] for r in colds[0]):.0f} MB"
    )
    if args.cold_only:
        return 0

    warms, edits = [], []
    for _ in range(args.runs):
        wall, cpu, _, out = run_index(directory, *extra)
        warms.append(wall)
        print(f"  warm: {wall:.2f}s wall, {cpu:.2f}s CPU  {out}")
    target = next(p for p in sorted(directory.rglob("*.py")) if p.stat().st_size > 2000)
    original = target.read_bytes()
    try:
        for i in range(args.runs):
            target.write_bytes(original + f"\n# edit {i}\n".encode())
            wall, cpu, _, out = run_index(directory, *extra)
            edits.append(wall)
            print(f"  one edit: {wall:.2f}s wall, {cpu:.2f}s CPU  {out}")
    finally:
        target.write_bytes(original)
    warm, edit = statistics.median(warms), statistics.median(edits)
    print(f"| warm re-run from cache | {warm:.2f} s | | {warm / base_s:.2f}x |")
    print(f"| re-run after one edit | {edit:.2f} s | | {edit / base_s:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
