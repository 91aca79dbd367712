"""The history reader runs nothing a repository controls and reads nothing outside the
workspace (ctx_lsp/index/git_history.py; issue 22, item 4)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctx_lsp.engine import BundleRequest, Engine
from ctx_lsp.index.git_history import read_history
from tests.index.git_fixtures import (
    CO_CHANGE_HISTORY,
    GIT_ENV,
    audited,
    git,
    make_repo,
    opened_outside,
    started,
)

HOSTILE_CONFIG = """\
[core]
\tfsmonitor = {script}
\tpager = {script}
\thooksPath = {hooks}
\tsshCommand = {script}
\taskPass = {script}
\teditor = {script}
[diff]
\texternal = {script}
[filter "evil"]
\tclean = {script}
\tsmudge = {script}
\tprocess = {script}
\trequired = true
[credential]
\thelper = !{script}
[alias]
\tlog = !{script}
[uploadpack]
\tpackObjectsHook = {script}
[remote "origin"]
\turl = ext::{script}
"""


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config and hooks name a script that writes a marker file."""
    ws = tmp_path / "ws"
    make_repo(ws, CO_CHANGE_HISTORY)
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $@" >> {marker}\ncat\n')
    script.chmod(0o755)
    hooks = ws / ".git" / "evil-hooks"
    hooks.mkdir()
    for name in ("pre-commit", "post-checkout", "post-merge", "reference-transaction", "fsmonitor-watchman"):
        shutil.copy(script, hooks / name)
    (ws / ".git" / "config").write_text(HOSTILE_CONFIG.format(script=script, hooks=hooks))
    (ws / ".gitattributes").write_text("* filter=evil diff=evil\n")
    return ws, marker


def test_a_hostile_config_runs_nothing(hostile: tuple[Path, Path]) -> None:
    """Ensure that indexing, bundling and status over a repository whose .git/config names
    a script (fsmonitor, pager, diff.external, filters, hooks…) never run it, and that no
    process is started while the history is read."""
    ws, marker = hostile
    with audited() as record:
        history = read_history(ws)
    assert len(history.commits) == 5
    assert started(record) == []
    engine = Engine([ws])
    try:
        engine.index()
        assert engine.wait_for_history()  # the bundle ranks with the history read
        result = engine.bundle(BundleRequest(query="parse escaped quotes", budget=4000))
        assert result.sections
        assert "5 commits" in engine.status().history["status"]
    finally:
        engine.close()
    assert not marker.exists()
    # The config is live: git itself runs the script (fsmonitor on status).
    subprocess.run(["git", "-C", str(ws), "status"], capture_output=True, env={**os.environ, **GIT_ENV})
    assert marker.exists()


def test_a_git_file_is_refused(tmp_path: Path) -> None:
    """Ensure that a .git file (gitdir: elsewhere: a worktree, a submodule) is not followed."""
    elsewhere = tmp_path / "elsewhere"
    make_repo(elsewhere, CO_CHANGE_HISTORY)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    with audited() as record:
        history = read_history(ws)
    assert history.commits == () and history.problem and ".git is a file" in history.status
    assert opened_outside(record, ws) == []


def test_a_linked_worktree_is_refused(tmp_path: Path) -> None:
    """Ensure that a linked worktree (`git worktree add`: a .git file) has no history."""
    main = tmp_path / "main"
    make_repo(main, CO_CHANGE_HISTORY)
    ws = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(ws))
    history = read_history(ws)
    assert history.commits == () and history.problem


@pytest.mark.parametrize("link", [".git", ".git/objects", ".git/objects/pack"])
def test_a_link_out_of_the_workspace_is_refused(tmp_path: Path, link: str) -> None:
    """Ensure that .git, objects/ or objects/pack as a link out of the workspace is refused."""
    ws = tmp_path / "ws"
    make_repo(ws, CO_CHANGE_HISTORY)
    git(ws, "gc", "-q", "--prune=now")
    outside = tmp_path / "outside"
    shutil.move(str(ws / link), str(outside))
    os.symlink(outside, ws / link)
    with audited() as record:
        history = read_history(ws)
    assert history.commits == () and history.problem and "link out of the workspace" in history.status
    assert opened_outside(record, ws) == []


def test_alternates_are_refused(tmp_path: Path) -> None:
    """Ensure that objects/info/alternates (object stores elsewhere) means no history."""
    source = tmp_path / "source"
    make_repo(source, CO_CHANGE_HISTORY)
    ws = tmp_path / "ws"
    git(tmp_path, "clone", "-q", "--shared", str(source), str(ws))
    assert (ws / ".git" / "objects" / "info" / "alternates").exists()
    with audited() as record:
        history = read_history(ws)
    assert history.commits == () and history.problem and "alternates" in history.status
    assert opened_outside(record, ws) == []


@pytest.mark.parametrize("what", ["ref", "loose object", "pack"])
def test_a_file_linked_out_is_not_read(tmp_path: Path, what: str) -> None:
    """Ensure that a ref, a loose object or a pack file swapped for a link to a copy outside
    the workspace is refused by the read gate: the walk stops there, nothing outside is opened."""
    ws = tmp_path / "ws"
    shas = make_repo(ws, CO_CHANGE_HISTORY)
    if what == "pack":
        git(ws, "gc", "-q", "--prune=now")
        (target,) = (ws / ".git" / "objects" / "pack").glob("*.pack")
    elif what == "ref":
        target = ws / ".git" / "refs" / "heads" / "main"
    else:
        target = ws / ".git" / "objects" / shas[2][:2] / shas[2][2:]
    outside = tmp_path / "outside.bin"
    shutil.copy(target, outside)
    target.unlink()
    os.symlink(outside, target)
    with audited() as record:
        history = read_history(ws)
    assert opened_outside(record, ws) == []
    assert len(history.commits) < 5 and history.problem
