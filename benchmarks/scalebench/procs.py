"""Run one command as a fresh process: wall time, exit status, output, and its own peak RSS.

Peak RSS comes from `os.wait4` on that child, whose `ru_maxrss` is the largest resident
set of the child and of the descendants it waited for (a `ctx-lsp index` with worker
processes reports the largest of them, not their sum). `RUSAGE_CHILDREN` would be the
maximum over every child this runner ever had, which only grows.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ProcResult:
    cmd: list[str]
    seconds: float
    rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    group_rss_mb: float | None = None
    """The largest sum of RSS over the process group, sampled (`run(..., group=True)`):
    what a command and its workers hold at once, which `ru_maxrss` (one process) is not."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def problem(self) -> str:
        """One line saying what went wrong (for the report)."""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s: {' '.join(self.cmd[-6:])}"
        tail = " | ".join(self.stderr.strip().splitlines()[-4:])
        return f"exit {self.returncode} after {self.seconds:.1f} s: {tail[:400]}"


def ctx_env(ctx_root: Path | None) -> dict[str, str]:
    """The environment every ctx-lsp process gets: with `ctx_root`, that tree's `ctx_lsp`
    comes first on the path (a frozen snapshot rather than the live, edited tree)."""
    env = dict(os.environ)
    if ctx_root is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ctx_root), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def ctx_cmd(*args: str) -> list[str]:
    """`ctx-lsp ARGS` as `python -m ctx_lsp ARGS` (the console script does the same import)."""
    return [sys.executable, "-m", "ctx_lsp", *args]


GROUP_SAMPLE_S = 0.5


def group_rss_kb(pgid: int) -> int:
    """The summed resident memory of the processes in group `pgid` now (Linux /proc)."""
    total = 0
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:  # after the command: state, ppid, pgrp, …, rss is field 24
                total += int(fields[21]) * page_kb
        except (OSError, IndexError, ValueError):
            continue
    return total


def run(
    cmd: list[str],
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    group: bool = False,
) -> ProcResult:
    """`group=True` also samples the summed RSS of the command's process group every
    `GROUP_SAMPLE_S` (the index's workers beside its main process)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        timed_out = threading.Event()
        finished = threading.Event()
        peak_group = [0]

        def sample() -> None:
            while not finished.wait(GROUP_SAMPLE_S):
                peak_group[0] = max(peak_group[0], group_rss_kb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True) if group else None
        if sampler is not None:
            sampler.start()

        def kill() -> None:
            timed_out.set()
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)  # the group we started: the command and its workers

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            finished.set()
        seconds = time.perf_counter() - started
        if sampler is not None:
            sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ProcResult(
            cmd=cmd,
            seconds=seconds,
            rss_mb=usage.ru_maxrss / 1024,
            returncode=proc.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            timed_out=timed_out.is_set(),
            group_rss_mb=peak_group[0] / 1024 if group else None,
        )


def vm_hwm_mb(pid: int) -> float | None:
    """Peak resident memory of a running process, in MB (Linux; None elsewhere or if gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None
