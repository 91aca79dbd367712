"""Machine and version facts, and the markdown report (a table per workspace, with its
code per language and the parse floor per grammar beside ctx-lsp's own cost)."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str:
    """Read-only git (no optional locks: never rewrites the index while others work)."""
    try:
        out = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout if out.returncode == 0 else ""


def _blob_sha(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def ctx_lsp_version(env: dict[str, str], cwd: Path | None = None) -> dict[str, Any]:
    """Which ctx_lsp the child processes import, and how it compares with this repository's HEAD."""
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ctx_lsp, os; print(os.path.dirname(ctx_lsp.__file__)); print(ctx_lsp.__version__)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    lines = probe.stdout.split()
    package = Path(lines[0]) if lines else None
    head = _git("rev-parse", "HEAD").strip()
    info: dict[str, Any] = {
        "package": str(package) if package else None,
        "version": lines[1] if len(lines) > 1 else None,
        "commit": head,
        "subject": _git("log", "-1", "--format=%s").strip()[:120],
    }
    if package is None or not head:
        info["tree"] = "unknown"
        return info
    tracked = {}
    for line in _git("ls-tree", "-r", "HEAD", "--", "ctx_lsp").splitlines():
        meta, _, path = line.partition("\t")
        tracked[path.removeprefix("ctx_lsp/")] = meta.split()[2]
    present = {}
    for path in package.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            present[path.relative_to(package).as_posix()] = _blob_sha(path)
    differs = sorted(p for p in set(tracked) | set(present) if tracked.get(p) != present.get(p))
    info["differs_from_head"] = differs
    info["tree"] = "HEAD" if not differs else f"HEAD + {len(differs)} changed file(s): {', '.join(differs[:8])}"
    return info


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    mem_gb = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu": model,
        "memory_gb": round(mem_gb, 1),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "load_average": os.getloadavg(),
    }


def _load(values: Any) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def header(meta: dict[str, Any], command: str) -> str:
    m, v = meta["machine"], meta["ctx_lsp"]
    commit = (v.get("commit") or "?")[:10]
    return "\n".join(
        [
            "# ctx-lsp scale benchmark",
            "",
            f"- command: `{command}`",
            f"- date: {m['date']}; cores: {m['cores']} (usable {m['usable_cores']}), {m['cpu']}, {m['memory_gb']} GB",
            f"- Python {m['python']} ({m['python_executable']}), {m['platform']}",
            f"- load average at start: {_load(m['load_average'])} (1, 5, 15 min)",
            f"- ctx-lsp {v.get('version')} from `{v.get('package')}`: commit {commit} ({v.get('subject', '')}); "
            f"measured tree = {v.get('tree')}",
        ]
    )


def languages_line(ws: dict[str, Any]) -> str:
    """`2,822 python (18.1 MB), 112 javascript (1.3 MB)`: the workspace's code, largest first."""
    return ", ".join(f"{lang['files']:,} {lang['name']} ({lang['bytes'] / 1e6:.1f} MB)" for lang in ws["languages"])


def grammar_table(floor: dict[str, Any]) -> list[str]:
    """The parse floor per grammar beside ctx-lsp's per-file analysis of the same files."""
    lines = [
        "| language | files (kept out) | MB | parse floor | parse MB/s | ctx-lsp analysis | ctx-lsp MB/s "
        "| ctx-lsp / floor | ratio vs Python's | cost per byte vs Python's path |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in floor["languages"].items():
        if not c.get("files"):
            lines.append(f"| {name} | 0 ({c['kept_out']}) | — | — | — | — | — | — | — | — |")
            continue
        vs = f"{c['vs_python']:.2f}×" if c.get("vs_python") else "—"
        per_byte = f"{c['per_byte_vs_python']:.2f}×" if c.get("per_byte_vs_python") else "—"
        lines.append(
            f"| {name} | {c['files']:,} ({c['kept_out']}) | {c['bytes'] / 1e6:.1f} | {c['parse_s']:.2f} s "
            f"| {c['parse_mb_s']:.1f} | {c['ctx_s']:.2f} s | {c['ctx_mb_s']:.1f} | {c['ratio']:.2f}× | {vs} "
            f"| {per_byte} |"
        )
    return lines


def grammar_summary(workspaces: list[dict[str, Any]]) -> list[str]:
    """Every language of every workspace beside Python's ratio from the same run (the
    workspace with the most Python), so a TypeScript repository measured beside Django is
    compared with Django's Python; empty if the run parsed no Python."""
    floors = [(ws, ws["raw"].get("parse_floor") or {}) for ws in workspaces]
    pythons = [
        (f["languages"]["python"], ws) for ws, f in floors if f.get("languages", {}).get("python", {}).get("files")
    ]
    if not pythons:
        return []
    python, source = max(pythons, key=lambda pw: pw[0]["bytes"])
    lines = [
        "## Parse floor per grammar, every workspace of this run",
        "",
        f"Against Python's ratio in {source['label']} ({python['ratio']:.2f}×, ctx-lsp {python['ctx_mb_s']:.1f} MB/s). "
        "Issue 21's rule: no language far above Python's ratio while also slower per byte than Python's path.",
        "",
        "| workspace | language | files | MB | parse MB/s | ctx-lsp MB/s | ctx-lsp / floor | ratio vs Python's "
        "| cost per byte vs Python's path |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for ws, floor in floors:
        for name, c in floor.get("languages", {}).items():
            if not c.get("files"):
                continue
            lines.append(
                f"| {ws['label']} | {name} | {c['files']:,} | {c['bytes'] / 1e6:.1f} | {c['parse_mb_s']:.1f} "
                f"| {c['ctx_mb_s']:.1f} | {c['ratio']:.2f}× | {c['ratio'] / python['ratio']:.2f}× "
                f"| {python['ctx_mb_s'] / c['ctx_mb_s']:.2f}× |"
            )
    return lines


def workspace_table(ws: dict[str, Any]) -> str:
    cold = next((r for r in ws["rows"] if r["key"] == "cold_index"), None)
    files = cold["data"].get("files_indexed") if cold else None
    lines = [
        f"## {ws['label']} — `{ws['root']}`",
        "",
        (f"{files:,} files indexed; " if files else "") + f"code: {languages_line(ws)}; ",
    ]
    lines[-1] += (
        f"{len(ws['queries'])} queries; edit target `{ws['edit_target']}` ({ws['main_language']}); load average before "
        f"{_load(ws['load_before'])} → after {_load(ws['load_after'])}; this workspace took {ws['seconds']:.0f} s."
    )
    lines += ["", "| path | value | target | vs baseline |", "| --- | --- | --- | --- |"]
    for r in ws["rows"]:
        value = r["value"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['path']} | {value} | {r['target']} | {r['vs']} |")
    floor = ws["raw"].get("parse_floor")
    if floor and floor.get("languages"):
        lines += [
            "",
            f"Parse floor per grammar (one process; each file's fastest of {floor['repeat']}; the same files, "
            "those ctx-lsp outlines): tree-sitter's `parse` alone against ctx-lsp's per-file analysis "
            "(`analyse_uncounted` + `file_docs`: parse, query, walk, outline JSON, search terms).",
            "",
            *grammar_table(floor),
        ]
    if ws["problems"]:
        lines += ["", "Problems:"]
        lines += [f"- {p}".replace("\n", " ") for p in ws["problems"]]
    return "\n".join(lines)


def markdown(meta: dict[str, Any], command: str, workspaces: list[dict[str, Any]]) -> str:
    parts = [header(meta, command), ""]
    for ws in workspaces:
        parts += [workspace_table(ws), ""]
    summary = grammar_summary(workspaces)
    if summary:
        parts += [*summary, ""]
    parts.append(
        "Times are wall clock: a fresh process for index/CLI rows (process start → exit), client round trips "
        "for LSP rows. 'vs baseline' ratios come from the same run. Peak RSS: `wait4` ru_maxrss of the "
        "child (CLI, index: the largest of the process and its workers) and VmHWM of the server process."
    )
    return "\n".join(parts) + "\n"
