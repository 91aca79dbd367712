"""Tests for ctx_lsp/index/history_signals.py: co-change, recency, commit-message search."""

from __future__ import annotations

import os

from ctx_lsp.index.git_history import Commit, History
from ctx_lsp.index.history_signals import HistorySignals, size_damping

ROOT = "/ws"


def signals(*commits: tuple[str, tuple[str, ...]], bulk: int = 0) -> HistorySignals:
    """Commits given oldest first (message, paths), as a History newest first."""
    made = [Commit(f"{i:040x}", i, message, paths) for i, (message, paths) in enumerate(commits)]
    made += [Commit(f"{len(made) + i:040x}", 0, "reformat", (), bulk=True) for i in range(bulk)]
    return HistorySignals(History("h", tuple(reversed(made)), "read"), ROOT)


def p(rel: str) -> str:
    return os.path.join(ROOT, rel)


def test_co_change_is_the_damped_share_of_the_seeds_commits() -> None:
    """Ensure that a file that changed with the seed in most of its commits scores above one
    that changed with it once, and that big commits count less."""
    s = signals(
        ("a", ("parser.py", "lexer.py")),
        ("b", ("parser.py", "lexer.py")),
        ("c", ("parser.py", "lexer.py", "render.py", "x.py", "y.py")),
        ("d", ("render.py",)),
    )
    co = s.co_changed({p("parser.py"): 1.0})
    assert co[p("lexer.py")][0] > co[p("render.py")][0] > 0
    assert co[p("lexer.py")][1] == p("parser.py")
    assert co[p("render.py")][0] == size_damping(5) / (3 + 1)
    assert p("parser.py") not in co  # a seed is not its own partner


def test_recency_decays_with_age_in_commits() -> None:
    """Ensure that the newest change scores 1, older ones less, unchanged files 0 (bulk
    commits count for age)."""
    s = signals(("old", ("old.py",)), ("new", ("new.py",)), bulk=2)
    assert s.recency(p("old.py")) < 1.0 and s.recency(p("new.py")) < 1.0
    assert s.recency(p("new.py")) > s.recency(p("old.py")) > 0
    assert s.recency(p("never.py")) == 0.0


def test_messages_point_at_the_files_their_commits_changed() -> None:
    """Ensure that a task worded like an old commit's message finds the files that commit
    changed, though the files share no word with the task."""
    s = signals(
        ("Fix the escaping of quotes in attribute values", ("markup/attr.py",)),
        ("Speed up the cache of compiled templates", ("cache.py", "compiler.py")),
    )
    found = s.message_matches("attribute values lose their quotes when escaped")
    assert max(found, key=lambda k: found[k][0]) == p("markup/attr.py")
    assert p("cache.py") not in found


def test_the_prior_says_why() -> None:
    """Ensure that the prior blends the signals in [0, 1] and gives a reason naming them."""
    s = signals(
        ("Parse nested brackets", ("parser.py", "lexer.py")),
        ("Parse escaped quotes", ("parser.py", "lexer.py")),
    )
    prior = s.prior("parse quotes", {p("parser.py"): 1.0}, frozenset({p("parser.py")}))
    lexer = prior[p("lexer.py")]
    assert 0 < lexer.score <= 1
    assert "changed together with parser.py" in lexer.reason
    assert "changed by commit" in lexer.reason
    assert not HistorySignals(History(None, (), "no .git"), ROOT)
    assert HistorySignals(History(None, (), "no .git"), ROOT).prior("x", {}, frozenset()) == {}
