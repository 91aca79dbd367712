"""Tests for ctx_lsp/code/languages/__init__.py: the one table of languages by extension."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ctx_lsp.code.languages import SYMBOL_KINDS, all_languages, language_for, language_named
from ctx_lsp.code.outline import outline_for

PACKAGE = Path(__file__).resolve().parents[3] / "ctx_lsp"


def test_every_extension_maps_to_one_language() -> None:
    """Ensure that files are given their language by extension, case-insensitively, with
    the longest suffix first, and that anything else has no language."""
    cases = {
        "a.py": "python",
        "src/x.TS": "typescript",
        "src/x.tsx": "typescript",
        "src/x.mts": "typescript",
        "lib/x.js": "javascript",
        "lib/x.cjs": "javascript",
        "lib/x.jsx": "javascript",
    }
    for path, name in cases.items():
        spec = language_for(path)
        assert spec is not None and spec.name == name, path
    assert language_for("README.md") is None and language_for("Makefile") is None
    assert language_named("markdown") is None and language_named("typescript") is not None


def test_languages_declare_only_shared_kinds() -> None:
    """Ensure that every language's query names kinds from the one shared vocabulary."""
    for spec in all_languages():
        if spec.outline is not None:
            continue
        query = spec.compiled_query
        kinds = {
            query.capture_name(i)[len("definition.") :]
            for i in range(query.capture_count)
            if query.capture_name(i).startswith("definition.")
        }
        assert kinds <= SYMBOL_KINDS, (spec.name, kinds - SYMBOL_KINDS)


def test_outside_the_language_layer_nothing_compares_a_language_name() -> None:
    """Ensure that no module outside `code/languages/` compares an outline's or a file's
    language with a programming language's name (`== "python"`): what a language needs is
    data its module declares."""
    names = {spec.name for spec in all_languages()}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "languages" in path.parts or "docs" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                for operand in [node.left, *node.comparators]:
                    if isinstance(operand, ast.Constant) and operand.value in names:
                        offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def test_unknown_files_are_plain_text() -> None:
    """Ensure that a file of no registered language is outlined as text."""
    assert outline_for("notes.txt", b"hello\n").language == "text"


BROKEN = {
    "a.ts": ("export function kept(a: number): number { return a }\n", "class Broken {\n  m( {\n"),
    "a.js": ("function kept(a) { return a }\n", "class Broken {\n  m( {\n"),
    "a.go": ("package a\n\nfunc kept(a int) int { return a }\n", "func broken( {\n"),
    "a.rs": ("fn kept(a: i32) -> i32 { a }\n", "impl Broken {\n    fn m( {\n"),
    "A.java": ("class Kept { int kept(int a) { return a; } }\n", "class Broken {\n  void m( {\n"),
    "a.c": ("int kept(int a) { return a; }\n", "int broken( {\n"),
    "a.cpp": ("int kept(int a) { return a; }\n", "class Broken {\n  void m( {\n"),
    "a.cs": ("class Kept { int kept(int a) { return a; } }\n", "class Broken {\n  void m( {\n"),
    "a.rb": ("def kept(a)\n  a\nend\n", "class Broken\n  def m(\n"),
}


@pytest.mark.parametrize("path", sorted(BROKEN))
def test_every_language_outlines_a_file_with_syntax_errors(path: str) -> None:
    """Ensure that a file with a syntax error is outlined from the parser's recovery (the
    definitions before the error are kept) and marked `has_errors`."""
    good, bad = BROKEN[path]
    outline = outline_for(path, (good + bad).encode())
    assert outline.has_errors
    assert any(s.name == "kept" for s in outline.symbols), [s.qualname for s in outline.symbols]
    assert not outline_for(path, good.encode()).has_errors


@pytest.mark.parametrize("path", ["a.py", "a.tsx", *sorted(BROKEN)])
def test_every_language_parses_with_the_grammar_it_declares(path: str) -> None:
    """Ensure that every language, Python's own extractor included, gives a parser of its
    grammar (`spec.parser()`): what the scale bench's parse floor times per grammar."""
    spec = language_for(path)
    assert spec is not None and spec.grammar is not None
    source = {"a.py": "def kept(a):\n    return a\n", "a.tsx": "export const A = () => <div>a</div>\n"}
    good = source[path] if path in source else BROKEN[path][0]
    tree = spec.parser().parse(good.encode())
    assert tree.root_node.child_count > 0 and not tree.root_node.has_error
