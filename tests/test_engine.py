"""Tests for ctx_lsp/engine.py: bundles end to end through the core (no LSP)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp.engine import BundleRequest, Engine, Focus
from ctx_lsp.errors import InvalidParam
from ctx_lsp.tokens import counter_for
from tests.conftest import write_tree


def code_sections(result):
    """Sections after the project instructions, which DESIGN puts first."""
    return [s for s in result.sections if s.contributor != "project_docs"]


@pytest.fixture
def engine(sample_workspace: Path):
    e = Engine([sample_workspace])
    e.index()
    yield e
    e.close()


def test_query_finds_the_right_file_first(engine: Engine) -> None:
    """Ensure that a query about bundles puts the bundle module first, with its reason."""
    result = engine.bundle(BundleRequest(query="assemble bundle within budget", budget=2000))
    assert result.total_tokens <= 2000
    first = code_sections(result)[0]
    assert first.path == "pkg/bundle.py" and first.contributor == "retrieval"
    assert "assemble_bundle" in first.reason
    assert result.snapshot.contributions and result.snapshot.tokenizer == "o200k_base"


def test_working_file_ranks_first_and_shows_edits(engine: Engine, sample_workspace: Path) -> None:
    """Ensure that an edited buffer is a working file, first, with its edited symbol in full."""
    path = sample_workspace / "pkg" / "tokens.py"
    edited = path.read_text().replace("return math.ceil(len(text) / 4)", "return math.ceil(len(text) / 3)  # edit")
    engine.workspace.change_document(path, edited, 2)
    result = engine.bundle(BundleRequest(query="assemble bundle", budget=3000))
    first = code_sections(result)[0]
    assert first.path == "pkg/tokens.py" and first.contributor == "working_files"
    assert "len(text) / 3)  # edit" in first.content
    assert "unsaved edits in TokenCounter.count" in first.reason


def test_focus_symbol_is_shown_in_full(engine: Engine, sample_workspace: Path) -> None:
    """Ensure that the symbol under the cursor is expanded in the focus file."""
    focus = Focus(str(sample_workspace / "pkg" / "bundle.py"), line=9)
    result = engine.bundle(BundleRequest(focus=focus, budget=3000, tier=2))
    first = code_sections(result)[0]
    assert first.contributor == "working_files" and "cursor in assemble_bundle" in first.reason
    assert "used += cost" in first.content


def test_project_docs_precedence(tmp_path: Path) -> None:
    """Ensure that the nearest AGENTS.md beats the root README and CLAUDE.md."""
    root = write_tree(
        tmp_path / "ws",
        {
            "README.md": "# Readme\n\nGeneral.\n",
            "CLAUDE.md": "# Claude\n\nRoot rules.\n",
            "svc/AGENTS.md": "# Service rules\n\nUse the service way.\n",
            "svc/core.py": "def serve():\n    return 1\n",
            "other/x.py": "def x():\n    return 2\n",
        },
    )
    e = Engine([root])
    e.index()
    near = e.bundle(BundleRequest(open=(str(root / "svc" / "core.py"),), budget=3000))
    assert [s.path for s in near.sections if s.contributor == "project_docs"] == ["svc/AGENTS.md"]
    far = e.bundle(BundleRequest(open=(str(root / "other" / "x.py"),), budget=3000))
    assert [s.path for s in far.sections if s.contributor == "project_docs"] == ["CLAUDE.md"]
    e.close()


def test_explain_lists_every_candidate(engine: Engine) -> None:
    """Ensure that ctx.explain gives each candidate a score, reason and in/out decision."""
    engine.bundle(BundleRequest(query="count tokens", budget=400))
    explanation = engine.explain()
    assert explanation.candidates
    for d in explanation.candidates:
        assert d.reason and d.outcome.startswith("in:" if d.included else "out:")
    assert any(d.included for d in explanation.candidates)
    included = [d.included for d in explanation.candidates]
    assert included == sorted(included, reverse=True)  # what is in is listed first


def test_model_budget_and_bad_profile(engine: Engine) -> None:
    """Ensure that a model budget is planned and an unknown profile is refused by name."""
    result = engine.bundle(BundleRequest(query="tokens", model="gpt-4o", utilization="low"))
    assert result.budget == int(128_000 * 0.33) - 12_800
    assert result.snapshot.model_context_limit == 128_000
    with pytest.raises(InvalidParam, match="^profile"):
        engine.bundle(BundleRequest(query="tokens", profile="maximal"))


def test_same_inputs_same_bundle(engine: Engine) -> None:
    """Ensure that bundles are deterministic."""
    request = BundleRequest(query="count tokens budget", budget=1500)
    assert engine.bundle(request).text == engine.bundle(request).text


WORDS = ["alpha", "beta", "gamma", "delta", "token", "budget", "parse", "index", "render", "cache"]


@st.composite
def workspaces(draw):
    n_files = draw(st.integers(1, 8))
    files = {}
    for i in range(n_files):
        funcs = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5, unique=True))
        body = "\n\n".join(
            textwrap.dedent(f'''\
            def {name}_{i}(value):
                """Handle {name} for item {i}."""
                return {draw(st.sampled_from(WORDS))}_{draw(st.integers(0, n_files - 1))}(value) * {j}
            ''')
            for j, name in enumerate(funcs)
        )
        files[f"pkg/m{i}.py"] = body
    return files


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=workspaces(),
    query=st.lists(st.sampled_from(WORDS), max_size=3),
    budget=st.integers(1, 3000),
    profile=st.sampled_from(["balanced", "knowledge-heavy", "token-efficient"]),
)
def test_engine_properties(tmp_path_factory, files, query, budget, profile) -> None:
    """Ensure that for random workspaces: total ≤ budget (real count), no file twice, deterministic."""
    root = write_tree(tmp_path_factory.mktemp("ws"), files)
    e = Engine([root], {"index": {"cache": False, "watch": False}})
    e.index()
    request = BundleRequest(query=" ".join(query), budget=budget, profile=profile, open=(str(root / "pkg/m0.py"),))
    first, second = e.bundle(request), e.bundle(request)
    counter = counter_for()
    assert first.total_tokens <= budget and counter.count(first.text) == first.total_tokens
    paths = [s.path for s in first.sections]
    assert len(paths) == len(set(paths))
    assert first.text == second.text
    e.close()


def test_pruned_outlines_keep_what_each_request_asks_about(tmp_path: Path) -> None:
    """Ensure that an outline too big for its cap keeps the symbols the query matches —
    in a retrieved file and in an open working file — and that a second request about
    other symbols is not served the first request's outline from the render cache."""
    body = "".join(
        f"def helper_{i:03}(value: int, other: str = 'x') -> int:\n    return value\n\n\n" for i in range(150)
    )
    write_tree(
        tmp_path,
        {
            "big.py": body
            + "def frobnicate_widget(widget: int) -> int:\n    return widget\n\n\n"
            + "def quux_gadget(gadget: int) -> int:\n    return gadget\n",
            "other.py": "def unrelated():\n    return 1\n",
        },
    )
    engine = Engine([tmp_path])
    engine.index()
    try:
        for query in ("frobnicate the widget", "quux the gadget"):
            name = "frobnicate_widget" if "frobnicate" in query else "quux_gadget"
            for open_files in ((), ("big.py",)):
                result = engine.bundle(BundleRequest(query=query, budget=1500, tier=1, open=open_files))
                section = next(s for s in result.sections if s.path == "big.py")
                assert section.contributor == ("working_files" if open_files else "retrieval")
                assert f"def {name}(" in section.content, (query, open_files)
                assert "more definitions not shown" in section.content
    finally:
        engine.close()


def test_a_file_deleted_since_indexing_is_left_out_with_a_warning(sample_workspace: Path) -> None:
    """Ensure that a file removed before the watcher catches up costs its section, not the
    bundle: the rest still answers and the snapshot names what was left out."""
    engine = Engine([sample_workspace], {"index": {"watch": False}})
    engine.index()
    try:
        (sample_workspace / "pkg" / "bundle.py").unlink()
        result = engine.bundle(BundleRequest(query="assemble bundle budget count tokens", budget=3000))
        assert "pkg/bundle.py" not in {s.path for s in result.sections}
        assert "pkg/tokens.py" in {s.path for s in result.sections}
        assert any(w.startswith("pkg/bundle.py left out:") for w in result.snapshot.warnings)
    finally:
        engine.close()
