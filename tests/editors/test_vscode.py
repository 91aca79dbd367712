"""The VS Code extension (editors/vscode) built, tested and packaged the way a release is:
`npm ci`, `npm run compile`, `npm test`, `npm run package`.

It runs in a copy of editors/vscode under tmp_path (sources only, no node_modules), so two
test runs at once, or a developer's own build, never share a node_modules.

`npm test` includes end-to-end runs of the real `ctx-lsp serve`; they are pointed at this
interpreter (`CTX_LSP_PYTHON`), so they test the same install as the rest of the suite.
Without npm (or with a Node older than 20) the test is skipped, unless `CI` is set: then
it fails, because CI must build the extension.
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


def test_vscode_extension_builds_tests_and_packages(tmp_path: Path) -> None:
    npm, why = find_npm()
    if npm is None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    build = tmp_path / "vscode"
    shutil.copytree(EXTENSION, build, ignore=shutil.ignore_patterns(*BUILD_OUTPUT))
    vsix = build / "ctx-lsp.vsix"
    env = dict(os.environ)
    env["CTX_LSP_PYTHON"] = sys.executable
    env["CTX_LSP_REPO"] = str(REPO)  # the manifest tests read ctx_lsp/config.py there
    # The venv's bin first: the e2e and the extension's fallback find this install's ctx-lsp.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    timings = []
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
            print(f"--- npm test: {summary.get('pass')} of {summary.get('tests')} passed")
    print("--- " + ", ".join(timings))
    assert vsix.is_file(), f"npm run package wrote no {vsix.name}"
    assert vsix.stat().st_size > 10_000, f"{vsix.name} is only {vsix.stat().st_size} bytes"
    print(f"--- {vsix.name}: {vsix.stat().st_size / 1024:.1f} KB")
