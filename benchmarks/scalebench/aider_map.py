"""Aider's repo map as the per-query baseline, driven through `benchmarks/eval/aider_runner.py`.

The runner lives in Aider's own virtualenv (default `/tmp/aider-venv`; see
`benchmarks/eval/README.md`, Setup) and answers JSON lines on stdio. Its first request
builds the `RepoMap` and warms the tags cache over every file (`scan_s`, as a running Aider
session would have it); each request then reports `latency_s`, the time of Aider's first
`get_repo_map` call for that query (re-asks to fit the budget are not counted).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

RUNNER = Path(__file__).resolve().parents[1] / "eval" / "aider_runner.py"
DEFAULT_PYTHON = Path(os.environ.get("CTX_EVAL_AIDER_PYTHON", "/tmp/aider-venv/bin/python"))


class AiderMap:
    def __init__(self, python: Path, stderr_path: Path):
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [str(python), str(RUNNER), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self._fd = self.proc.stdout.fileno()
        self._buf = bytearray()

    def ask(self, workspace: Path, query: str, budget: int, files: list[str], timeout: float) -> dict[str, Any]:
        assert self.proc.stdin is not None
        req = {"workspace": str(workspace), "query": query, "budget": budget, "files": files}
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.perf_counter() + timeout
        while b"\n" not in self._buf:
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or not select.select([self._fd], [], [], remaining)[0]:
                raise TimeoutError(f"Aider gave no map within {timeout:.0f} s")
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Aider runner exited (rc={self.proc.poll()})")
            self._buf += chunk
        line, _, rest = bytes(self._buf).partition(b"\n")
        self._buf = bytearray(rest)
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"Aider: {answer['error']}")
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                self.proc.kill()
            self.proc.wait(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()
