"""Tests for ctx_lsp/index/search.py: identifier-aware BM25 over symbols, kept incrementally."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.code.outline import Outline, Symbol
from ctx_lsp.config import Config
from ctx_lsp.index import search as search_module
from ctx_lsp.index.files import IndexedFile, to_indexed
from ctx_lsp.index.search import PostingsImage, SearchIndex, file_docs
from ctx_lsp.index.store import StoredFile
from ctx_lsp.index.terms import query_terms
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.relevance import BM25_B, BM25_K1
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


# -- the packed base and the live part answer as one index (issue 11, memory) -----------

WORDS = ("render", "template", "cache", "loader", "query", "filter", "token", "bundle", "parse", "Field")


def _entry(path: str, names: Sequence[str], doc: str) -> IndexedFile:
    """An indexed file with one function per name (what the postings read), no disk."""
    symbols = tuple(
        Symbol(name, name, "function", f"def {name}(x)", (), doc, i + 1, i + 1, i + 1, 0, "", (names[0],))
        for i, name in enumerate(names)
    )
    outline = Outline("python", doc, (), (), symbols, (), len(names), False)
    row = StoredFile(path, 0, 0, f"hash-{path}-{'-'.join(names)}-{doc}", "python", 0, len(names), len(names), False, "")
    return to_indexed(row, "/ws", f"/ws/{path}", path, outline)


def _reference(entries: Mapping[str, IndexedFile], query: str) -> list[tuple]:
    """BM25 over exactly these files' documents, straight from the definition."""
    docs = [(e, row) for e in entries.values() for row in file_docs(e)]
    if not docs:
        return []
    avg = sum(row[4] for _, row in docs) / len(docs)
    k1, b = BM25_K1, BM25_B
    scores: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    for term in query_terms(query):
        df = sum(1 for _, row in docs if term in row[5])
        if not df:
            continue
        lift = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5)) * (k1 + 1)
        for i, (_, row) in enumerate(docs):
            tf = row[5].get(term)
            if tf:
                scores[i] = scores.get(i, 0.0) + lift * tf / (tf + k1 * (1 - b) + k1 * b / avg * row[4])
                matched.setdefault(i, []).append(term)
    return sorted(
        (-round(s, 4), docs[i][0].path, docs[i][1][2], docs[i][1][0], docs[i][1][1], tuple(matched[i]))
        for i, s in scores.items()
    )


def _answers(search: SearchIndex, query: str) -> list[tuple]:
    return sorted((-h.score, h.path, h.start_line, h.symbol, h.kind, h.matched) for h in search.search(query, 10_000))


class _MemoryImages:
    """An image cache in memory, as `index/derived.py` keeps one in SQLite."""

    def __init__(self) -> None:
        self.image: PostingsImage | None = None

    def load_image(self) -> PostingsImage | None:
        return self.image

    def save_image(self, entries: Sequence[IndexedFile], image: PostingsImage) -> None:
        self.image = image


_files = st.dictionaries(
    st.sampled_from([f"pkg/m{i}.py" for i in range(8)]),
    st.tuples(st.lists(st.sampled_from(WORDS), min_size=0, max_size=4, unique=True), st.sampled_from(WORDS)),
    min_size=2,
    max_size=8,
)


_change = st.one_of(
    st.none(), st.tuples(st.lists(st.sampled_from(WORDS), max_size=4, unique=True), st.sampled_from(WORDS))
)
_edits = st.lists(st.tuples(st.sampled_from([f"pkg/m{i}.py" for i in range(10)]), _change), max_size=8)
_queries = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(first=_files, edits=_edits, queries=_queries)
def test_packed_and_live_postings_score_as_bm25(
    first: dict[str, tuple[list[str], str]],
    edits: list[tuple[str, tuple[list[str], str] | None]],
    queries: list[list[str]],
) -> None:
    """Ensure that hits and scores after a full pass (packed into the base), after edits
    and removals on top of it (live documents, dead base ones), and after a fresh process
    reads the image and re-derives what changed, are those of BM25 over exactly the files
    there are."""
    _check_bm25(first, edits, queries)


@settings(max_examples=40, deadline=None)
@given(first=_files, edits=_edits, queries=_queries)
def test_postings_folded_after_every_change_score_as_bm25(
    first: dict[str, tuple[list[str], str]],
    edits: list[tuple[str, tuple[list[str], str] | None]],
    queries: list[list[str]],
) -> None:
    """Ensure that the same holds when the live part is folded into the base after every
    change (as a first pass published piecewise folds it once it is large)."""
    with mock.patch.object(search_module, "FOLD_MIN_LIVE_POSTINGS", 0):
        _check_bm25(first, edits, queries)


def _check_bm25(
    first: dict[str, tuple[list[str], str]],
    edits: list[tuple[str, tuple[list[str], str] | None]],
    queries: list[list[str]],
) -> None:
    cache = _MemoryImages()
    search = SearchIndex(cache)
    entries = {f"/ws/{p}": _entry(p, names, doc) for p, (names, doc) in first.items()}
    search.update([], list(entries.values()))
    for words in queries:
        assert _answers(search, " ".join(words)) == _reference(entries, " ".join(words))
    assert cache.image is not None
    for path, change in edits:
        if change is None:
            entries.pop(f"/ws/{path}", None)
            search.update([f"/ws/{path}"], [])
        else:
            entries[f"/ws/{path}"] = _entry(path, *change)
            search.update([], [entries[f"/ws/{path}"]])
        for words in queries:
            query = " ".join(words)
            assert _answers(search, query) == _reference(entries, query)
            assert search.term_weights(query) == _reference_weights(entries, query)
    assert len(search) == sum(len(file_docs(e)) for e in entries.values())
    if len(entries) > 1:  # a fresh process: the stored image, then what changed since
        again = SearchIndex(cache)
        again.update([], list(entries.values()))
        for words in queries:
            assert _answers(again, " ".join(words)) == _reference(entries, " ".join(words))


def _reference_weights(entries: Mapping[str, IndexedFile], query: str) -> dict[str, float]:
    """Each query term's inverse document frequency over exactly these files."""
    docs = [row for e in entries.values() for row in file_docs(e)]
    out = {}
    for term in query_terms(query):
        df = sum(1 for row in docs if term in row[5])
        if df:
            out[term] = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
    return out
