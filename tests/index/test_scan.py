"""Tests for ctx_lsp/index/scan.py: ignore rules and skip reasons."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctx_lsp.index.scan import IgnoreRules, SkipReason, scan_folder
from tests.conftest import write_tree


def _scan(root: Path, extra=(), max_bytes=1_000_000):
    return scan_folder(root, IgnoreRules(root.resolve(), extra), max_bytes)


def _paths(result) -> list[str]:
    return [f.rel_path for f in result.files]


def test_default_ignores(tmp_path: Path) -> None:
    """Ensure that VCS data, virtualenvs, caches and build output are never indexed."""
    write_tree(
        tmp_path,
        {
            "src/app.py": "x = 1\n",
            ".git/config": "[core]\n",
            "node_modules/lib/index.js": "module.exports = 1\n",
            ".venv/lib/site.py": "",
            "myenv/pyvenv.cfg": "home = /usr\n",
            "__pycache__/app.cpython-311.pyc": b"\x00\x01",
            "build/lib/app.py": "",
            "pkg.egg-info/PKG-INFO": "Name: pkg\n",
            "dist/pkg.whl": b"PK",
            "app.min.js": "var a=1;",
        },
    )
    result = _scan(tmp_path)
    assert _paths(result) == ["src/app.py"]
    assert result.ignored_dirs >= 7
    assert result.skipped[SkipReason.MINIFIED] == 1  # app.min.js, by its name


def test_nested_gitignore_and_negation(tmp_path: Path) -> None:
    """Ensure that nested .gitignore files apply to their subtree, with negation, as in git."""
    write_tree(
        tmp_path,
        {
            ".gitignore": "*.log\nsecret/\n",
            "a.log": "x",
            "keep/.gitignore": "!important.log\n",
            "keep/important.log": "kept",
            "keep/other.log": "dropped",
            "secret/key.py": "KEY = 1\n",
            "sub/.gitignore": "/local.py\n",
            "sub/local.py": "",
            "sub/deeper/local.py": "",
        },
    )
    result = _scan(tmp_path)
    assert _paths(result) == [
        ".gitignore",
        "keep/.gitignore",
        "keep/important.log",
        "sub/.gitignore",
        "sub/deeper/local.py",
    ]


def test_configured_globs(tmp_path: Path) -> None:
    """Ensure that configured ignore globs are applied on top of .gitignore."""
    write_tree(tmp_path, {"a.py": "", "gen/b.py": "", "c_pb2.py": ""})
    result = _scan(tmp_path, extra=["gen/", "*_pb2.py"])
    assert _paths(result) == ["a.py"]


def test_binary_and_large_files_are_counted(tmp_path: Path) -> None:
    """Ensure that binary and oversized files are skipped and counted by reason."""
    write_tree(tmp_path, {"logo.png": b"\x89PNG", "big.py": "x = 1\n" * 100, "ok.py": "y = 2\n"})
    result = _scan(tmp_path, max_bytes=100)
    assert _paths(result) == ["ok.py"]
    assert result.skipped[SkipReason.BINARY] == 1
    assert result.skipped[SkipReason.TOO_LARGE] == 1
    assert result.too_large == ["big.py"]


def test_symlinks_leaving_the_workspace_are_not_followed(tmp_path: Path) -> None:
    """Ensure that a symlink to a file or directory outside the workspace is skipped."""
    outside = write_tree(tmp_path / "outside", {"secret.py": "TOKEN = 'x'\n"})
    ws = write_tree(tmp_path / "ws", {"a.py": "", "inner/b.py": ""})
    os.symlink(outside / "secret.py", ws / "link.py")
    os.symlink(outside, ws / "linkdir")
    os.symlink(ws / "inner", ws / "alias")  # inside: its target is indexed under its own path
    os.symlink(ws / "missing.py", ws / "dangling.py")
    result = _scan(ws)
    assert _paths(result) == ["a.py", "inner/b.py"]
    assert result.skipped[SkipReason.SYMLINK_OUTSIDE] == 2
    assert result.skipped[SkipReason.SYMLINK_INSIDE] == 2  # alias and the dangling link


def test_symlink_loop_terminates(tmp_path: Path) -> None:
    """Ensure that a directory symlink loop does not hang the walk (links are not followed)."""
    ws = write_tree(tmp_path / "ws", {"a/x.py": ""})
    os.symlink(ws / "a", ws / "a" / "loop")
    result = _scan(ws)
    assert "a/x.py" in _paths(result)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_directory_is_counted(tmp_path: Path) -> None:
    """Ensure that an unreadable directory is counted, not fatal."""
    ws = write_tree(tmp_path / "ws", {"a.py": "", "locked/b.py": ""})
    (ws / "locked").chmod(0)
    try:
        result = _scan(ws)
    finally:
        (ws / "locked").chmod(0o755)
    assert result.skipped[SkipReason.UNREADABLE] == 1


def test_is_excluded_checks_ancestors(tmp_path: Path) -> None:
    """Ensure that a file under an ignored directory is excluded even if a rule re-includes it."""
    write_tree(tmp_path, {".gitignore": "out/\n!out/keep.py\n"})
    rules = IgnoreRules(tmp_path.resolve())
    assert rules.is_excluded("out/keep.py", False)
    assert not rules.is_excluded("src/keep.py", False)


def test_secret_files_are_counted_never_listed(tmp_path: Path) -> None:
    """Ensure that files that hold secrets are skipped by name as `secret`, before their size
    is looked at (a huge `.env` is not listed as too large), unless opted back in."""
    write_tree(
        tmp_path,
        {"app.py": "x = 1\n", ".env": "A=1\n" * 500, "deploy/id_rsa": "k\n", ".env.example": "A=\n"},
    )
    result = _scan(tmp_path, max_bytes=100)
    assert _paths(result) == ["app.py"]
    assert result.skipped[SkipReason.SECRET] == 3 and result.too_large == []
    rules = IgnoreRules(tmp_path.resolve(), include_secrets=[".env.example"])
    assert _paths(scan_folder(tmp_path, rules, 100)) == [".env.example", "app.py"]


def test_a_gitignore_that_is_a_fifo_or_a_link_out_is_not_read(tmp_path: Path) -> None:
    """Ensure that the walk reads .gitignore files through the gate: a FIFO would block it
    forever, a link out of the workspace would read a file outside."""
    import threading

    root = write_tree(tmp_path / "ws", {"a.py": "", "sub/b.py": "", "sub/c.py": ""})
    outside = write_tree(tmp_path / "outside", {"rules": "*.py\n"})
    os.mkfifo(root / ".gitignore")
    (root / "sub" / ".gitignore").symlink_to(outside / "rules")
    found: list[list[str]] = []
    thread = threading.Thread(target=lambda: found.append(_paths(_scan(root))), daemon=True)
    thread.start()
    thread.join(5)
    assert found == [["a.py", "sub/b.py", "sub/c.py"]]


def test_on_file_sees_each_indexed_file_once(tmp_path: Path) -> None:
    """Ensure that the walk hands every file it lists to `on_file` as it goes, and no other."""
    root = write_tree(
        tmp_path / "ws",
        {"a.py": "", "b/c.py": "", "b/d/e.md": "", "big.txt": "x" * 200, "node_modules/x.js": "", "img.png": ""},
    )
    found: list[str] = []
    result = scan_folder(root, IgnoreRules(root.resolve()), 100, on_file=lambda f: found.append(f.rel_path))
    assert sorted(found) == _paths(result) == ["a.py", "b/c.py", "b/d/e.md"]


def test_invalid_gitignore_lines_are_skipped_and_named(tmp_path: Path) -> None:
    """Ensure that psf/black's invalid ignore files (only `!`, at two depths) and a `[z-a]`
    range do not stop the walk: every source file is found, the valid lines of the same
    files still apply, and each skipped pattern is named with its file and line."""
    write_tree(
        tmp_path,
        {
            ".gitignore": "[z-a]\n*.log\n",
            "src/app.py": "",
            "src/run.log": "",
            "tests/data/invalid_gitignore_tests/.gitignore": "!\n",
            "tests/data/invalid_gitignore_tests/a.py": "",
            "tests/data/invalid_nested_gitignore_tests/a/.gitignore": "!\n",
            "tests/data/invalid_nested_gitignore_tests/a/b.py": "",
        },
    )
    rules = IgnoreRules(tmp_path.resolve())
    result = scan_folder(tmp_path, rules, 1_000_000)
    assert [p for p in _paths(result) if p.endswith(".py")] == [
        "src/app.py",
        "tests/data/invalid_gitignore_tests/a.py",
        "tests/data/invalid_nested_gitignore_tests/a/b.py",
    ]
    assert "src/run.log" not in _paths(result)
    assert [(p.source, p.line, p.pattern) for p in rules.problems] == [
        (".gitignore", 1, "[z-a]"),
        ("tests/data/invalid_gitignore_tests/.gitignore", 1, "!"),
        ("tests/data/invalid_nested_gitignore_tests/a/.gitignore", 1, "!"),
    ]


def test_git_info_exclude_applies_below_the_gitignore(tmp_path: Path) -> None:
    """Ensure that `.git/info/exclude` is read like git reads it: its patterns apply, and
    the root `.gitignore` can re-include what it excludes."""
    write_tree(
        tmp_path,
        {
            ".git/info/exclude": "scratch/\n*.tmp.py\n",
            ".gitignore": "!keep.tmp.py\n",
            "scratch/notes.py": "",
            "a.tmp.py": "",
            "keep.tmp.py": "",
            "app.py": "",
        },
    )
    assert _paths(_scan(tmp_path)) == [".gitignore", "app.py", "keep.tmp.py"]


def test_a_bad_configured_glob_is_named_and_the_others_apply(tmp_path: Path) -> None:
    """Ensure that an `index.ignore` glob that cannot be applied is a problem naming the
    setting, not a crash, and the other globs still apply."""
    write_tree(tmp_path, {"gen/a.py": "", "b.py": ""})
    rules = IgnoreRules(tmp_path.resolve(), ["!", "gen/"])
    assert _paths(scan_folder(tmp_path, rules, 1_000_000)) == ["b.py"]
    assert [(p.source, p.pattern) for p in rules.problems] == [("index.ignore", "!")]


def test_an_entry_that_fails_is_left_out_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that an unexpected failure while deciding on one entry (a bug) leaves that
    entry out with a problem naming it, and the walk goes on."""
    write_tree(tmp_path, {"a.py": "", "boom.py": "", "c.py": ""})
    rules = IgnoreRules(tmp_path.resolve())
    real = rules.is_ignored

    def failing(rel: str, is_dir: bool) -> bool:
        if rel == "boom.py":
            raise RuntimeError("simulated bug")
        return real(rel, is_dir)

    monkeypatch.setattr(rules, "is_ignored", failing)
    result = scan_folder(tmp_path, rules, 1_000_000)
    assert _paths(result) == ["a.py", "c.py"]
    assert result.problems == ["./boom.py: left out after RuntimeError: simulated bug"]
