"""The parse floor per grammar, and ctx-lsp's own per-file cost beside it, in one process (one core).

For every code file (one the language layer claims, `scalebench.workspaces.code_files`)
that ctx-lsp would outline (at most `MAX_FILE_BYTES`, not binary, not minified or
generated), per language:

- **read**: open + read the bytes;
- **parse**: `Parser.parse` alone, with the grammar ctx-lsp loads (`LanguageSpec.parser()`):
  the floor no outline of that language can go below;
- **ctx-lsp**: what the index does with those bytes once read, per file: `analyse_uncounted`
  (decode, hash, parse, query, walk, the outline's JSON — what a cold index's workers run)
  and the file's search documents (`file_docs`: the outline decoded, split into terms — the
  postings' per-file share). Token counting is left out: it costs the same per byte in
  every language and would hide the differences this compares.

The two are timed file by file, interleaved, so both see the same load; with `--repeat N`
each file's fastest of N is kept (a shared machine's spikes fall out). Grammars are
loaded and queries compiled on a warm-up file first (once per process, outside the times).
The ratio `ctx-lsp / parse` per language says how much a language's query and walk add to
its grammar's own cost; no language's should be far above Python's (issue 21's rule).

Prints JSON `{"files", "bytes", "seconds" (read + parse, every language), "read_s",
"parse_s", "ctx_s", "kept_out", "languages": {name: {...}}}`; `seconds` excludes the
interpreter start and the imports. DESIGN's "about 445 files/s per core" was this
measurement over Django's `.py` files.

    python benchmarks/scalebench/parse_floor.py ROOT [--repeat N] [--sample N --seed S]

`--sample N` measures a seeded sample of N code files (the kernel's 60K would take the
parse floor longer than the index it is a floor for) and adds `sample`: how many files
of how many, their share of the code bytes, and `seconds_full_est`, the floor of every
file extrapolated by bytes (parse time is close to linear in bytes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: `scalebench` importable

from ctx_lsp.code.languages import LanguageSpec, language_for
from ctx_lsp.config import MAX_FILE_BYTES
from ctx_lsp.index.files import analyse_uncounted, machine_written, to_indexed
from ctx_lsp.index.scan import looks_binary
from ctx_lsp.index.search import file_docs
from scalebench.workspaces import code_files


@dataclass
class LanguageCost:
    """One language's files and seconds (each file's fastest of the repeats)."""

    files: int = 0
    bytes: int = 0
    kept_out: int = 0
    read_s: float = 0.0
    parse_s: float = 0.0
    ctx_s: float = 0.0

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self)
        mb = self.bytes / 1e6
        out["parse_mb_s"] = mb / self.parse_s if self.parse_s else None
        out["ctx_mb_s"] = mb / self.ctx_s if self.ctx_s else None
        out["ratio"] = self.ctx_s / self.parse_s if self.parse_s else None
        return out


def ctx_lsp_path(root: str, abs_path: str, rel_path: str, data: bytes) -> int:
    """ctx-lsp's own work on one file's bytes (see the module docstring); its documents."""
    analysis = analyse_uncounted(rel_path, data, len(data), 0, abs_path)
    if analysis is None:
        return 0
    entry = to_indexed(analysis[0], root, abs_path, rel_path)
    return len(file_docs(entry))


def measure(root: Path, repeat: int = 1, sample: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Read, parse and analyse every code file under `root` (or a seeded sample of
    `sample` of them); the figures per language."""
    root = root.resolve()
    costs: dict[str, LanguageCost] = {}
    jobs: list[tuple[LanguageSpec, str, str, bytes]] = []
    by_language = code_files(root)
    every = [(language, path) for language, paths in sorted(by_language.items()) for path in paths]
    sampled: dict[str, Any] | None = None
    if sample is not None and sample < len(every):
        chosen = set(random.Random(f"floor-{seed}").sample(range(len(every)), sample))
        picked: dict[str, list[Path]] = {}
        for i, (language, path) in enumerate(every):
            if i in chosen:
                picked.setdefault(language, []).append(path)
        total_bytes = sum(_size(p) for _, p in every)
        sample_bytes = sum(_size(p) for paths in picked.values() for p in paths)
        sampled = {"files": sample, "of": len(every), "seed": seed, "bytes_share": sample_bytes / max(1, total_bytes)}
        by_language = picked
    for language, paths in sorted(by_language.items()):
        cost = costs.setdefault(language, LanguageCost())
        for path in paths:
            t0 = time.perf_counter()
            try:
                data = path.read_bytes()
            except OSError:
                cost.kept_out += 1
                continue
            cost.read_s += time.perf_counter() - t0
            rel = path.relative_to(root).as_posix()
            spec = language_for(str(path), data)  # with the content, as the index decides `.h`
            if (
                spec is None
                or len(data) > MAX_FILE_BYTES
                or looks_binary(data)
                or machine_written(rel, data) is not None
            ):
                cost.kept_out += 1
                continue
            jobs.append((spec, str(path), rel, data))
    warmed: set[int] = set()
    for spec, abs_path, rel, data in jobs:  # grammar loads and query compiles, untimed
        if id(spec) not in warmed:
            warmed.add(id(spec))
            spec.parser().parse(data)
            ctx_lsp_path(str(root), abs_path, rel, data)
    for spec, abs_path, rel, data in jobs:
        parser = spec.parser()
        parse_s = ctx_s = float("inf")
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            parser.parse(data)
            t1 = time.perf_counter()
            ctx_lsp_path(str(root), abs_path, rel, data)
            t2 = time.perf_counter()
            parse_s, ctx_s = min(parse_s, t1 - t0), min(ctx_s, t2 - t1)
        cost = costs.setdefault(spec.name, LanguageCost())  # a `.h` its content says is C++
        cost.files += 1
        cost.bytes += len(data)
        cost.parse_s += parse_s
        cost.ctx_s += ctx_s
    languages = {name: cost.figures() for name, cost in sorted(costs.items(), key=lambda kv: -kv[1].bytes)}
    read_s = sum(c.read_s for c in costs.values())
    parse_s = sum(c.parse_s for c in costs.values())
    out = {
        "files": sum(c.files for c in costs.values()),
        "bytes": sum(c.bytes for c in costs.values()),
        "seconds": read_s + parse_s,
        "read_s": read_s,
        "parse_s": parse_s,
        "ctx_s": sum(c.ctx_s for c in costs.values()),
        "kept_out": sum(c.kept_out for c in costs.values()),
        "repeat": max(1, repeat),
        "languages": languages,
    }
    if sampled is not None:
        sampled["seconds_full_est"] = (read_s + parse_s) / max(sampled["bytes_share"], 1e-9)
        out["sample"] = sampled
    return out


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--repeat", type=int, default=1, help="keep each file's fastest of N (default 1)")
    ap.add_argument("--sample", type=int, help="measure a seeded sample of N code files (extrapolated by bytes)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(json.dumps(measure(args.root, args.repeat, args.sample, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
