"""End to end: the repository's history as a prior in retrieval (contributors/history_prior.py)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from ctx_lsp.engine import BundleRequest, Engine
from ctx_lsp.index import history_loader
from ctx_lsp.index.git_history import History, read_history
from tests.index.git_fixtures import make_repo

PARSER = 'def parse_quotes(text):\n    """Parse escaped quotes."""\n    return text\n'
LEXER = "def tokenize(stream):\n    return list(stream)\n"
HISTORY = [
    ("Start", {"src/parser.py": PARSER, "src/lexer.py": LEXER, "src/render.py": "def render():\n    pass\n"}),
    ("Handle a backslash", {"src/parser.py": PARSER + "# 1\n", "src/lexer.py": LEXER + "# 1\n"}),
    ("Handle unicode", {"src/parser.py": PARSER + "# 2\n", "src/lexer.py": LEXER + "# 2\n"}),
]
TASK = "parse escaped quotes in strings"


def retrieval_reasons(engine: Engine) -> dict[str, str]:
    return {c.path: c.reason for c in engine.explain().candidates if c.contributor == "retrieval"}


def bundle(ws: Path, **overrides: object) -> tuple[str, dict[str, str]]:
    engine = Engine([ws], overrides or None)
    try:
        engine.index()
        assert engine.wait_for_history()
        text = engine.bundle(BundleRequest(query=TASK, budget=4000)).text
        return text, retrieval_reasons(engine)
    finally:
        engine.close()


def test_a_file_that_changes_with_the_best_hit_joins_the_ranking(tmp_path: Path) -> None:
    """Ensure that a file sharing no word with the task, but changed with its best hit in
    every commit, is offered by retrieval with history as its reason; and not with
    `history = false`."""
    ws = tmp_path / "ws"
    make_repo(ws, HISTORY)
    _, reasons = bundle(ws)
    assert "history: changed together with src/parser.py" in reasons["src/lexer.py"]
    _, off = bundle(ws, history=False)
    assert "src/lexer.py" not in off
    assert not any("history" in r for r in off.values())


def test_a_workspace_without_git_bundles_as_with_history_off(tmp_path: Path) -> None:
    """Ensure that without .git the bundle is the one history = false gives."""
    ws = tmp_path / "ws"
    make_repo(ws, HISTORY)
    shutil.rmtree(ws / ".git")
    plain, reasons = bundle(ws)
    off, _ = bundle(ws, history=False)
    assert plain == off
    assert not any("history" in r for r in reasons.values())
    engine = Engine([ws])
    try:
        engine.index()
        assert engine.wait_for_history()
        assert engine.status().history["status"] == "no .git at the workspace root"
        assert not any("history" in p for p in engine.status().problems)
    finally:
        engine.close()


def test_a_bundle_never_waits_for_the_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that while the history is being read (held at a gate: the real read of a
    small repository is too quick to catch) a bundle answers at once, ranked without it and
    saying nothing of it, status says `reading…`; and that once the read is in, the prior
    applies."""
    ws = tmp_path / "ws"
    make_repo(ws, HISTORY)
    gate, started = threading.Event(), threading.Event()

    def held(root: str, **kw: object) -> History:
        started.set()
        assert gate.wait(30)
        return read_history(root, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(history_loader, "read_history", held)
    engine = Engine([ws])
    try:
        engine.index()  # starts the read
        assert started.wait(30)
        engine.bundle(BundleRequest(query=TASK, budget=4000))  # the read is held: this would hang if it waited
        reasons = retrieval_reasons(engine)
        assert "src/lexer.py" not in reasons and not any("history" in r for r in reasons.values())
        status = engine.status().history
        assert status["status"] == "reading…" and status["reading"] and status["commits"] == 0
        gate.set()
        assert engine.wait_for_history(30)
        engine.bundle(BundleRequest(query=TASK, budget=4000))
        assert "history: changed together with src/parser.py" in retrieval_reasons(engine)["src/lexer.py"]
        assert engine.status().history["status"].startswith("3 commits from HEAD")
    finally:
        gate.set()
        engine.close()


def test_a_one_shot_engine_reads_the_history_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that the CLI's engine (history_in_background=False) starts no read of its
    own, and that `wait_for_history` reads it and the prior then applies."""
    ws = tmp_path / "ws"
    make_repo(ws, HISTORY)
    reads: list[str] = []

    def counted(root: str, **kw: object) -> History:
        reads.append(root)
        return read_history(root, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(history_loader, "read_history", counted)
    engine = Engine([ws], history_in_background=False)
    try:
        engine.index()
        engine.bundle(BundleRequest(query=TASK, budget=4000))
        assert reads == [] and "src/lexer.py" not in retrieval_reasons(engine)
        assert "--wait-history" in engine.status().history["status"]
        assert engine.wait_for_history(30)
        engine.bundle(BundleRequest(query=TASK, budget=4000))
        assert len(reads) == 1 and "history:" in retrieval_reasons(engine)["src/lexer.py"]
    finally:
        engine.close()
