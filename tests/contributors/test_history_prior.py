"""End to end: the repository's history as a prior in retrieval (contributors/history_prior.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ctx_lsp.engine import BundleRequest, Engine
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
        assert engine.status().history["status"] == "no .git at the workspace root"
        assert not any("history" in p for p in engine.status().problems)
    finally:
        engine.close()
