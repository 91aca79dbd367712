"""Tests for ctx_lsp/cli/'s choice of workspace: `outline FILE` and `docs` index only a
workspace the user named (or the project the file or directory is in) and write a cache
only there; binary and special files are refused before anything is indexed."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from ctx_lsp.cli import main
from ctx_lsp.cli.paths import project_root
from ctx_lsp.index.store import CACHE_DIR_NAME
from tests.conftest import SAMPLE_FILES, write_tree


@pytest.fixture
def loose(tmp_path: Path) -> Path:
    """A directory in no project (like /usr/bin): no root marker in it or above it."""
    directory = write_tree(tmp_path / "loose", {"tool.py": "def run():\n    return 1\n", "other.py": "X = 1\n"})
    if project_root(directory) is not None:
        pytest.skip(f"{project_root(directory)} above the tmp dir looks like a project")
    return directory


def test_outline_of_a_binary_is_refused_and_writes_nothing(loose: Path, capsys) -> None:
    """Ensure that `ctx-lsp outline /bin/ls` (a binary in a directory that is no project)
    is refused clearly, and indexes and writes nothing in its directory."""
    binary = loose / "ls"
    shutil.copyfile("/bin/ls" if Path("/bin/ls").exists() else __file__, binary)
    if b"\x00" not in binary.read_bytes()[:8192]:
        binary.write_bytes(b"\x7fELF\x00\x00" + binary.read_bytes())
    assert main(["outline", str(binary)]) == 2
    assert "is a binary file" in capsys.readouterr().err
    assert not (loose / CACHE_DIR_NAME).exists()


def test_outline_of_a_file_in_no_project_writes_no_cache(loose: Path, capsys) -> None:
    """Ensure that a text file outside any project is outlined alone: the result is the
    same, and no `.ctx-lsp/` appears in a directory nobody named as a workspace."""
    assert main(["outline", str(loose / "tool.py"), "--tier", "3"]) == 0
    out, err = capsys.readouterr()
    assert out == "def run():\n    return 1\n" and "tool.py: tier 3" in err
    assert not (loose / CACHE_DIR_NAME).exists()


def test_outline_in_a_project_caches_at_its_root(tmp_path: Path, capsys) -> None:
    """Ensure that a file in a project (a root marker above it) is outlined with the
    project as the workspace, whose cache is at the project root."""
    root = write_tree(tmp_path / "proj", {**SAMPLE_FILES, "pyproject.toml": '[project]\nname = "p"\n'})
    assert main(["outline", str(root / "pkg" / "tokens.py")]) == 0
    assert "pkg/tokens.py: tier 1" in capsys.readouterr().err
    assert (root / CACHE_DIR_NAME).is_dir() and not (root / "pkg" / CACHE_DIR_NAME).exists()


def test_outline_of_a_fifo_is_refused_at_once(loose: Path, capsys) -> None:
    """Ensure that a FIFO named on the command line is refused, never opened for a read
    that would block."""
    os.mkfifo(loose / "pipe.py")
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(["outline", str(loose / "pipe.py")])), daemon=True)
    thread.start()
    thread.join(10)
    assert codes == [2] and "is a FIFO" in capsys.readouterr().err


def test_outline_of_a_file_outside_the_named_workspace_names_the_file(tmp_path: Path, capsys) -> None:
    root = write_tree(tmp_path / "ws", SAMPLE_FILES)
    other = write_tree(tmp_path / "other", {"x.py": "X = 1\n"})
    assert main(["outline", str(other / "x.py"), "--workspace", str(root)]) == 2
    assert "FILE (uri):" in capsys.readouterr().err


def test_docs_outside_a_project_writes_no_cache_in_the_current_directory(
    loose: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Ensure that `ctx-lsp docs` run from a directory that is no project does not write
    `.ctx-lsp/docs.sqlite3` into it (nor does `resolve`)."""
    monkeypatch.chdir(loose)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert main(["docs", "pygls", "--topic", "custom requests"]) == 0
    assert main(["resolve", "pygls"]) == 0
    assert "pygls" in capsys.readouterr().out
    assert not (loose / CACHE_DIR_NAME).exists()


def test_docs_inside_a_project_uses_its_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that `ctx-lsp docs` from a subdirectory of a project uses the project (its
    config, its cache at the root), not the subdirectory."""
    root = write_tree(tmp_path / "proj", {**SAMPLE_FILES, "pyproject.toml": '[project]\nname = "p"\n'})
    monkeypatch.chdir(root / "pkg")
    assert main(["docs", "pygls", "--topic", "custom requests"]) == 0
    assert (root / CACHE_DIR_NAME / "docs.sqlite3").is_file() and not (root / "pkg" / CACHE_DIR_NAME).exists()


def test_commands_default_to_the_project_the_current_directory_is_in(tmp_path: Path, monkeypatch) -> None:
    """Ensure that `bundle`, `show` and `mcp` without --workspace work on the project that
    holds the current directory (not the subfolder a command happens to be run from), and
    on the current directory when it is in no project."""
    from ctx_lsp.cli.paths import workspace_of

    project = tmp_path / "proj"
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    monkeypatch.chdir(project / "pkg" / "sub")
    assert workspace_of(None) == project.resolve()
    assert workspace_of(Path("..")) == (project / "pkg").resolve()
    loose = tmp_path / "loose"
    loose.mkdir()
    monkeypatch.chdir(loose)
    assert workspace_of(None) == loose.resolve()


def test_serve_accepts_stdio_flag() -> None:
    """Ensure that `serve --stdio` parses: vscode-languageclient and others append it."""
    from ctx_lsp.cli.parser import build_parser as _parser

    args = _parser().parse_args(["serve", "--stdio"])
    assert args.command == "serve" and args.stdio and args.tcp is None
