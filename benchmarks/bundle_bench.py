"""Benchmark `ctx/bundle` latency on a real workspace, warm, against a rebuild-per-request
baseline measured in the same run.

    python benchmarks/bundle_bench.py /path/to/django-5.2.x [--requests 60] [--budget 8000]

- warm start: a fresh engine over an indexed workspace (the `.ctx-lsp/` cache) until the
  index is usable, and until search postings and the graph rank are built;
- bundle latency p50/p95 for varied queries, with and without an open working file;
- edit → bundle: a buffer change (didChange) followed by the next bundle;
- baseline: the same bundles when every request rebuilds the search postings and the
  reference graph from the index (what a tool without incremental state pays per
  request — Aider's repo map re-ranks the whole repository for each new query);
- peak RSS of this process.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time
from pathlib import Path

from scalebench.workspaces import DJANGO_QUERIES

from ctx_lsp.engine import BundleRequest, Engine
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.search import SearchIndex

QUERIES = list(DJANGO_QUERIES[:16])
"""The same tasks as `scale.py` (the first 16: what this script has always timed)."""


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", type=Path)
    ap.add_argument("--requests", type=int, default=60)
    ap.add_argument("--baseline-requests", type=int, default=5)
    ap.add_argument("--budget", type=int, default=8000)
    args = ap.parse_args()
    rng = random.Random(7)

    Engine([args.directory], {"index": {"watch": False}}).index()  # make sure the cache is filled
    t0 = time.perf_counter()
    engine = Engine([args.directory], {"index": {"watch": False}})
    engine.index()
    t_index = time.perf_counter() - t0
    engine.warm_up()
    t_warm = time.perf_counter() - t0
    py_files = [f for f in engine.workspace.files.values() if f.language == "python"]
    print(f"workspace: {args.directory} ({len(engine.workspace.files)} files, {len(py_files)} python)")
    print(f"warm start: index usable {t_index:.2f}s; postings + graph rank ready {t_warm:.2f}s")

    def request(i: int, with_open: bool) -> BundleRequest:
        opened = (rng.choice(py_files).abs_path,) if with_open else ()
        return BundleRequest(query=QUERIES[i % len(QUERIES)], budget=args.budget, open=opened)

    timings: dict[str, list[float]] = {"cold": [], "open": []}
    for i in range(args.requests):
        for mode in ("cold", "open"):
            req = request(i, mode == "open")
            started = time.perf_counter()
            result = engine.bundle(req)
            timings[mode].append((time.perf_counter() - started) * 1000)
            assert result.total_tokens <= args.budget

    target = max(py_files, key=lambda f: f.tokens if f.tokens < 20000 else 0)
    text = Path(target.abs_path).read_text(encoding="utf-8", errors="replace")
    edits = []
    for i in range(20):
        started = time.perf_counter()
        engine.workspace.change_document(target.abs_path, text + f"\n\ndef edited_{i}():\n    return {i}\n", i + 2)
        result = engine.bundle(BundleRequest(query=f"edited_{i}", budget=args.budget))
        edits.append((time.perf_counter() - started) * 1000)
        assert any(f"edited_{i}" in s.content for s in result.sections), "edit not reflected"
    engine.workspace.close_document(target.abs_path)

    baseline = []
    for i in range(args.baseline_requests):
        req = request(i, True)
        started = time.perf_counter()
        fresh_search, fresh_graph = SearchIndex(), ReferenceGraph()
        files = list(engine.workspace.files.values())
        fresh_search.update([], files)
        fresh_graph.update([], files)
        engine.search_index, engine.graph = fresh_search, fresh_graph
        engine.bundle(req)
        baseline.append((time.perf_counter() - started) * 1000)

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    allwarm = timings["cold"] + timings["open"]
    print()
    print(f"| measure ({args.budget}-token bundles) | p50 ms | p95 ms |")
    print("| --- | --- | --- |")
    rows = [
        (f"bundle, query only (n={len(timings['cold'])})", timings["cold"]),
        (f"bundle, query + open file (n={len(timings['open'])})", timings["open"]),
        (f"didChange → next bundle shows the edit (n={len(edits)})", edits),
        (f"baseline: rebuild postings + graph per request (n={len(baseline)})", baseline),
    ]
    for label, samples in rows:
        print(f"| {label} | {statistics.median(samples):.1f} | {pct(samples, 0.95):.1f} |")
    print(
        f"\nspeed-up vs baseline (p50): {statistics.median(baseline) / statistics.median(allwarm):.1f}×; "
        f"peak RSS {rss:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
