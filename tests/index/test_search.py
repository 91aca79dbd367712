"""Tests for ctx_lsp/index/search.py: identifier-aware BM25 over symbols, kept incrementally."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ctx_lsp.config import Config
from ctx_lsp.index.search import SearchIndex
from ctx_lsp.index.workspace import Workspace
from tests.conftest import write_tree

FILES = {
    "pkg/loaders.py": textwrap.dedent(
        '''\
        """Template loaders."""
        import importlib


        class PackageLoader:
            """Load templates from a package."""

            def __init__(self, package_name: str) -> None:
                spec = importlib.util.find_spec(package_name)
                self.root = spec.origin

            def list_templates(self) -> list[str]:
                return []
        '''
    ),
    "pkg/render.py": textwrap.dedent(
        '''\
        def render_template(name: str, context: dict) -> str:
            """Render one template with a context."""
            return name.format(**context)


        def renderTemplateAsync(name):
            return render_template(name, {})
        '''
    ),
}


def indexed(tmp_path: Path, files: dict[str, str] = FILES) -> tuple[Workspace, SearchIndex]:
    write_tree(tmp_path, files)
    workspace = Workspace([tmp_path], Config())
    search = SearchIndex()
    workspace.subscribe(search.update)
    workspace.index()
    return workspace, search


def test_names_split_across_conventions(tmp_path: Path) -> None:
    """Ensure that snake_case, camelCase and dotted query words find the same symbols."""
    _, search = indexed(tmp_path)
    for query in ("render template", "renderTemplate", "render_template", "pkg.render"):
        hits = search.search(query, 5)
        assert hits and hits[0].path == "pkg/render.py", query
    assert {h.symbol for h in search.search("render template", 5)} >= {"render_template", "renderTemplateAsync"}


def test_a_symbol_is_found_by_what_it_calls(tmp_path: Path) -> None:
    """Ensure that a task naming machinery used only in a body (`find_spec`) finds the
    method that calls it."""
    _, search = indexed(tmp_path)
    hits = search.search("use find_spec to locate the package", 5)
    assert hits[0].symbol == "PackageLoader.__init__"
    assert "spec" in hits[0].matched


def test_name_match_outranks_docstring_match(tmp_path: Path) -> None:
    """Ensure that a term in a symbol's own name weighs more than one in another's docstring."""
    _, search = indexed(tmp_path)
    hits = [h for h in search.search("templates", 10) if h.symbol]
    assert hits[0].symbol == "PackageLoader.list_templates"


def test_updates_are_incremental(tmp_path: Path) -> None:
    """Ensure that a changed or deleted file changes the hits without a rebuild."""
    workspace, search = indexed(tmp_path)
    assert search.search("render template", 5)
    (tmp_path / "pkg" / "render.py").unlink()
    (tmp_path / "pkg" / "paint.py").write_text("def paint_template(x):\n    return x\n")
    workspace.refresh([tmp_path / "pkg" / "render.py", tmp_path / "pkg" / "paint.py"])
    hits = search.search("render template", 5)
    assert all(h.path != "pkg/render.py" for h in hits)
    assert search.search("paint", 5)[0].symbol == "paint_template"


def test_results_are_deterministic(tmp_path: Path) -> None:
    """Ensure that equal scores are ordered by path and line, the same every time."""
    _, search = indexed(tmp_path)
    first = search.search("template", 20)
    assert first == search.search("template", 20)
    assert first == sorted(first, key=lambda h: (-h.score, h.path, h.start_line))
