"""Tests for ctx_lsp/index/whole_counts.py: whole-file counts made in the background."""

from __future__ import annotations

import threading
from pathlib import Path

from ctx_lsp.config import Config
from ctx_lsp.engine import Engine
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.tokens import counter_for
from tests.conftest import write_tree

FILES = {
    "pkg/core.py": "def core():\n    return 1\n",
    "pkg/uses.py": "from pkg.core import core\n\n\ndef twice():\n    return core() + core()\n",
    "README.md": "# Title\n\nSome words.\n",
    "notes.txt": "plain words " * 20,
}


def test_a_long_lived_engine_counts_whole_files_after_warm_up_and_the_cache_keeps_them(tmp_path: Path) -> None:
    """Ensure that a server's engine counts every code and markdown file in a worker
    once warm, exactly as a bundle's first ask would, and that the next process reads the
    counts from the cache instead of counting again."""
    root = write_tree(tmp_path / "ws", FILES)
    counter = counter_for(Config().tokenizer)
    engine = Engine([root])
    engine.index()
    assert not engine.workspace.get(root / "pkg/core.py").tokens_counted  # indexing counts none
    engine.warm_up()
    assert engine._counting is not None
    engine._counting.join(30)
    for rel in ("pkg/core.py", "pkg/uses.py", "README.md"):
        entry = engine.workspace.get(root / rel)
        assert engine.workspace.whole_counts.known(entry, counter) == counter.count(FILES[rel])
    engine.close()

    again = Workspace([root], Config())
    again.index()
    for rel in ("pkg/core.py", "pkg/uses.py", "README.md"):
        entry = again.get(root / rel)
        assert entry.tokens_counted and entry.tokens == counter.count(FILES[rel])
    assert again.get(root / "notes.txt").tokens == len(FILES["notes.txt"]) // 4  # text keeps its estimate
    again.close()


def test_background_counting_steps_aside_for_requests_and_stops_when_asked(tmp_path: Path) -> None:
    """Ensure that filling waits while a request is answered (on 2 cores it would take the
    interpreter from it) and stops at once when the engine closes."""
    root = write_tree(tmp_path / "ws", {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(5)})
    config = Config()
    config.index.cache = False
    workspace = Workspace([root], config)
    workspace.index()
    counter = counter_for(config.tokenizer)
    entries = sorted(workspace.files.values(), key=lambda e: e.abs_path)
    busy, stopped = threading.Event(), threading.Event()
    busy.set()
    made: list[int] = []
    filler = threading.Thread(
        target=lambda: made.append(workspace.whole_counts.fill(entries, counter, busy=busy.is_set, stopped=stopped))
    )
    filler.start()
    filler.join(0.3)
    assert filler.is_alive() and all(workspace.whole_counts.known(e, counter) is None for e in entries)
    busy.clear()
    filler.join(10)
    assert made == [5] and all(workspace.whole_counts.known(e, counter) is not None for e in entries)

    stopped.set()
    fresh = Workspace([root], config)
    fresh.index()
    assert fresh.whole_counts.fill(list(fresh.files.values()), counter, busy=lambda: False, stopped=stopped) == 0
    workspace.close()
    fresh.close()


def test_a_worker_counts_as_a_bundle_would_and_skips_what_changed(tmp_path: Path) -> None:
    """Ensure that counts made in a worker process (a CLI `index`, while it derives) are
    exactly the counts a bundle's first ask makes — masked tokens masked, markdown and
    code alike — and that a file changed since it was indexed is not counted."""
    token = "ghp_" + "a1B2" * 9
    files = {**FILES, "pkg/keys.py": f"TOKEN = '{token}'\n\n\ndef use():\n    return TOKEN\n"}
    root = write_tree(tmp_path / "ws", files)
    workspace = Workspace([root], Config())
    workspace.index()
    (root / "pkg/uses.py").write_text("def changed():\n    return 2\n")  # after it was indexed
    counting = workspace.count_in_pool()
    assert counting is not None
    assert len(counting.finish(workspace.whole_counts.record)) == 3  # core, keys, README: not uses.py, nor text
    counter = counter_for(Config().tokenizer)
    expected = {
        rel: workspace.whole_tokens(workspace.get(root / rel), counter) for rel in ("pkg/core.py", "pkg/keys.py")
    }
    assert token not in workspace.read_text(workspace.get(root / "pkg/keys.py"))[0]
    workspace.close()

    again = Workspace([root], Config())
    again.index()
    for rel, tokens in expected.items():
        assert again.get(root / rel).tokens == tokens
    assert again.get(root / "README.md").tokens == counter.count(FILES["README.md"])
    again.close()
