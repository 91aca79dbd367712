"""Tests for ctx_lsp/docs/sources.py: reading one library's descriptions, llms.txt and Python files."""

from __future__ import annotations

from pathlib import Path

from ctx_lsp.docs import sources
from ctx_lsp.docs.environment import scan_distributions
from ctx_lsp.docs.sources import MAX_FILE_BYTES, library_drafts, python_files

from .conftest import make_dist


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
    make_dist(
        site,
        "withllms",
        "1",
        {
            "withllms/__init__.py": "",
            "withllms/llms.txt": "# W\n\nshort\n",
            "withllms/llms-full.txt": "# W\n\n## Deep dive\n\nlong text\n",
        },
    )
    entry = {e.key: e for e in scan_distributions([site])}["withllms"]
    drafts = library_drafts(entry, [site], None)
    llms = [d for d in drafts if d.kind == "llms"]
    assert [d.title for d in llms] == ["withllms llms-full.txt › W › Deep dive"]  # "W" alone has no text
    assert not any("short" in d.text for d in drafts)


def test_legacy_description_header(tmp_path: Path) -> None:
    """Ensure an old-style `Description:` header (Metadata 1.x) is used when there is no body."""
    dist = tmp_path / "old-1.0.egg-info"
    dist.mkdir()
    (dist / "PKG-INFO").write_text(
        "Metadata-Version: 1.1\nName: old\nVersion: 1.0\n"
        "Description: Old\n        ===\n        \n        Legacy text.\n"
    )
    entry = {e.key: e for e in scan_distributions([tmp_path])}["old"]
    drafts = sources.description_drafts(entry)
    assert drafts and "Legacy text." in drafts[0].text


def test_docs_folder_files_are_read_through_the_gate(tmp_path: Path) -> None:
    """Ensure that a docs folder's pages are read only if they resolve inside the roots
    (a page linked out of the workspace is not), that a FIFO page cannot block the
    lookup, and that secret-named pages are skipped."""
    import os
    import threading

    from ctx_lsp.docs.environment import LibraryEntry

    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "guide.md").write_text("# Guide\n\nInside.\n")
    (ws / "docs" / "secrets.md").write_text("# Keys\n\nhunter2\n")
    (tmp_path / "stolen.md").write_text("# Stolen\n\nOutside.\n")
    (ws / "docs" / "link.md").symlink_to(tmp_path / "stolen.md")
    os.mkfifo(ws / "docs" / "pipe.md")
    entry = LibraryEntry("guide", "guide", "", "", (), "", "", extra_docs=(str(ws / "docs"),))
    texts: list[str] = []
    thread = threading.Thread(
        target=lambda: texts.extend(d.text for d in sources.extra_doc_drafts(entry, ws, [ws])), daemon=True
    )
    thread.start()
    thread.join(5)
    joined = "\n".join(texts)
    assert "Inside." in joined and "Outside." not in joined and "hunter2" not in joined
