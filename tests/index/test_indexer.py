"""Tests for ctx_lsp/index/indexer.py: the per-file check and its typed outcome."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctx_lsp.config import Config
from ctx_lsp.index.files import analyse
from ctx_lsp.index.folders import Folders
from ctx_lsp.index.indexer import Change, FileOutcome, Indexer
from ctx_lsp.tokens import counter_for
from tests.conftest import write_tree


def _indexer(root: Path) -> tuple[Folders, Indexer]:
    config = Config()
    config.index.cache = False
    folders = Folders([root], config.index.ignore, config.index.respect_gitignore)
    return folders, Indexer(folders, config)


def test_check_says_what_a_file_change_means(tmp_path: Path) -> None:
    """Ensure that each state of a file on disk maps to one outcome, with an entry exactly
    when the index should hold one."""
    root = write_tree(tmp_path / "ws", {"a.py": "def f():\n    pass\n"})
    folders, indexer = _indexer(root)
    location = folders.locate(root / "a.py")

    created = indexer.check(location, None)
    assert created.change is Change.UPDATED and created.entry is not None
    assert created.entry.outline.symbols[0].name == "f"
    assert indexer.check(location, created.entry) == FileOutcome(location.abs_path, Change.UNCHANGED)

    later = time.time() + 5
    os.utime(root / "a.py", (later, later))
    touched = indexer.check(location, created.entry)
    assert touched.change is Change.RESTAMPED and touched.entry is not None
    assert touched.entry.hash == created.entry.hash and touched.entry.mtime_ns != created.entry.mtime_ns

    (root / "a.py").write_text("def g():\n    pass\n")
    edited = indexer.check(location, touched.entry)
    assert edited.change is Change.UPDATED and edited.entry is not None
    assert edited.entry.outline.symbols[0].name == "g"

    (root / "a.py").unlink()
    assert indexer.check(location, edited.entry) == FileOutcome(location.abs_path, Change.REMOVED)
    assert indexer.check(location, None) == FileOutcome(location.abs_path, Change.UNCHANGED)


def test_refresh_skips_buffers_and_reports_only_changes(tmp_path: Path) -> None:
    """Ensure that refresh returns outcomes for changed files only, never for skipped ones."""
    root = write_tree(tmp_path / "ws", {"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": "C = 1\n"})
    _folders, indexer = _indexer(root)
    files, _stats = indexer.index({}, None, force=False, stale=frozenset())
    (root / "a.py").write_text("A = 2\n")
    (root / "b.py").write_text("B = 2\n")
    outcomes = indexer.refresh([root], files, skip=[str(root.resolve() / "b.py")])
    assert [(Path(o.abs_path).name, o.change) for o in outcomes] == [("a.py", Change.UPDATED)]


def test_pool_pass_gives_the_rows_of_a_pass_in_one_process(tmp_path: Path) -> None:
    """Ensure that a pass whose workers start while the walk runs gives the same entries,
    counts and order as one that reads every file itself: duplicates, docs, plain text,
    binaries and bad UTF-8 included."""
    files: dict[str, str | bytes] = {f"pkg/m{i}.py": f"def f{i}(x):\n    return g(x) + {i}\n" for i in range(30)}
    files |= {f"dup/{i}/__init__.py": "" for i in range(5)} | {f"same{i}.py": "import os\nos.sep\n" for i in range(4)}
    files |= {"README.md": "# Title\n\nSome *docs*.\n", "notes.txt": "plain words " * 50, "blob.dat": b"a\x00b"}
    files |= {"latin.py": "NAME = 'caf\xe9'\n".encode("latin-1")}
    root = write_tree(tmp_path / "ws", files)
    passes = []
    for workers in (1, 2):
        config = Config()
        config.index.cache = False
        config.index.workers = workers
        folders = Folders([root], config.index.ignore, config.index.respect_gitignore)
        entries, stats = Indexer(folders, config).index({}, None, force=False, stale=frozenset())
        passes.append(([(p, e.hash, e.tokens, e.outline, e.language) for p, e in entries.items()], stats))
    (one, one_stats), (pool, pool_stats) = passes
    assert one == pool
    assert (one_stats.parsed, one_stats.skipped) == (pool_stats.parsed, pool_stats.skipped)
    by_path = {p: tokens for p, _h, tokens, _o, _l in pool}
    assert by_path[str(root.resolve() / "pkg/m3.py")] == 0  # code is counted when first needed
    assert by_path[str(root.resolve() / "notes.txt")] == len(files["notes.txt"]) // 4  # text: the estimate


def test_whole_file_counts_are_made_on_first_use_and_kept(tmp_path: Path) -> None:
    """Ensure that indexing counts no code file's tokens, that the first ask counts the
    text as indexed (the count `analyse` makes), once per content, and that the cache
    keeps it for the next process."""
    from ctx_lsp.index.workspace import Workspace

    source = "def f():\n    return 1\n"
    root = write_tree(tmp_path / "ws", {"a.py": source, "b.py": source, "notes.txt": "words " * 10})
    counter = counter_for(Config().tokenizer)
    calls: list[str] = []

    class Counting:
        name = counter.name

        def count(self, text: str) -> int:
            calls.append(text)
            return counter.count(text)

    workspace = Workspace([root], Config())
    workspace.index()
    a, b = workspace.get(root / "a.py"), workspace.get(root / "b.py")
    assert a.tokens == 0 and not a.tokens_counted
    exact = analyse("a.py", source.encode(), len(source), 0, counter)
    assert exact is not None
    assert workspace.whole_tokens(a, Counting()) == exact.tokens  # type: ignore[arg-type]
    assert workspace.whole_tokens(a, Counting()) == exact.tokens  # type: ignore[arg-type]
    assert len(calls) == 1
    notes = workspace.get(root / "notes.txt")
    assert workspace.whole_tokens(notes, Counting()) == 15 and len(calls) == 1  # type: ignore[arg-type]
    workspace.close()

    again = Workspace([root], Config())
    again.index()
    assert again.get(root / "a.py").tokens == exact.tokens  # kept in the cache
    assert again.get(root / "b.py").tokens == exact.tokens  # the same content: one analysis, one count
    assert b.key == again.get(root / "b.py").key
    again.close()


def test_whole_file_counts_made_while_an_image_is_written_are_saved_later(tmp_path: Path) -> None:
    """Ensure that counts made while derived state is being written (`put_derived`, on a
    connection of its own) are not written then, which would wait for SQLite's lock under
    the lock a bundle reads units under, but kept and written by the next call."""
    from ctx_lsp.index.workspace import Workspace

    root = write_tree(tmp_path / "ws", {"a.py": "def f():\n    return 1\n"})
    workspace = Workspace([root], Config())
    workspace.index()
    a = workspace.get(root / "a.py")
    tokens = workspace.whole_tokens(a, counter_for(Config().tokenizer))
    store = workspace.store_for(a.root)
    assert store is not None and tokens > 0
    with store._derived_lock:  # as while an image is written
        workspace.save_counts()
    assert workspace.whole_counts._unsaved
    workspace.close()  # the next call: saved
    again = Workspace([root], Config())
    again.index()
    assert again.get(root / "a.py").tokens == tokens
    again.close()


def test_minified_code_is_kept_out_and_counted(tmp_path: Path) -> None:
    """Ensure that a code file with a line of thousands of characters is not parsed but
    listed in status as `minified`, one that says a tool generated it as `generated`,
    while lock files and build folders are not indexed."""
    from ctx_lsp.engine import Engine
    from ctx_lsp.index.files import MINIFIED_LINE_CHARS, is_generated, is_minified

    bundle = "var a=" + "1+" * MINIFIED_LINE_CHARS + "1;\n"
    assert is_minified(bundle.encode()) and not is_minified(b"x = 1\n" * 5000)
    inlined = b"const x = 1\n" * 300 + b'const logo = "data:image/png;base64,' + b"A" * 6000 + b'"\n'
    assert not is_minified(inlined)  # one long line among ordinary code
    assert is_generated(b"// Code generated by mockgen. DO NOT EDIT.\n") and is_generated(b"/* @generated */\n")
    assert not is_generated(b"# This module generates reports; do not edit the output by hand.\n")
    assert is_generated(b"/**\n * Copyright Meta.\n *\n * @generated SignedSource<<abc>>\n */\n")
    assert is_generated(b"# @generated by tool\n") and is_generated(b"// @generated\n")
    entity = b'@Entity()\nexport class Post {\n    @Column()\n    @Generated("uuid")\n    uuid: string\n}\n'
    assert not is_generated(entity)  # TypeORM's column decorator, not a marker
    assert not is_generated(b"@generated\ndef table():\n    pass\n")  # a decorator named so
    ws = write_tree(
        tmp_path / "ws",
        {
            "src/app.ts": "export function start(): void {}\n",
            "api/api.pb.go": "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage api\n\ntype Msg struct{}\n",
            "public/bundle.js": bundle,
            "dist/out.js": "function built() {}\n",
            "node_modules/lib/index.d.ts": "export declare function lib(): void\n",
            "app.min.js": "function m(){}\n",
            "pnpm-lock.yaml": "lockfileVersion: 9\n",
            "go.sum": "example.com/x v1.0.0 h1:abc=\n",
            "Cargo.lock": "version = 3\n",
        },
    )
    engine = Engine([ws], {"index": {"watch": False}})
    try:
        engine.index()
        report = engine.status()
        assert report.files_by_language == {"typescript": 1}
        assert report.symbols_by_language == {"typescript": 1}
        # bundle.js by its lines, app.min.js by its name; each kind counted apart (issue 21)
        assert report.skipped.get("minified") == 2 and report.skipped.get("generated") == 1
        assert report.skipped.get("lock_file") == 3 and report.ignored_dirs >= 2
    finally:
        engine.close()


def test_a_header_beside_cpp_sources_is_indexed_as_cpp(tmp_path: Path) -> None:
    """Ensure that a `.h` with no C++ in it is C++ when `.cpp` files sit beside it, and C
    otherwise (the index reads its folder, not only its text)."""
    from ctx_lsp.engine import Engine

    ws = write_tree(
        tmp_path / "ws",
        {
            "widget/widget.h": "int widget_size(void);\n",
            "widget/widget.cpp": '#include "widget.h"\nint widget_size(void) { return 1; }\n',
            "clib/list.h": "int list_len(void);\n",
            "clib/list.c": '#include "list.h"\nint list_len(void) { return 0; }\n',
        },
    )
    engine = Engine([ws], {"index": {"watch": False}})
    try:
        engine.index()
        languages = {e.rel_path: e.language for e in engine.workspace.files.values()}
        assert languages["widget/widget.h"] == "cpp" and languages["clib/list.h"] == "c"
    finally:
        engine.close()
