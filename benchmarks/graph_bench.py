"""Benchmark the reference graph (`ctx_lsp/index/graph/`) on a real workspace.

Measures, in one process and one run: building the graph from an indexed workspace, its
memory, `rank()` latency for random requests (1-3 working files, 0-5 mentioned
identifiers), `callers_of`, and one-file edits (editor buffers) each followed by
`rank()`. A baseline runs on the same graph in the same run: a full personalised power
iteration over every edge for every request, which is what Aider's repo map does per
request (networkx `pagerank`, tol 1e-6), minus Aider's rebuilding of the graph, which is
timed apart. Its exact scores also measure the push approximation (top-k overlap, largest
score error), for several push thresholds.

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
from collections.abc import Callable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctx_lsp.config import Config
from ctx_lsp.index.graph import ReferenceGraph
from ctx_lsp.index.graph import ranking as ranking_module
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.relevance import DAMPING, PERSONAL_SHARE

BASELINE_TOL = 1e-6
"""networkx's default: stop when the L1 change is below N x tol."""
BASELINE_MAX_ITER = 100
TOP_K = 20
TOLERANCES = (1e-4, 2e-5, 1e-5)
"""Personal push thresholds compared with the default, speed against accuracy."""

Request = tuple[dict[str, float], list[str]]
Rows = Mapping[str, tuple[list[str], list[float]]]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def spread(values: list[float]) -> str:
    """p50 / p95 / max of timings."""
    return f"{ms(statistics.median(values))} / {ms(pct(values, 0.95))} / {ms(max(values))}"


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def requests_for(graph: ReferenceGraph, paths: list[str], n: int, seed: int) -> list[Request]:
    """Random requests: 1-3 working files, 0-5 identifiers defined in the workspace."""
    rnd = random.Random(seed)
    names = sorted(name for name, _ in graph.snapshot().definers)
    out = []
    for _ in range(n):
        working = rnd.sample(paths, rnd.randint(1, 3))
        personal = {p: 1.0 - 0.2 * i for i, p in enumerate(working)}
        out.append((personal, rnd.sample(names, rnd.randint(0, 5))))
    return out


# ---------------------------------------------------------------------------- baseline


def baseline_rows(graph: ReferenceGraph) -> dict[str, tuple[list[str], list[float]]]:
    """The graph's normalised out-edges, built from its public snapshot (Aider builds its
    networkx graph per request; this building is timed apart)."""
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
    graph: ReferenceGraph, rows: Rows, personal: Mapping[str, float], mentioned: list[str]
) -> dict[str, float]:
    """Full power iteration over every edge, jumping where `rank` jumps, dead ends jumping
    like the walk: what a per-request PageRank (Aider, networkx) computes, exactly."""
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
            share = DAMPING * xf
            for v, q in zip(targets, probs):
                nxt[v] += share * q
        base = 1.0 - DAMPING + DAMPING * dangling
        for f in nodes:
            nxt[f] += base * jump[f]
        err = sum(abs(nxt[f] - x[f]) for f in nodes)
        x = nxt
        if err < n * BASELINE_TOL:
            break
    top = max((v for f, v in x.items() if f not in working), default=1.0)
    return {f: 1.0 if f in working else min(1.0, v / top) for f, v in x.items()}


def numpy_power_iteration(rows: Rows) -> float | None:
    """Seconds of the same power iteration in numpy, if numpy happens to be installed."""
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


def accuracy(graph: ReferenceGraph, requests: list[Request], exacts: list[dict[str, float]]) -> list[str]:
    """Report rows: rank() speed and agreement with the exact baseline per push threshold
    (patched where the personal push reads it)."""
    default = ranking_module.PERSONAL_TOLERANCE
    lines = []
    try:
        for tolerance in sorted({default, *TOLERANCES}, reverse=True):
            ranking_module.PERSONAL_TOLERANCE = tolerance
            times, overlaps, errors = [], [], []
            for (personal, mentioned), exact in zip(requests, exacts):
                started = time.perf_counter()
                ours = graph.rank(personal, mentioned)
                times.append(time.perf_counter() - started)
                exact_top = sorted(exact, key=lambda f: (-exact[f], f))[:TOP_K]
                overlaps.append(len(set(exact_top) & {fr.abs_path for fr in ours.files[:TOP_K]}) / TOP_K)
                errors.append(max(abs(exact[f] - ours.scores.get(f, 0.0)) for f in exact))
            mark = " (default)" if tolerance == default else ""
            lines.append(
                f"| {tolerance:g}{mark} | {ms(statistics.median(times))} | "
                f"{statistics.mean(overlaps):.2f} / {min(overlaps):.2f} | "
                f"{statistics.median(errors):.3f} / {max(errors):.3f} |"
            )
    finally:
        ranking_module.PERSONAL_TOLERANCE = default
    return lines


# ---------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", type=Path)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--baseline-requests", type=int, default=20)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    workspace = Workspace([args.directory.resolve()], Config())
    index_s = timed(workspace.index)
    python = sorted(f.abs_path for f in workspace.files.values() if f.language == "python")
    decode_s = timed(lambda: [workspace.files[f].outline for f in python])  # once per process
    print(f"workspace: {args.directory} ({len(workspace.files)} files, {len(python)} Python); cores: {os.cpu_count()}")
    print(
        f"index (from its cache where possible): {index_s:.2f} s; outline decode: {decode_s:.2f} s "
        "(the search index pays it too; not graph time)"
    )
    rows: list[tuple[str, str]] = []

    # build and memory (a separate graph, so tracemalloc does not slow the timed one)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    probe = ReferenceGraph()
    probe.update([], list(workspace.files.values()))
    probe.rank({})
    graph_mb = (tracemalloc.get_traced_memory()[0] - before) / 2**20
    tracemalloc.stop()
    del probe
    gc.collect()

    graph = ReferenceGraph()
    workspace.subscribe(graph.update)
    graph.update([], list(workspace.files.values()))
    rows.append(("graph build from the indexed workspace (first catch_up)", f"{timed(graph.catch_up):.2f} s"))
    cold_s = timed(lambda: graph.rank({}))
    rows.append(("global PageRank, cold (first rank)", f"{cold_s:.2f} s ({graph.global_visits:,} edge visits)"))
    rows.append(("graph memory (tracemalloc, with the global rank state)", f"{graph_mb:.0f} MB"))
    snap = graph.snapshot()
    print(
        f"graph: {len(snap.files)} files, {len(snap.edges):,} edges "
        f"({sum(len(t) for _, t in snap.imports):,} from imports), {len(snap.definers):,} defined names"
    )

    # requests
    requests = requests_for(graph, python, args.requests, args.seed)
    for personal, mentioned in requests[:5]:  # fill the per-file caches
        graph.rank(personal, mentioned)
    times = [timed(lambda: graph.rank(p, m)) for p, m in requests]
    gc.freeze()  # what a long-running server does after indexing: no full-heap GC pauses
    frozen = [timed(lambda: graph.rank(p, m)) for p, m in requests]
    gc.unfreeze()
    rows.append((f"rank() warm, {len(times)} random requests: p50 / p95 / max", spread(times)))
    rows.append(("rank() warm after gc.freeze(), same requests: p50 / p95 / max", spread(frozen)))
    called = [name for name, _ in snap.definers][:: max(1, len(snap.definers) // 50)]
    caller_times = [timed(lambda: graph.callers_of(n)) for n in called]
    rows.append(("callers_of(name), 50 names: p50 / p95 / max", spread(caller_times)))

    # baseline and accuracy
    build_rows_s = timed(lambda: baseline_rows(graph))
    edges = baseline_rows(graph)
    exacts: list[dict[str, float]] = []
    base_times = [
        timed(lambda: exacts.append(baseline_rank(graph, edges, p, m))) for p, m in requests[: args.baseline_requests]
    ]
    b50, p50 = statistics.median(base_times), statistics.median(times)
    rows.append((f"baseline: full personalised power iteration, {len(base_times)} requests: p50", ms(b50)))
    rows.append(("baseline: building its edge lists (Aider rebuilds its graph per request)", ms(build_rows_s)))
    ratios = f"{b50 / p50:.0f}x; {(b50 + build_rows_s) / p50:.0f}x"
    rows.append(("speed-up at p50: baseline / rank(); with the rebuild", ratios))
    numpy_s = numpy_power_iteration(edges)
    if numpy_s is not None:
        rows.append(("for reference: the same full power iteration in numpy (not a dependency)", ms(numpy_s)))
    accuracy_lines = accuracy(graph, requests, exacts)

    # edits: an editor buffer gains a function calling three names, then a request
    rnd = random.Random(args.seed + 1)
    names = [name for name, _ in snap.definers]
    edit_index, edit_catch_up, edit_rank, visits, edited = [], [], [], [], []
    for i in range(args.edits):
        abs_path = rnd.choice(python)
        text, _ = workspace.read_text(workspace.files[abs_path])
        text += f"\n\ndef _bench_edit_{i}():\n    return {' + '.join(f'{n}()' for n in rnd.sample(names, 3))}\n"
        edit_index.append(timed(lambda: workspace.change_document(abs_path, text, i + 1)))  # queues
        edited.append(abs_path)
        personal, mentioned = requests[i % len(requests)]
        edit_catch_up.append(timed(graph.catch_up))
        edit_rank.append(timed(lambda: graph.rank({abs_path: 1.0, **personal}, mentioned)))
        visits.append(graph.global_visits)
    same = _rebuilt(workspace).snapshot() == graph.snapshot()
    for abs_path in sorted(set(edited)):
        workspace.close_document(abs_path)
    rows.append(("one-file edit: workspace re-analysis (not graph): p50", ms(statistics.median(edit_index))))
    rows.append(("one-file edit: graph catch_up: p50 / p95 / max", spread(edit_catch_up)))
    rows.append(("one-file edit: next rank() (with the global correction): p50 / p95 / max", spread(edit_rank)))
    rows.append(
        ("one-file edit: catch_up + rank(): p50 / p95 / max", spread([a + b for a, b in zip(edit_catch_up, edit_rank)]))
    )
    rows.append(("one-file edit: global correction, edge visits (median)", f"{statistics.median(visits):,.0f}"))
    rows.append(("incremental graph == rebuilt graph after the edits", str(same)))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows.append(("process peak RSS (whole benchmark)", f"{peak_mb:.0f} MB"))

    print()
    print("| measure | value |")
    print("| --- | --- |")
    for label, value in rows:
        print(f"| {label} | {value} |")
    print()
    print(f"Against the exact baseline ({len(exacts)} requests), by personal push threshold:")
    print()
    print(f"| PERSONAL_TOLERANCE | rank() p50 | top-{TOP_K} overlap mean / min | largest score error median / max |")
    print("| --- | --- | --- | --- |")
    print("\n".join(accuracy_lines))
    return 0 if same else 1


def _rebuilt(workspace: Workspace) -> ReferenceGraph:
    graph = ReferenceGraph()
    graph.update([], list(workspace.files.values()))
    return graph


if __name__ == "__main__":
    sys.exit(main())
