"""The measurements of one workspace, in order, each step independent of the others' failure.

1. baselines: the parse floor per grammar beside ctx-lsp's own per-file cost (every
   language present), the naive scan (fresh process and per query in a warm one), the
   interpreter + import floor of the CLI;
2. cold `ctx-lsp index` (cache removed, fresh process; the last run leaves the cache warm);
3. the CLI: first `ctx-lsp bundle` after the index, then a few more (fresh processes);
4. the server: spawn → initialize → first `ctx/bundle`, a few times; the last session stays
   up for the warm measurements: `ctx/bundle` at each budget over the queries, with an open
   file, didChange → bundle (the edit target's language: its `languageId`, a definition in
   its syntax), `ctx/docs`, peak RSS;
5. Aider's repo map per new query (when its virtualenv exists).

A step that fails or hangs (every wait has a deadline) records what, where and how long
in its rows and in `problems`, and the next step still runs.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scalebench import procs, words
from scalebench.aider_map import AiderMap
from scalebench.lsp import LspClient
from scalebench.workspaces import WARMUP_QUERIES, WorkspaceInfo, listed_files

HERE = Path(__file__).resolve().parent
BUDGETS = (8000, 2000, 32000)
"""Order the warm server is asked in: 8K first, so the headline row sees each query new."""
DOCS_LIBRARY, DOCS_TOPIC = "pygls", "custom requests"
NAIVE_QUERIES = 6
"""Queries the warm naive scan answers after its first (each reads and tokenizes every code file)."""
RATIO_OUT_OF_LINE = 1.5
"""A language whose ctx-lsp / parse-floor ratio is over this many times Python's, and which
ctx-lsp is slower on per byte than Python, is flagged in the report: its query or walk
costs more than its grammar explains (issue 21; see `language_ratios`)."""

ROW_SPECS: tuple[tuple[str, str, str], ...] = (
    ("cold_index", "cold `ctx-lsp index` (cache removed, fresh process)", "≤ 4 s"),
    ("cli_first_bundle", "warm start → first bundle, CLI (first `ctx-lsp bundle` after the index)", "≤ 0.5 s"),
    (
        "server_first_bundle",
        "warm start → first bundle, server (spawn → initialize → `ctx/bundle` answered)",
        "≤ 0.5 s",
    ),
    ("cli_bundle", "`ctx-lsp bundle` CLI, warm cache, 8K (what a shell-driven agent pays per call)", "≤ 0.5 s"),
    ("lsp_bundle_2k", "LSP `ctx/bundle` 2K p50 / p95, warm server", "—"),
    ("lsp_bundle_8k", "LSP `ctx/bundle` 8K p50 / p95, warm server", "p95 ≤ 50 ms"),
    ("lsp_bundle_32k", "LSP `ctx/bundle` 32K p50 / p95, warm server", "—"),
    ("lsp_bundle_8k_open", "LSP `ctx/bundle` 8K + an open file, p50 / p95", "p95 ≤ 50 ms"),
    ("edit_to_bundle", "didChange → next `ctx/bundle` shows the edit, p50 / p95", "≤ 50 ms"),
    ("docs_hit", f"`ctx/docs` hit ({DOCS_LIBRARY}, repeated topic), p50", "—"),
    ("server_rss", "server peak RSS (VmHWM, everything loaded)", "≤ 250 MB"),
    ("cli_rss", "CLI peak RSS (`ctx-lsp bundle`)", "≤ 250 MB"),
    ("daemon_start", "`ctx-lsp daemon start` (warm cache) until it answers", "—"),
    ("daemon_cli_bundle", "`ctx-lsp bundle` CLI through the daemon, 8K, new queries", "≤ 0.5 s"),
    ("daemon_rss", "daemon peak RSS (VmHWM) after those bundles", "≤ 250 MB"),
    ("vs_aider", "per new query vs Aider's repo map (8K p50, warm, same run)", "≥ 100×"),
    ("baseline_parse_floor", "baseline: read + tree-sitter parse of every code file, one process", "—"),
    (
        "parse_ratio",
        "per language: ctx-lsp's per-file analysis / its grammar's parse floor (same files, one process)",
        "≈ Python's",
    ),
    ("baseline_naive_process", "baseline: naive scan, fresh process (read + tiktoken every code file + grep)", "—"),
    ("baseline_naive_query", "baseline: naive scan per query, warm process", "—"),
    ("baseline_aider_query", "baseline: Aider repo map per new query (8K, warm)", "—"),
    ("floor_cli_imports", "floor: interpreter start + `import ctx_lsp.cli, ctx_lsp.engine`", "—"),
)
ROW_KEYS = tuple(key for key, _, _ in ROW_SPECS)


@dataclass
class Options:
    repeat: int = 3
    cold_runs: int = 2
    queries: int = 20
    edits: int = 10
    docs_hits: int = 5
    aider_queries: int = 8
    aider_python: Path | None = None
    timeout: float = 900.0
    request_timeout: float = 120.0
    seed: int = 0
    ctx_root: Path | None = None
    logs: Path = Path("/tmp")


@dataclass
class Row:
    key: str
    path: str
    target: str
    value: str = ""
    vs: str = "—"
    status: str = "ok"  # ok | skipped | failed
    data: dict[str, Any] = field(default_factory=dict)


def pct(samples: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))]


def dur(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    ms = seconds * 1000
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def faster(baseline: float, value: float, what: str) -> str:
    if value <= 0:
        return "—"
    ratio = baseline / value
    if ratio >= 1:
        return f"{ratio:.1f}× faster than {what} ({dur(baseline)})"
    return f"{1 / ratio:.1f}× slower than {what} ({dur(baseline)})"


def utf16_end(text: str) -> dict[str, int]:
    """The LSP position just after the last character of `text`."""
    lines = text.split("\n")
    return {"line": len(lines) - 1, "character": len(lines[-1].encode("utf-16-le")) // 2}


class WorkspaceBench:
    def __init__(self, info: WorkspaceInfo, opts: Options, log: Callable[[str], None]):
        self.info = info
        self.root = info.root
        self.opts = opts
        self.env = procs.ctx_env(opts.ctx_root)
        self.cwd = opts.ctx_root  # `python -m` puts the cwd first on sys.path: run where that is ctx_root
        self._log = log
        self.rows: dict[str, Row] = {key: Row(key, path, target) for key, path, target in ROW_SPECS}
        self.raw: dict[str, Any] = {}
        self.problems: list[str] = []
        self.queries = info.queries[: max(1, opts.queries)]
        self.slug = re.sub(r"[^A-Za-z0-9]+", "-", self.root.name)[:40]

    def log(self, message: str) -> None:
        self._log(f"[{self.root.name}] {message}")

    def set(self, key: str, value: str, status: str = "ok", **data: Any) -> None:
        row = self.rows[key]
        row.value, row.status = value, status
        row.data.update(data)

    def fail(self, keys: tuple[str, ...] | list[str], where: str, problem: str) -> None:
        text = f"{where}: {problem}"
        self.problems.append(text)
        self.log("FAILED " + text)
        for key in keys:
            if self.rows[key].status != "failed" and not self.rows[key].value:
                self.set(key, f"FAILED — {text}"[:500], "failed")

    # ------------------------------------------------------------------ run
    def run(self) -> dict[str, Any]:
        started = time.perf_counter()
        load_before = os.getloadavg()
        steps: list[tuple[Callable[[], None], tuple[str, ...]]] = [
            (
                self.baselines,
                ("baseline_parse_floor", "parse_ratio", "baseline_naive_process", "baseline_naive_query"),
            ),
            (self.cli_floor, ("floor_cli_imports",)),
            (self.cold_index, ("cold_index",)),
            (self.cli, ("cli_first_bundle", "cli_bundle", "cli_rss")),
            (self.daemon, ("daemon_start", "daemon_cli_bundle", "daemon_rss")),
            (
                self.server,
                (
                    "server_first_bundle",
                    "lsp_bundle_2k",
                    "lsp_bundle_8k",
                    "lsp_bundle_32k",
                    "lsp_bundle_8k_open",
                    "edit_to_bundle",
                    "docs_hit",
                    "server_rss",
                ),
            ),
            (self.aider, ("baseline_aider_query",)),
        ]
        for step, keys in steps:
            t0 = time.perf_counter()
            try:
                step()
            except Exception as err:  # a broken step is a finding, not the end of the run
                self.fail(keys, step.__name__, f"{type(err).__name__}: {err} (after {time.perf_counter() - t0:.1f} s)")
        self.ratios()
        for row in self.rows.values():
            if not row.value:
                row.value, row.status = "not measured (an earlier step failed)", "failed"
        return {
            "root": str(self.root),
            "kind": self.info.kind,
            "label": self.info.label,
            "code_files": len(self.info.code_files),
            "languages": [{"name": s.name, "files": len(s.files), "bytes": s.bytes} for s in self.info.languages],
            "main_language": self.info.main_language,
            "queries": self.queries,
            "edit_target": str(self.info.edit_target.relative_to(self.root)),
            "load_before": load_before,
            "load_after": os.getloadavg(),
            "seconds": round(time.perf_counter() - started, 1),
            "rows": [asdict(r) for r in self.rows.values()],
            "raw": self.raw,
            "problems": self.problems,
        }

    # ------------------------------------------------------------------ baselines
    def baselines(self) -> None:
        script = str(HERE / "parse_floor.py")
        repeat = str(max(1, self.opts.repeat))
        r = procs.run(
            [sys.executable, script, str(self.root), "--repeat", repeat],
            timeout=self.opts.timeout,
            env=self.env,
            cwd=self.cwd,
        )
        if not r.ok:
            self.fail(("baseline_parse_floor", "parse_ratio"), "parse floor", r.problem())
        else:
            floor = json.loads(r.stdout)
            self.raw["parse_floor"] = floor
            self.set(
                "baseline_parse_floor",
                f"{dur(floor['seconds'])} ({floor['files']:,} files, {floor['files'] / floor['seconds']:.0f} files/s, "
                f"{floor['bytes'] / 1e6:.0f} MB; read {dur(floor['read_s'])}, parse {dur(floor['parse_s'])}; "
                f"each file's fastest of {floor['repeat']})",
                seconds=floor["seconds"],
            )
            self.language_ratios(floor["languages"])
            self.log(f"parse floor {floor['seconds']:.2f} s; {self.rows['parse_ratio'].value}")
        naive = [
            *(sys.executable, str(HERE / "naive_scan.py"), str(self.root), "--budget", "8000"),
            *("--suffixes", ",".join(self.info.suffixes)),
        ]
        walls: list[float] = []
        rss = 0.0
        for i in range(self.opts.repeat):
            r = procs.run(
                [*naive, self.queries[i % len(self.queries)]], timeout=self.opts.timeout, env=self.env, cwd=self.cwd
            )
            if not r.ok:
                self.fail(("baseline_naive_process",), "naive scan", r.problem())
                break
            walls.append(r.seconds)
            rss = max(rss, r.rss_mb)
        if walls:
            self.raw["naive_process_s"] = walls
            med = statistics.median(walls)
            self.set(
                "baseline_naive_process",
                f"{dur(med)} (median of {len(walls)}), {rss:.0f} MB",
                seconds=med,
                samples=walls,
                rss_mb=rss,
            )
            self.log(f"naive scan process {med:.2f} s")
        queries = self.queries[: NAIVE_QUERIES + 1]
        r = procs.run([*naive, *queries], timeout=self.opts.timeout, env=self.env, cwd=self.cwd)
        if not r.ok:
            self.fail(("baseline_naive_query",), "naive scan per query", r.problem())
            return
        scans = json.loads(r.stdout)["scans"]
        per = [s["seconds"] for s in scans[1:]] or [s["seconds"] for s in scans]  # the first reads from a cold process
        self.raw["naive_query_s"] = per
        self.set(
            "baseline_naive_query",
            f"{dur(statistics.median(per))} p50 / {dur(pct(per, 0.95))} p95 (n={len(per)})",
            seconds=statistics.median(per),
            samples=per,
        )

    def language_ratios(self, languages: dict[str, dict[str, Any]]) -> None:
        """The per-language row: each language's ctx-lsp / parse-floor ratio beside Python's.

        Issue 21's rule: a language must not cost more per byte than Python's path by more
        than its grammar's own cost. So a language is out of line when its ratio is over
        `RATIO_OUT_OF_LINE` times Python's *and* ctx-lsp is slower per byte on it than on
        Python: a grammar that parses C headers full of macros at 20 MB/s gives a high
        ratio while ctx-lsp's own work per byte is below Python's."""
        measured = {name: c for name, c in languages.items() if c.get("ratio")}
        if not measured:
            self.set("parse_ratio", "no code file parsed", "skipped")
            return
        python = measured.get("python")
        parts = []
        flagged = []
        for name, c in measured.items():
            part = (
                f"{name} {c['ratio']:.2f}× ({c['files']:,} files; parse {c['parse_mb_s']:.1f} MB/s, "
                f"ctx-lsp {c['ctx_mb_s']:.1f} MB/s)"
            )
            if python and name != "python":
                c["vs_python"] = c["ratio"] / python["ratio"]
                c["per_byte_vs_python"] = python["ctx_mb_s"] / c["ctx_mb_s"]
                part += f", {c['vs_python']:.2f}× Python's ratio"
                if c["vs_python"] > RATIO_OUT_OF_LINE and c["per_byte_vs_python"] > 1:
                    flagged.append(name)
            parts.append(part)
        self.set("parse_ratio", "; ".join(parts), ratios={n: c["ratio"] for n, c in measured.items()})
        if flagged:
            self.rows["parse_ratio"].vs = f"out of line (over {RATIO_OUT_OF_LINE}× Python's): {', '.join(flagged)}"
        elif python and len(measured) > 1:
            self.rows["parse_ratio"].vs = f"in line: none over {RATIO_OUT_OF_LINE}× Python's ratio and slower per byte"

    def cli_floor(self) -> None:
        cmd = [sys.executable, "-c", "import ctx_lsp.cli, ctx_lsp.engine"]
        walls = []
        for _ in range(self.opts.repeat):
            r = procs.run(cmd, timeout=120, env=self.env, cwd=self.cwd)
            if not r.ok:
                self.fail(("floor_cli_imports",), "import floor", r.problem())
                return
            walls.append(r.seconds)
        med = statistics.median(walls)
        self.set("floor_cli_imports", f"{dur(med)} (median of {len(walls)})", seconds=med, samples=walls)

    # ------------------------------------------------------------------ cold index
    def cold_index(self) -> None:
        walls: list[float] = []
        deriving: list[float] = []
        rss = 0.0
        summary = ""
        for i in range(self.opts.cold_runs):
            shutil.rmtree(self.root / ".ctx-lsp", ignore_errors=True)
            self.log(f"cold index run {i + 1}/{self.opts.cold_runs} …")
            r = procs.run(
                procs.ctx_cmd("index", str(self.root), "--quiet"), timeout=self.opts.timeout, env=self.env, cwd=self.cwd
            )
            if not r.ok:
                self.fail(("cold_index",), f"cold index run {i + 1}", r.problem())
                self.raw["cold_index_failed"] = {"seconds": r.seconds, "stderr": r.stderr[-2000:]}
                return
            walls.append(r.seconds)
            rss = max(rss, r.rss_mb)
            summary = r.stdout.strip()
            derived = re.search(r"reference graph in ([\d.]+)s", summary)
            deriving.append(float(derived.group(1)) if derived else 0.0)
            self.log(f"  {r.seconds:.2f} s, {r.rss_mb:.0f} MB: {summary}")
        m = re.search(r"indexed (\d+) files in ([\d.]+)s \((\d+) parsed", summary)
        files = int(m.group(1)) if m else 0
        med = statistics.median(walls)
        self.raw["cold_index"] = {"walls": walls, "derived_s": deriving, "rss_mb": rss, "summary": summary}
        runs = ", ".join(f"{w:.1f}" for w in walls)
        # `ctx-lsp index` also derives the search postings and the graph after the files
        # (so the next process derives nothing); the row says how much of the wall that was.
        self.set(
            "cold_index",
            f"{dur(med)} (median of {len(walls)}: {runs} s; of which deriving postings and graph "
            f"{dur(statistics.median(deriving))}); {files:,} files indexed, "
            f"{files / med:.0f} files/s; peak RSS {rss:.0f} MB",
            seconds=med,
            samples=walls,
            derived_seconds=deriving,
            rss_mb=rss,
            files_indexed=files,
            summary=summary,
        )

    # ------------------------------------------------------------------ CLI
    def _cli_bundle(self, query: str, env: dict[str, str] | None = None) -> procs.ProcResult:
        cmd = procs.ctx_cmd(
            "bundle", "--workspace", str(self.root), "--query", query, "--budget", "8000", "--format", "json"
        )
        env = env or {**self.env, "CTX_LSP_NO_DAEMON": "1"}  # the in-process path
        r = procs.run(cmd, timeout=self.opts.timeout, env=env, cwd=self.cwd)
        if r.ok:
            result = json.loads(r.stdout)
            if result["total_tokens"] > 8000:
                raise AssertionError(f"CLI bundle over budget: {result['total_tokens']} > 8000")
        return r

    def cli(self) -> None:
        first = self._cli_bundle(self.queries[0])
        if not first.ok:
            self.fail(("cli_first_bundle", "cli_bundle", "cli_rss"), "CLI bundle", first.problem())
            return
        self.set("cli_first_bundle", f"{dur(first.seconds)}, {first.rss_mb:.0f} MB", seconds=first.seconds)
        self.log(f"CLI first bundle {first.seconds:.2f} s")
        walls: list[float] = []
        rss = first.rss_mb
        for i in range(self.opts.repeat):
            r = self._cli_bundle(self.queries[(i + 1) % len(self.queries)])
            if not r.ok:
                self.fail(("cli_bundle",), f"CLI bundle {i + 2}", r.problem())
                break
            walls.append(r.seconds)
            rss = max(rss, r.rss_mb)
        self.raw["cli"] = {"first_s": first.seconds, "walls": walls, "rss_mb": rss}
        if walls:
            med = self._set_median("cli_bundle", walls)
            self.log(f"CLI bundle median {med:.2f} s")
        self.set("cli_rss", f"{rss:.0f} MB (max over {len(walls) + 1} calls)", mb=rss)

    def _set_median(self, key: str, walls: list[float]) -> float:
        """Report wall times as their median (and max); the median."""
        med = statistics.median(walls)
        self.set(key, f"{dur(med)} (median of {len(walls)}, max {dur(max(walls))})", seconds=med, samples=walls)
        return med

    # ------------------------------------------------------------------ daemon
    def daemon(self) -> None:
        """`ctx-lsp daemon start`, then CLI bundles for queries it has not seen, then stop;
        in a runtime directory of the run's own, so no other daemon is used or disturbed."""
        keys = ("daemon_start", "daemon_cli_bundle", "daemon_rss")
        with tempfile.TemporaryDirectory(prefix="ctx-bench-run-") as runtime:
            os.chmod(runtime, 0o700)
            env = {**self.env, "XDG_RUNTIME_DIR": runtime}
            start = procs.run(
                procs.ctx_cmd("daemon", "start", "--workspace", str(self.root), "--idle-timeout", "600"),
                timeout=self.opts.timeout,
                env=env,
                cwd=self.cwd,
            )
            if not start.ok:
                self.fail(keys, "daemon start", start.problem())
                return
            try:
                pid = int(start.stdout.split("pid ", 1)[1].split(",", 1)[0])
                self.set("daemon_start", dur(start.seconds), seconds=start.seconds)
                walls: list[float] = []
                for i in range(max(self.opts.repeat, 3)):
                    query = f"{self.queries[i % len(self.queries)]} {words.NOUNS[(7 * i) % len(words.NOUNS)]}"
                    r = self._cli_bundle(query, env)
                    if not r.ok:
                        self.fail(keys[1:], f"daemon bundle {i + 1}", r.problem())
                        return
                    walls.append(r.seconds)
                med = self._set_median("daemon_cli_bundle", walls)
                self.log(f"CLI bundle through the daemon: median {med:.2f} s")
                hwm = procs.vm_hwm_mb(pid)
                if hwm is not None:
                    self.set("daemon_rss", f"{hwm:.0f} MB", mb=hwm)
            finally:
                procs.run(
                    procs.ctx_cmd("daemon", "stop", "--workspace", str(self.root)),
                    timeout=60,
                    env=env,
                    cwd=self.cwd,
                )

    # ------------------------------------------------------------------ server
    def _spawn(self, i: int) -> tuple[LspClient, dict[str, Any]]:
        stderr = self.opts.logs / f"scale-serve-{self.slug}-{i}.log"
        client = LspClient(procs.ctx_cmd("serve"), env=self.env, cwd=self.cwd, stderr_path=stderr)
        try:
            init = client.initialize(self.root, timeout=self.opts.request_timeout)
            t_init = time.perf_counter() - client.started
            result = client.request("ctx/bundle", {"query": self.queries[0], "budget": 8000}, timeout=self.opts.timeout)
        except Exception as err:
            elapsed = time.perf_counter() - client.started
            tail = client.stderr_tail()
            client.close()
            raise RuntimeError(
                f"server warm start {i + 1} (spawn → initialize → first ctx/bundle): {type(err).__name__}: {err} "
                f"after {elapsed:.1f} s; server log {stderr}. {tail}"
            ) from err
        t_first = time.perf_counter() - client.started
        index_line = next((m for m in client.logs if m.startswith("indexed ")), "")
        info = {
            "initialize_s": t_init,
            "first_bundle_s": t_first,
            "first_bundle_tokens": result["total_tokens"],
            "index_log": index_line,
            "init_result": init,
        }
        return client, info

    def server(self) -> None:
        sessions: list[dict[str, Any]] = []
        client: LspClient | None = None
        try:
            for i in range(self.opts.repeat):
                self.log(f"server warm start {i + 1}/{self.opts.repeat} …")
                client, info = self._spawn(i)
                sessions.append({k: v for k, v in info.items() if k != "init_result"})
                self.log(f"  initialize {info['initialize_s']:.2f} s, first bundle {info['first_bundle_s']:.2f} s")
                if i < self.opts.repeat - 1:
                    client.close()
                    client = None
            firsts = [s["first_bundle_s"] for s in sessions]
            inits = [s["initialize_s"] for s in sessions]
            self.raw["server_sessions"] = sessions
            med = statistics.median(firsts)
            self.set(
                "server_first_bundle",
                f"{dur(med)} (median of {len(firsts)}; initialize answered at {dur(statistics.median(inits))}; "
                f"{sessions[-1]['index_log'] or 'no index log'})",
                seconds=med,
                samples=firsts,
            )
            assert client is not None
            try:
                self.steady(client, info["init_result"])
            except Exception as err:
                raise RuntimeError(f"warm server: {type(err).__name__}: {err}. {client.stderr_tail()}") from err
        finally:
            if client is not None:
                client.close()

    def steady(self, client: LspClient, init: dict[str, Any]) -> None:
        t = self.opts.request_timeout
        for q in WARMUP_QUERIES:
            for b in BUDGETS:
                client.request("ctx/bundle", {"query": q, "budget": b}, timeout=t)
        after_warmup = client.proc_status()
        self.raw["rss_after_warmup_kb"] = after_warmup
        keys = {2000: "lsp_bundle_2k", 8000: "lsp_bundle_8k", 32000: "lsp_bundle_32k"}
        lat: dict[int, list[float]] = {}
        for b in BUDGETS:
            samples: list[float] = []
            for q in self.queries:
                seconds, result = client.timed("ctx/bundle", {"query": q, "budget": b}, timeout=t)
                if result["total_tokens"] > b:
                    raise AssertionError(f"ctx/bundle over budget: {result['total_tokens']} > {b} for {q!r}")
                samples.append(seconds)
            lat[b] = samples
            p50, p95 = statistics.median(samples), pct(samples, 0.95)
            self.set(
                keys[b],
                f"{dur(p50)} / {dur(p95)} (n={len(samples)}, max {dur(max(samples))})",
                p50=p50,
                p95=p95,
                samples=samples,
            )
            self.log(f"ctx/bundle {b}: p50 {dur(p50)}, p95 {dur(p95)}")
        self.raw["lsp_bundle_s"] = {str(b): s for b, s in lat.items()}

        rng = random.Random(self.opts.seed)
        opened: list[float] = []
        for q in self.queries:
            path = rng.choice(self.info.files_of(self.info.main_language))
            seconds, result = client.timed(
                "ctx/bundle", {"query": q, "budget": 8000, "open": [path.as_uri()]}, timeout=t
            )
            opened.append(seconds)
        self.set(
            "lsp_bundle_8k_open",
            f"{dur(statistics.median(opened))} / {dur(pct(opened, 0.95))} (n={len(opened)})",
            p50=statistics.median(opened),
            p95=pct(opened, 0.95),
            samples=opened,
        )
        try:
            self.edits(client, init)
        except Exception as err:
            self.fail(("edit_to_bundle",), "didChange → bundle", f"{type(err).__name__}: {err}")
        try:
            self.docs(client)
        except Exception as err:
            self.fail(("docs_hit",), "ctx/docs", f"{type(err).__name__}: {err}")
        status = client.proc_status()
        self.raw["rss_end_kb"] = status
        hwm = status.get("VmHWM", 0) / 1024
        self.set(
            "server_rss",
            f"{hwm:.0f} MB (VmRSS after warm-up {after_warmup.get('VmRSS', 0) / 1024:.0f} MB, "
            f"at the end {status.get('VmRSS', 0) / 1024:.0f} MB)",
            mb=hwm,
        )

    def edits(self, client: LspClient, init: dict[str, Any]) -> None:
        path = self.info.edit_target
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8")
        sync = (init or {}).get("capabilities", {}).get("textDocumentSync", 1)
        incremental = (sync.get("change") if isinstance(sync, dict) else sync) == 2
        document = {"uri": uri, "languageId": self.info.main_language, "version": 1, "text": text}
        client.notify("textDocument/didOpen", {"textDocument": document})
        client.request("ctx/bundle", {"query": WARMUP_QUERIES[0], "budget": 8000}, timeout=self.opts.request_timeout)
        nonce = uuid.uuid4().hex[:8]
        samples: list[float] = []
        attempts: list[int] = []
        version = 1
        for i in range(self.opts.edits):
            ident = f"bench_edit_{nonce}_{i}"
            insert = self.info.appended_definition(ident)
            end = utf16_end(text)
            change = {"range": {"start": end, "end": end}, "text": insert} if incremental else {"text": text + insert}
            version += 1
            started = time.perf_counter()
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            )
            tries = 0
            while True:
                tries += 1
                result = client.request(
                    "ctx/bundle",
                    {"query": f"fix {ident} in {path.stem}", "budget": 8000},
                    timeout=self.opts.request_timeout,
                )
                if ident in result["text"]:
                    break
                if time.perf_counter() - started > 10:
                    raise AssertionError(f"edit {ident} not in any bundle 10 s after didChange ({tries} bundles)")
            samples.append(time.perf_counter() - started)
            attempts.append(tries)
            text += insert
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        rel = path.relative_to(self.root).as_posix()
        self.set(
            "edit_to_bundle",
            f"{dur(statistics.median(samples))} / {dur(pct(samples, 0.95))} (n={len(samples)}, `{rel}`, "
            f"{'incremental' if incremental else 'full'} sync; bundles until shown: max {max(attempts)})",
            p50=statistics.median(samples),
            p95=pct(samples, 0.95),
            samples=samples,
            attempts=attempts,
        )

    def docs(self, client: LspClient) -> None:
        params = {"library": DOCS_LIBRARY, "topic": DOCS_TOPIC}
        miss_s, first = client.timed("ctx/docs", params, timeout=self.opts.request_timeout)
        hits: list[float] = []
        server_ms: list[float] = []
        caches: list[str] = []
        for _ in range(max(1, self.opts.docs_hits)):
            seconds, result = client.timed("ctx/docs", params, timeout=self.opts.request_timeout)
            hits.append(seconds)
            server_ms.append(float(result.get("elapsed_ms", 0.0)))
            caches.append(str(result.get("cache")))
        self.set(
            "docs_hit",
            f"{dur(statistics.median(hits))} round trip (server {statistics.median(server_ms):.2f} ms, cache "
            f"{'/'.join(sorted(set(caches)))}; first call {dur(miss_s)}, cache {first.get('cache')}, "
            f"{first.get('tokens')} tokens)",
            p50=statistics.median(hits),
            miss_s=miss_s,
            server_ms=server_ms,
            samples=hits,
        )

    # ------------------------------------------------------------------ Aider
    def aider(self) -> None:
        python = self.opts.aider_python
        if python is None:
            self.set("baseline_aider_query", "skipped (--no-aider or --smoke)", "skipped")
            return
        if not python.exists():
            self.set(
                "baseline_aider_query",
                f"skipped: no Aider virtualenv at {python} (benchmarks/eval/README.md, Setup)",
                "skipped",
            )
            return
        files = listed_files(self.root)
        queries = self.queries[: max(1, self.opts.aider_queries)]
        self.log(f"Aider: first map (tags over {len(files):,} files) …")
        am = AiderMap(python, self.opts.logs / f"scale-aider-{self.slug}.log")
        try:
            t0 = time.perf_counter()
            first = am.ask(self.root, queries[0], 8000, files, timeout=self.opts.timeout)
            start_s = time.perf_counter() - t0
            lat = [first["latency_s"]]
            for q in queries[1:]:
                lat.append(am.ask(self.root, q, 8000, files, timeout=self.opts.timeout)["latency_s"])
        finally:
            am.close()
        self.raw["aider"] = {"scan_s": first.get("scan_s"), "first_request_s": start_s, "latency_s": lat}
        med = statistics.median(lat)
        self.log(f"Aider map p50 {med:.2f} s (scan {first.get('scan_s') or 0:.1f} s)")
        self.set(
            "baseline_aider_query",
            f"{dur(med)} p50 / {dur(pct(lat, 0.95))} p95 (n={len(lat)}; first request incl. tags scan {dur(start_s)})",
            seconds=med,
            samples=lat,
        )

    # ------------------------------------------------------------------ ratios
    def ratios(self) -> None:
        r = self.rows

        def seconds(key: str, field_name: str = "seconds") -> float | None:
            row = r[key]
            value = row.data.get(field_name)
            return float(value) if row.status == "ok" and value is not None else None

        floor = seconds("baseline_parse_floor")
        cold = seconds("cold_index")
        if floor and cold:
            text = f"{cold / floor:.1f}× the 1-core parse floor ({dur(floor)}; {dur(floor / 2)} on 2 cores)"
            r["cold_index"].vs = text
            r["cold_index"].data["vs_parse_floor"] = cold / floor
        naive_p = seconds("baseline_naive_process")
        for key in ("cli_first_bundle", "server_first_bundle", "cli_bundle"):
            value = seconds(key)
            if naive_p and value:
                r[key].vs = faster(naive_p, value, "a naive scan process")
                r[key].data["speedup_vs_naive_process"] = naive_p / value
        naive_q = seconds("baseline_naive_query")
        aider_q = seconds("baseline_aider_query")
        for key in ("lsp_bundle_2k", "lsp_bundle_8k", "lsp_bundle_32k", "lsp_bundle_8k_open"):
            p50 = seconds(key, "p50")
            parts = []
            if naive_q and p50:
                parts.append(faster(naive_q, p50, "a naive scan per query"))
                r[key].data["speedup_vs_naive_query"] = naive_q / p50
            if aider_q and p50 and key == "lsp_bundle_8k":
                parts.append(faster(aider_q, p50, "Aider's map"))
            if parts:
                r[key].vs = "; ".join(parts)
        lsp8 = seconds("lsp_bundle_8k", "p50")
        if aider_q and lsp8:
            ratio = aider_q / lsp8
            self.set(
                "vs_aider",
                f"{ratio:.0f}× (Aider {dur(aider_q)} vs ctx-lsp {dur(lsp8)}, p50)",
                speedup=ratio,
            )
        elif r["baseline_aider_query"].status == "skipped":
            self.set("vs_aider", r["baseline_aider_query"].value, "skipped")
