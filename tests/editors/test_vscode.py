"""The VS Code extension (editors/vscode): built, tested and packaged the way a release is
(`npm ci`, `npm run compile`, `npm test`, `npm run package`), then that .vsix run inside a
real VS Code by editors/vscode/test/real/run.sh (code-server and headless Chromium).

The build runs in a copy of editors/vscode under a temporary folder (sources only, no
node_modules), so two test runs at once, or a developer's own build, never share a
node_modules. `npm test` includes end-to-end runs of the real `ctx-lsp serve`, and the real
VS Code finds the server in its workspace's .venv, which reaches this interpreter's install:
both test the same install as the rest of the suite.

Without npm (or with a Node older than 20) the tests are skipped, unless `CI` is set: then
they fail, because CI must build the extension. The real-VS-Code run skips on another OS
than Linux x86_64, and when its tools (apt chromium, npm code-server and playwright-core,
cached under ~/.cache/ctx-lsp-e2e) cannot be installed; under `CI` on Linux x86_64 such a
skip is a failure, so CI on this kind of machine really runs it.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
BUILD_OUTPUT = ("node_modules", "out", "out-test", "out-tsc", "*.vsix")
MIN_NODE = 20
"""vscode-languageclient 11 and @vscode/vsce 3 need Node 20."""
STEPS = (
    ("npm ci", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], 240),
    ("npm run compile", ["run", "compile"], 120),
    ("npm test", ["test"], 240),
    ("npm run package", ["run", "package"], 120),
)


def node_major(node: str) -> int | None:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.", out.strip())
    return int(match[1]) if match else None


def find_npm() -> tuple[str | None, str]:
    """npm, if it is on PATH with a Node that is new enough; else None and why not."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        return None, "needs node and npm on PATH (Node >= 20) to build editors/vscode"
    major = node_major(node)
    if major is None or major < MIN_NODE:
        return None, f"needs Node >= {MIN_NODE} to build editors/vscode (found {node}: {major or 'version unknown'})"
    return npm, ""


REAL_RUN = EXTENSION / "test" / "real" / "run.sh"
REAL_RUN_TIMEOUT_S = 900
"""A first run installs code-server (~75 s) and maybe chromium; a cached one takes ~1 min."""
SKIPPED = 77
"""run.sh's exit status when it cannot run here (its last line says why)."""


@dataclass(frozen=True)
class Packaged:
    vsix: Path
    npm_test_summary: dict[str, str]
    timings: str


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Packaged:
    """npm ci, compile, test and package a copy of editors/vscode, once for both tests."""
    npm, why = find_npm()
    if npm is None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    build = tmp_path_factory.mktemp("vscode") / "vscode"
    shutil.copytree(EXTENSION, build, ignore=shutil.ignore_patterns(*BUILD_OUTPUT))
    vsix = build / "ctx-lsp.vsix"
    env = dict(os.environ)
    env["CTX_LSP_PYTHON"] = sys.executable
    env["CTX_LSP_REPO"] = str(REPO)  # the manifest tests read ctx_lsp/config.py there
    # The venv's bin first: the e2e and the extension's fallback find this install's ctx-lsp.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    timings = []
    summary: dict[str, str] = {}
    for name, args, timeout in STEPS:
        started = time.perf_counter()
        proc = subprocess.run([npm, *args], cwd=build, env=env, capture_output=True, text=True, timeout=timeout)
        elapsed = time.perf_counter() - started
        timings.append(f"{name} {elapsed:.1f} s")
        if proc.returncode != 0:
            output = (proc.stdout[-6000:] + "\n--- stderr ---\n" + proc.stderr[-4000:]).strip()
            pytest.fail(f"{name} failed with exit code {proc.returncode} after {elapsed:.1f} s:\n{output}")
        if name == "npm test":
            # node:test's closing summary: "# tests 95" (tap) or "ℹ tests 95" (spec).
            summary = dict(re.findall(r"^(?:#|ℹ) (tests|pass|fail) (\d+)$", proc.stdout, flags=re.M))
            assert summary.get("fail") == "0", proc.stdout[-4000:]
            assert int(summary.get("tests", "0")) > 0, proc.stdout[-4000:]
    return Packaged(vsix, summary, ", ".join(timings))


def test_vscode_extension_builds_tests_and_packages(packaged: Packaged) -> None:
    print(f"--- npm test: {packaged.npm_test_summary.get('pass')} of {packaged.npm_test_summary.get('tests')} passed")
    print(f"--- {packaged.timings}")
    vsix = packaged.vsix
    assert vsix.is_file(), f"npm run package wrote no {vsix.name}"
    assert vsix.stat().st_size > 10_000, f"{vsix.name} is only {vsix.stat().st_size} bytes"
    print(f"--- {vsix.name}: {vsix.stat().st_size / 1024:.1f} KB")


def test_vscode_extension_in_a_real_vs_code(packaged: Packaged, tmp_path: Path) -> None:
    """Ensure that the packaged extension works inside VS Code's own workbench and extension
    host: status item, Copy Context Bundle, unsaved edits, Show Symbol, Explain, settings."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        here = f"{sys.platform} {platform.machine()}"
        pytest.skip(f"the real-VS-Code run needs Linux x86_64 (npm code-server, Debian chromium); this is {here}")
    started = time.perf_counter()
    args = ["bash", str(REAL_RUN), "--vsix", str(packaged.vsix), "--python", sys.executable]
    # Its own session, so a timeout can stop run.sh and drive.js, which then stops code-server.
    with subprocess.Popen(
        [*args, "--workdir", str(tmp_path / "real")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as running:
        try:
            stdout, stderr = running.communicate(timeout=REAL_RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(running.pid, signal.SIGTERM)
            stdout, stderr = running.communicate(timeout=60)
            pytest.fail(f"run.sh took over {REAL_RUN_TIMEOUT_S} s:\n{stdout[-8000:]}\n{stderr[-4000:]}")
    proc = subprocess.CompletedProcess(args, running.returncode, stdout, stderr)
    elapsed = time.perf_counter() - started
    output = (proc.stdout[-12000:] + "\n--- stderr ---\n" + proc.stderr[-4000:]).strip()
    if proc.returncode == SKIPPED:
        reason = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "run.sh skipped"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the real-VS-Code test on Linux x86_64, but: {reason}\n{output}")
        pytest.skip(reason)
    assert proc.returncode == 0, f"run.sh failed (exit {proc.returncode}) after {elapsed:.0f} s:\n{output}"
    assert re.search(r"^e2e: \d+ passed, 0 failed$", proc.stdout, flags=re.M), output
    print(
        f"--- real VS Code: {elapsed:.0f} s\n"
        + "\n".join(line for line in proc.stdout.splitlines() if " took " in line or line.startswith("e2e:"))
    )
