"""The scale benchmark's smoke mode runs end to end (CI): every row is emitted, none failed.

No timing assertions: the numbers of a 200-file workspace on a shared CI machine mean
nothing; what matters is that the instrument the speed work is measured with still runs
against the current ctx-lsp (CLI, server, LSP requests, edits, docs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

pytestmark = pytest.mark.e2e


def row_keys() -> tuple[str, ...]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from scalebench.measure import ROW_KEYS
    finally:
        sys.path.remove(str(BENCHMARKS))
    return ROW_KEYS


def test_scale_smoke_emits_every_row(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "scale.py"), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for needle in ("cores:", "Python", "load average", "commit"):
        assert needle in proc.stdout
    result = json.loads(out.read_text())
    [workspace] = result["workspaces"]
    rows = {row["key"]: row for row in workspace["rows"]}
    assert tuple(rows) == row_keys()
    for key, row in rows.items():
        assert row["value"], key
        assert row["path"] in proc.stdout, key  # the markdown table has the row
        if key in ("baseline_aider_query", "vs_aider", "baseline_ctags"):  # Aider's venv, ctags: not on every CI
            assert row["status"] in ("ok", "skipped"), row
        else:
            assert row["status"] == "ok", row
    assert workspace["problems"] == []
