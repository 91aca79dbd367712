"""Tests for answering while a first index runs (issue 34, item 1): `index/priorities.py`,
the indexer's publishing, and the engine's answers from a partial index.

A monorepo's first index takes minutes; requests must be answered from what is indexed
so far, say so, and find first the files the requests name. The pass is held still
after its first publish (the workspace's publish is wrapped), so what a request sees
is decided by the test, not by the machine's speed.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ctx_lsp.engine import Engine
from ctx_lsp.index import indexer
from ctx_lsp.index.priorities import FIRST, NAMED, NEAR, REST, IndexPriorities, import_suffix
from ctx_lsp.params import parse_bundle, parse_symbol
from tests.conftest import write_tree

FILLER_FILES = 520
"""Over `PUBLISH_MIN_PARSED`: a pass that parses fewer publishes nothing before its end."""


def _workspace(tmp_path: Path) -> Path:
    files = {
        f"pkg/sub{i % 7}/mod_{i}.py": f'"""Module {i}."""\n\n\ndef helper_{i}(value):\n    return value + {i}\n'
        for i in range(FILLER_FILES)
    }
    files["a_kernel/fork.py"] = (
        '"""Process creation."""\n\n\n'
        'def copy_process(pid):\n    """Copy a process when fork runs."""\n    return pid\n'
    )
    return write_tree(tmp_path / "ws", files)


class HeldPass:
    """Wraps a workspace's publish: the pass stops after its first publish until released."""

    def __init__(self, engine: Engine) -> None:
        self.published = threading.Event()
        self.release = threading.Event()
        workspace = engine.workspace
        original = workspace._publish

        def publish(entries):  # type: ignore[no-untyped-def]
            original(entries)
            if not self.published.is_set():
                self.published.set()
                assert self.release.wait(60), "the test never released the pass"

        workspace._publish = publish  # type: ignore[method-assign]


@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(indexer, "PUBLISH_INTERVAL_S", 0.0)
    engine = Engine([_workspace(tmp_path)], {"index": {"workers": 1, "cache": False}}, history_in_background=False)
    held = HeldPass(engine)
    yield engine, held
    held.release.set()
    engine.close()


def test_requests_during_a_first_index_are_answered_from_it_and_say_so(held) -> None:
    """Ensure that a bundle, a symbol lookup, a search and status asked while the first
    index runs are answered from the files ready so far, with a warning that says how far
    the index is; the files the first task names were parsed first; once the pass ends,
    the answers are whole and the warning is gone."""
    engine, pass_ = held
    engine.workspace.priorities.note_task("copy_process fails when fork runs")
    engine.index_in_background(0.1)
    assert pass_.published.wait(60)

    status = engine.status()
    assert status.indexing and status.indexing["phase"] == "parsing"
    assert 0 < status.indexing["done"] < status.indexing["total"] == FILLER_FILES + 1
    assert 0 < status.files_indexed < FILLER_FILES + 1

    result = engine.bundle(parse_bundle({"query": "copy_process fails when fork runs", "budget": 2000}))
    warnings = result.snapshot.warnings
    assert any(w.startswith("indexing: ") and "indexed so far" in w for w in warnings), warnings
    assert any(s.path == "a_kernel/fork.py" for s in result.sections), [s.path for s in result.sections]

    found = engine.symbol(parse_symbol({"name": "copy_process"}))
    assert [m.path for m in found.matches] == ["a_kernel/fork.py"] and found.warnings

    hits, search_warnings = engine.search_with_warnings("copy_process")
    assert hits and hits[0].path == "a_kernel/fork.py" and search_warnings

    pass_.release.set()
    assert engine._index_thread is not None
    engine._index_thread.join(60)
    assert not engine.status().indexing and engine.status().files_indexed == FILLER_FILES + 1
    whole = engine.bundle(parse_bundle({"query": "helper_519 value", "budget": 2000}))
    assert not any(w.startswith("indexing: ") for w in whole.snapshot.warnings)
    assert any(s.path == "pkg/sub1/mod_519.py" for s in whole.sections)
    hits, search_warnings = engine.search_with_warnings("helper_3")
    assert not search_warnings and any(h.path == "pkg/sub3/mod_3.py" for h in hits)


class HeldBuilds:
    """An `Engine.on_settle_build` hook: each image's build stops until the test lets it go."""

    NAMES = ("search", "body", "graph")

    def __init__(self, engine: Engine) -> None:
        self.reached = {name: threading.Event() for name in self.NAMES}
        self.go = {name: threading.Event() for name in self.NAMES}
        engine.on_settle_build = self

    def __call__(self, name: str) -> None:
        self.reached[name].set()
        assert self.go[name].wait(60), f"the test never let the {name} build go"


def _answered(work) -> object:  # type: ignore[no-untyped-def]
    """`work()` on a thread of its own: the test would hang, not fail, if it waited for a
    lock the held build kept (a join that gives up is a failure, not a measure of time)."""
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(work()), daemon=True)
    thread.start()
    thread.join(60)
    assert out, "a request waited for the end of the pass"
    return out[0]


def test_requests_are_answered_while_the_end_of_a_pass_builds_its_images(held, tmp_path: Path) -> None:
    """Ensure that the end of a pass answered partially builds the search, body and
    graph images without the locks requests take: while each build is held open, a
    search, a symbol lookup and a bundle are answered; a file changed on disk while the
    first build runs is in the index once the images are swapped in; and the index then
    answers as one indexed whole without partial answers does."""
    engine, pass_ = held
    builds = HeldBuilds(engine)
    engine.index_in_background(0.1)
    assert pass_.published.wait(60)
    assert engine.search_with_warnings("copy_process")[1]  # answered partially: the settle will run
    pass_.release.set()
    ws = engine.roots[0]
    query = {"query": "copy_process fails when fork runs", "budget": 2000}
    for name in HeldBuilds.NAMES:
        assert builds.reached[name].wait(60)
        hits = _answered(lambda: engine.search("copy_process"))
        assert [h.path for h in hits][:1] == ["a_kernel/fork.py"]  # type: ignore[attr-defined]
        _answered(lambda: engine.symbol(parse_symbol({"name": "copy_process"})))
        _answered(lambda: engine.bundle(parse_bundle(query)))
        if name == "search":  # the watcher's refresh, while the images are built
            (ws / "pkg/sub2/mod_9.py").write_text('"""Renamed."""\n\n\ndef renamed_helper(value):\n    return value\n')
            engine.refresh([ws / "pkg/sub2/mod_9.py"])
        builds.go[name].set()
    assert engine._index_thread is not None
    engine._index_thread.join(60)
    assert not engine._index_thread.is_alive()
    assert [h.path for h in engine.search("renamed_helper")][:1] == ["pkg/sub2/mod_9.py"]
    assert not any(h.symbol == "helper_9" for h in engine.search("helper_9", 50))
    assert len(engine.graph) == FILLER_FILES + 1

    whole = Engine([ws], {"index": {"workers": 1, "cache": False}}, history_in_background=False)
    try:
        whole.index()
        for words in ("copy_process", "renamed_helper value", "helper_3 module", "module value"):
            assert engine.search(words, 50) == whole.search(words, 50)
        assert engine.bundle(parse_bundle(query)).text == whole.bundle(parse_bundle(query)).text
    finally:
        whole.close()


def test_the_files_being_worked_on_are_parsed_first(held) -> None:
    """Ensure that a file named as being worked on, and its folder, come before the rest
    of the walk, whatever their place in it."""
    engine, pass_ = held
    ws = engine.roots[0].resolve()
    engine.workspace.priorities.note_working([str(ws / "pkg/sub3/mod_500.py")])
    engine.index_in_background(0.1)
    assert pass_.published.wait(60)
    ready = {entry.path for entry in engine.workspace.files.values()}
    assert "pkg/sub3/mod_500.py" in ready
    first_batch = [p for p in ready if p.startswith("pkg/sub3/")]
    assert len(first_batch) == len(ready), sorted(ready)[:5]  # the folder, nothing else yet


def test_a_short_pass_publishes_nothing_before_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that a pass parsing fewer than PUBLISH_MIN_PARSED files swaps its entries in
    once, at the end (a small repository is indexed before anyone waits)."""
    monkeypatch.setattr(indexer, "PUBLISH_INTERVAL_S", 0.0)
    root = write_tree(tmp_path / "ws", {f"m{i}.py": f"X{i} = {i}\n" for i in range(80)})
    engine = Engine([root], {"index": {"cache": False}}, history_in_background=False)
    engine.index()
    assert not engine.workspace.partial.is_set() and len(engine.workspace.files) == 80
    engine.close()


def test_an_open_editor_buffer_and_what_it_imports_come_first(held) -> None:
    """Ensure that a file opened in the editor before the first index ends is parsed
    first with its folder and the modules it imports."""
    engine, pass_ = held
    ws = engine.roots[0].resolve()
    engine.open_document(str(ws / "a_kernel/fork.py"), "from pkg.sub1 import mod_400\n", 1)
    engine.index_in_background(0.1)
    assert pass_.published.wait(60)
    ready = {entry.path for entry in engine.workspace.files.values()}
    assert {"a_kernel/fork.py", "pkg/sub1/mod_400.py"} <= ready


def test_import_suffixes_name_the_end_of_a_path() -> None:
    """Ensure that imports of several languages become the path ends they name."""
    assert import_suffix("pkg.sub.mod") == "pkg/sub/mod"
    assert import_suffix(".sibling") == "sibling"
    assert import_suffix("./util.js") == "util"
    assert import_suffix("../lib/a/b/c/d.ts") == "a/b/c/d"
    assert import_suffix("<linux/sched.h>") == "linux/sched"
    assert import_suffix("") == ""


def test_priorities_rank_working_files_their_folders_imports_and_task_words() -> None:
    """Ensure that the order is working files, then their folders and what they import,
    then paths the task's words name, then the rest; and that every change moves `version`
    (a queue sorted under an older one is sorted again)."""
    p = IndexPriorities()
    assert p.rank("/ws/kernel/fork.c", "kernel/fork.c") == REST
    p.note_working(["/ws/kernel/exit.c"], imports=["linux.sched"])
    v = p.version
    p.note_task("copy_process fails when fork runs out of pids")
    assert p.version > v
    assert p.rank("/ws/kernel/exit.c", "kernel/exit.c") == FIRST
    assert p.rank("/ws/kernel/fork.c", "kernel/fork.c") == NEAR  # same folder
    assert p.rank("/ws/include/linux/sched.h", "include/linux/sched.h") == NEAR  # imported
    assert p.rank("/ws/include/linux/slab.h", "include/linux/slab.h") == REST  # a word of it is not enough
    assert p.rank("/ws/tools/fork_test.py", "tools/fork_test.py") == NAMED
    assert p.rank("/ws/drivers/net/e1000.c", "drivers/net/e1000.c") == REST
    v = p.version
    p.note_task("fork")  # nothing new
    p.note_working(["/ws/kernel/exit.c"])
    assert p.version == v


def test_a_pass_that_reuses_the_cache_is_answered_from_its_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ensure that when a pass that publishes piecewise mostly reuses the cache (a branch
    switch: hundreds of files to parse among thousands known), the first partial answer
    restores the derived indexes from the cache's images and derives only what changed,
    instead of applying every published file a chunk at a time."""
    monkeypatch.setattr(indexer, "PUBLISH_INTERVAL_S", 0.0)
    base = {f"lib/old_{i}.py": f"def old_{i}(value):\n    return value * {i}\n" for i in range(300)}
    root = write_tree(tmp_path / "ws", base)
    first = Engine([root], {"index": {"workers": 1}}, history_in_background=False)
    first.index()
    first.warm_up()  # the images the next process starts from
    first.close()
    write_tree(root, {f"pkg/new_{i}.py": f"def new_{i}(value):\n    return value + {i}\n" for i in range(FILLER_FILES)})

    engine = Engine([root], {"index": {"workers": 1}}, history_in_background=False)
    pass_ = HeldPass(engine)
    try:
        engine.index_in_background(0.1)
        assert pass_.published.wait(60)
        published = len(engine.workspace.files)
        assert published > 300  # the reused files and the first parsed ones
        hits, warnings = engine.search_with_warnings("old value")
        assert warnings and hits
        assert engine.search_index.docs_built <= published - 300  # the 300 reused: from the image
    finally:
        pass_.release.set()
        engine.close()
