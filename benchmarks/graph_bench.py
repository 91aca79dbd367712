"""Benchmark the reference graph (`ctx_lsp/index/graph.py`) on a real workspace.

Measures, in one process and one run: building the graph from an indexed workspace, its
memory, `rank()` latency for random requests (1-3 working files, 0-5 mentioned
identifiers), and an edit (an editor buffer change of one file) followed by `rank()`.
A baseline runs on the same graph in the same run: a full personalised power iteration
over every edge for every request, which is what Aider's repo map does (networkx
`pagerank`, tol 1e-6), minus Aider's rebuilding of the graph itself, so the ratio is
generous to the baseline. The baseline's exact scores also give the accuracy of the push
approximation (top-k overlap, largest score error).

    python benchmarks/graph_bench.py /path/to/django-5.2.x [--requests 200] [--edits 20]

The machine may be shared with other jobs: the report gives medians (p50) and p95.
Nothing is written to the workspace: edits are editor buffers (overlays), never disk.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Mapping

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctx_lsp.config import Config  # noqa: E402
from ctx_lsp.index import graph as graph_module  # noqa: E402
from ctx_lsp.index.graph import DAMPING, PERSONAL_SHARE, ReferenceGraph  # noqa: E402
from ctx_lsp.index.workspace import Workspace  # noqa: E402

BASELINE_TOL = 1e-6
"""networkx's default: stop when the L1 change is below N x tol."""
BASELINE_MAX_ITER = 100
TOP_K = 20
TOLERANCES = (1e-4, 2e-5, 1e-5)
"""Personal push thresholds compared (with the default) for speed against accuracy."""


def numpy_power_iteration(rows: Mapping[str, tuple[list[str], list[float]]]) -> float | None:
    """Seconds for one full power iteration to tol in numpy, if numpy is installed."""
    try:
        import numpy as np
    except ImportError:
        return None
    nodes = sorted(rows)
    index = {f: i for i, f in enumerate(nodes)}
    src = np.array([index[f] for f in nodes for _ in rows[f][0]], dtype=np.int64)
    dst = np.array([index[t] for f in nodes for t in rows[f][0]], dtype=np.int64)
    prob = np.array([q for f in nodes for q in rows[f][1]])
    n = len(nodes)
    dangling = np.array([not rows[f][0] for f in nodes])
    jump = np.full(n, 1.0 / n)
    started = time.perf_counter()
    x = jump.copy()
    for _ in range(BASELINE_MAX_ITER):
        nxt = np.bincount(dst, weights=DAMPING * x[src] * prob, minlength=n)
        nxt += (1.0 - DAMPING + DAMPING * x[dangling].sum()) * jump
        done = np.abs(nxt - x).sum() < n * BASELINE_TOL
        x = nxt
        if done:
            break
    return time.perf_counter() - started


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def requests_for(graph: ReferenceGraph, paths: list[str], n: int, seed: int) -> list[tuple[dict[str, float], list[str]]]:
    """Random requests: 1-3 working files, 0-5 identifiers defined in the workspace."""
    rnd = random.Random(seed)
    names = sorted(name for name, _ in graph.snapshot().definers)
    out = []
    for _ in range(n):
        working = rnd.sample(paths, rnd.randint(1, 3))
        personal = {p: 1.0 - 0.2 * i for i, p in enumerate(working)}
        out.append((personal, rnd.sample(names, rnd.randint(0, 5))))
    return out


def baseline_rows(graph: ReferenceGraph) -> dict[str, tuple[list[str], list[float]]]:
    """The graph's normalised out-edges, built from its public snapshot (as Aider builds a
    networkx graph per request; that building is not timed here)."""
    snap = graph.snapshot()
    totals: dict[str, int] = {}
    for a, _, w in snap.edges:
        totals[a] = totals.get(a, 0) + w
    rows: dict[str, tuple[list[str], list[float]]] = {f: ([], []) for f in snap.files}
    for a, b, w in snap.edges:
        rows[a][0].append(b)
        rows[a][1].append(w / totals[a])
    return rows


def baseline_rank(
    graph: ReferenceGraph, rows: Mapping[str, tuple[list[str], list[float]]],
    personal: Mapping[str, float], mentioned: list[str],
) -> dict[str, float]:
    """Full power iteration over every edge, jumping where `rank` jumps, dead ends jumping
    like the walk: what a per-request PageRank (Aider, networkx) computes."""
    nodes = sorted(rows)
    n = len(nodes)
    seeds = graph.seeds(personal, mentioned)
    working = {f for f in personal if f in rows}
    jump = dict.fromkeys(nodes, (1.0 - PERSONAL_SHARE) / n if seeds else 1.0 / n)
    for f, w in seeds.items():
        jump[f] += PERSONAL_SHARE * w
    x = dict.fromkeys(nodes, 1.0 / n)
    for _ in range(BASELINE_MAX_ITER):
        dangling = 0.0
        nxt = dict.fromkeys(nodes, 0.0)
        for f, xf in x.items():
            targets, probs = rows[f]
            if not targets:
                dangling += xf
                continue
            spread = DAMPING * xf
            for v, q in zip(targets, probs):
                nxt[v] += spread * q
        base = 1.0 - DAMPING + DAMPING * dangling
        for f in nodes:
            nxt[f] += base * jump[f]
        err = sum(abs(nxt[f] - x[f]) for f in nodes)
        x = nxt
        if err < n * BASELINE_TOL:
            break
    top = max((v for f, v in x.items() if f not in working), default=1.0)
    return {f: 1.0 if f in working else min(1.0, v / top) for f, v in x.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", type=Path)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--baseline-requests", type=int, default=20)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    workspace = Workspace([args.directory.resolve()], Config())
    started = time.perf_counter()
    workspace.index()
    index_s = time.perf_counter() - started
    python = sorted(f.abs_path for f in workspace.files.values() if f.language == "python")
    started = time.perf_counter()
    for abs_path in python:
        workspace.files[abs_path].outline  # decoded once per process; the search index does it too
    decode_s = time.perf_counter() - started
    print(f"workspace: {args.directory} ({len(workspace.files)} files, {len(python)} Python); cores: {os.cpu_count()}")
    print(f"index (warm from cache where possible): {index_s:.2f} s; outline decode: {decode_s:.2f} s (not graph time)")

    # ---------------------------------------------------------------- build + memory
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    graph = ReferenceGraph()
    graph.update([], list(workspace.files.values()))
    graph.catch_up()
    graph.rank({})
    graph_mb = (tracemalloc.get_traced_memory()[0] - before) / 2**20
    tracemalloc.stop()
    del graph
    gc.collect()

    graph = ReferenceGraph()
    workspace.subscribe(graph.update)
    graph.update([], list(workspace.files.values()))
    started = time.perf_counter()
    graph.catch_up()
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    graph.rank({})
    global_s = time.perf_counter() - started
    cold_visits = graph.global_visits
    snap = graph.snapshot()
    print(f"graph: {len(snap.files)} files, {len(snap.edges)} edges, {sum(len(t) for _, t in snap.imports)} import edges, "
          f"{len(snap.definers)} defined names")

    # ---------------------------------------------------------------- requests
    requests = requests_for(graph, python, args.requests, args.seed)
    for personal, mentioned in requests[:5]:  # warm caches (definition weights)
        graph.rank(personal, mentioned)
    times = []
    for personal, mentioned in requests:
        started = time.perf_counter()
        graph.rank(personal, mentioned)
        times.append(time.perf_counter() - started)

    gc.freeze()  # what a long-running server does after indexing: no full-heap GC pauses
    frozen_times = []
    for personal, mentioned in requests:
        started = time.perf_counter()
        graph.rank(personal, mentioned)
        frozen_times.append(time.perf_counter() - started)
    gc.unfreeze()

    started = time.perf_counter()
    rows = baseline_rows(graph)
    rows_s = time.perf_counter() - started
    base_times, exacts = [], []
    for personal, mentioned in requests[: args.baseline_requests]:
        started = time.perf_counter()
        exacts.append(baseline_rank(graph, rows, personal, mentioned))
        base_times.append(time.perf_counter() - started)
    numpy_s = numpy_power_iteration(rows)
    sweep = []
    default_tolerance = graph_module.PERSONAL_TOLERANCE
    for tolerance in sorted({default_tolerance, *TOLERANCES}, reverse=True):
        graph_module.PERSONAL_TOLERANCE = tolerance
        sweep_times, overlaps, errors = [], [], []
        for (personal, mentioned), exact in zip(requests, exacts):
            started = time.perf_counter()
            ours = graph.rank(personal, mentioned)
            sweep_times.append(time.perf_counter() - started)
            exact_top = sorted(exact, key=lambda f: (-exact[f], f))[:TOP_K]
            our_top = [fr.abs_path for fr in ours.files[:TOP_K]]
            overlaps.append(len(set(exact_top) & set(our_top)) / TOP_K)
            errors.append(max(abs(exact[f] - ours.scores.get(f, 0.0)) for f in exact))
        sweep.append((tolerance, statistics.median(sweep_times), statistics.mean(overlaps), min(overlaps),
                      statistics.median(errors), max(errors)))
    graph_module.PERSONAL_TOLERANCE = default_tolerance

    # ---------------------------------------------------------------- edits
    rnd = random.Random(args.seed + 1)
    edit_catch_up, edit_rank, edit_visits, edit_index = [], [], [], []
    edited: list[str] = []
    for i in range(args.edits):
        abs_path = rnd.choice(python)
        text, _ = workspace.read_text(workspace.files[abs_path])
        names = rnd.sample([name for name, _ in snap.definers], 3)
        text += f"\n\ndef _bench_edit_{i}():\n    return {' + '.join(f'{n}()' for n in names)}\n"
        started = time.perf_counter()
        workspace.change_document(abs_path, text, i + 1)  # notifies the graph (queues)
        edit_index.append(time.perf_counter() - started)
        edited.append(abs_path)
        personal, mentioned = requests[i % len(requests)]
        personal = {abs_path: 1.0, **personal}
        started = time.perf_counter()
        graph.catch_up()
        edit_catch_up.append(time.perf_counter() - started)
        started = time.perf_counter()
        graph.rank(personal, mentioned)
        edit_rank.append(time.perf_counter() - started)
        edit_visits.append(graph.global_visits)

    rebuilt = ReferenceGraph()
    rebuilt.update([], list(workspace.files.values()))
    same = rebuilt.snapshot() == graph.snapshot()
    for abs_path in sorted(set(edited)):
        workspace.close_document(abs_path)

    # ---------------------------------------------------------------- report
    p50, p95 = statistics.median(times), pct(times, 0.95)
    b50 = statistics.median(base_times)
    f50, f95 = statistics.median(frozen_times), pct(frozen_times, 0.95)
    edit_total = [a + b for a, b in zip(edit_catch_up, edit_rank)]
    print()
    print("| measure | value |")
    print("| --- | --- |")
    print(f"| graph build from the indexed workspace (catch_up) | {build_s:.2f} s |")
    print(f"| global PageRank, cold (first rank) | {global_s:.2f} s ({cold_visits:,} edge visits) |")
    print(f"| graph memory (tracemalloc, incl. global rank state) | {graph_mb:.0f} MB |")
    print(f"| process peak RSS | {rss_mb():.0f} MB |")
    print(f"| rank() warm, {len(times)} random requests: p50 / p95 / max | {ms(p50)} / {ms(p95)} / {ms(max(times))} |")
    print(f"| rank() warm after gc.freeze(), same requests: p50 / p95 / max | {ms(f50)} / {ms(f95)} / {ms(max(frozen_times))} |")
    print(f"| baseline: full personalised power iteration, {len(base_times)} requests: p50 | {ms(b50)} |")
    print(f"| baseline: building its edge lists from the graph (Aider rebuilds per request) | {ms(rows_s)} |")
    if numpy_s is not None:
        print(f"| for reference: the same power iteration in numpy (not a dependency) | {ms(numpy_s)} |")
    print(f"| speed-up at p50 (baseline / rank) | {b50 / p50:.0f}x |")
    print()
    print(f"Accuracy against the exact baseline ({len(exacts)} requests) by PERSONAL_TOLERANCE:")
    print()
    print(f"| tolerance | rank() p50 | top-{TOP_K} overlap mean / min | largest score error median / max |")
    print("| --- | --- | --- | --- |")
    for tolerance, t50, ov_mean, ov_min, err_med, err_max in sweep:
        mark = " (default)" if tolerance == default_tolerance else ""
        print(f"| {tolerance:g}{mark} | {ms(t50)} | {ov_mean:.2f} / {ov_min:.2f} | {err_med:.3f} / {err_max:.3f} |")
    print()
    print("| after edits | value |")
    print("| --- | --- |")
    print(f"| one-file edit: workspace re-analysis (not graph) p50 | {ms(statistics.median(edit_index))} |")
    print(f"| one-file edit: graph catch_up p50 / p95 | {ms(statistics.median(edit_catch_up))} / {ms(pct(edit_catch_up, 0.95))} |")
    print(f"| one-file edit: next rank() (incl. global correction) p50 / p95 | {ms(statistics.median(edit_rank))} / {ms(pct(edit_rank, 0.95))} |")
    print(f"| one-file edit: catch_up + rank p50 / p95 | {ms(statistics.median(edit_total))} / {ms(pct(edit_total, 0.95))} |")
    print(f"| one-file edit: global correction edge visits, median | {statistics.median(edit_visits):,.0f} |")
    print(f"| incremental graph == rebuilt graph after the edits | {same} |")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
