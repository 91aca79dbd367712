"""Tests for ctx_lsp/config.py: merging defaults, workspace files and client overrides."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctx_lsp.config import ADJUSTMENT_RULES, MAX_FILE_BYTES, Config, load, without_key
from ctx_lsp.errors import ConfigError, CtxError
from tests.conftest import write_tree

DESIGN_AGENTS = {
    "planner": (1, 4000, 2500),
    "analyst": (1, 4000, 2500),
    "reviewer": (1, 4000, 3000),
    "architect": (2, 6000, 4000),
    "designer": (2, 6000, 4000),
    "implementer": (2, 6000, 3000),
    "tester": (2, 4000, 2500),
    "debugger": (3, 8000, 3000),
    "default": (2, 4000, 2500),
}

WINDOW_TYPES = {"balanced", "knowledge-heavy", "conversation-first", "token-efficient"}


def workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    return write_tree(tmp_path / "ws", files)


def pyproject(body: str) -> str:
    return f'[project]\nname = "demo"\n\n[tool.ctx-lsp]\n{body}\n'


def error_of(root: Path | None, overrides=None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(root, overrides)
    return caught.value


# ---------------------------------------------------------------- defaults


def test_defaults_are_designs_tables(tmp_path: Path) -> None:
    """Ensure that with no config anywhere the agents, weights and window types are DESIGN's."""
    loaded = load(workspace(tmp_path, {"a.py": "x = 1\n"}))
    config = loaded.config
    assert loaded.warnings == () and loaded.sources == ("defaults",)
    assert {n: (a.tier, a.budget, a.docs_cap) for n, a in config.agents.items()} == DESIGN_AGENTS
    assert config.weights == {"working_files": 0.40, "retrieval": 0.25, "codebase_map": 0.20, "project_docs": 0.15}
    assert set(config.context_window_types) == WINDOW_TYPES
    assert config.default_context_window_type == "balanced"
    assert config.index.max_file_bytes == MAX_FILE_BYTES and config.tokenizer == "o200k_base"
    assert config.artifacts_budget == 4000 and config.docs.require_topic is True


def test_no_root_and_no_overrides_is_the_defaults() -> None:
    """Ensure that a server started without a workspace folder still has a full config."""
    loaded = load(None)
    assert loaded.sources == ("defaults",) and loaded.config == Config()


@pytest.mark.parametrize("name", sorted(WINDOW_TYPES))
def test_default_window_types_target_the_whole_budget(name: str) -> None:
    """Ensure that each default window type's targets sum to 1 and every policy is consistent."""
    window_type = Config().context_window_types[name]
    assert sum(p.target_pct for p in window_type.contributors.values()) == pytest.approx(1.0)
    assert all(0 <= p.min_pct <= p.target_pct <= p.max_pct <= 1 for p in window_type.contributors.values())
    assert list(window_type.adjustments) == list(ADJUSTMENT_RULES)


def test_loads_do_not_share_state(tmp_path: Path) -> None:
    """Ensure that one load's overrides never leak into the next load's defaults."""
    load(
        None,
        {
            "agents": {"default": {"budget": 111}, "scribe": {"tier": 3}},
            "contextWindowTypes": {"balanced": {"contributors": {"retrieval": {"targetPct": 0.05}}}},
        },
    )
    fresh = load(None).config
    assert fresh.agents["default"].budget == 4000 and "scribe" not in fresh.agents
    assert fresh.context_window_types["balanced"].contributors["retrieval"].target_pct == 0.30


# ---------------------------------------------------------------- merge order


def test_later_sources_win_in_designs_order(tmp_path: Path) -> None:
    """Ensure that defaults < pyproject.toml [tool.ctx-lsp] < ctx-lsp.toml < overrides, key by
    key: each source wins only the keys it sets, and the sources are listed in order."""
    root = workspace(
        tmp_path,
        {
            "pyproject.toml": pyproject(
                'artifacts_budget = 1000\ndefault_context_window_type = "knowledge-heavy"\n'
                "[tool.ctx-lsp.index]\nmax_file_bytes = 1000\nworkers = 1\n"
            ),
            "ctx-lsp.toml": "artifacts_budget = 2000\n[index]\nmax_file_bytes = 2000\n",
        },
    )
    loaded = load(root, {"index": {"max_file_bytes": 3000}})
    config = loaded.config
    assert config.index.max_file_bytes == 3000  # all three set it: the client wins
    assert config.artifacts_budget == 2000  # pyproject and ctx-lsp.toml: the file wins
    assert config.index.workers == 1  # only pyproject
    assert config.default_context_window_type == "knowledge-heavy"
    assert config.tokenizer == "o200k_base"  # nobody: the default
    assert loaded.sources == ("defaults", "pyproject.toml [tool.ctx-lsp]", "ctx-lsp.toml", "client")


@pytest.mark.parametrize("name", ["ctx-lsp.toml", ".ctx-lsp.toml"])
def test_either_config_file_name_is_read_and_beats_pyproject(tmp_path: Path, name: str) -> None:
    """Ensure that ctx-lsp.toml and .ctx-lsp.toml are both read, over pyproject's table."""
    root = workspace(
        tmp_path, {"pyproject.toml": pyproject("artifacts_budget = 1000"), name: "artifacts_budget = 2500\n"}
    )
    loaded = load(root)
    assert loaded.config.artifacts_budget == 2500
    assert loaded.sources[-1] == name


def test_pyproject_without_our_table_is_not_a_source(tmp_path: Path) -> None:
    """Ensure that a pyproject.toml with no [tool.ctx-lsp] changes nothing and is not listed."""
    root = workspace(tmp_path, {"pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff]\nline-length = 99\n'})
    loaded = load(root)
    assert loaded.sources == ("defaults",) and loaded.warnings == () and loaded.config == Config()


@pytest.mark.parametrize("name", ["pyproject.toml", "ctx-lsp.toml", ".ctx-lsp.toml"])
def test_an_unparsable_workspace_config_file_is_a_warning(tmp_path: Path, name: str) -> None:
    """Ensure that a workspace config file that is not valid TOML is left out with a warning
    naming it and the fix, and the other sources still apply (issue 20: a cloned
    repository's file never stops the server)."""
    root = workspace(tmp_path, {name: "[tool.ctx-lsp\nbroken = = 3", "a.py": ""})
    loaded = load(root, {"artifacts_budget": 1234})
    assert [w for w in loaded.warnings if w.startswith(f"{name} not read: ") and "fix it or remove it" in w]
    assert loaded.config.artifacts_budget == 1234


def test_overrides_apply_after_a_reload(tmp_path: Path) -> None:
    """Ensure that new client settings (didChangeConfiguration) still sit on top of the files."""
    root = workspace(tmp_path, {"ctx-lsp.toml": "[agents.planner]\nbudget = 5000\n"})
    assert load(root).config.agents["planner"].budget == 5000
    assert load(root, {"agents": {"planner": {"budget": 7000}}}).config.agents["planner"].budget == 7000


# ---------------------------------------------------------------- key spelling


@pytest.mark.parametrize(
    "overrides",
    [
        {
            "index": {"maxFileBytes": 5000, "respectGitignore": False},
            "artifactsBudget": 700,
            "defaultContextWindowType": "token-efficient",
            "docs": {"requireTopic": False, "allowFullLibrary": ["attrs"]},
            "agents": {"planner": {"docsCap": 900}},
            "modelLimits": {"gpt-4o": 64000},
        },
        {
            "index": {"max-file-bytes": 5000, "respect-gitignore": False},
            "artifacts-budget": 700,
            "default-context-window-type": "token-efficient",
            "docs": {"require-topic": False, "allow-full-library": ["attrs"]},
            "agents": {"planner": {"docs-cap": 900}},
            "model-limits": {"gpt-4o": 64000},
        },
    ],
    ids=["camelCase", "kebab-case"],
)
def test_editor_spellings_of_keys_are_accepted(overrides) -> None:
    """Ensure that camelCase keys (as editors send them) and kebab-case ones (as TOML files
    often use) set the same fields as snake_case, without warnings."""
    loaded = load(None, overrides)
    config = loaded.config
    assert loaded.warnings == ()
    assert config.index.max_file_bytes == 5000 and config.index.respect_gitignore is False
    assert config.artifacts_budget == 700 and config.default_context_window_type == "token-efficient"
    assert config.docs.require_topic is False and config.docs.allow_full_library == ["attrs"]
    assert config.agents["planner"].docs_cap == 900 and config.model_limits == {"gpt-4o": 64000}


def test_camel_case_window_type_policy(tmp_path: Path) -> None:
    """Ensure that a window type's policy written in camelCase by an editor is applied."""
    config = load(
        None,
        {
            "contextWindowTypes": {
                "balanced": {
                    "outputReservePct": 0.2,
                    "maxTier": 2,
                    "condensationOrder": ["codebase_map", "retrieval"],
                    "contributors": {"retrieval": {"targetPct": 0.35, "maxPct": 0.8}},
                }
            }
        },
    ).config
    balanced = config.context_window_types["balanced"]
    assert balanced.output_reserve_pct == 0.2 and balanced.max_tier == 2
    assert balanced.condensation_order == ["codebase_map", "retrieval"]
    assert balanced.contributors["retrieval"].target_pct == 0.35 and balanced.contributors["retrieval"].max_pct == 0.8


# ---------------------------------------------------------------- unknown keys


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"bogus": 1}, "bogus"),
        ({"index": {"ignroe": ["*.log"]}}, "index.ignroe"),
        ({"agents": {"planner": {"budgett": 3}}}, "agents.planner.budgett"),
        (
            {"contextWindowTypes": {"balanced": {"contributors": {"retrieval": {"weight": 2}}}}},
            "contextWindowTypes.balanced.contributors.retrieval.weight",
        ),
        ({"docs": {"folder": {"x": ["docs"]}}}, "docs.folder"),
    ],
)
def test_unknown_keys_are_warnings_naming_the_key_path(overrides, path: str) -> None:
    """Ensure that a misspelt key is a warning naming its full path, and nothing fails."""
    loaded = load(None, overrides)
    assert len(loaded.warnings) == 1
    assert repr(path) in loaded.warnings[0]


def test_unknown_keys_do_not_stop_their_neighbours(tmp_path: Path) -> None:
    """Ensure that the keys next to an unknown one still apply, in every source, and each
    source's unknown key is reported."""
    root = workspace(
        tmp_path,
        {
            "pyproject.toml": pyproject('colour = "blue"\nartifacts_budget = 1000'),
            "ctx-lsp.toml": "[index]\nwachs = false\nworkers = 2\n",
        },
    )
    loaded = load(root, {"agents": {"tester": {"tier": 3, "mood": "calm"}}})
    assert loaded.config.artifacts_budget == 1000
    assert loaded.config.index.workers == 2
    assert loaded.config.agents["tester"].tier == 3
    joined = "\n".join(loaded.warnings)
    assert "'colour'" in joined and "'index.wachs'" in joined and "'agents.tester.mood'" in joined


# ---------------------------------------------------------------- wrong types and values


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"agents": {"planner": {"budget": "big"}}}, "agents.planner.budget"),
        ({"agents": {"planner": {"budget": True}}}, "agents.planner.budget"),
        ({"agents": {"planner": {"tier": 2.5}}}, "agents.planner.tier"),
        ({"index": {"max_file_bytes": "1MB"}}, "index.max_file_bytes"),
        ({"index": {"ignore": "*.log"}}, "index.ignore"),
        ({"index": {"ignore": ["*.log", 3]}}, "index.ignore[1]"),
        ({"index": {"watch": "yes"}}, "index.watch"),
        ({"tokenizer": 5}, "tokenizer"),
        ({"weights": {"retrieval": "high"}}, "weights.retrieval"),
        ({"model_limits": {"gpt-4o": "64k"}}, "model_limits.gpt-4o"),
        ({"docs": {"folders": {"pygls": "docs/pygls"}}}, "docs.folders.pygls"),
        (
            {"context_window_types": {"balanced": {"contributors": {"retrieval": {"target_pct": "30%"}}}}},
            "context_window_types.balanced.contributors.retrieval.target_pct",
        ),
        (
            {"context_window_types": {"balanced": {"condensation_order": "codebase_map"}}},
            "context_window_types.balanced.condensation_order",
        ),
        ({"agents": 5}, "agents"),
    ],
)
def test_wrong_types_are_errors_naming_the_key_path(overrides, key: str) -> None:
    """Ensure that a value of the wrong type is refused with a ConfigError (a CtxError) whose
    key and message name the full key path."""
    err = error_of(None, overrides)
    assert isinstance(err, CtxError)
    assert err.key == key
    assert str(err).startswith(f"{key}: ")


def test_camel_case_key_path_in_an_error_is_the_one_the_user_wrote() -> None:
    """Ensure that an error about a camelCase key names the key as the editor sent it."""
    err = error_of(None, {"agents": {"planner": {"docsCap": "lots"}}})
    assert err.key == "agents.planner.docsCap" and "lots" in str(err)


def test_wrong_values_in_a_workspace_file_are_dropped_by_key(tmp_path: Path) -> None:
    """Ensure that each wrong value in a workspace config file (a wrong type, an unknown
    encoding, a value out of range) is dropped by its key with a warning naming the file,
    the key and the fix, while the file's other keys apply (issue 20)."""
    body = (
        "tokenizer = 5\nartifacts_budget = 1234\n\n"
        '[tool.ctx-lsp.agents.planner]\nbudget = "big"\ntier = 2\n\n'
        "[tool.ctx-lsp.agents.tester]\ntier = 7\n"
    )
    root = workspace(tmp_path, {"pyproject.toml": pyproject(body)})
    loaded = load(root)
    config = loaded.config
    assert config.tokenizer == "o200k_base" and config.artifacts_budget == 1234
    assert (config.agents["planner"].budget, config.agents["planner"].tier) == (4000, 2)
    assert config.agents["tester"].tier == 2
    source = "pyproject.toml [tool.ctx-lsp]"
    for key in ("tokenizer", "agents.planner.budget", "agents.tester.tier"):
        assert [w for w in loaded.warnings if w.startswith(f"{source}: {key}: ") and "fix or remove it" in w], key


def test_a_bad_value_in_ctx_lsp_toml_leaves_pyprojects_value(tmp_path: Path) -> None:
    """Ensure that a key dropped from a later workspace file leaves the value an earlier
    one set, and that a cross-field check (an unknown encoding) drops only its key."""
    root = workspace(
        tmp_path,
        {
            "pyproject.toml": pyproject('tokenizer = "cl100k_base"'),
            "ctx-lsp.toml": 'tokenizer = "o300k"\nartifacts_budget = 999\n',
        },
    )
    loaded = load(root)
    assert loaded.config.tokenizer == "cl100k_base" and loaded.config.artifacts_budget == 999
    assert any(w.startswith("ctx-lsp.toml: tokenizer: unknown encoding 'o300k'") for w in loaded.warnings)


@pytest.mark.parametrize("toml", ["[tool]\nctx-lsp = 5\n", '[project]\nname = "x"\n[tool.ctx-lsp]\nindex = 3\n'])
def test_a_workspace_table_of_the_wrong_shape_is_a_warning(tmp_path: Path, toml: str) -> None:
    """Ensure that a ctx-lsp table that is not a table, or holds a scalar where a table
    belongs, is a warning and the defaults apply."""
    loaded = load(workspace(tmp_path, {"pyproject.toml": toml}))
    assert loaded.config == Config() and loaded.warnings


def test_one_bad_setting_is_dropped_not_every_setting() -> None:
    """Ensure that `without_key` removes a setting by its key path, in any spelling the
    editor uses, leaving every other setting in place."""
    options = {"index": {"maxFileBytes": "big", "ignore": ["build/**"]}, "agents": {"planner": {"budget": 4000}}}
    assert without_key(options, "index.max_file_bytes") == {
        "index": {"ignore": ["build/**"]},
        "agents": {"planner": {"budget": 4000}},
    }
    assert options["index"]["maxFileBytes"] == "big"  # the caller's dict is left alone
    assert without_key(options, "index") == {"agents": {"planner": {"budget": 4000}}}
    assert without_key({"index": 3}, "index.ignore") == {}  # the table itself was the bad value
    assert without_key(options, "docs.folders") is None  # not there: nothing to drop


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"index": 5}, "index"),
        ({"agents": {"planner": 5}}, "agents.planner"),
        (
            {"context_window_types": {"balanced": {"contributors": {"retrieval": 0.3}}}},
            "context_window_types.balanced.contributors.retrieval",
        ),
    ],
)
def test_scalar_instead_of_a_table_names_the_key_path(overrides, key: str) -> None:
    """Ensure that a scalar given for a table is refused naming exactly that key."""
    assert error_of(None, overrides).key == key


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"agents": {"planner": {"tier": 4}}}, "agents.planner.tier"),
        ({"agents": {"planner": {"budget": 0}}}, "agents.planner.budget"),
        ({"agents": {"scribe": {"docs_cap": -1}}}, "agents.scribe.docs_cap"),
        ({"index": {"max_file_bytes": 0}}, "index.max_file_bytes"),
        ({"index": {"workers": -1}}, "index.workers"),
        ({"weights": {"retrieval": 11}}, "weights.retrieval"),
        ({"model_limits": {"gpt-4o": 0}}, "model_limits.gpt-4o"),
        ({"artifacts_budget": 0}, "artifacts_budget"),
        ({"tokenizer": "gpt2-ish"}, "tokenizer"),
        ({"default_context_window_type": "roomy"}, "default_context_window_type"),
        (
            {"context_window_types": {"balanced": {"output_reserve_pct": 1.0}}},
            "context_window_types.balanced.output_reserve_pct",
        ),
        ({"context_window_types": {"balanced": {"max_tier": 0}}}, "context_window_types.balanced.max_tier"),
        (
            {"context_window_types": {"balanced": {"contributors": {"retrieval": {"min_pct": 0.5}}}}},
            "context_window_types.balanced.contributors.retrieval",
        ),
    ],
)
def test_out_of_range_values_are_errors_naming_the_key(overrides, key: str) -> None:
    """Ensure that well-typed but impossible values are refused naming the key."""
    assert error_of(None, overrides).key == key


# ---------------------------------------------------------------- agents


def test_partial_agent_entry_keeps_the_rest_of_its_defaults(tmp_path: Path) -> None:
    """Ensure that setting one field of a known agent keeps its other DESIGN values."""
    root = workspace(tmp_path, {"pyproject.toml": pyproject("[tool.ctx-lsp.agents.planner]\nbudget = 9000")})
    planner = load(root).config.agents["planner"]
    assert (planner.tier, planner.budget, planner.docs_cap) == (1, 9000, 2500)


def test_new_agent_starts_from_the_default_agent(tmp_path: Path) -> None:
    """Ensure that an agent named only in config is completed from the `default` agent,
    including a configured default, and that the default is not changed by it."""
    root = workspace(tmp_path, {"ctx-lsp.toml": "[agents.default]\ndocs_cap = 1800\n[agents.scribe]\nbudget = 1234\n"})
    config = load(root).config
    scribe = config.agents["scribe"]
    assert (scribe.tier, scribe.budget, scribe.docs_cap) == (2, 1234, 1800)
    assert config.agents["default"].budget == 4000
    assert config.agent("scribe") is scribe and config.agent("nobody") is config.agents["default"]


def test_agent_fields_merge_across_sources(tmp_path: Path) -> None:
    """Ensure that an agent built up over several sources keeps what each one set."""
    root = workspace(
        tmp_path,
        {
            "pyproject.toml": pyproject("[tool.ctx-lsp.agents.scribe]\ntier = 1"),
            "ctx-lsp.toml": "[agents.scribe]\nbudget = 2000\n",
        },
    )
    scribe = load(root, {"agents": {"scribe": {"docsCap": 700}}}).config.agents["scribe"]
    assert (scribe.tier, scribe.budget, scribe.docs_cap) == (1, 2000, 700)


# ---------------------------------------------------------------- context window types


def test_partial_contributor_policy_keeps_its_other_fields() -> None:
    """Ensure that changing one field of one contributor's policy leaves its other fields and
    the other contributors as they were."""
    default = Config().context_window_types["balanced"]
    policies = {"retrieval": {"target_pct": 0.25}, "library_docs": {"active": False}}
    config = load(None, {"context_window_types": {"balanced": {"contributors": policies}}}).config
    changed = config.context_window_types["balanced"]
    retrieval, expected = changed.contributors["retrieval"], default.contributors["retrieval"]
    assert retrieval.target_pct == 0.25
    assert (retrieval.min_pct, retrieval.max_pct, retrieval.priority) == (
        expected.min_pct,
        expected.max_pct,
        expected.priority,
    )
    assert changed.contributors["library_docs"].active is False
    others = {n: p for n, p in changed.contributors.items() if n not in ("retrieval", "library_docs")}
    assert others == {n: p for n, p in default.contributors.items() if n not in ("retrieval", "library_docs")}


def test_new_window_type_starts_from_balanced_and_may_become_the_default() -> None:
    """Ensure that a window type named only in config copies `balanced`, takes its own keys,
    and can be made the default, leaving balanced itself unchanged."""
    config = load(
        None,
        {
            "contextWindowTypes": {
                "lean": {
                    "maxTier": 1,
                    "adjustments": ["no_query_to_codebase_map"],
                    "contributors": {"codebase_map": {"active": False}},
                }
            },
            "defaultContextWindowType": "lean",
        },
    ).config
    lean, balanced = config.context_window_types["lean"], config.context_window_types["balanced"]
    assert config.default_context_window_type == "lean"
    assert lean.max_tier == 1 and lean.adjustments == ["no_query_to_codebase_map"]
    assert lean.contributors["codebase_map"].active is False
    assert lean.contributors["retrieval"] == balanced.contributors["retrieval"]
    assert lean.output_reserve_pct == balanced.output_reserve_pct
    assert balanced.contributors["codebase_map"].active is True and balanced.max_tier == 3


def test_unknown_contributor_in_a_policy_is_refused() -> None:
    """Ensure that a policy for a contributor that does not exist is an error naming it and
    listing the real ones."""
    err = error_of(None, {"context_window_types": {"balanced": {"contributors": {"retreival": {"target_pct": 0.1}}}}})
    assert err.key == "context_window_types.balanced.contributors.retreival"
    assert "working_files" in str(err) and "library_docs" in str(err)


def test_unknown_adjustment_rule_is_refused() -> None:
    """Ensure that an adjustment rule that does not exist is an error naming the rule and the key."""
    err = error_of(None, {"contextWindowTypes": {"balanced": {"adjustments": ["shrink_everything"]}}})
    assert err.key == "context_window_types.balanced.adjustments"
    assert "shrink_everything" in str(err) and ADJUSTMENT_RULES[0] in str(err)


def test_unknown_contributor_in_the_condensation_order_is_refused() -> None:
    """Ensure that a condensation order naming a contributor that does not exist is refused."""
    err = error_of(None, {"context_window_types": {"balanced": {"condensation_order": ["codebase_map", "retreival"]}}})
    assert err.key.startswith("context_window_types.balanced.condensation_order")
    assert "retreival" in str(err)


def test_weight_for_an_unknown_contributor_is_refused() -> None:
    """Ensure that a weight for a contributor that does not exist is refused naming the key."""
    err = error_of(None, {"weights": {"retreival": 0.3}})
    assert err.key == "weights.retreival"


# ---------------------------------------------------------------- workspace files may not point outside


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('[docs.folders]\nevil = ["/etc"]\n', "docs.folders"),
        ('[docs.folders]\nevil = ["../../outside"]\n', "docs.folders"),
        ('[python]\ninterpreter = "/bin/sh"\n', "python.interpreter"),
        ('[docs.folders]\nevil = ["~/.ssh"]\n', "docs.folders"),
        ('[docs.folders]\nevil = ["docs", "linked"]\n', "docs.folders"),
        ('[python]\ninterpreter = "linked/python"\n', "python.interpreter"),
        ('[tool.ctx-lsp.docs.folders]\nevil = ["/etc"]\n', "docs.folders"),
    ],
    ids=[
        "docs-folder-absolute",
        "docs-folder-dotdot",
        "interpreter-absolute",
        "docs-folder-home",
        "docs-folder-link-out",
        "interpreter-under-a-link-out",
        "pyproject",
    ],
)
def test_workspace_config_cannot_point_outside_the_workspace(tmp_path: Path, toml: str, key: str) -> None:
    """Ensure that a path outside the workspace in a workspace config file is refused: either
    an error naming the key, or a warning naming it and the path dropped. A link inside the
    workspace that leads out counts as outside."""
    name = "pyproject.toml" if toml.startswith("[tool.") else "ctx-lsp.toml"
    root = workspace(tmp_path, {name: toml, "docs/guide.md": "# Guide\n"})
    (tmp_path / "outside").mkdir()
    (root / "linked").symlink_to(tmp_path / "outside")
    try:
        loaded = load(root)
    except ConfigError as err:
        assert err.key.startswith(key)
        return
    assert any(w.startswith(key) and "outside the workspace" in w for w in loaded.warnings), loaded.warnings
    config = loaded.config
    assert config.python.interpreter == ""
    assert all(folder == "docs" for folders in config.docs.folders.values() for folder in folders)


def test_paths_inside_the_workspace_are_kept(tmp_path: Path) -> None:
    """Ensure that workspace config naming folders and an interpreter inside the workspace
    (also through a link that stays inside) is taken as given, with no warning."""
    toml = '[docs.folders]\nmine = ["docs", "alias"]\n\n[python]\ninterpreter = ".venv/bin/python"\n'
    root = workspace(tmp_path, {"ctx-lsp.toml": toml, "docs/guide.md": "# Guide\n"})
    (root / "alias").symlink_to(root / "docs")
    loaded = load(root)
    assert loaded.warnings == ()
    assert loaded.config.docs.folders == {"mine": ["docs", "alias"]}
    assert loaded.config.python.interpreter == ".venv/bin/python"


def test_the_users_own_settings_may_point_outside(tmp_path: Path) -> None:
    """Ensure that the editor's settings (initializationOptions) are trusted where the
    workspace's files are not: folders and an interpreter outside are kept, and their
    folders are the ones library docs may read outside the workspace."""
    root = workspace(tmp_path, {"ctx-lsp.toml": '[docs.folders]\nevil = ["/etc"]\n'})
    overrides = {"docs": {"folders": {"mine": ["../shared-docs"]}}, "python": {"interpreter": "/usr/bin/python3"}}
    loaded = load(root, overrides)
    assert loaded.config.docs.folders == {"evil": [], "mine": ["../shared-docs"]}
    assert loaded.config.python.interpreter == "/usr/bin/python3"
    assert loaded.trusted_folders == (str(root / "../shared-docs"),)
    assert [w.split(":")[0] for w in loaded.warnings] == ["docs.folders.evil"]


def test_a_workspace_cannot_opt_secrets_back_in(tmp_path: Path) -> None:
    """Ensure that index.include_secrets from a workspace's config file is refused with a
    warning naming the key, and taken from the user's own settings."""
    root = workspace(tmp_path, {"pyproject.toml": pyproject('[tool.ctx-lsp.index]\ninclude_secrets = [".env"]')})
    loaded = load(root)
    assert loaded.config.index.include_secrets == []
    assert any(w.startswith("index.include_secrets") for w in loaded.warnings)
    loaded = load(root, {"index": {"includeSecrets": [".env.example"]}})
    assert loaded.config.index.include_secrets == [".env.example"]


@pytest.mark.parametrize("kind", ["link-out", "fifo"])
def test_a_config_file_that_is_a_link_out_or_a_fifo_is_not_read(tmp_path: Path, kind: str) -> None:
    """Ensure that a workspace config file is read through the gate: one that is a link out
    of the workspace or a FIFO (which would block the read) is refused with a warning."""
    root = workspace(tmp_path, {"a.py": ""})
    outside = tmp_path / "outside.toml"
    outside.write_text("artifacts_budget = 1234\n")
    for name in ("pyproject.toml", "ctx-lsp.toml"):
        if kind == "fifo":
            os.mkfifo(root / name)
        else:
            (root / name).symlink_to(outside)
    loaded = load(root)
    assert loaded.config.artifacts_budget == 4000
    assert [w.split(" ")[0] for w in loaded.warnings] == ["pyproject.toml", "ctx-lsp.toml"], loaded.warnings
