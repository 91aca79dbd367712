"""Benchmark `ctx-lsp index`: cold, warm (from the cache) and after one edit.

Each measurement runs `python -m ctx_lsp index DIR` in a fresh subprocess, as a user
would, and reads its wall time and peak RSS (ru_maxrss of the child). A baseline runs in
the same session for comparison: a plain read + tree-sitter parse of every `.py` file in
one process (the floor DESIGN quotes: ~445 files/s per core), so the report gives ratios
that survive a faster or slower machine.

    python benchmarks/index_bench.py /path/to/django-5.2.x [--runs 3]

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
from pathlib import Path


def run_index(directory: Path, *extra: str) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, stdout) of one `ctx-lsp index` subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ctx_lsp", "index", str(directory), "--quiet", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the max over all children so far: only grows. Report it as
    # an upper bound of this run when it did not change.
    return wall, max(peak, before) / 1024, proc.stdout.strip()


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
    args = ap.parse_args()
    directory = args.directory.resolve()
    cache = directory / ".ctx-lsp"

    base_s, n_py = baseline_parse(directory)
    print(f"workspace: {directory} ({n_py} .py files); cores: {os.cpu_count()}")
    print(f"baseline: read+parse every .py, one process: {base_s:.2f}s ({n_py / base_s:.0f} files/s)")

    colds, warms, edits = [], [], []
    peak_cold = 0.0
    for _ in range(args.runs):
        shutil.rmtree(cache, ignore_errors=True)
        wall, peak, out = run_index(directory)
        colds.append(wall)
        peak_cold = max(peak_cold, peak)
        print(f"  cold: {wall:.2f}s  {out}")
    for _ in range(args.runs):
        wall, _, out = run_index(directory)
        warms.append(wall)
        print(f"  warm: {wall:.2f}s  {out}")
    target = next(p for p in sorted(directory.rglob("*.py")) if p.stat().st_size > 2000)
    original = target.read_bytes()
    try:
        for i in range(args.runs):
            target.write_bytes(original + f"\n# edit {i}\n".encode())
            wall, _, out = run_index(directory)
            edits.append(wall)
            print(f"  one edit: {wall:.2f}s  {out}")
    finally:
        target.write_bytes(original)

    cold, warm, edit = statistics.median(colds), statistics.median(warms), statistics.median(edits)
    print()
    print(f"| measure | median of {args.runs} | files/s | vs baseline parse |")
    print("| --- | --- | --- | --- |")
    print(f"| cold index (process start → done) | {cold:.2f} s | {n_py / cold:.0f} (.py) | {cold / base_s:.2f}× |")
    print(f"| warm re-run from cache | {warm:.2f} s | — | {warm / base_s:.2f}× |")
    print(f"| re-run after one edit | {edit:.2f} s | — | {edit / base_s:.2f}× |")
    print(f"| peak RSS (max over runs, incl. workers) | {peak_cold:.0f} MB | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
