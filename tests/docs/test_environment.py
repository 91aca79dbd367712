"""Tests for ctx_lsp/docs/environment.py: finding the interpreter and the installed distributions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ctx_lsp.docs.environment import find_interpreter, normalize_name, parse_headers, scan_distributions, site_paths

from .conftest import make_dist


def _fake_python(venv: Path) -> Path:
    exe = venv / "bin" / "python"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    return exe


def test_find_interpreter_order(tmp_path: Path) -> None:
    """Ensure the interpreter is the configured one, else the workspace venv, else
    $VIRTUAL_ENV, else the server's own."""
    ws = tmp_path / "ws"
    ws.mkdir()
    active = _fake_python(tmp_path / "active")
    assert find_interpreter(ws, None, {}) == sys.executable
    assert find_interpreter(ws, None, {"VIRTUAL_ENV": str(tmp_path / "active")}) == str(active)
    local = _fake_python(ws / ".venv")
    assert find_interpreter(ws, None, {"VIRTUAL_ENV": str(tmp_path / "active")}) == str(local)
    assert find_interpreter(ws, "tools/py", {}) == str(ws / "tools" / "py")
    assert find_interpreter(None, None, {}) == sys.executable


def test_site_paths_of_a_real_interpreter() -> None:
    """Ensure that asking our own interpreter (in a subprocess) finds where pygls lives."""
    import pygls

    found = site_paths(sys.executable)
    assert not found.warning
    assert Path(pygls.__file__).parent.parent in found.paths


def test_broken_interpreter_falls_back(tmp_path: Path) -> None:
    """Ensure that an interpreter that cannot run means our own paths and a warning."""
    found = site_paths(str(tmp_path / "no-such-python"))
    assert found.warning and "no-such-python" in found.warning
    assert found.interpreter == sys.executable and found.paths


def test_normalize_name() -> None:
    """Ensure PEP 503 normalization: case-insensitive, -_. runs equivalent."""
    assert normalize_name("Foo.Bar__baz-") == "foo-bar-baz"


def test_parse_headers() -> None:
    """Ensure METADATA headers are read up to the body, first value winning."""
    headers = parse_headers("Name: x\nSummary: one\n  two\nClassifier: a\nClassifier: b\n\n# Body\n")
    assert headers.values["name"] == "x"
    assert headers.values["summary"] == "one\n  two"
    assert headers.values["classifier"] == "a"
    assert headers.header_lines == 6  # the body starts on the 7th line


def test_scan_distributions(fake_site: Path, tmp_path: Path) -> None:
    """Ensure distributions are read with import names from top_level.txt or RECORD, and
    the first of two same-named ones wins."""
    later = tmp_path / "later"
    make_dist(later, "Foo", "9.9", {"foo/__init__.py": ""})
    entries = {e.key: e for e in scan_distributions([fake_site, later])}
    assert entries["foo"].version == "1.0" and entries["foo"].summary == "Frobnicates widgets"
    assert entries["foo"].import_names == ("foo",)
    assert entries["bar-baz"].import_names == ("barbaz",)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_unreadable_metadata_is_skipped(tmp_path: Path) -> None:
    """Ensure a dist-info without METADATA is ignored rather than failing the scan."""
    (tmp_path / "ghost-1.0.dist-info").mkdir()
    assert scan_distributions([tmp_path]) == []


def _planted_venv(ws: Path, marker: Path) -> Path:
    """A cloned repository's `.venv` whose `bin/python` is a script that would leave
    `marker` behind if anyone ran it, with one real package in its site-packages."""
    venv = ws / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    exe = venv / "bin" / "python"
    exe.write_text(f"#!/bin/sh\ntouch {marker}\necho '[]'\n")
    exe.chmod(0o755)
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "planted").mkdir(parents=True)
    (site / "planted-1.0.dist-info").mkdir()
    (site / "planted-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: planted\nVersion: 1.0\n")
    (ws / "src").mkdir()
    (site / "_editable.pth").write_text(f"{ws / 'src'}\n/etc\nimport os; os.system('touch {marker}')\n")
    return exe


def test_a_workspace_interpreter_is_read_never_run(tmp_path: Path) -> None:
    """Ensure that the workspace's own `.venv/bin/python` (or one a workspace config names)
    is never executed: its site-packages are found from its layout, its `.pth` path lines
    are kept only inside the workspace, and its import lines are not run."""
    from ctx_lsp.docs.environment import is_trusted_interpreter, venv_site_paths

    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "ran"
    exe = _planted_venv(ws, marker)
    assert not is_trusted_interpreter(str(exe), ws, named_by_user=False)
    assert is_trusted_interpreter(str(exe), ws, named_by_user=True)
    assert is_trusted_interpreter(sys.executable, ws, named_by_user=False)
    found = venv_site_paths(str(exe), ws)
    assert not marker.exists()
    site = ws / ".venv" / "lib" / "python3.11" / "site-packages"
    assert found.paths == (site, ws / "src") and not found.warning  # /etc (outside) is dropped


def test_library_docs_never_run_a_cloned_venv(tmp_path: Path) -> None:
    """Ensure that the docs catalog of a workspace with a planted `.venv` lists its packages
    without running its interpreter, and that a `python.interpreter` from the workspace's
    own config is not run either, while the same setting from the editor is."""
    from ctx_lsp.engine import Engine

    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "ran"
    _planted_venv(ws, marker)
    (ws / "pyproject.toml").write_text('[tool.ctx-lsp.python]\ninterpreter = ".venv/bin/python"\n')
    engine = Engine([ws], {"index": {"watch": False}})
    try:
        names = [m.library for m in engine.resolve_library("planted")]
        assert "planted" in names and not marker.exists()
    finally:
        engine.close()
    trusted = Engine([ws], {"index": {"watch": False}, "python": {"interpreter": ".venv/bin/python"}})
    try:
        trusted.resolve_library("planted")
        assert marker.exists()  # the user named it: it is run (and here it lies, so no packages)
    finally:
        trusted.close()
