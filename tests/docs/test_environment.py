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
