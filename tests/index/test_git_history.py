"""Tests for ctx_lsp/index/git_history.py: what is read, and that it degrades."""

from __future__ import annotations

import itertools
import os
import threading
from pathlib import Path

import pytest

from ctx_lsp.index.git_history import Commit, read_history
from tests.index.git_fixtures import CO_CHANGE_HISTORY, commit, git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    ws = tmp_path / "ws"
    return ws, make_repo(ws, CO_CHANGE_HISTORY)


def test_reads_first_parent_commits_newest_first(repo: tuple[Path, list[str]]) -> None:
    """Ensure that each commit comes with its time, message and changed paths, newest first."""
    ws, shas = repo
    history = read_history(ws)
    assert history.head == shas[-1]
    assert [c.sha for c in history.commits] == shas[::-1]
    assert history.commits[0].paths == ("README.md",)
    assert set(history.commits[1].paths) == {"src/parser.py", "src/lexer.py"}
    assert history.commits[1].message.startswith("Parse escaped quotes")
    assert history.commits[0].time == 1_700_000_000 + 4 * 60
    assert history.commits[-1].paths == ("src/lexer.py", "src/parser.py")  # the root commit: all it added
    assert not history.problem
    assert history.status.startswith("5 commits from HEAD")


def test_a_merge_counts_by_its_first_parent(tmp_path: Path) -> None:
    """Ensure that a merge commit's paths are what it changed against its first parent."""
    ws = tmp_path / "ws"
    make_repo(ws, CO_CHANGE_HISTORY[:1])
    git(ws, "checkout", "-q", "-b", "side")
    commit(ws, "Side change", {"src/side.py": "S = 1\n"}, 1_700_001_000)
    git(ws, "checkout", "-q", "main")
    commit(ws, "Main change", {"src/main.py": "M = 1\n"}, 1_700_002_000)
    git(ws, "merge", "-q", "--no-ff", "-m", "Merge side", "side")
    history = read_history(ws)
    assert history.commits[0].message.startswith("Merge side")
    assert history.commits[0].paths == ("src/side.py",)
    assert [c.message.split()[0] for c in history.commits] == ["Merge", "Main", "Start"]


def test_bulk_commits_keep_their_age_without_paths(tmp_path: Path) -> None:
    """Ensure that a commit changing more than max_paths files is kept, marked bulk, pathless."""
    ws = tmp_path / "ws"
    make_repo(ws, [("Small", {"a.py": "A = 1\n"}), ("Reformat everything", {f"m{i}.py": "X\n" for i in range(8)})])
    history = read_history(ws, max_paths=5)
    assert history.commits[0].bulk and history.commits[0].paths == ()
    assert history.bulk == 1 and "1 bulk" in history.status
    assert history.commits[1].paths == ("a.py",)


def test_bounded_by_commits_and_time(repo: tuple[Path, list[str]]) -> None:
    """Ensure that the walk stops at max_commits, and at its time budget with what it read."""
    ws, shas = repo
    assert [c.sha for c in read_history(ws, max_commits=2).commits] == shas[::-1][:2]
    ticks = itertools.count()
    history = read_history(ws, budget_s=2.5, clock=lambda: float(next(ticks)))
    assert 0 < len(history.commits) < 5
    assert "time budget" in history.status


def test_known_commits_are_not_diffed_again(repo: tuple[Path, list[str]]) -> None:
    """Ensure that a re-read after HEAD moved reuses what it already knew by sha."""
    ws, shas = repo
    marker = Commit(shas[1], 0, "known", ("kept.py",))
    history = read_history(ws, known={shas[1]: marker})
    assert history.commits[-2] is marker


def test_a_set_stop_ends_the_walk(repo: tuple[Path, list[str]]) -> None:
    """Ensure that a read whose stop event is set (the engine closed) ends between commits."""
    ws, _ = repo
    stop = threading.Event()
    stop.set()
    history = read_history(ws, stop=stop)
    assert history.commits == () and "stopped: stopped" not in history.status
    assert history.status.endswith("; stopped: engine closed")


def test_the_walk_steps_aside_while_busy(repo: tuple[Path, list[str]]) -> None:
    """Ensure that while `busy()` (a request runs) the walk waits between commits, then
    reads on, the wait not counted against its time budget."""
    ws, shas = repo
    answers = iter([True] * 20)
    calls = []

    def busy() -> bool:
        calls.append(1)
        return next(answers, False)

    history = read_history(ws, busy=busy, budget_s=0.15)  # 20 polls of 10 ms: more than the budget
    assert [c.sha for c in history.commits] == shas[::-1] and "stopped" not in history.status
    assert len(calls) > 20


def test_no_git_is_no_history_and_no_problem(tmp_path: Path) -> None:
    """Ensure that a workspace without .git has no history, says so, and is not a problem."""
    history = read_history(tmp_path)
    assert history.commits == () and not history.problem
    assert "no .git" in history.status


def test_an_empty_repository_has_no_history(tmp_path: Path) -> None:
    """Ensure that a repository with no commit yet is no history, without a problem."""
    git(tmp_path, "init", "-q", "-b", "main")
    history = read_history(tmp_path)
    assert history.commits == () and not history.problem and "no commit yet" in history.status


def test_a_shallow_clone_stops_at_its_boundary(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    """Ensure that a shallow clone gives the commits it has and says it is shallow."""
    ws, shas = repo
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{ws}", str(shallow))
    history = read_history(shallow)
    assert [c.sha for c in history.commits] == shas[::-1][:1]  # the second has no parent to diff against
    assert "shallow" in history.status and not history.problem


def test_packed_objects_and_refs_are_read(repo: tuple[Path, list[str]]) -> None:
    """Ensure that a gc'd repository (pack files, packed-refs) reads the same."""
    ws, _ = repo
    before = read_history(ws)
    git(ws, "gc", "-q", "--prune=now")
    assert not any((ws / ".git" / "objects").glob("??/*"))
    assert (ws / ".git" / "packed-refs").exists()
    after = read_history(ws)
    assert [(c.sha, c.paths) for c in after.commits] == [(c.sha, c.paths) for c in before.commits]


def test_a_truncated_pack_degrades(repo: tuple[Path, list[str]]) -> None:
    """Ensure that a truncated pack file gives no history and a problem, never an exception."""
    ws, _ = repo
    git(ws, "gc", "-q", "--prune=now")
    (pack,) = (ws / ".git" / "objects" / "pack").glob("*.pack")
    data = pack.read_bytes()
    os.chmod(pack, 0o644)
    pack.write_bytes(data[: len(data) // 2])
    history = read_history(ws)
    assert history.commits == () and history.problem
    assert "not read" in history.status or "broken" in history.status


def test_a_corrupt_loose_object_ends_the_walk(repo: tuple[Path, list[str]]) -> None:
    """Ensure that a garbage loose object ends the walk where it breaks, keeping what was read."""
    ws, shas = repo
    path = ws / ".git" / "objects" / shas[2][:2] / shas[2][2:]
    os.chmod(path, 0o644)
    path.write_bytes(b"not zlib at all")
    history = read_history(ws)
    assert [c.sha for c in history.commits] == shas[::-1][:1]  # the next needs the broken one to diff
    assert history.problem and "broken" in history.status


def test_head_naming_garbage_is_no_history(repo: tuple[Path, list[str]]) -> None:
    """Ensure that a HEAD that is neither a ref nor a commit id is refused, not followed."""
    ws, _ = repo
    for value in ("ref: ../../etc/passwd\n", "ref: refs/heads/../../x\n", "hello\n"):
        (ws / ".git" / "HEAD").write_text(value)
        history = read_history(ws)
        assert history.commits == () and history.problem, value
