"""Naive baseline: answer a query with no index at all, as a fresh process would.

For each query: walk the workspace, read every code file (those whose last suffix is in
`--suffixes`), count its o200k tokens with tiktoken, score it by how often the query's
words occur in it (case-insensitive grep), and pack whole files best first under the
budget. Prints JSON: `{"load_s": …, "scans": [{"seconds", "files", "tokens", "picked", "used"}]}`.

    python benchmarks/scalebench/naive_scan.py ROOT --budget 8000 [--suffixes .py,.ts] QUERY [QUERY ...]

Standalone on purpose (stdlib + tiktoken, the tokenizer loaded offline by
`benchmarks/eval/tokens.py`): it must not get faster or slower when ctx-lsp changes. So it
does not import ctx-lsp's language table either: the runner passes the suffixes of the
files that table claimed in this workspace (`WorkspaceInfo.suffixes`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

SKIP = {"__pycache__", "node_modules", ".git", ".hg", ".ctx-lsp", ".venv", "venv", "build", "dist"}


def scan(
    root: Path, query: str, budget: int, count, suffixes: frozenset[str] = frozenset({".py"})
) -> dict[str, object]:
    started = time.perf_counter()
    words = {w for w in re.findall(r"[a-z0-9_]+", query.lower()) if len(w) >= 3}
    scored: list[tuple[int, int, str]] = []
    total = files = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP and not d.startswith(".")]
        for name in filenames:
            if os.path.splitext(name)[1].lower() not in suffixes:
                continue
            path = os.path.join(dirpath, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            n = count(text)
            lower = text.lower()
            score = sum(lower.count(w) for w in words)
            files += 1
            total += n
            if score:
                scored.append((-score, n, path))
    scored.sort()
    used = picked = 0
    for _, n, _ in scored:
        if used + n <= budget:
            used += n
            picked += 1
    return {"seconds": time.perf_counter() - started, "files": files, "tokens": total, "picked": picked, "used": used}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("queries", nargs="+")
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--suffixes", default=".py", help="comma-separated last suffixes of code files (default .py)")
    args = ap.parse_args()
    started = time.perf_counter()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
    import tokens  # benchmarks/eval/tokens.py: o200k_base offline

    encoding = tokens.encoding()

    def count(text: str) -> int:
        return len(encoding.encode_ordinary(text))

    load_s = time.perf_counter() - started
    suffixes = frozenset(s.strip().lower() for s in args.suffixes.split(",") if s.strip())
    scans = [scan(args.root, q, args.budget, count, suffixes) for q in args.queries]
    print(json.dumps({"load_s": load_s, "scans": scans}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
