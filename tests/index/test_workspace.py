"""Tests for ctx_lsp/index/workspace.py: full passes, the cache, refresh, buffers and reading."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ctx_lsp.config import Config
from ctx_lsp.errors import NotFound, OutsideWorkspace
from ctx_lsp.gate import Reason, Refused
from ctx_lsp.index.workspace import Refresh, Reindex, Workspace
from tests.conftest import write_tree


def _ws(root: Path, **index_opts) -> Workspace:
    config = Config()
    for k, v in index_opts.items():
        setattr(config.index, k, v)
    return Workspace([root], config)


def test_index_then_restart_reuses_cache(sample_workspace: Path) -> None:
    """Ensure that a second workspace on the same folder parses nothing unchanged."""
    first = _ws(sample_workspace)
    stats = first.index()
    assert stats.parsed == 5 and stats.reused == 0
    assert {f.path for f in first.files.values()} == {
        "README.md",
        "notes.txt",
        "pkg/__init__.py",
        "pkg/bundle.py",
        "pkg/tokens.py",
    }
    first.close()

    (sample_workspace / "pkg" / "bundle.py").write_text("def changed():\n    pass\n")
    second = _ws(sample_workspace)
    stats = second.index()
    assert (stats.parsed, stats.reused) == (1, 4)
    assert [s.qualname for s in second.get("pkg/bundle.py").outline.symbols] == ["changed"]


def test_touch_without_change_keeps_outline(sample_workspace: Path) -> None:
    """Ensure that a new mtime with the same content re-reads but keeps the same hash."""
    ws = _ws(sample_workspace)
    ws.index()
    before = ws.get("pkg/tokens.py")
    later = time.time() + 5
    os.utime(sample_workspace / "pkg" / "tokens.py", (later, later))
    ws.index()
    after = ws.get("pkg/tokens.py")
    assert after.hash == before.hash and after.mtime_ns != before.mtime_ns


def test_parallel_cold_index_matches_serial(tmp_path: Path) -> None:
    """Ensure that the process-pool path gives the same index as the in-process one."""
    files: dict[str, str | bytes] = {f"m{i}.py": f"def f{i}(x: int) -> int:\n    return x + {i}\n" for i in range(40)}
    root = write_tree(tmp_path / "ws", files)
    serial = _ws(root, workers=1, cache=False)
    serial.index()
    parallel = _ws(root, workers=2, cache=False)
    parallel.index()
    assert {p: (f.hash, f.tokens, f.outline) for p, f in serial.files.items()} == {
        p: (f.hash, f.tokens, f.outline) for p, f in parallel.files.items()
    }


def test_non_utf8_and_binary_content(tmp_path: Path) -> None:
    """Ensure that non-UTF-8 text is indexed with replacements and NUL content is skipped."""
    root = write_tree(tmp_path / "ws", {"latin.py": "NAME = 'caf\xe9'\n".encode("latin-1"), "blob.dat2": b"abc\x00def"})
    ws = _ws(root)
    stats = ws.index()
    entry = ws.get("latin.py")
    assert entry.decode_replaced and entry.outline.constants[0].name == "NAME"
    assert stats.skipped["binary"] == 1


def test_refresh_created_modified_deleted(sample_workspace: Path) -> None:
    """Ensure that refresh picks up created, modified and deleted files and notifies listeners."""
    ws = _ws(sample_workspace)
    ws.index()
    seen: list[tuple[list[str], list[str]]] = []
    ws.subscribe(lambda removed, updated: seen.append((list(removed), [u.path for u in updated])))
    new = sample_workspace / "pkg" / "new.py"
    new.write_text("def fresh():\n    return 1\n")
    (sample_workspace / "notes.txt").unlink()
    result = ws.refresh([new, sample_workspace / "notes.txt"])
    assert isinstance(result, Refresh) and result.changed
    assert [u.path for u in result.updated] == ["pkg/new.py"]
    assert result.removed == (str(sample_workspace.resolve() / "notes.txt"),)
    assert seen == [([str(sample_workspace.resolve() / "notes.txt")], ["pkg/new.py"])]
    assert ws.refresh([new]) == Refresh()  # nothing changed since: nothing to report
    with pytest.raises(NotFound):
        ws.get("notes.txt")


def test_refresh_directory_and_gitignore(sample_workspace: Path) -> None:
    """Ensure that a new directory is scanned and a .gitignore change hides files."""
    ws = _ws(sample_workspace)
    ws.index()
    write_tree(sample_workspace, {"sub/a.py": "A = 1\n", "sub/b.py": "B = 2\n"})
    ws.refresh([sample_workspace / "sub"])
    assert ws.get("sub/a.py") and ws.get("sub/b.py")
    (sample_workspace / ".gitignore").write_text("sub/b.py\n")
    ws.refresh([sample_workspace / ".gitignore"])
    with pytest.raises(NotFound):
        ws.get("sub/b.py")
    assert ws.get("sub/a.py")


def test_overlay_overrides_disk_until_close(sample_workspace: Path) -> None:
    """Ensure that an editor buffer wins over the disk copy until it is closed."""
    ws = _ws(sample_workspace)
    ws.index()
    path = sample_workspace / "pkg" / "bundle.py"
    ws.open_document(path, "def unsaved_edit():\n    pass\n", 3)
    entry = ws.get(path)
    assert entry.overlay_version == 3
    assert [s.name for s in entry.outline.symbols] == ["unsaved_edit"]
    assert ws.read_text(entry)[0].startswith("def unsaved_edit")
    ws.refresh([path])  # the watcher must not clobber the buffer
    assert ws.get(path).overlay_version == 3
    ws.close_document(path)
    assert [s.name for s in ws.get(path).outline.symbols] == ["assemble_bundle"]


def test_a_buffer_over_the_size_limit_is_refused_like_a_file_on_disk(sample_workspace: Path) -> None:
    """Ensure that a buffer over `index.max_file_bytes` (counted in UTF-8 bytes, not
    characters) is not analysed, drops the file's earlier buffer, and is reported in
    `refused` until a buffer under the limit replaces it."""
    ws = _ws(sample_workspace, max_file_bytes=1000)
    ws.index()
    path = sample_workspace / "pkg" / "bundle.py"
    ws.open_document(path, "def small_edit():\n    pass\n", 2)
    huge = "# " + "é" * 600 + "\ndef never_analysed():\n    pass\n"  # 632 chars, 1,232 bytes
    with pytest.raises(Refused, match="over index.max_file_bytes") as refused:
        ws.open_document(path, huge, 3)
    assert refused.value.reason == Reason.TOO_LARGE
    assert ws.overlay_paths() == [] and ws.refused() == {"pkg/bundle.py": Reason.TOO_LARGE}
    assert [s.name for s in ws.get(path).outline.symbols] == ["assemble_bundle"]  # the disk copy again
    ws.open_document(path, "def small_again():\n    pass\n", 4)
    assert ws.refused() == {} and [s.name for s in ws.get(path).outline.symbols] == ["small_again"]


def test_entries_keep_no_outline_json_and_read_it_from_the_cache(sample_workspace: Path) -> None:
    """Ensure that the entries of a cold pass and of a warm start hold no outline JSON
    (issue 34: ~8 KB a kernel file, for the life of the process), that their outlines
    read it from the cache on use, equal either way, and that one read again after the
    decoded outlines were dropped is the same object, equal (identity-keyed caches)."""
    from ctx_lsp.code import outline as outline_module
    from ctx_lsp.code.outline import outline_to_json

    cold = _ws(sample_workspace)
    cold.index()
    assert cold.files and all(e.outline_json == "" and e.outline_source is not None for e in cold.files.values())
    cold_json = {p: outline_to_json(e.outline) for p, e in cold.files.items()}
    cold.close()
    warm = _ws(sample_workspace)
    warm.index()
    assert warm.files and all(e.outline_json == "" and e.outline_source is not None for e in warm.files.values())
    entry = warm.get("pkg/bundle.py")
    shell = entry.outline
    assert shell.symbols and outline_to_json(shell) == cold_json[entry.abs_path]
    outline_module._DECODED.clear()
    assert shell._json is None and shell._parts is None and entry.outline is shell
    assert shell.symbols and outline_to_json(shell) == cold_json[entry.abs_path]
    assert {p: outline_to_json(e.outline) for p, e in warm.files.items()} == cold_json


def test_a_buffer_equal_to_the_index_reuses_its_entry(sample_workspace: Path) -> None:
    """Ensure that opening a saved file (the buffer is what the index has) reuses the
    indexed analysis instead of repeating it, and that an edit is analysed anew."""
    ws = _ws(sample_workspace)
    ws.index()
    path = sample_workspace / "pkg" / "bundle.py"
    indexed = ws.get(path)
    opened = ws.open_document(path, path.read_text(), 1)
    assert opened.overlay_version == 1 and opened.hash == indexed.hash
    assert opened.outline is indexed.outline  # the index's analysis, read from the cache
    assert opened.outline_source is not None and opened.key == indexed.key != ""
    edited = ws.open_document(path, path.read_text() + "\ndef typed():\n    pass\n", 2, edited=True)
    assert edited.outline_source is None and edited.key == ""  # analysed anew: held, stored nowhere
    assert "typed" in [s.name for s in edited.outline.symbols]


def test_outside_buffers_are_refused(tmp_path: Path) -> None:
    """Ensure that an editor buffer outside the folders is refused, not tracked.
    (The inside-the-workspace decision itself is tested in test_folders.py.)"""
    outside = write_tree(tmp_path / "outside", {"secret.py": "X = 1\n"})
    root = write_tree(tmp_path / "ws", {"a.py": ""})
    ws = _ws(root)
    ws.index()
    with pytest.raises(OutsideWorkspace):
        ws.open_document(outside / "secret.py", "X = 2\n", 1)
    assert ws.overlay_paths() == [] and list(ws.files) == [str(root.resolve() / "a.py")]


def test_multi_root_paths(tmp_path: Path) -> None:
    """Ensure that multi-root workspaces prefix display paths with the folder name."""
    a = write_tree(tmp_path / "alpha", {"x.py": "X = 1\n"})
    b = write_tree(tmp_path / "beta", {"y.py": "Y = 1\n"})
    ws = Workspace([a, b], Config())
    ws.index()
    assert sorted(f.path for f in ws.files.values()) == ["alpha/x.py", "beta/y.py"]


def test_reading_a_changed_file_changes_nothing(sample_workspace: Path) -> None:
    """Ensure that reading a file changed on disk returns its new text and a matching outline,
    but neither changes `files` nor calls listeners: bringing the index up to date is
    refresh's job, which then re-reads the file."""
    ws = _ws(sample_workspace)
    ws.index()
    heard: list[tuple[list[str], list[str]]] = []
    ws.subscribe(lambda removed, updated: heard.append((list(removed), [u.path for u in updated])))
    files_before = ws.files
    stale = ws.get("pkg/bundle.py")
    (sample_workspace / "pkg" / "bundle.py").write_text("# moved\n\n\ndef assemble_bundle():\n    pass\n")

    text, current = ws.read_text(stale)

    assert current is not stale and current.outline.symbols[0].start_line == 4
    assert text.splitlines()[3].startswith("def assemble_bundle")
    assert ws.files is files_before and ws.get("pkg/bundle.py") is stale
    assert heard == []
    assert [u.path for u in ws.refresh([]).updated] == ["pkg/bundle.py"]
    assert heard == [([], ["pkg/bundle.py"])]


def test_unchanged_file_reads_as_its_entry(sample_workspace: Path) -> None:
    """Ensure that reading an unchanged file returns the very entry, so renders may be shared."""
    ws = _ws(sample_workspace)
    ws.index()
    entry = ws.get("pkg/tokens.py")
    text, current = ws.read_text(entry)
    assert current is entry and text == (sample_workspace / "pkg" / "tokens.py").read_text()


def test_stale_read_is_refreshed_even_with_the_same_size_and_mtime(sample_workspace: Path) -> None:
    """Ensure that a file a render found changed is re-read by the next refresh, although
    its size and mtime match the index (a stat-only check would keep the old outline)."""
    ws = _ws(sample_workspace)
    ws.index()
    path = sample_workspace / "pkg" / "tokens.py"
    entry = ws.get(path)
    original = path.read_text()
    renamed = original.replace("count_tokens", "tally_tokens")
    assert len(renamed) == len(original)
    path.write_text(renamed)
    os.utime(path, ns=(entry.mtime_ns, entry.mtime_ns))
    assert ws.refresh([path]) == Refresh()  # size and mtime alone cannot tell
    text, current = ws.read_text(entry)
    assert text == renamed and "tally_tokens" in [s.name for s in current.outline.symbols]
    assert ws.refresh([]).updated[0].hash == current.hash
    assert "tally_tokens" in [s.name for s in ws.get(path).outline.symbols]


def test_reading_a_buffer_returns_its_text_and_entry(sample_workspace: Path) -> None:
    """Ensure that an open buffer is read instead of the disk, as the entry the index holds."""
    ws = _ws(sample_workspace)
    ws.index()
    path = sample_workspace / "pkg" / "bundle.py"
    disk_entry = ws.get(path)
    entry = ws.change_document(path, "def typed():\n    pass\n", 7)
    assert ws.get(path) is entry
    assert ws.read_text(entry) == ("def typed():\n    pass\n", entry)
    assert ws.read_text(disk_entry) == ("def typed():\n    pass\n", entry)  # the buffer wins


def test_a_file_replaced_by_a_symlink_is_not_read_and_leaves_the_index(tmp_path: Path) -> None:
    """Ensure that a file swapped for a link after indexing is refused at the moment of
    reading, and that the next refresh drops it."""
    outside = write_tree(tmp_path / "outside", {"secret.py": "KEY = 'x'\n"})
    root = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    ws = _ws(root)
    ws.index()
    entry = ws.get("a.py")
    (root / "a.py").unlink()
    os.symlink(outside / "secret.py", root / "a.py")
    with pytest.raises(OutsideWorkspace):
        ws.read_text(entry)
    assert ws.refresh([]).removed == (entry.abs_path,)
    assert entry.abs_path not in ws.files


def test_reconfigure_says_which_pass_is_needed(sample_workspace: Path) -> None:
    """Ensure that new settings ask for no pass, a rescan (ignore rules) or a re-parse (tokenizer)."""
    ws = _ws(sample_workspace)
    ws.index()
    same = Config()
    assert ws.reconfigure(same) is None
    ignoring = Config()
    ignoring.index.ignore = ["*.txt"]
    assert ws.reconfigure(ignoring) == Reindex(force=False)
    ws.index()
    with pytest.raises(NotFound):
        ws.get("notes.txt")
    recount = Config()
    recount.index.ignore = ["*.txt"]
    recount.tokenizer = "cl100k_base"
    assert ws.reconfigure(recount) == Reindex(force=True)
    assert ws.config is recount


def test_adding_a_folder_prefixes_display_paths(tmp_path: Path) -> None:
    """Ensure that entries and open buffers take the folder name as a prefix once a second
    folder is added (the display path depends on how many folders there are)."""
    a = write_tree(tmp_path / "alpha", {"x.py": "X = 1\n"})
    b = write_tree(tmp_path / "beta", {"y.py": "Y = 1\n"})
    ws = Workspace([a], Config())
    ws.index()
    ws.open_document(a / "x.py", "X = 2\n", 1)
    assert [f.path for f in ws.files.values()] == ["x.py"]
    ws.set_folders([a, b])
    ws.index()
    assert sorted(f.path for f in ws.files.values()) == ["alpha/x.py", "beta/y.py"]
    assert ws.get(a / "x.py").overlay_version == 1
    assert ws.read_text(ws.get(a / "x.py"))[1] is ws.get(a / "x.py")


def test_a_file_replaced_by_a_fifo_is_refused_and_reported(tmp_path: Path) -> None:
    """Ensure that a FIFO swapped in for an indexed file is refused at once (an open would
    block), reported by `refused()` with its reason, and dropped by the next refresh."""
    root = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    ws = _ws(root)
    ws.index()
    entry = ws.get("a.py")
    (root / "a.py").unlink()
    os.mkfifo(root / "a.py")
    with pytest.raises(NotFound, match="is a FIFO"):
        ws.read_text(entry)
    assert ws.refused() == {"a.py": "not_a_file"}
    assert ws.refresh([]).removed == (entry.abs_path,)


def test_new_secret_opt_ins_reread_every_file(sample_workspace: Path) -> None:
    """Ensure that changing `index.include_secrets` asks for a full re-read: entries read
    under other opt-ins may have skipped (or need) the private-key check."""
    ws = _ws(sample_workspace)
    config = Config()
    config.index.include_secrets = [".env.example"]
    assert ws.reconfigure(config) == Reindex(force=True)


def test_a_refresh_reports_files_that_may_not_be_read_any_more(tmp_path: Path) -> None:
    """Ensure that a refresh (the watcher's) that drops an indexed file because it became a
    FIFO or a link out names it in `refused()`, while a deleted file, or one that now holds
    a private key, is not listed (status never names a secret)."""
    from tests.test_security import FAKE_KEY

    outside = write_tree(tmp_path / "outside", {"x.py": "X = 1\n"})
    root = write_tree(tmp_path / "ws", {"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": "C = 1\n", "d.txt": "d\n"})
    ws = _ws(root)
    ws.index()
    (root / "a.py").unlink()
    os.mkfifo(root / "a.py")
    (root / "b.py").unlink()
    (root / "b.py").symlink_to(outside / "x.py")
    (root / "c.py").unlink()
    (root / "d.txt").write_bytes(FAKE_KEY)
    assert len(ws.refresh([root / n for n in ("a.py", "b.py", "c.py", "d.txt")]).removed) == 4
    assert ws.refused() == {"a.py": "not_a_file", "b.py": "outside"}


def test_an_empty_index_says_why(tmp_path: Path) -> None:
    """Ensure that an index left empty although the folder holds files says why in its
    problems (naming the reasons and what to check), and one with files says nothing."""
    root = write_tree(tmp_path / "ws", {".gitignore": "*\n", "a.py": "x = 1\n", "b.py": "y = 2\n"})
    ws = _ws(root, watch=False, cache=False)
    ws.index()
    assert ws.files == {}
    reason = ws.empty_reason()
    assert reason is not None and "(3 ignored)" in reason and ".gitignore" in reason
    assert reason in ws.problems()
    (root / ".gitignore").write_text("b.py\n")
    ws.index()
    assert ws.empty_reason() is None and reason not in ws.problems()
    ws.close()


def test_a_folder_that_fails_to_index_is_a_problem_and_the_others_are_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ensure that an unexpected failure while indexing one workspace folder (a bug)
    becomes a problem naming the folder and the error, and the other folders are indexed."""
    good = write_tree(tmp_path / "good", {"a.py": "x = 1\n"})
    bad = write_tree(tmp_path / "bad", {"b.py": "y = 2\n"})
    config = Config()
    config.index.cache = False
    ws = Workspace([bad, good], config)
    indexer = ws._indexer
    real = indexer._index_folder

    def failing(folder, *args, **kwargs):
        if folder.root == bad.resolve():
            raise RuntimeError("simulated bug")
        return real(folder, *args, **kwargs)

    monkeypatch.setattr(indexer, "_index_folder", failing)
    ws.index()
    assert [f.path for f in ws.files.values()] == ["good/a.py"]
    assert [p for p in ws.problems() if p.startswith("bad: indexing stopped by RuntimeError: simulated bug")]
    ws.close()
