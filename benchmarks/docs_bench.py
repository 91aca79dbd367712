"""Benchmark library docs (`ctx/docs`): cold miss, warm miss, memory hit, SQLite hit.

For each library, in one process:
- *cold miss*: the first topic, which parses the library (tree-sitter over its files,
  token counts, BM25 index);
- *warm miss*: other topics on the same library (sections already parsed: rank + select);
- *hit*: each topic repeated `--repeats` times (memory cache);
- *db hit*: a second `LibraryDocs` on the same cache file answers each topic once
  (SQLite read, nothing parsed).
The catalog (asking the interpreter for its paths, reading every METADATA) is timed once
on its own. Latencies are milliseconds, p50/p95 by nearest rank.

    python benchmarks/docs_bench.py [--repeats 200] [--cap 2500]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctx_lsp.docs.library import LibraryDocs
from ctx_lsp.errors import NotFound
from ctx_lsp.tokens import counter_for

CASES: dict[str, tuple[str, ...]] = {
    "pygls": ("custom requests", "workspace text document", "progress reporting", "start tcp server"),
    "lsprotocol": ("completion item", "hover params", "semantic tokens legend", "diagnostic severity"),
    "tree_sitter": ("query captures", "parse bytes", "tree cursor walk", "node children"),
    "tiktoken": ("encode text", "count tokens special", "get encoding by name", "decode bytes"),
}


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--cap", type=int, default=2500)
    args = ap.parse_args()
    counter = counter_for()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "docs.db"
        docs = LibraryDocs(None, counter, environ={}, cache_db=db)
        catalog_ms, catalog = timed(docs.catalog)
        print(f"catalog: {len(catalog)} distributions in {catalog_ms:.0f} ms", end=" ")
        print("(interpreter subprocess + METADATA headers)\n")
        rows = []
        for library, topics in CASES.items():
            try:
                cold, first = timed(lambda lib=library, t=topics[0]: docs.docs(lib, t, args.cap))
            except NotFound as err:
                print(f"skip {library}: {err}")
                continue
            warm = [timed(lambda lib=library, t=t: docs.docs(lib, t, args.cap))[0] for t in topics[1:]]
            hits = [
                timed(lambda lib=library, t=t: docs.docs(lib, t, args.cap))[0]
                for _ in range(args.repeats)
                for t in topics
            ]
            sections = len(docs.sections(library))
            rows.append([library, first.version, sections, cold, warm, hits, first.tokens])  # type: ignore[attr-defined]
        docs.close()
        fresh = LibraryDocs(None, counter, environ={}, cache_db=db)
        fresh.catalog()
        for row in rows:
            library = row[0]
            row.append([timed(lambda lib=library, t=t: fresh.docs(lib, t, args.cap))[0] for t in CASES[library]])
        fresh.close()
    header = (
        f"{'library':<12} {'version':<10} {'sections':>8} {'cold miss':>10} {'warm miss p50':>14} "
        f"{'hit p50':>8} {'hit p95':>8} {'db hit p50':>10} {'tokens':>7}"
    )
    print(header)
    print("-" * len(header))
    for library, version, sections, cold, warm, hits, tokens, db_hits in rows:
        print(
            f"{library:<12} {version:<10} {sections:>8} {cold:>8.1f}ms {percentile(warm, 0.5):>12.1f}ms "
            f"{percentile(hits, 0.5):>6.3f}ms {percentile(hits, 0.95):>6.3f}ms "
            f"{percentile(db_hits, 0.5):>8.2f}ms {tokens:>7}"
        )
    stats = docs.stats()
    print(
        f"\nstats(): lookups={stats['lookups']} hit_rate={stats['hit_rate']} "
        f"hit_p50_ms={stats['hit_p50_ms']} hit_p95_ms={stats['hit_p95_ms']} miss_p50_ms={stats['miss_p50_ms']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
