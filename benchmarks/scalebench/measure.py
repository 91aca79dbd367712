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

import contextlib
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

from scalebench import procs, switch, words
from scalebench.aider_map import AiderMap
from scalebench.lsp import LspClient, MemoryLimit, Timeout
from scalebench.workspaces import APPENDED_DEFINITIONS, WARMUP_QUERIES, WorkspaceInfo, definitions, listed_files

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
    (
        "fresh_first_answers",
        "fresh clone over LSP (no cache): first `ctx/bundle`, `ctx/symbol`, `ctx/search` answered, from the spawn",
        "≤ 30 s, partial and saying so",
    ),
    ("fresh_status", "`ctx.status` while the first index runs: `indexing` over time", "`indexing: {done, total}`"),
    (
        "fresh_latency",
        "every request while the first index runs (status every 2 s; search / symbol / bundle 2K every 6 s): "
        "max / p95 latency",
        "≤ 1 s",
    ),
    ("fresh_server_rss", "server peak RSS during the first index (VmHWM)", "—"),
    ("cold_index", "cold `ctx-lsp index` (cache removed, fresh process)", "≤ 4 s"),
    ("warm_index", "warm `ctx-lsp index` (nothing changed, fresh process)", "—"),
    ("cache_size", "on-disk cache (`.ctx-lsp/`) vs the source's own size", "≤ the source's size"),
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
    (
        "switch_to_b",
        "branch switch: the second tree written under a running server → a bundle shows it",
        "report",
    ),
    (
        "switch_back",
        "branch switch back (the first tree restored) → a bundle shows it; files re-parsed",
        "re-parses nothing once the cache is content-addressed",
    ),
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
    ("baseline_ctags", "baseline: universal-ctags over the same code files (`ctags -L`, a tags file, unsorted)", "—"),
    ("floor_cli_imports", "floor: interpreter start + `import ctx_lsp.cli, ctx_lsp.engine`", "—"),
)
ROW_KEYS = tuple(key for key, _, _ in ROW_SPECS)
KIND_TARGETS: dict[str, dict[str, str]] = {
    "kernel": {
        "cold_index": "≤ 300 s; peak RSS ≤ 1.5 GB",
        "warm_index": "≤ 10 s",
        "server_first_bundle": "≤ 10 s",
        "lsp_bundle_8k": "p95 ≤ 200 ms",
        "lsp_bundle_8k_open": "p95 ≤ 200 ms",
        "edit_to_bundle": "≤ 1 s",
        "server_rss": "≤ 1.5 GB",
        "fresh_server_rss": "≤ 1.5 GB",
        "cli_first_bundle": "—",
        "cli_bundle": "—",
        "cli_rss": "≤ 1.5 GB",
        "daemon_cli_bundle": "—",
        "daemon_rss": "≤ 1.5 GB",
    },
}
"""Targets where a workspace's own differ from Django's (issue 11's table): the kernel's
are the monorepo issue's, on the same 2 cores."""
CTAGS_LANGUAGES = {
    "c": "C",
    "cpp": "C++",
    "python": "Python",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "go": "Go",
    "rust": "Rust",
    "ruby": "Ruby",
    "java": "Java",
    "csharp": "C#",
}
"""ctx-lsp's language names → universal-ctags' (`ctags --list-languages`)."""
KIND_CTAGS: dict[str, frozenset[str]] = {"kernel": frozenset({"c", "cpp"})}
"""The languages the ctags floor reads, where not every one ctags knows: on the kernel,
the C files (the floor for reading C), not its Python scripts or Rust."""
STEPS = (
    "floor",
    "naive",
    "ctags",
    "imports",
    "fresh",
    "cold",
    "warm",
    "cache",
    "cli",
    "daemon",
    "server",
    "switch",
    "aider",
)
"""What `--only` selects from, in the order they run."""
STATUS_INTERVAL_S = 2.0
PROBE_INTERVAL_S = 6.0
MAX_IN_FLIGHT = 16
"""Status calls, and other probes, waiting at once during the first index (each counted
apart): a server that answers none is not sent more."""
SETTLE_LIMIT_S = 120.0
"""How long the switch rows wait for status to stop changing after a bundle showed the switch."""


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
    only: frozenset[str] | None = None
    """Steps to run (`STEPS`); the others' rows are skipped. None: every step."""
    order: tuple[str, ...] = ()
    """The order `--only` named them in (the steps run in it); empty: `STEPS`' order."""
    fresh_timeout: float = 900.0
    floor_sample: int | None = None
    switch_files: int = 2000
    switch_timeout: float = 900.0
    """How long a bundle may take to show a switch (each way)."""
    max_server_rss_mb: float | None = None
    """A server over this is killed and the row says so (a shared machine's guard)."""
    scratch: Path = Path("/tmp")
    """Where the branch switch's scratch copy and second tree go (the same filesystem as
    the workspace: the copy is hard links)."""


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


def shows(result: dict[str, Any], query: str, ident: str) -> bool:
    """Whether a bundle's code holds `ident`: its text without the query, which the bundle
    echoes in its header ("# Context for: …"), so a query naming `ident` would always match."""
    return ident in str(result.get("text", "")).replace(query, "")


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
        targets = KIND_TARGETS.get(info.kind, {})
        self.rows: dict[str, Row] = {key: Row(key, path, targets.get(key, target)) for key, path, target in ROW_SPECS}
        self.raw: dict[str, Any] = {}
        self.problems: list[str] = []
        self.queries = info.queries[: max(1, opts.queries)]
        self.slug = re.sub(r"[^A-Za-z0-9]+", "-", self.root.name)[:40]

    def log(self, message: str) -> None:
        self._log(f"[{self.root.name}] {message}")

    def set(self, key: str, value: str, status: str = "ok", **data: Any) -> None:
        row = self.rows[key]
        if value != row.value and status != "skipped":  # on stderr as measured: a long run stopped early keeps it
            self.log(f"row {key} [{status}]: {value}")
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
        steps: list[tuple[str, Callable[[], None], tuple[str, ...]]] = [
            ("floor", self.parse_floor, ("baseline_parse_floor", "parse_ratio")),
            ("naive", self.naive, ("baseline_naive_process", "baseline_naive_query")),
            ("ctags", self.ctags, ("baseline_ctags",)),
            ("imports", self.cli_floor, ("floor_cli_imports",)),
            ("fresh", self.fresh, ("fresh_first_answers", "fresh_status", "fresh_latency", "fresh_server_rss")),
            ("cold", self.cold_index, ("cold_index",)),
            ("warm", self.warm_index, ("warm_index",)),
            ("cache", self.cache_size, ("cache_size",)),
            ("cli", self.cli, ("cli_first_bundle", "cli_bundle", "cli_rss")),
            ("daemon", self.daemon, ("daemon_start", "daemon_cli_bundle", "daemon_rss")),
            (
                "server",
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
            ("switch", self.branch_switch, ("switch_to_b", "switch_back")),
            ("aider", self.aider, ("baseline_aider_query",)),
        ]
        needs_cache = {"warm", "cache", "cli", "daemon", "server", "switch"}
        if self.opts.order:  # `--only a,b,c` runs in that order (on the kernel: the fresh clone last)
            steps.sort(key=lambda s: self.opts.order.index(s[0]) if s[0] in self.opts.order else len(STEPS))
        for name, step, keys in steps:
            if self.opts.only is not None and name not in self.opts.only:
                for key in keys:
                    self.set(key, f"skipped (step `{name}` not selected: --only)", "skipped")
                continue
            t0 = time.perf_counter()
            try:
                if name in needs_cache:
                    self.ensure_cache()
                step()
            except Exception as err:  # a broken step is a finding, not the end of the run
                self.fail(keys, name, f"{type(err).__name__}: {err} (after {time.perf_counter() - t0:.1f} s)")
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

    def ensure_cache(self) -> None:
        """The rows after the cold index read its cache; without one (the cold step not
        selected, or failed), an unmeasured `ctx-lsp index` builds it first."""
        if (self.root / ".ctx-lsp").is_dir() and not self.raw.get("cache_incomplete"):
            return
        self.log("no complete cache: building one (unmeasured) …")
        r = procs.run(
            procs.ctx_cmd("index", str(self.root), "--quiet"), timeout=self.opts.timeout, env=self.env, cwd=self.cwd
        )
        if not r.ok:
            raise RuntimeError(f"building the cache: {r.problem()}")
        self.raw.pop("cache_incomplete", None)

    # ------------------------------------------------------------------ baselines
    def parse_floor(self) -> None:
        script = str(HERE / "parse_floor.py")
        repeat = str(max(1, self.opts.repeat))
        cmd = [sys.executable, script, str(self.root), "--repeat", repeat]
        if self.opts.floor_sample:
            cmd += ["--sample", str(self.opts.floor_sample), "--seed", str(self.opts.seed)]
        r = procs.run(cmd, timeout=self.opts.timeout, env=self.env, cwd=self.cwd)
        if not r.ok:
            self.fail(("baseline_parse_floor", "parse_ratio"), "parse floor", r.problem())
            return
        floor = json.loads(r.stdout)
        self.raw["parse_floor"] = floor
        sample = floor.get("sample")
        # Ratios (the cold index's) compare with every file's floor: the sample's, extrapolated by bytes.
        seconds = sample["seconds_full_est"] if sample else floor["seconds"]
        of = (
            f"; a seeded sample of {sample['files']:,} of {sample['of']:,} files ({100 * sample['bytes_share']:.1f} % "
            f"of the bytes): every file ≈ {dur(seconds)} by bytes"
            if sample
            else ""
        )
        self.set(
            "baseline_parse_floor",
            f"{dur(floor['seconds'])} ({floor['files']:,} files, {floor['files'] / floor['seconds']:.0f} files/s, "
            f"{floor['bytes'] / 1e6:.0f} MB; read {dur(floor['read_s'])}, parse {dur(floor['parse_s'])}; "
            f"each file's fastest of {floor['repeat']}{of})",
            seconds=seconds,
            measured_seconds=floor["seconds"],
        )
        self.language_ratios(floor["languages"])
        self.log(f"parse floor {floor['seconds']:.2f} s; {self.rows['parse_ratio'].value}")

    def naive(self) -> None:
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
        rss = group_rss = 0.0
        summary = ""
        for i in range(self.opts.cold_runs):
            shutil.rmtree(self.root / ".ctx-lsp", ignore_errors=True)
            self.log(f"cold index run {i + 1}/{self.opts.cold_runs} …")
            r = procs.run(
                procs.ctx_cmd("index", str(self.root), "--quiet"),
                timeout=self.opts.timeout,
                env=self.env,
                cwd=self.cwd,
                group=True,
            )
            if not r.ok:
                self.fail(("cold_index",), f"cold index run {i + 1}", r.problem())
                self.raw["cold_index_failed"] = {"seconds": r.seconds, "stderr": r.stderr[-2000:]}
                return
            walls.append(r.seconds)
            rss = max(rss, r.rss_mb)
            group_rss = max(group_rss, r.group_rss_mb or 0.0)
            summary = r.stdout.strip()
            derived = re.search(r"graph in ([\d.]+)s", summary)
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
            f"{files / med:.0f} files/s; peak RSS {rss:.0f} MB (its processes together: {group_rss:.0f} MB)",
            seconds=med,
            samples=walls,
            derived_seconds=deriving,
            rss_mb=rss,
            group_rss_mb=group_rss,
            files_indexed=files,
            summary=summary,
        )

    def warm_index(self) -> None:
        """`ctx-lsp index` again with nothing changed: what every later run of the CLI or
        a server restart pays before the cache answers."""
        walls: list[float] = []
        rss = 0.0
        summary = ""
        for i in range(max(1, self.opts.repeat)):
            r = procs.run(
                procs.ctx_cmd("index", str(self.root), "--quiet"), timeout=self.opts.timeout, env=self.env, cwd=self.cwd
            )
            if not r.ok:
                self.fail(("warm_index",), f"warm index run {i + 1}", r.problem())
                return
            walls.append(r.seconds)
            rss = max(rss, r.rss_mb)
            summary = r.stdout.strip()
        med = statistics.median(walls)
        parsed = re.search(r"\((\d+) parsed, (\d+)", summary)
        derived = re.search(r"graph in ([\d.]+)s", summary)
        of = f" (of which deriving postings and graph {dur(float(derived.group(1)))})" if derived else ""
        self.set(
            "warm_index",
            f"{dur(med)} (median of {len(walls)}){of}; peak RSS {rss:.0f} MB; {summary or 'no summary'}",
            seconds=med,
            samples=walls,
            rss_mb=rss,
            parsed=int(parsed.group(1)) if parsed else None,
            summary=summary,
        )
        self.log(f"warm index {med:.2f} s: {summary}")

    def cache_size(self) -> None:
        """The cache's bytes on disk (allocated blocks, and apparent) against the source's:
        every file of the workspace outside `.git/` and `.ctx-lsp/` (what a checkout holds)."""
        cache = self.root / ".ctx-lsp"
        on_disk = apparent = 0
        for path in cache.rglob("*"):
            st = path.lstat()
            if path.is_file():
                on_disk += st.st_blocks * 512
                apparent += st.st_size
        source = 0
        for dirpath, dirnames, filenames in os.walk(self.root):
            if dirpath == str(self.root):
                dirnames[:] = [d for d in dirnames if d not in (".git", ".ctx-lsp")]
            for name in filenames:
                with contextlib.suppress(OSError):
                    source += os.lstat(os.path.join(dirpath, name)).st_size
        code = sum(s.bytes for s in self.info.languages)
        self.set(
            "cache_size",
            f"{on_disk / 1e6:,.0f} MB on disk ({apparent / 1e6:,.0f} MB apparent) = {on_disk / max(1, source):.2f}× "
            f"the source ({source / 1e6:,.0f} MB; its code files {code / 1e6:,.0f} MB)",
            bytes=on_disk,
            apparent=apparent,
            source_bytes=source,
            code_bytes=code,
            ratio=on_disk / max(1, source),
        )

    # ------------------------------------------------------------------ ctags
    def ctags(self) -> None:
        """universal-ctags over the same code files (the list the language layer claims,
        restricted per workspace kind): the floor for a program that reads those files and
        finds their definitions, in C, with no output written."""
        exe = shutil.which("ctags")
        if exe is None:
            self.set("baseline_ctags", "skipped: no ctags on PATH (universal-ctags)", "skipped")
            return
        version = procs.run([exe, "--version"], timeout=30)
        if "Universal Ctags" not in version.stdout:
            self.set("baseline_ctags", f"skipped: {exe} is not universal-ctags", "skipped")
            return
        wanted = KIND_CTAGS.get(self.info.kind)
        chosen = [s for s in self.info.languages if s.name in CTAGS_LANGUAGES and (wanted is None or s.name in wanted)]
        files = [p for s in chosen for p in s.files]
        if not files:
            self.set("baseline_ctags", "skipped: no code file in a language ctags reads", "skipped")
            return
        languages = ",".join(sorted({CTAGS_LANGUAGES[s.name] for s in chosen}))
        with tempfile.NamedTemporaryFile("w", suffix=".list", delete=False) as fh:
            fh.write("\n".join(str(p) for p in files) + "\n")
            listing = fh.name
        tags = listing + ".tags"  # a real file: on the kernel, `-f /dev/null` fails ("failed to truncate")
        try:
            cmd = [exe, f"--languages={languages}", "--sort=no", "-f", tags, "-L", listing]
            walls: list[float] = []
            rss = 0.0
            for _ in range(max(1, min(self.opts.repeat, 2))):
                r = procs.run(cmd, timeout=self.opts.timeout)
                if not r.ok:
                    self.fail(("baseline_ctags",), "ctags", r.problem())
                    return
                walls.append(r.seconds)
                rss = max(rss, r.rss_mb)
        finally:
            os.unlink(listing)
            with contextlib.suppress(OSError):
                os.unlink(tags)
        med = statistics.median(walls)
        size = sum(s.bytes for s in chosen)
        self.set(
            "baseline_ctags",
            f"{dur(med)} (median of {len(walls)}), peak RSS {rss:.0f} MB; {len(files):,} files, {size / 1e6:,.0f} MB "
            f"({languages}; {version.stdout.splitlines()[0][:40]})",
            seconds=med,
            samples=walls,
            rss_mb=rss,
            files=len(files),
            bytes=size,
        )
        self.log(f"ctags {med:.1f} s, {rss:.0f} MB over {len(files):,} files")

    # ------------------------------------------------------------------ fresh clone
    def symbol_name(self) -> str:
        if self.info.symbol:
            return self.info.symbol
        names, _ = definitions(self.info.edit_target)
        return names[0] if names else self.info.edit_target.stem

    def fresh(self) -> None:
        """A fresh clone opened in an editor: `serve` with no cache. Right after
        `initialized`, one `ctx/bundle`, `ctx/symbol` and `ctx/search` go out together;
        `ctx.status` every `STATUS_INTERVAL_S` and a rotating search / symbol / bundle 2K
        every `PROBE_INTERVAL_S` follow until the index is done (status says so) and the
        first three are answered, or `fresh_timeout`. Each answer's time from the spawn and
        its latency are kept; a request still unanswered at the end is reported with how
        long it waited."""
        shutil.rmtree(self.root / ".ctx-lsp", ignore_errors=True)
        self.raw["cache_incomplete"] = True  # until this server is seen to finish its index
        limit = self.opts.fresh_timeout
        stderr = self.opts.logs / f"scale-serve-{self.slug}-fresh.log"
        self.log(f"fresh clone over LSP (no cache; limit {limit:.0f} s) …")
        client = self._client(stderr)
        symbol = self.symbol_name()
        query = self.queries[0]
        probes: dict[int, dict[str, Any]] = {}
        timeline: list[dict[str, Any]] = []
        rss: list[tuple[float, int]] = []
        index_done_at: float | None = None
        stopped = ""

        def now() -> float:
            return time.perf_counter() - client.started

        def send(kind: str, method: str, params: Any, first: bool = False) -> None:
            rid = client.send_request(method, params)
            probes[rid] = {"kind": kind, "method": method, "sent": now(), "first": first, "during_index": True}

        rotation = [
            ("search", "ctx/search", lambda i: {"query": self.queries[i % len(self.queries)], "limit": 10}),
            ("symbol", "ctx/symbol", lambda i: {"name": symbol, "include_body": False}),
            ("bundle", "ctx/bundle", lambda i: {"query": self.queries[i % len(self.queries)], "budget": 2000}),
        ]
        try:
            init = client.initialize(self.root, timeout=min(limit, self.opts.request_timeout))
            t_init = now()
            del init
            send("bundle", "ctx/bundle", {"query": query, "budget": 8000}, first=True)
            send("symbol", "ctx/symbol", {"name": symbol}, first=True)
            send("search", "ctx/search", {"query": query, "limit": 20}, first=True)
            next_status, next_probe, turn = now(), now() + PROBE_INTERVAL_S, 0
            while now() < limit:
                # In flight per kind: bundles blocked behind the index must not stop the status calls.
                waiting_status = sum(1 for p in probes.values() if "answered" not in p and p["kind"] == "status")
                waiting = sum(1 for p in probes.values() if "answered" not in p and p["kind"] != "status")
                if now() >= next_status:
                    if waiting_status < MAX_IN_FLIGHT:
                        send("status", "workspace/executeCommand", {"command": "ctx.status", "arguments": []})
                    next_status += STATUS_INTERVAL_S
                if index_done_at is None and now() >= next_probe:
                    if waiting < MAX_IN_FLIGHT:
                        kind, method, params = rotation[turn % len(rotation)]
                        send(kind, method, params(turn + 1))
                        turn += 1
                    next_probe += PROBE_INTERVAL_S
                wait = max(0.05, min(next_status, next_probe, limit) - now())
                try:
                    messages = client.poll(wait)
                except MemoryLimit as err:
                    stopped = str(err)
                    break
                for message in messages:
                    probe = probes.get(message.get("id", -1))
                    if probe is None:
                        continue
                    probe["answered"] = now()
                    probe["latency"] = probe["answered"] - probe["sent"]
                    if "error" in message:
                        probe["error"] = str(message["error"].get("message"))[:300]
                        continue
                    result = message.get("result") or {}
                    probe["summary"] = self._fresh_summary(probe["kind"], result)
                    if probe["kind"] == "status":
                        entry = {"t": probe["answered"], "latency": probe["latency"], **probe["summary"]}
                        timeline.append(entry)
                        if index_done_at is None and entry["index_done"]:
                            index_done_at = probe["answered"]
                            self.raw.pop("cache_incomplete", None)
                st = client.proc_status()
                if st.get("VmRSS") and (not rss or now() - rss[-1][0] >= STATUS_INTERVAL_S):
                    rss.append((round(now(), 1), st["VmRSS"]))
                if client.proc.poll() is not None:
                    raise RuntimeError(f"server exited (rc={client.proc.returncode}). {client.stderr_tail()}")
                # Done when the index is and every request sent before it finished is answered.
                if index_done_at is not None and all("answered" in p for p in probes.values()):
                    break
            end = now()
            hwm = max(client.proc_status().get("VmHWM", 0), *(kb for _, kb in rss), 0) / 1024
        finally:
            client.close()
        for p in probes.values():
            if index_done_at is not None and p["sent"] >= index_done_at:
                p["during_index"] = False
        self.raw["fresh"] = {
            "initialize_s": t_init,
            "index_done_s": index_done_at,
            "end_s": end,
            "probes": list(probes.values()),
            "rss_kb": rss,
            "index_log": next((m for m in client.logs if m.startswith("indexed ")), ""),
            "stopped": stopped,
        }
        self._fresh_rows(t_init, index_done_at, end, probes, timeline, hwm, limit, stopped)
        if index_done_at is None:
            shutil.rmtree(self.root / ".ctx-lsp", ignore_errors=True)  # a half cache is no warm one

    @staticmethod
    def _fresh_summary(kind: str, result: dict[str, Any]) -> dict[str, Any]:
        """What the fresh-clone rows need of one answer: did it say it was partial; for
        status, the `indexing` field (a bool on old servers, `{done, total}` on new) and
        whether it says the index is done."""
        if kind == "status":
            indexing = result.get("indexing")
            if isinstance(indexing, dict):
                done, total = indexing.get("done"), indexing.get("total")
                finished = indexing.get("active") is False or (
                    isinstance(done, int) and isinstance(total, int) and total > 0 and done >= total
                )
            else:
                finished = not indexing
            last = result.get("last_index") or {}
            return {
                "indexing": indexing,
                "index_done": bool(finished),
                "files_indexed": result.get("files_indexed"),
                "last_index": last,
            }
        warnings: list[str] = []
        snapshot = result.get("snapshot")
        if isinstance(snapshot, dict):
            warnings += [str(w) for w in snapshot.get("warnings") or ()]
        warnings += [str(w) for w in result.get("warnings") or ()]
        if isinstance(result.get("indexing"), dict | bool):
            warnings.append(f"indexing: {result['indexing']}")
        partial = [w for w in warnings if re.search(r"index|partial", w, re.IGNORECASE)]
        size = result.get("total_tokens")
        if size is None and "hits" in result:
            size = len(result["hits"])
        return {"partial": partial[:3], "warnings": warnings[:5], "size": size}

    def _fresh_rows(
        self,
        t_init: float,
        index_done_at: float | None,
        end: float,
        probes: dict[int, dict[str, Any]],
        timeline: list[dict[str, Any]],
        hwm: float,
        limit: float,
        stopped: str = "",
    ) -> None:
        if index_done_at is not None:
            done_text = f"index done at {dur(index_done_at)}"
        elif stopped:
            done_text = f"index not done when stopped at {dur(end)}: {stopped}"
        else:
            done_text = f"index not done in {limit:.0f} s"
        parts = []
        answered_all = True
        for p in (p for p in probes.values() if p["first"]):
            if "answered" not in p:
                answered_all = False
                parts.append(f"{p['method']}: no answer in {end:.0f} s")
                continue
            if "error" in p:
                parts.append(f"{p['method']} {dur(p['answered'])}: error {p['error'][:120]}")
                continue
            after = index_done_at is not None and p["answered"] >= index_done_at
            said = p["summary"]["partial"]
            how = (
                f"partial, saying so: {said[0][:160]!r}"
                if said
                else ("complete (after the index)" if after else "says nothing of a partial index")
            )
            parts.append(f"{p['method']} {dur(p['answered'])} ({how})")
        self.set(
            "fresh_first_answers",
            "; ".join(parts) + f"; initialize {dur(t_init)}; {done_text}",
            "ok" if answered_all else "timeout",
            answers={p["method"]: p.get("answered") for p in probes.values() if p["first"]},
            index_done_s=index_done_at,
            initialize_s=t_init,
        )
        statuses = [p for p in probes.values() if p["kind"] == "status"]
        answered = [p for p in statuses if "answered" in p]
        if not answered:
            self.set(
                "fresh_status",
                f"no `ctx.status` answered in {end:.0f} s ({len(statuses)} sent)",
                "timeout",
                sent=len(statuses),
            )
        else:
            shapes = sorted({type(e["indexing"]).__name__ for e in timeline})
            seen = [e for e in timeline if not e["index_done"]]
            shown = [*seen[:2], *seen[-1:]] if len(seen) > 3 else seen
            series = ", ".join(
                f"{dur(e['t'])}: {json.dumps(e['indexing'])} ({e['files_indexed']} files)" for e in shown
            )
            self.set(
                "fresh_status",
                f"{len(answered)} of {len(statuses)} answered; first at {dur(answered[0]['answered'])}; `indexing` is "
                f"{'/'.join(shapes)}; while indexing: {series or 'never seen'}; {done_text}",
                sent=len(statuses),
                answered=len(answered),
                timeline=timeline,
                shapes=shapes,
            )
        during = [p for p in probes.values() if p["during_index"]]
        lat = [p["latency"] for p in during if "latency" in p]
        waiting = [end - p["sent"] for p in during if "answered" not in p]
        kinds = ", ".join(
            f"{k} {sum(1 for p in during if p['kind'] == k)}" for k in ("status", "search", "symbol", "bundle")
        )
        if lat:
            text = f"max {dur(max(lat))} / p95 {dur(pct(lat, 0.95))} over {len(lat)} answered ({kinds} sent)"
        else:
            text = f"none answered ({kinds} sent)"
        if waiting:
            text += f"; {len(waiting)} unanswered at the end (oldest waited {dur(max(waiting))})"
        self.set(
            "fresh_latency",
            text,
            "timeout" if waiting and not lat else "ok",
            max=max(lat) if lat else None,
            p95=pct(lat, 0.95) if lat else None,
            samples=lat,
            unanswered=len(waiting),
            oldest_wait=max(waiting) if waiting else None,
        )
        state = "index done" if index_done_at else ("killed at the memory limit" if stopped else "index not done")
        self.set("fresh_server_rss", f"{hwm:.0f} MB ({state})", mb=hwm)
        self.log(f"fresh: {self.rows['fresh_first_answers'].value}")
        self.log(f"fresh latency: {text}")

    # ------------------------------------------------------------------ branch switch
    def branch_switch(self) -> None:
        """A branch switch under a running server: the second tree (`scalebench.switch`,
        the kernel's from `kernel.second_tree`) written into a scratch copy of the
        workspace (hard links + a copy of the warm cache) while `serve` runs on it; the
        time from the start of the writes until a bundle naming an appended definition
        shows it; the same back (until it is gone); status (`last_index`, watcher) after
        each; then, with no server, `ctx-lsp index` after each switch: how many files it
        re-parsed (the switch back re-parses nothing once the cache is content-addressed)."""
        keys = ("switch_to_b", "switch_back")
        lang = self.info.main_language
        if lang not in APPENDED_DEFINITIONS:
            for key in keys:
                self.set(key, f"skipped: no definition to append in {lang or 'this workspace'}", "skipped")
            return
        out = self.opts.scratch / f"ctx-switch-{self.slug}-s{self.opts.seed}"
        copy = self.opts.scratch / f"ctx-switch-copy-{self.slug}"
        t0 = time.perf_counter()
        if self.info.kind == "kernel":
            from scalebench import kernel

            plan = kernel.second_tree(self.root, out, self.opts.switch_files, self.opts.seed)
        else:
            files = self.info.files_of(lang)
            n = min(self.opts.switch_files, max(10, len(files) // 10))
            definition = APPENDED_DEFINITIONS[lang]
            plan = switch.plan(self.root, files, lang, definition, n, self.opts.seed, out, [self.info.edit_target])
        plan_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        linked = switch.hardlink_copy(self.root, copy)
        copy_s = time.perf_counter() - t0
        self.log(
            f"branch switch: {plan.changed:,} files ({len(plan.modified)} modified, {len(plan.added)} added, "
            f"{len(plan.deleted)} deleted; plan {plan_s:.1f} s); scratch copy {copy} ({linked:,} links, {copy_s:.1f} s)"
        )
        data: dict[str, Any] = {"plan": switch.describe(plan), "copy_s": copy_s, "plan_s": plan_s}
        self.raw["switch"] = data
        try:
            self._switch_server(plan, copy, data)
            self._switch_cli(plan, copy, data)
        finally:
            shutil.rmtree(copy, ignore_errors=True)
        sides = []
        for key, side in (("switch_to_b", "b"), ("switch_back", "a")):
            d = data.get(side) or {}
            if not d:
                continue
            cli = d.get("cli") or {}
            last = d.get("server_status", {}).get("last_index")
            before = (data.get("status_before") or {}).get("last_index")
            watcher = d.get("server_status", {}).get("watcher") or {}
            unchanged = " (unchanged since the server started: its re-reads are not counted there)"
            text = (
                f"{dur(d['shown_s'])} until a bundle showed it ({d['tries']} bundles; "
                f"writes took {dur(d['apply_s'])}); "
                f"status then: last_index {json.dumps(last)}{unchanged if last == before else ''}, watcher "
                f"{watcher.get('state')}, {watcher.get('events')} events, {watcher.get('reconciles')} reconciles"
                if d.get("shown_s") is not None
                else f"not shown in {d.get('waited_s', 0):.0f} s ({d.get('tries', 0)} bundles"
                f"{'; ' + d['stopped'] if d.get('stopped') else ''}); "
                f"server peak RSS {d.get('server_rss_mb', 0):,.0f} MB"
            )
            if cli:
                text += f"; then `ctx-lsp index` (no server): {dur(cli['seconds'])}, {cli['summary']}"
            if side == "b":
                text = (
                    f"{plan.changed:,} files ({len(plan.modified):,} modified, {len(plan.added)} added, "
                    f"{len(plan.deleted)} deleted; probe `{plan.probe_path}`): " + text
                )
            sides.append(side)
            self.set(key, text, "ok" if d.get("shown_s") is not None else "timeout", **{k: v for k, v in d.items()})

    def _wait_bundle(self, client: LspClient, query: str, ident: str, present: bool, started: float) -> dict[str, Any]:
        """Bundles naming `ident` until its presence in the text is `present`; from `started`."""
        tries = 0
        while True:
            tries += 1
            remaining = self.opts.switch_timeout - (time.perf_counter() - started)
            try:
                result = client.request("ctx/bundle", {"query": query, "budget": 8000}, timeout=max(1.0, remaining))
            except (Timeout, MemoryLimit) as err:
                waited = time.perf_counter() - started
                return {"shown_s": None, "tries": tries, "waited_s": waited, "stopped": str(err)[:300]}
            if shows(result, query, ident) == present:
                return {"shown_s": time.perf_counter() - started, "tries": tries}
            waited = time.perf_counter() - started
            if waited > self.opts.switch_timeout:
                return {"shown_s": None, "tries": tries, "waited_s": waited}
            time.sleep(0.05)

    def _settled_status(self, client: LspClient) -> dict[str, Any]:
        """`ctx.status` once it stops changing (not indexing; files, watcher events and
        last_index the same twice a second apart), at most `SETTLE_LIMIT_S`."""
        started = time.perf_counter()
        previous: tuple[Any, ...] | None = None
        status: dict[str, Any] = {}
        while time.perf_counter() - started < SETTLE_LIMIT_S:
            status = client.request(
                "workspace/executeCommand", {"command": "ctx.status", "arguments": []}, timeout=self.opts.timeout
            )
            watcher = status.get("watcher") or {}
            key = (
                bool(status.get("indexing")) and status.get("indexing") is not False,
                status.get("files_indexed"),
                watcher.get("events"),
                json.dumps(status.get("last_index"), sort_keys=True),
            )
            if key == previous and not key[0]:
                break
            previous = key
            time.sleep(1.0)
        watcher = status.get("watcher") or {}
        return {
            "last_index": status.get("last_index"),
            "files_indexed": status.get("files_indexed"),
            "watcher": {k: watcher.get(k) for k in ("state", "events", "reconciles", "lost_events")},
            "settle_s": time.perf_counter() - started,
        }

    def _switch_server(self, plan: switch.SwitchPlan, copy: Path, data: dict[str, Any]) -> None:
        stderr = self.opts.logs / f"scale-serve-{self.slug}-switch.log"
        client = self._client(stderr)
        query = f"fix {plan.probe_ident} in {Path(plan.probe_path).stem}"
        try:
            client.initialize(copy, timeout=self.opts.request_timeout)
            result = client.request("ctx/bundle", {"query": query, "budget": 8000}, timeout=self.opts.timeout)
            data["ready_s"] = time.perf_counter() - client.started
            if shows(result, query, plan.probe_ident):
                raise AssertionError(f"{plan.probe_ident} in a bundle before the switch")
            data["status_before"] = self._settled_status(client)
            for side, present in (("b", True), ("a", False)):
                started = time.perf_counter()
                applied = switch.apply(plan, copy, self.root, side)
                seen = self._wait_bundle(client, query, plan.probe_ident, present, started)
                entry: dict[str, Any] = {**seen, "apply_s": applied["seconds"], "written": applied["written"]}
                entry["server_rss_mb"] = client.proc_status().get("VmHWM", 0) / 1024
                if seen["shown_s"] is None:
                    data[side] = entry
                    break
                entry["server_status"] = self._settled_status(client)
                data[side] = entry
                self.log(f"switch to {side}: {seen}; status {entry['server_status']}")
        finally:
            client.close()

    def _switch_cli(self, plan: switch.SwitchPlan, copy: Path, data: dict[str, Any]) -> None:
        """With no server, the CLI's count of what each switch re-parses (its summary line)."""
        for side in ("b", "a"):
            if side not in data:
                return
            switch.apply(plan, copy, self.root, side)
            cmd = procs.ctx_cmd("index", str(copy), "--quiet")
            r = procs.run(cmd, timeout=self.opts.timeout, env=self.env, cwd=self.cwd)
            if not r.ok:
                data[side]["cli"] = {"seconds": r.seconds, "summary": f"FAILED {r.problem()[:200]}"}
                return
            summary = r.stdout.strip()
            parsed = re.search(r"\((\d+) parsed, (\d+)", summary)
            data[side]["cli"] = {
                "seconds": r.seconds,
                "summary": summary,
                "parsed": int(parsed.group(1)) if parsed else None,
                "rss_mb": r.rss_mb,
            }

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
    def _client(self, stderr: Path) -> LspClient:
        return LspClient(
            procs.ctx_cmd("serve"),
            env=self.env,
            cwd=self.cwd,
            stderr_path=stderr,
            max_rss_mb=self.opts.max_server_rss_mb,
        )

    def _spawn(self, i: int) -> tuple[LspClient, dict[str, Any]]:
        stderr = self.opts.logs / f"scale-serve-{self.slug}-{i}.log"
        client = self._client(stderr)
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
            query = f"fix {ident} in {path.stem}"
            while True:
                tries += 1
                params = {"query": query, "budget": 8000}
                result = client.request("ctx/bundle", params, timeout=self.opts.request_timeout)
                if shows(result, query, ident):
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
        ctags = seconds("baseline_ctags")
        if ctags and cold:
            rss = r["baseline_ctags"].data.get("rss_mb", 0.0)
            part = f"{cold / ctags:.1f}× universal-ctags ({dur(ctags)}, {rss:.0f} MB)"
            r["cold_index"].vs = f"{r['cold_index'].vs}; {part}" if r["cold_index"].vs != "—" else part
            r["cold_index"].data["vs_ctags"] = cold / ctags
        warm = seconds("warm_index")
        if ctags and warm:
            r["warm_index"].vs = f"{warm / ctags:.2f}× universal-ctags reading every file ({dur(ctags)})"
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
