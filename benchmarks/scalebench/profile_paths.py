"""Where the time and the memory go: cProfile of the cold index and the CLI warm bundle,
tracemalloc of a warm engine.

    python benchmarks/scalebench/profile_paths.py DIR [--out-dir /tmp/ctx-prof] [--top 15]
        [--query TEXT] [--ctx-lsp-root DIR]

1. `index-main`: `python -m cProfile -m ctx_lsp index DIR` after removing the cache — the
   real command; its worker processes are not profiled, so the parse/outline work shows
   up as waiting on the pool;
2. `index-1proc`: the same index in one process (`index.workers = 1`), so the per-file
   work (read, parse, outline, tokens, store) is visible;
3. `bundle-cli`: `python -m cProfile -m ctx_lsp bundle --workspace DIR --query … --budget 8000`
   with the cache warm — what a shell-driven agent pays per call;
4. `memory`: an engine indexed from the cache, warmed up (postings, graph), one 8K bundle:
   the top allocation sites still alive (tracemalloc, grouped by file), and VmRSS/VmHWM.

Each profile is saved (`.pstats`, `.txt`) in the output directory; the top entries by
cumulative time are printed as markdown tables. Leaves the cache warm.
"""

from __future__ import annotations

import argparse
import os
import pstats
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path


def ctx_env(ctx_root: Path | None) -> dict[str, str]:
    """As `procs.ctx_env` (this script runs standalone): `ctx_root` first on PYTHONPATH."""
    env = dict(os.environ)
    if ctx_root is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ctx_root), env.get("PYTHONPATH", "")) if p)
    return env


MEMORY_SCRIPT = r"""
import gc, json, sys, time
from pathlib import Path
trace = sys.argv[4] == "trace"
if trace:
    import tracemalloc
    tracemalloc.start(1)
stages = []
def stage(name):
    status = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            status[key] = int(value.split()[0])
    stages.append((name, status.get("VmRSS", 0), status.get("VmHWM", 0)))
stage("interpreter")
from ctx_lsp.engine import BundleRequest, Engine
from ctx_lsp.tokens import counter_for
stage("imports")
counter_for()
stage("+ tokenizer (o200k) loaded")
engine = Engine([Path(sys.argv[1])], {"index": {"watch": False}})
engine.index()
stage("+ index from the cache")
engine.warm_up()
stage("+ warm_up (postings, graph rank, symbols)")
result = engine.bundle(BundleRequest(query=sys.argv[2], budget=8000))
stage("+ one 8K bundle")
out = {"stages": stages, "files": len(engine.workspace.files)}
if trace:
    gc.collect()
    snap = tracemalloc.take_snapshot()
    top = int(sys.argv[3])
    out["traced_bytes"] = sum(s.size for s in snap.statistics("filename"))
    out["by_file"] = [(s.traceback[0].filename, s.size, s.count) for s in snap.statistics("filename")[:top]]
    out["by_line"] = [
        (f"{s.traceback[0].filename}:{s.traceback[0].lineno}", s.size, s.count)
        for s in snap.statistics("lineno")[:top]
    ]
print(json.dumps(out))
"""

ONE_PROC_INDEX = r"""
import cProfile, sys
from pathlib import Path
from ctx_lsp.engine import Engine
engine = Engine([Path(sys.argv[1])], {"index": {"watch": False, "workers": 1}})
cProfile.run("engine.index()", sys.argv[2])
print(len(engine.workspace.files))
"""


def short(path: str) -> str:
    """`…/site-packages/tiktoken/core.py` → `tiktoken/core.py`; `…/lib/python3.11/json/x.py` → `json/x.py`."""
    if "/site-packages/" in path:
        return path.rpartition("/site-packages/")[2]
    if "/ctx_lsp/" in path:
        return "ctx_lsp/" + path.rpartition("/ctx_lsp/")[2]
    return re.sub(r"^.*/lib/python3\.\d+/", "", path)


WRAPPERS = ("builtins.exec>", "<frozen runpy>", "<string>:1(<module>)", "ctx_lsp/__main__.py", "cProfile.py")
"""Frames every profile starts with (the interpreter running the module): left out of the tables."""


def top_table(pstats_path: Path, top: int, own: int = 8) -> str:
    stats = pstats.Stats(str(pstats_path))
    rows = []
    entries = stats.stats  # type: ignore[attr-defined]
    for func, (_cc, nc, tt, ct, _callers) in entries.items():
        filename, line, name = func
        label = f"{short(filename)}:{line}({name})" if line else name
        if not any(w in label for w in WRAPPERS):
            rows.append((ct, tt, nc, label))
    total = max((r[0] for r in rows), default=0.0)
    rows.sort(reverse=True)
    out = [f"top {top} by cumulative time (of {total:.2f} s):", ""]
    out += ["| cumulative s | own s | calls | function |", "| ---: | ---: | ---: | --- |"]
    out += [f"| {ct:.2f} | {tt:.2f} | {nc} | `{label}` |" for ct, tt, nc, label in rows[:top]]
    out += [
        "",
        f"top {own} by own time:",
        "",
        "| own s | cumulative s | calls | function |",
        "| ---: | ---: | ---: | --- |",
    ]
    rows.sort(key=lambda r: r[1], reverse=True)
    out += [f"| {tt:.2f} | {ct:.2f} | {nc} | `{label}` |" for ct, tt, nc, label in rows[:own]]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", type=Path)
    ap.add_argument("--out-dir", type=Path, default=Path("/tmp/ctx-prof"))
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--query", default="fix the queryset filter on related fields")
    ap.add_argument("--ctx-lsp-root", type=Path)
    ap.add_argument("--skip", action="append", default=[], help="index-main, index-1proc, bundle-cli, memory")
    args = ap.parse_args()
    root = args.directory.resolve()
    out = args.out_dir
    out.mkdir(parents=True, exist_ok=True)
    ctx_root = args.ctx_lsp_root.resolve() if args.ctx_lsp_root else None
    env = ctx_env(ctx_root)
    py = sys.executable
    print(f"load average {os.getloadavg()}; cores {os.cpu_count()}; Python {sys.version.split()[0]}\n")

    def run(name: str, cmd: list[str], cold: bool) -> subprocess.CompletedProcess[str] | None:
        if name in args.skip:
            return None
        if cold:
            shutil.rmtree(root / ".ctx-lsp", ignore_errors=True)
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ctx_root)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            print(f"## {name}: FAILED (exit {proc.returncode})\n{proc.stderr[-2000:]}")
            return None
        print(f"## {name} (wall {wall:.2f} s)\n")
        return proc

    if run(
        "index-main",
        [py, "-m", "cProfile", "-o", str(out / "index-main.pstats"), "-m", "ctx_lsp", "index", str(root), "--quiet"],
        cold=True,
    ):
        print(top_table(out / "index-main.pstats", args.top) + "\n")
    if run("index-1proc", [py, "-c", ONE_PROC_INDEX, str(root), str(out / "index-1proc.pstats")], cold=True):
        print(top_table(out / "index-1proc.pstats", args.top) + "\n")
    if run(
        "bundle-cli",
        [
            py,
            "-m",
            "cProfile",
            "-o",
            str(out / "bundle-cli.pstats"),
            "-m",
            "ctx_lsp",
            "bundle",
            "--workspace",
            str(root),
            "--query",
            args.query,
            "--budget",
            "8000",
            "--format",
            "json",
        ],
        cold=False,
    ):
        print(top_table(out / "bundle-cli.pstats", args.top) + "\n")
    plain = run("memory", [py, "-c", MEMORY_SCRIPT, str(root), args.query, str(args.top), "plain"], cold=False)
    if plain:
        import json

        mem = json.loads(plain.stdout)
        print(f"{mem['files']} files. Resident memory by stage (no tracing):\n")
        print("| stage | VmRSS MB | VmHWM MB |\n| --- | ---: | ---: |")
        for name, rss, hwm in mem["stages"]:
            print(f"| {name} | {rss / 1024:.0f} | {hwm / 1024:.0f} |")
        print()
        traced = run("memory-traced", [py, "-c", MEMORY_SCRIPT, str(root), args.query, str(args.top), "trace"], False)
        if traced:
            mem = json.loads(traced.stdout)
            print(f"Python objects alive at the end (tracemalloc): {mem['traced_bytes'] / 2**20:.0f} MB\n")
            print("| MB alive | blocks | file |\n| ---: | ---: | --- |")
            for filename, size, count in mem["by_file"]:
                print(f"| {size / 2**20:.1f} | {count} | `{short(filename)}` |")
            print("\n| MB alive | blocks | line |\n| ---: | ---: | --- |")
            for where, size, count in mem["by_line"]:
                print(f"| {size / 2**20:.1f} | {count} | `{short(where)}` |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
