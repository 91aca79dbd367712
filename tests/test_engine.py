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
from tests.history.test_elision import agent_conversations


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


# --- a conversation in the bundle --------------------------------------------------------

LOG = "".join(f"tests/test_bundle.py::test_case_{i} PASSED\n" for i in range(1500))


def trajectory(calls: int = 24, system_text: str = "You are a coding agent. Use the tools.") -> tuple[dict, ...]:
    """One user message, then `calls` tool calls and results (one long turn), the last a
    huge test log: the usual shape of a coding agent's context."""
    code = "def assemble_bundle(budget):\n    used = 0\n    return used\n"
    msgs = [{"role": "system", "content": system_text}, {"role": "user", "content": "Make the bundle respect budget."}]
    for k in range(calls):
        name = "run_tests" if k == calls - 1 else "read_file"
        msgs.append(
            {
                "role": "assistant",
                "content": f"Step {k}.",
                "tool_calls": [{"id": f"call_{k}", "type": "function", "function": {"name": name, "arguments": "{}"}}],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": f"call_{k}", "content": LOG if name == "run_tests" else code * 12})
    return tuple(msgs)


def assert_paired(messages) -> None:
    calls = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    results = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert calls == results


@pytest.mark.parametrize("fmt", ["markdown", "xml"])
def test_a_long_trajectory_at_a_small_budget_is_windowed_and_shown_in_the_text(engine: Engine, fmt: str) -> None:
    """Ensure that a bundle with one long agent turn at a small budget answers (no refusal),
    that its text shows the windowed conversation (newest call, elided results) as its last
    part, and that total_tokens is the real count of that text, within the budget."""
    request = BundleRequest(query="assemble bundle", budget=2000, messages=trajectory(), format=fmt)
    result = engine.bundle(request)
    counter = counter_for()
    assert counter.count(result.text) == result.total_tokens <= 2000
    assert result.snapshot.total_used == result.total_tokens
    if fmt == "markdown":
        conversation = result.text[result.text.index("## Conversation") :]
        assert "### tool result: run_tests (call_23)" in conversation
    else:
        conversation = result.text[result.text.index("<conversation>") :]
        assert result.text.endswith("</conversation>\n</context>\n")
        assert 'tool_call_id="call_23"' in conversation
    assert "Make the bundle respect budget." in conversation
    assert "[tool result elided to fit the context budget:" in conversation
    assert result.messages[0]["role"] == "system" and result.messages[1]["role"] == "user"
    assert result.messages[-1]["tool_call_id"] == "call_23"
    assert_paired(result.messages)
    assert any("tool results elided (oldest first" in w for w in result.snapshot.warnings)
    history = next(c for c in result.snapshot.contributions if c.contributor == "conversation_history")
    assert history.used > 0


def test_bundle_fits_with_a_conversation_at_any_budget(engine: Engine) -> None:
    """Ensure that, from tiny to large budgets, a bundle with a long trajectory never passes
    its budget (real count of the text, conversation included) and keeps calls paired."""
    counter = counter_for()
    for budget in (120, 400, 1000, 4000, 16_000):
        result = engine.bundle(BundleRequest(query="count tokens", budget=budget, messages=trajectory()))
        assert counter.count(result.text) == result.total_tokens <= budget, budget
        assert_paired(result.messages)


def test_system_messages_over_the_share_but_within_the_budget_are_given_room(engine: Engine) -> None:
    """Ensure that a system prompt bigger than the conversation's share, but within the
    budget, is answered: the conversation gets more than its share, with a warning."""
    rules = "Rules:\n" + "- follow the project style guide closely\n" * 40
    result = engine.bundle(BundleRequest(budget=2000, messages=trajectory(system_text=rules)))
    assert counter_for().count(result.text) == result.total_tokens <= 2000
    assert result.messages[0]["content"] == rules
    assert any("over its" in w and "share" in w for w in result.snapshot.warnings)


def test_system_messages_alone_over_the_budget_are_refused_naming_messages(engine: Engine) -> None:
    """Ensure that the one refusal left is system messages alone over the whole budget:
    InvalidParam on messages, saying by how much to shorten them."""
    with pytest.raises(InvalidParam, match="^messages: the system messages alone take") as info:
        engine.bundle(BundleRequest(budget=500, messages=trajectory(system_text="rule " * 800)))
    assert info.value.field == "messages" and "shorten the system prompt" in str(info.value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    messages=agent_conversations(),
    budget=st.integers(1, 400) | st.integers(400, 12_000),
    fmt=st.sampled_from(["markdown", "xml"]),
    profile=st.sampled_from(["balanced", "conversation-first", "token-efficient"]),
)
def test_bundles_with_any_conversation_fit_their_budget(engine: Engine, messages, budget, fmt, profile) -> None:
    """Ensure that for any agent session, budget, format and profile, a bundle either fits
    (real count of its text, conversation included, equals total_tokens and is within the
    budget; calls paired) or is refused only because the system messages alone do not fit."""
    request = BundleRequest(
        query="assemble bundle", budget=budget, messages=tuple(messages), format=fmt, profile=profile
    )
    try:
        result = engine.bundle(request)
    except InvalidParam as err:
        assert err.field == "messages" and "the system messages alone take" in str(err)
        return
    assert counter_for().count(result.text) == result.total_tokens <= budget
    assert_paired(result.messages)


def test_status_says_indexing_until_the_first_index_is_done(tmp_path) -> None:
    """Ensure that status before the first index has even started says `indexing`, so a
    client (a health check, an editor's status item) cannot take "not started" for "done"."""
    from ctx_lsp.engine import Engine
    from tests.conftest import SAMPLE_FILES, write_tree

    engine = Engine([write_tree(tmp_path / "ws", SAMPLE_FILES)], {"index": {"watch": False}})
    try:
        assert engine.status().indexing
        engine.index()
        report = engine.status()
        assert not report.indexing and report.files_indexed > 0
    finally:
        engine.close()


def test_status_lists_the_configured_agents(tmp_path) -> None:
    """Ensure that status carries the agent table as configured, a workspace's own agent
    included, so an editor's agent picker need not keep a copy."""
    from ctx_lsp.engine import Engine
    from tests.conftest import SAMPLE_FILES, write_tree

    ws = write_tree(tmp_path / "ws", {**SAMPLE_FILES, "ctx-lsp.toml": "[agents.migrator]\nbudget = 12000\ntier = 3\n"})
    engine = Engine([ws], {"index": {"watch": False}, "agents": {"planner": {"budget": 3000}}})
    try:
        agents = engine.status().config["agents"]
        assert agents["migrator"]["budget"] == 12000 and agents["migrator"]["tier"] == 3
        assert agents["planner"]["budget"] == 3000 and "default" in agents
    finally:
        engine.close()
