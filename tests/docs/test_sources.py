"""Tests for ctx_lsp/docs/sources.py: finding the environment and reading distributions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ctx_lsp.docs import sources
from ctx_lsp.docs.sources import (
    MAX_FILE_BYTES,
    find_interpreter,
    library_drafts,
    normalize_name,
    parse_headers,
    python_files,
    scan_distributions,
    site_paths,
)

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


def test_python_files_skip_tests_and_big_files(fake_site: Path, tmp_path: Path) -> None:
    """Ensure tests dirs and oversized files are not parsed, shallow files come first."""
    big = "x = 1\n" * (MAX_FILE_BYTES // 6 + 10)
    make_dist(tmp_path / "s2", "big", "1", {"big/__init__.py": "", "big/a/deep.py": "", "big/huge.py": big})
    entry = {e.key: e for e in scan_distributions([tmp_path / "s2"])}["big"]
    names = [f.path.relative_to(f.root).as_posix() for f in python_files(entry, [tmp_path / "s2"])]
    assert names == ["big/__init__.py", "big/a/deep.py"]
    foo = {e.key: e for e in scan_distributions([fake_site])}["foo"]
    assert all("tests" not in f.path.parts for f in python_files(foo, [fake_site]))


def test_files_without_record_are_found_by_import_name(tmp_path: Path) -> None:
    """Ensure an install whose RECORD lists no sources (editable: a .pth pointing at the
    project) is read from the import paths by its top-level names."""
    site, src = tmp_path / "site", tmp_path / "project" / "src"
    make_dist(site, "proj", "0.1", {}, top_level=("proj",), record=False)
    (src / "proj").mkdir(parents=True)
    (src / "proj" / "__init__.py").write_text('def hello():\n    """Say hello."""\n')
    entry = {e.key: e for e in scan_distributions([site])}["proj"]
    titles = [d.title for d in library_drafts(entry, [site, src], None)]
    assert "proj.hello" in titles


def test_setuptools_editable_finder_mapping(tmp_path: Path) -> None:
    """Ensure a setuptools editable finder's MAPPING leads to the sources."""
    site, src = tmp_path / "site", tmp_path / "elsewhere" / "edpkg"
    make_dist(site, "edpkg", "0.1", {}, top_level=("edpkg",), record=False)
    (site / "__editable___edpkg_0_1_finder.py").write_text(f"MAPPING: dict[str, str] = {{'edpkg': {str(src)!r}}}\n")
    src.mkdir(parents=True)
    (src / "__init__.py").write_text('def go():\n    """Go."""\n')
    entry = {e.key: e for e in scan_distributions([site])}["edpkg"]
    assert "edpkg.go" in [d.title for d in library_drafts(entry, [site], None)]


def test_package_llms_txt(tmp_path: Path) -> None:
    """Ensure an llms-full.txt shipped inside the package is read, in preference to llms.txt."""
    site = tmp_path / "site"
    make_dist(site, "withllms", "1", {"withllms/__init__.py": "", "withllms/llms.txt": "# W\n\nshort\n", "withllms/llms-full.txt": "# W\n\n## Deep dive\n\nlong text\n"})
    entry = {e.key: e for e in scan_distributions([site])}["withllms"]
    drafts = library_drafts(entry, [site], None)
    llms = [d for d in drafts if d.kind == "llms"]
    assert [d.title for d in llms] == ["withllms llms-full.txt › W › Deep dive"]  # "W" alone has no text
    assert not any("short" in d.text for d in drafts)


def test_legacy_description_header(tmp_path: Path) -> None:
    """Ensure an old-style `Description:` header (Metadata 1.x) is used when there is no body."""
    dist = tmp_path / "old-1.0.egg-info"
    dist.mkdir()
    (dist / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: old\nVersion: 1.0\nDescription: Old\n        ===\n        \n        Legacy text.\n")
    entry = {e.key: e for e in scan_distributions([tmp_path])}["old"]
    drafts = sources.description_drafts(entry)
    assert drafts and "Legacy text." in drafts[0].text


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_unreadable_metadata_is_skipped(tmp_path: Path) -> None:
    """Ensure a dist-info without METADATA is ignored rather than failing the scan."""
    (tmp_path / "ghost-1.0.dist-info").mkdir()
    assert scan_distributions([tmp_path]) == []
