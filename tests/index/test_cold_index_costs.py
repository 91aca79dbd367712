"""Tests for the cold-index cost cuts (issue 11): what crosses from pool workers, and the
walk's virtualenv check, must give exactly what they gave before."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from ctx_lsp.index.files import ReadOutcome, analyse_uncounted
from ctx_lsp.index.scan import IgnoreRules, SkipReason, scan_folder
from ctx_lsp.index.store import StoredFile
from tests.conftest import write_tree


def _scan(root: Path, start: str = ""):
    return scan_folder(root, IgnoreRules(root.resolve()), 1_000_000, start=start)


def test_rows_and_outcomes_survive_pickling() -> None:
    """Ensure that a row and a read outcome come back from a worker equal, field for field,
    whether the outcome has a row, an analysis to reuse or an error."""
    source = b'"""Doc."""\n\ndef f(x):\n    return g(x)\n'
    analysis = analyse_uncounted("pkg/mod.py", source, len(source), 123)
    assert analysis is not None
    row, _text = analysis
    outcomes = [
        ReadOutcome(row),
        ReadOutcome(None, reused=("0f:.py:1", 40, 123)),
        ReadOutcome(None, SkipReason.UNREADABLE, "pkg/x.py: Permission denied"),
        ReadOutcome(StoredFile("a.bin", 3, 7, "00", "binary", 0, 0, 0, False, ""), SkipReason.BINARY),
        ReadOutcome(StoredFile("b.txt", 3, 7, "11", "text", 1, 1, 0, True, "[]")),
    ]
    back = pickle.loads(pickle.dumps(outcomes, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == outcomes
    assert [type(o.row) for o in back] == [StoredFile, type(None), type(None), StoredFile, StoredFile]
    assert back[4].row is not None and back[4].row.decode_replaced is True


def test_virtualenv_is_found_from_the_listing(tmp_path: Path) -> None:
    """Ensure that a directory holding pyvenv.cfg is skipped and counted once, nested or not,
    and that nothing under it is listed."""
    write_tree(
        tmp_path,
        {
            "app.py": "x = 1\n",
            "env1/pyvenv.cfg": "home = /usr\n",
            "env1/lib/site.py": "y = 2\n",
            "deep/er/env2/pyvenv.cfg": "home = /usr\n",
            "deep/er/env2/bin/tool.py": "",
            "deep/er/kept.py": "",
        },
    )
    result = _scan(tmp_path)
    assert [f.rel_path for f in result.files] == ["app.py", "deep/er/kept.py"]
    assert result.ignored_dirs == 2
    assert not result.skipped


def test_dangling_marker_link_is_not_a_virtualenv(tmp_path: Path) -> None:
    """Ensure that a pyvenv.cfg that does not exist (a dangling link) does not make its
    directory a virtualenv, as when the walk checked it with os.path.exists."""
    write_tree(tmp_path, {"pkg/mod.py": "x = 1\n"})
    os.symlink(tmp_path / "missing.cfg", tmp_path / "pkg" / "pyvenv.cfg")
    result = _scan(tmp_path)
    assert [f.rel_path for f in result.files] == ["pkg/mod.py"]
    assert result.ignored_dirs == 0
    assert result.skipped[SkipReason.SYMLINK_INSIDE] == 1


def test_walk_started_in_a_virtualenv_lists_it(tmp_path: Path) -> None:
    """Ensure that a walk asked to start inside a directory lists it even if it is a
    virtualenv (only directories found below the start are skipped), as before."""
    write_tree(tmp_path, {"tools/pyvenv.cfg": "home = /usr\n", "tools/run.py": "", "tools/sub/pyvenv.cfg": ""})
    result = _scan(tmp_path, start="tools")
    assert [f.rel_path for f in result.files] == ["tools/pyvenv.cfg", "tools/run.py"]
    assert result.ignored_dirs == 1
