"""Tests for ctx_lsp/index/body_terms.py: files found by the words in their code, kept
current with the index and restored from the cache's image like the symbol postings."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ctx_lsp.engine import Engine
from ctx_lsp.index.body_terms import BODY_KIND, body_docs, term_totals
from tests.conftest import SAMPLE_FILES, write_tree

# "mousetrap" is only in a string inside a body: no name, signature, docstring or call has it
LAUNCHER = textwrap.dedent(
    '''\
    def start_hint(shell):
        """Tell the user how to run the program."""
        if shell == "explorer":
            return "This is a command line tool; the mousetrap stops it when started by a double click."
        return ""


    def other():
        return 1
    '''
)

FILES = {**SAMPLE_FILES, "pkg/launcher.py": LAUNCHER}


def _engine(root: Path, cache: bool = True) -> Engine:
    engine = Engine([root], None if cache else {"index": {"cache": False}})
    engine.index()
    engine.warm_up()
    return engine


def test_a_word_only_in_a_body_finds_its_file(tmp_path: Path) -> None:
    """Ensure that the body-terms index finds a file by a word used only in its code (here a
    string), which the symbol search does not find at all, and documents each file with
    code units once."""
    engine = _engine(write_tree(tmp_path / "ws", FILES), cache=False)
    try:
        assert engine.search("mousetrap double click") == []
        hits = engine.body_index.search("mousetrap double click")
        found = [(h.path, h.kind, h.matched) for h in hits]
        assert found == [("pkg/launcher.py", BODY_KIND, ("mousetrap", "doubl", "click"))]
        code_files = [e for e in engine.workspace.files.values() if e.units_blob]
        assert len(engine.body_index) == len(code_files) == 4  # the .py files; not README.md or notes.txt
    finally:
        engine.close()


def test_the_body_postings_are_restored_from_the_cache(tmp_path: Path) -> None:
    """Ensure that a second engine reads the body postings from the cache's image, derives
    none, and answers as the first; a file edited between the two is derived again."""
    root = write_tree(tmp_path / "ws", FILES)
    first = _engine(root)
    assert not first.body_index.from_image and first.derived.body_images.saved == 1
    before = first.body_index.search("mousetrap")
    first.close()

    second = _engine(root)
    assert second.body_index.from_image and second.body_index.docs_built == 0
    assert second.derived.body_images.loaded == 1 and second.derived.body_images.saved == 0
    assert second.body_index.search("mousetrap") == before
    second.close()

    path = root / "pkg" / "launcher.py"
    path.write_text(path.read_text().replace("mousetrap", "walrus"))
    third = _engine(root)
    assert third.body_index.from_image and third.body_index.docs_built == 1
    assert third.body_index.search("mousetrap") == []
    assert [h.path for h in third.body_index.search("walrus")] == ["pkg/launcher.py"]
    third.close()


def test_an_edit_in_a_running_engine_updates_the_body_postings(tmp_path: Path) -> None:
    """Ensure that a saved edit picked up by a running engine changes that file's body
    document at once, and a removed file's document goes with it."""
    root = write_tree(tmp_path / "ws", FILES)
    engine = _engine(root)
    try:
        tokens = root / "pkg" / "tokens.py"
        tokens.write_text(tokens.read_text() + '\n\ndef later():\n    return "a narwhal in the code"\n')
        engine.refresh([tokens])
        assert [h.path for h in engine.body_index.search("narwhal")] == ["pkg/tokens.py"]
        launcher = root / "pkg" / "launcher.py"
        launcher.unlink()
        engine.refresh([launcher])
        assert engine.body_index.search("mousetrap") == []
    finally:
        engine.close()


def test_a_file_counts_each_word_over_all_its_units(tmp_path: Path) -> None:
    """Ensure that the body document counts a word over every unit of the file (here two
    functions and the module code), as the units' postings hold it."""
    source = "LIMIT = 'otter'\n\n\ndef a():\n    return 'otter otter'\n\n\ndef b():\n    return 'otter otter otter'\n"
    engine = _engine(write_tree(tmp_path / "ws", {"pkg/otters.py": source}), cache=False)
    try:
        entry = next(iter(engine.workspace.files.values()))
        postings = entry.unit_postings
        assert postings is not None and len(postings.units) >= 3
        assert term_totals(postings)["otter"] == 6
        ((_, kind, _, _, length, counts),) = body_docs(entry)
        assert kind == BODY_KIND and counts["otter"] == 6 and length == sum(counts.values())
    finally:
        engine.close()
