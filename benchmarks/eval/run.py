"""Run the context-recall eval: ctx-lsp vs BM25 whole files vs Aider's repo map.

For each instance (a real commit; see instances.py) the systems are given the
parent commit's tree and the commit message, and we check whether the bundle
contains the files, functions and lines the commit changed, at each token budget.

    python benchmarks/eval/run.py --repo /work/.mirror/pallets+click/repo \\
        --instances 60 --budgets 2000,8000,32000 --systems ctxlsp,bm25,aider \\
        --modes cold,open --out results.json

Modes:
- cold: only the task text;
- open: the commit's most-changed file is open; it is removed from the answer
  set and instances with nothing else left are skipped.

Numbers: recall per instance (found / answer size), averaged over instances
(each instance weighs the same); pooled recall (all found / all answers) is in
the JSON too. Function recall only counts instances with at least one changed
function, line recall only instances with at least one qualifying changed line
(see instances.find_answer_lines and metrics.piece_shows_line). Token counts are
o200k_base on exactly the text the model would see; a bundle over budget is
flagged as an overrun (and still scored).

Languages: each repository's instances are in its main language (Python,
TypeScript/JavaScript, Go or Rust; detected from its files, or ``--lang``), and the
BM25 baselines index that language's source files. ``--by-repo`` prints one table per
repository with its language.

Which ctx-lsp: ``--ctx-root DIR`` measures the checkout at DIR (e.g. /work/wt-lang) instead
of this one, ``--ctx-python PY`` runs the CLI system with another interpreter (one with
that checkout's dependencies). Where ``ctx_lsp`` was imported from is printed once per
system, and the checkout's commit is in the JSON (``ctxlsp``).

Results are cached per (instance, system version, mode, budget) in
/tmp/eval-cache/results.jsonl, so a re-run only computes what changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import langs
import metrics
import tokens
from bm25_baseline import list_files
from gitrepo import DEFAULT_HISTORY_WS_ROOT, DEFAULT_WS_ROOT, GitRepo
from instances import INSTANCES_VERSION, Instance, extract, read_jsonl, repo_language, write_jsonl
from systems import System, ctxlsp_provenance, file_hash, make_system

HERE = Path(__file__).resolve().parent
CACHE_DIR = Path(os.environ.get("CTX_EVAL_CACHE", "/tmp/eval-cache"))
MODES = ("cold", "open")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- instances


def load_pool(repo_path: str, pool: int, since: str | None, lang: str | None = None) -> list[Instance]:
    """The newest ``pool`` instances of a repo, extracted once and cached by HEAD sha."""
    repo = GitRepo(repo_path)
    head = repo.rev_parse("HEAD")
    lang = lang or repo_language(repo)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    srcs = file_hash(HERE / "instances.py", HERE / "gitrepo.py", HERE / "langs.py")
    key = f"{since}|{INSTANCES_VERSION}|{srcs}" + ("" if lang == "python" else f"|{lang}")
    tag = hashlib.sha256(key.encode()).hexdigest()[:8]
    path = CACHE_DIR / "instances" / f"{repo.name}-{head[:12]}-p{pool}-{tag}.jsonl"
    if path.exists():
        return read_jsonl(path)
    log(f"[run] extracting {lang} instances from {repo.name} (shallow={repo.is_shallow()})")
    insts = extract(repo_path, max_instances=pool, since=since, progress=True, lang=lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(insts, path)
    return insts


def find_instance(repo_path: str, pool: int, commit: str) -> Instance | None:
    """The instance of `commit` (a sha prefix) among a repo's newest `pool`, if any."""
    return next((i for i in load_pool(repo_path, pool, None) if i.commit.startswith(commit)), None)


def eligible(inst: Instance, mode: str) -> bool:
    return bool(inst.answer(mode)[0])


def select(pool: list[Instance], mode: str, n: int | None, seed: int) -> list[Instance]:
    """Deterministic sample of ``n`` eligible instances, returned in pool (newest-first) order."""
    cands = [i for i in pool if eligible(i, mode)]
    if n is None or n >= len(cands):
        return cands
    rng = random.Random(f"{seed}:{cands[0].repo}:{mode}")
    picked = sorted(rng.sample(range(len(cands)), n))
    return [cands[i] for i in picked]


# --------------------------------------------------------------------------- scoring


def score(inst: Instance, mode: str, budget: int, bundle: metrics.Bundle) -> dict[str, Any]:
    files, funcs = inst.answer(mode)
    lines = inst.lines(mode)
    ffound = metrics.found_files(bundle, files)
    fnfound = metrics.found_functions(bundle, funcs)
    lfound = metrics.found_lines(bundle, lines)
    ntok = tokens.count(bundle.text)
    return {
        "tokens": ntok,
        "reported_tokens": bundle.reported_tokens,
        "overrun": ntok > budget or (bundle.reported_tokens or 0) > budget,
        "latency_s": bundle.latency_s,
        "files_total": len(files),
        "files_found": ffound,
        "funcs_total": len(funcs),
        "funcs_found": [f"{f['path']}::{f['qualname']}" for f in fnfound],
        "lines_total": len(lines),
        "lines_found": [f"{ln['path']}:{ln['line']}" for ln in lfound],
        "file_recall": metrics.recall(len(ffound), len(files)),
        "func_recall": metrics.recall(len(fnfound), len(funcs)),
        "line_recall": metrics.recall(len(lfound), len(lines)),
        "bundle_files": sorted(bundle.paths()),
        "extra": bundle.extra,
    }


def instance_fingerprint(inst: Instance) -> str:
    blob = json.dumps([inst.task, inst.files, inst.functions, inst.open_file, inst.answer_lines], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


class ResultCache:
    """Append-only JSONL of scored results keyed by everything that could change them."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.rows: dict[str, dict] = {}
        if path and path.exists():
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        self.rows[row["key"]] = row
                    except (json.JSONDecodeError, KeyError):
                        continue

    @staticmethod
    def key(inst: Instance, system: str, version: str, mode: str, budget: int, mkey: str) -> str:
        return "|".join([inst.id, instance_fingerprint(inst), system, version, mode, str(budget), mkey])

    def get(self, key: str) -> dict | None:
        return self.rows.get(key)

    def put(self, key: str, row: dict) -> None:
        row = dict(row, key=key)
        self.rows[key] = row
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One write() on an O_APPEND descriptor: two runs sharing the cache never interleave.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (json.dumps(row) + "\n").encode("utf-8"))
            finally:
                os.close(fd)


# --------------------------------------------------------------------------- aggregation


def _mean(xs: list[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def aggregate(rows: list[dict]) -> dict[str, Any]:
    """Summary per (system, mode, budget) and per (system, mode)."""
    by: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["system"], r["mode"], r["budget"])].append(r)
    out: dict[str, Any] = {}
    for (system, mode, budget), rs in sorted(by.items()):
        ok = [r for r in rs if "error" not in r]
        fr = [r["file_recall"] if "error" not in r else 0.0 for r in rs]
        fnr = [r["func_recall"] if "error" not in r else 0.0 for r in rs if r.get("funcs_total", 0) > 0]
        lnr = [r["line_recall"] if "error" not in r else 0.0 for r in rs if r.get("lines_total", 0) > 0]
        out[f"{system}|{mode}|{budget}"] = {
            "system": system,
            "mode": mode,
            "budget": budget,
            "n": len(rs),
            "n_with_functions": len(fnr),
            "n_with_lines": len(lnr),
            "errors": len(rs) - len(ok),
            "file_recall": _mean(fr),
            "func_recall": _mean(fnr),
            "line_recall": _mean(lnr),
            "file_recall_pooled": (sum(len(r["files_found"]) for r in ok) / max(1, sum(r["files_total"] for r in rs))),
            "func_recall_pooled": (
                sum(len(r["funcs_found"]) for r in ok) / max(1, sum(r.get("funcs_total", 0) for r in rs))
            ),
            "line_recall_pooled": (
                sum(len(r.get("lines_found", [])) for r in ok) / max(1, sum(r.get("lines_total", 0) for r in rs))
            ),
            "mean_tokens": _mean([r["tokens"] for r in ok]),
            "overruns": sum(1 for r in ok if r["overrun"]),
            "max_overrun_pct": max([100.0 * (r["tokens"] - budget) / budget for r in ok if r["overrun"]] or [0.0]),
            "mean_latency_s": _mean([r["latency_s"] for r in ok]),
            "p95_latency_s": (sorted(r["latency_s"] for r in ok)[int(0.95 * (len(ok) - 1))] if ok else None),
        }
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _k(b: int) -> str:
    return f"{b // 1000}K" if b % 1000 == 0 else str(b)


def markdown_table(summary: dict[str, Any], systems: list[str], modes: list[str], budgets: list[int]) -> str:
    head = (
        ["system", "mode", "n (fn/line)"]
        + [f"file R@{_k(b)}" for b in budgets]
        + [f"fn R@{_k(b)}" for b in budgets]
        + [f"line R@{_k(b)}" for b in budgets]
        + ["mean tokens (" + "/".join(_k(b) for b in budgets) + ")", "mean latency ms", "overruns", "errors"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in systems:
        for m in modes:
            cells = [summary.get(f"{s}|{m}|{b}") for b in budgets]
            if not any(cells):
                continue
            c0 = next(c for c in cells if c)
            row = [s, m, f"{c0['n']} ({c0['n_with_functions']}/{c0.get('n_with_lines', 0)})"]
            row += [_pct(c["file_recall"]) if c else "–" for c in cells]
            row += [_pct(c["func_recall"]) if c else "–" for c in cells]
            row += [_pct(c.get("line_recall")) if c else "–" for c in cells]
            row.append(
                "/".join(f"{c['mean_tokens']:.0f}" if c and c["mean_tokens"] is not None else "–" for c in cells)
            )
            lats = [c["mean_latency_s"] for c in cells if c and c["mean_latency_s"] is not None]
            row.append(f"{1000 * statistics.fmean(lats):.0f}" if lats else "–")
            row.append(str(sum(c["overruns"] for c in cells if c)))
            row.append(str(sum(c["errors"] for c in cells if c)))
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main loop


def run(args: argparse.Namespace) -> dict[str, Any]:
    if getattr(args, "ctx_root", None):
        os.environ["CTX_EVAL_CTXLSP_ROOT"] = args.ctx_root
    if getattr(args, "ctx_python", None):
        os.environ["CTX_EVAL_CTXLSP_PYTHON"] = args.ctx_python
    if getattr(args, "ctx_config", None):
        json.loads(args.ctx_config)  # fail fast on a typo
        os.environ["CTX_EVAL_CTXLSP_CONFIG"] = args.ctx_config
    with_history = bool(getattr(args, "with_history", False))
    budgets = [int(b) for b in args.budgets.split(",")]
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"unknown mode {m!r}")
    system_names = [s for s in args.systems.split(",") if s]
    # Which checkout, read when its ctx_lsp/ is copied (next line), not at the end of a
    # run: a checkout being edited has moved on by then.
    provenance = ctxlsp_provenance() if any(s.startswith("ctxlsp") for s in system_names) else None
    systems: dict[str, System] = {s: make_system(s) for s in system_names}
    versions = {s: sys_.version_key() for s, sys_ in systems.items()}
    mkey = f"s{metrics.SCORING_VERSION}-{file_hash(HERE / 'tokens.py')}" + ("-history-ws" if with_history else "")
    cache = ResultCache(None if args.no_cache else CACHE_DIR / "results.jsonl")
    tokens.encoding()  # fail fast if the tokenizer data is missing

    t_start = time.perf_counter()
    rows: list[dict] = []
    per_repo: dict[str, dict[str, Any]] = {}
    scan_times: dict[str, list[float]] = defaultdict(list)
    for repo_path in args.repo:
        repo = GitRepo(repo_path)
        lang = getattr(args, "lang", None) or repo_language(repo)
        pool = load_pool(repo_path, args.pool, args.since, lang)
        chosen = {m: select(pool, m, args.instances, args.seed) for m in modes}
        per_repo[repo.name] = {m: len(v) for m, v in chosen.items()} | {"pool": len(pool), "lang": lang}
        if pool:
            per_repo[repo.name]["commits"] = f"{pool[-1].date[:10]}..{pool[0].date[:10]}"
        order = [i for i in pool if any(i in chosen[m] for m in modes)]
        for system in systems.values():
            system.set_language(lang)
        log(f"[run] {repo.name} ({lang}): pool {len(pool)}, " + ", ".join(f"{m} {len(chosen[m])}" for m in modes))
        for k, inst in enumerate(order, 1):
            inst_modes = [m for m in modes if inst in chosen[m]]
            ws: Path | None = None
            files: list[str] = []
            for sname, system in systems.items():
                prepared = False
                for mode in inst_modes:
                    open_file = inst.open_file if mode == "open" else None
                    for budget in budgets:
                        key = ResultCache.key(inst, sname, versions[sname], mode, budget, mkey)
                        row = cache.get(key)
                        if row is None:
                            if ws is None and with_history:
                                ws = repo.history_workspace(inst.parent, Path(args.history_ws_root))
                            elif ws is None:
                                ws = repo.workspace(inst.parent, Path(args.ws_root))
                                files = list_files(ws)
                            try:
                                if not prepared:
                                    scan = system.prepare(ws, files)
                                    if scan is not None:
                                        scan_times[sname].append(scan)
                                    prepared = True
                                bundle = system.bundle(ws, files, inst.task, budget, open_file)
                                row = score(inst, mode, budget, bundle)
                            except Exception as exc:  # keep going; errors are reported
                                ans_files, ans_funcs = inst.answer(mode)
                                row = {
                                    "error": f"{type(exc).__name__}: {exc}"[:2000],
                                    "files_total": len(ans_files),
                                    "funcs_total": len(ans_funcs),
                                    "lines_total": len(inst.lines(mode)),
                                }
                            row.update(
                                instance=inst.id,
                                repo=inst.repo,
                                commit=inst.commit,
                                system=sname,
                                mode=mode,
                                budget=budget,
                            )
                            if "error" not in row:
                                cache.put(key, row)
                            status = (
                                "ERROR " + row["error"][:200]
                                if "error" in row
                                else f"fR={_pct(row['file_recall'])} fnR={_pct(row['func_recall'])}"
                                f" lnR={_pct(row['line_recall'])}"
                                f" tok={row['tokens']} {1000 * row['latency_s']:.0f}ms"
                                + (" OVERRUN" if row["overrun"] else "")
                            )
                            log(
                                f"[run] {repo.name} {k}/{len(order)} {inst.commit[:10]} "
                                f"{sname} {mode} {budget}: {status}"
                            )
                        rows.append(row)
    for s in systems.values():
        s.close()
    elapsed = time.perf_counter() - t_start
    summary = aggregate(rows)
    table = markdown_table(summary, system_names, modes, budgets)
    by_repo = {}
    for name in per_repo:
        summ = aggregate([r for r in rows if r["repo"] == name])
        by_repo[name] = {
            "lang": per_repo[name]["lang"],
            "summary": summ,
            "table": markdown_table(summ, system_names, modes, budgets),
        }
    by_lang = {}
    for lang in sorted({p["lang"] for p in per_repo.values()}):
        names = {n for n, p in per_repo.items() if p["lang"] == lang}
        summ = aggregate([r for r in rows if r["repo"] in names])
        by_lang[lang] = {"summary": summ, "table": markdown_table(summ, system_names, modes, budgets)}
    return {
        "config": {k: v for k, v in vars(args).items()},
        "versions": versions,
        "ctxlsp": provenance,
        "instances_per_repo": per_repo,
        "elapsed_s": elapsed,
        "mean_scan_s": {s: statistics.fmean(v) for s, v in scan_times.items() if v},
        "summary": summary,
        "table": table,
        "by_repo": by_repo,
        "by_lang": by_lang,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="ctx-lsp context-recall eval", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    ap.add_argument(
        "--repo", action="append", required=True, help="git dir (bare is fine) or work tree; repeat for several"
    )
    ap.add_argument(
        "--instances",
        type=int,
        default=None,
        help="instances per repo and mode (seeded sample of the pool); default all",
    )
    ap.add_argument("--pool", type=int, default=200, help="newest N usable commits per repo to draw instances from")
    ap.add_argument("--since", default=None, help="only commits after REV")
    ap.add_argument("--budgets", default="2000,8000,32000")
    ap.add_argument("--systems", default="ctxlsp,bm25,aider")
    ap.add_argument("--modes", default="cold,open")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the full results JSON here")
    ap.add_argument("--ws-root", default=str(DEFAULT_WS_ROOT))
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--by-repo", action="store_true", help="also print one table per repo")
    ap.add_argument("--lang", choices=langs.LANGUAGES, default=None, help="default: each repo's main language")
    ap.add_argument(
        "--ctx-root",
        default=None,
        help="measure the ctx-lsp checkout at DIR (its ctx_lsp/ is snapshotted), or DIR@REV for the commit REV"
        " of that checkout (git archive, uncommitted edits left out); default this checkout",
    )
    ap.add_argument("--ctx-python", default=None, help="interpreter for the ctxlsp CLI system (default: this one)")
    ap.add_argument(
        "--ctx-config",
        default=None,
        help="JSON config overrides for ctxlsp-engine (e.g. '{\"history\": false}'); part of its cache key",
    )
    ap.add_argument(
        "--with-history",
        action="store_true",
        help="workspaces are repositories holding the history up to the parent commit and nothing after it"
        " (gitrepo.history_workspace), not git-archive trees",
    )
    ap.add_argument("--history-ws-root", default=str(DEFAULT_HISTORY_WS_ROOT))
    args = ap.parse_args(argv)
    res = run(args)
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1, default=str))
    print(res["table"])
    if args.by_repo:
        for name, part in res["by_repo"].items():
            print(f"\n### {name} ({part['lang']})\n\n{part['table']}")
    if res["ctxlsp"]:
        print(f"\nctx-lsp measured: {json.dumps(res['ctxlsp'])}")
    print(
        f"\ninstances per repo: {json.dumps(res['instances_per_repo'])}; "
        f"elapsed {res['elapsed_s']:.0f}s; first-request scan per workspace (s): "
        + json.dumps({k: round(v, 2) for k, v in res["mean_scan_s"].items()})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
