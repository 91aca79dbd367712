"""Configuration: a tree of dataclasses with a default on every field, and one loader.

Sources are merged in DESIGN's order, later wins: built-in defaults → `[tool.ctx-lsp]` in
`pyproject.toml` → `ctx-lsp.toml` / `.ctx-lsp.toml` at the workspace root →
`initializationOptions` / `workspace/didChangeConfiguration` → per-request params.

Unknown keys are warnings (a typo must not stop the server), wrong types are errors that
name the key path, because a silently ignored `max_file_bytes = "1MB"` would be worse than
a refusal. Keys may be written snake_case or camelCase (editors send camelCase).

Trust: a workspace's own config files come with the repository, which may be a stranger's
clone; the client settings are the user's own. So a workspace file may not point the
server outside the workspace (`docs.folders`, `python.interpreter`: refused with a
warning naming the key) nor opt secret files back in (`index.include_secrets`), while the
user's settings may do both. A cloned repository must never be able to make the server
read `~/.ssh`.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx_lsp.errors import ConfigError, CtxError
from ctx_lsp.gate import inside, read_file
from ctx_lsp.vocabulary import AdjustmentRule, ContributorName

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MAX_FILE_BYTES = 1_000_000
"""Files above 1 MB are listed but not parsed: they are almost always generated or data."""

CONFIG_FILE_NAMES = ("ctx-lsp.toml", ".ctx-lsp.toml")
MAX_CONFIG_BYTES = 1_000_000


@dataclass
class IndexConfig:
    """What the workspace index reads."""

    ignore: list[str] = field(default_factory=list)
    """Extra gitignore-style globs, on top of `.gitignore` files and the built-in ignores."""
    max_file_bytes: int = MAX_FILE_BYTES
    """Larger files are listed in status as `too_large`, never parsed or shown."""
    respect_gitignore: bool = True
    """Honour `.gitignore` files (nested ones too)."""
    watch: bool = True
    """Watch the folders on disk and update the index as files change."""
    workers: int = 0
    """Processes for a cold index; 0 picks min(cores, 4) for large workspaces, 1 disables."""
    cache: bool = True
    """Keep the index in `.ctx-lsp/index.sqlite3` so a restart only re-parses what changed."""
    include_secrets: list[str] = field(default_factory=list)
    """Gitignore-style globs of files that look like secrets but are not (`.env.example`,
    a `secrets.py` of code), indexed like any file. Only from the user's own settings:
    a workspace's config file cannot opt secrets in (see `index/secret_files.py`)."""


@dataclass
class AgentConfig:
    """What an agent (or workflow step) gets by default."""

    tier: int = 2
    """Richest tier its sections start at (1 outline, 2 focused, 3 full)."""
    budget: int = 4000
    """Token budget when a request gives neither `budget` nor `model`."""
    docs_cap: int = 2500
    """Most tokens of library docs it may receive per request (Context7-style cap)."""


def _agents() -> dict[str, AgentConfig]:
    """DESIGN's agent table. `default` is also the template for agents named in config."""
    table = {
        "default": (2, 4000, 2500),
        "planner": (1, 4000, 2500),
        "analyst": (1, 4000, 2500),
        "reviewer": (1, 4000, 3000),
        "architect": (2, 6000, 4000),
        "designer": (2, 6000, 4000),
        "implementer": (2, 6000, 3000),
        "tester": (2, 4000, 2500),
        "debugger": (3, 8000, 3000),
    }
    return {name: AgentConfig(*values) for name, values in table.items()}


CONTRIBUTORS: tuple[str, ...] = tuple(n.value for n in ContributorName)
"""Every contributor, in the order the snapshot lists them."""


def _weights() -> dict[str, float]:
    """DESIGN's contributor weights (rank = weight × salience); the rest have no weight."""
    return {"working_files": 0.40, "retrieval": 0.25, "codebase_map": 0.20, "project_docs": 0.15}


@dataclass
class ContributorPolicy:
    """One contributor's share of the budget in a context window type (fractions of it)."""

    target_pct: float = 0.0
    min_pct: float = 0.0
    max_pct: float = 1.0
    priority: int = 5
    """Lower goes first when allocating and when receiving surplus."""
    active: bool = True


@dataclass
class WindowTypeConfig:
    """A named budget policy (DESIGN: Context window types)."""

    contributors: dict[str, ContributorPolicy] = field(default_factory=dict)
    condensation_order: list[str] = field(default_factory=list)
    """Who is condensed first (tier 3 → 2 → 1 → drop) while a bundle is over budget."""
    output_reserve_pct: float = 0.10
    """Share of a model's window kept free for its answer (model budgets only)."""
    max_tier: int = 3
    """No section richer than this (token-efficient keeps to outlines and focused views)."""
    adjustments: list[str] = field(default_factory=lambda: list(ADJUSTMENT_RULES))
    """Dynamic adjustment rules in force (see assembly/adjustments.py)."""


ADJUSTMENT_RULES: tuple[str, ...] = tuple(r.value for r in AdjustmentRule)
"""Every rule, enabled by default in this order."""


def _policy_table(rows: dict[str, tuple[float, float, float, int]]) -> dict[str, ContributorPolicy]:
    return {name: ContributorPolicy(t, lo, hi, prio) for name, (t, lo, hi, prio) in rows.items()}


LEAST_VALUABLE_FIRST = [
    "codebase_map",
    "project_docs",
    "library_docs",
    "artifacts",
    "conversation_history",
    "retrieval",
    "working_files",
]


def _window_types() -> dict[str, WindowTypeConfig]:
    """The four default policies. Targets sum to 1; inactive or empty shares are redistributed."""
    # The tables are read by column: keep them aligned.
    # fmt: off
    #                         target  min   max  priority
    balanced = _policy_table({
        "working_files":        (0.28, 0.10, 0.45, 1),
        "retrieval":            (0.30, 0.05, 0.85, 2),
        "codebase_map":         (0.17, 0.00, 0.85, 5),
        "project_docs":         (0.05, 0.00, 0.10, 4),
        "conversation_history": (0.12, 0.00, 0.40, 3),
        "artifacts":            (0.04, 0.00, 0.25, 6),
        "library_docs":         (0.04, 0.00, 0.30, 7),
    })
    knowledge = _policy_table({
        "working_files":        (0.22, 0.05, 0.50, 2),
        "retrieval":            (0.28, 0.10, 0.50, 1),
        "codebase_map":         (0.12, 0.00, 0.30, 5),
        "project_docs":         (0.10, 0.00, 0.20, 3),
        "conversation_history": (0.06, 0.00, 0.25, 6),
        "artifacts":            (0.07, 0.00, 0.25, 7),
        "library_docs":         (0.15, 0.00, 0.40, 4),
    })
    conversation = _policy_table({
        "working_files":        (0.22, 0.05, 0.45, 2),
        "retrieval":            (0.15, 0.00, 0.35, 3),
        "codebase_map":         (0.06, 0.00, 0.20, 6),
        "project_docs":         (0.05, 0.00, 0.15, 5),
        "conversation_history": (0.42, 0.15, 0.70, 1),
        "artifacts":            (0.05, 0.00, 0.20, 4),
        "library_docs":         (0.05, 0.00, 0.20, 7),
    })
    efficient = _policy_table({
        "working_files":        (0.38, 0.10, 0.60, 1),
        "retrieval":            (0.30, 0.05, 0.50, 2),
        "codebase_map":         (0.12, 0.00, 0.25, 4),
        "project_docs":         (0.05, 0.00, 0.10, 5),
        "conversation_history": (0.10, 0.00, 0.30, 3),
        "artifacts":            (0.03, 0.00, 0.15, 6),
        "library_docs":         (0.02, 0.00, 0.15, 7),
    })
    # fmt: on
    return {
        "balanced": WindowTypeConfig(balanced, list(LEAST_VALUABLE_FIRST), 0.10, 3),
        "knowledge-heavy": WindowTypeConfig(knowledge, list(LEAST_VALUABLE_FIRST), 0.10, 3),
        "conversation-first": WindowTypeConfig(conversation, list(LEAST_VALUABLE_FIRST), 0.10, 3),
        "token-efficient": WindowTypeConfig(efficient, list(LEAST_VALUABLE_FIRST), 0.15, 2),
    }


@dataclass
class DocsConfig:
    """Library docs (Context7-style, offline)."""

    require_topic: bool = True
    """Refuse a docs request without a topic (whole-library dumps waste budgets)."""
    allow_full_library: list[str] = field(default_factory=list)
    """Libraries that may be asked for without a topic."""
    folders: dict[str, list[str]] = field(default_factory=dict)
    """library → docs folders (relative to the workspace) to read besides the environment.
    From a workspace's config file they must lie inside the workspace; the user's own
    settings may name any folder."""


@dataclass
class PythonConfig:
    interpreter: str = ""
    """Interpreter whose environment library docs come from; "" finds .venv, VIRTUAL_ENV, then ours.
    From a workspace's config file it must lie inside the workspace."""


@dataclass
class Config:
    """The whole configuration; every field has a default (DESIGN: Configuration)."""

    tokenizer: str = "o200k_base"
    """tiktoken encoding used for every count: `o200k_base` or `cl100k_base`."""
    index: IndexConfig = field(default_factory=IndexConfig)
    agents: dict[str, AgentConfig] = field(default_factory=_agents)
    weights: dict[str, float] = field(default_factory=_weights)
    context_window_types: dict[str, WindowTypeConfig] = field(default_factory=_window_types)
    default_context_window_type: str = "balanced"
    model_limits: dict[str, int] = field(default_factory=dict)
    """model name → context window, to LOWER a built-in limit (never raise it)."""
    artifacts_budget: int = 4000
    docs: DocsConfig = field(default_factory=DocsConfig)
    python: PythonConfig = field(default_factory=PythonConfig)
    history: bool = True
    """Read the repository's own history (the workspace root's `.git`, with a library that
    reads the object store: nothing the repository configures is run) for retrieval's
    co-change, recency and commit-message signals. `false` bundles as if there were no `.git`.
    Read in the background after indexing: bundles rank without it until it is in. On by
    default: with the units engine it lowered no language's function or line recall beyond
    one instance (benchmarks/eval/README.md, "History signals")."""

    def agent(self, name: str) -> AgentConfig:
        return self.agents.get(name) or self.agents["default"]


DICT_TEMPLATES = {"agents": "default", "context_window_types": "balanced"}
"""A new entry in these tables starts as a copy of the named one, then takes its keys."""


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A config plus the warnings found while reading it (shown in status, never fatal)."""

    config: Config
    warnings: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    trusted_folders: tuple[str, ...] = ()
    """Docs folders named by the user's own settings (absolute): the only places outside
    the workspace that library docs are read from."""
    trusted_interpreter: bool = False
    """`python.interpreter` was named by the user's own settings, not a workspace's file: it
    may be run even if it lies inside the workspace."""


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).replace("-", "_").lower()


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is list:
        return f"a list of {_type_name(typing.get_args(tp)[0])}"
    if tp is bool:
        return "true or false"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if dataclasses.is_dataclass(tp):
        return "a table"
    return str(tp)


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """Check `value` against the annotation `tp`; return it (converted int→float only)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _coerce(value, args[0], key)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(key, f"expected {_type_name(tp)}, got {value!r}")
        (item_tp,) = typing.get_args(tp)
        return [_coerce(v, item_tp, f"{key}[{i}]") for i, v in enumerate(value)]
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(key, f"expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key, f"expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(key, f"expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(key, f"expected a string, got {value!r}")
        return value
    raise ConfigError(key, f"unsupported config type {tp!r}")  # pragma: no cover


def merge_into(target: Any, data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Overlay `data` onto the dataclass `target` in place; return unknown-key warnings.

    Raises ConfigError naming the key path for a value of the wrong type.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(prefix.rstrip(".") or "config", f"expected a table, got {data!r}")
    warnings: list[str] = []
    hints = typing.get_type_hints(type(target))
    names = {f.name for f in dataclasses.fields(target)}
    for raw_key, value in data.items():
        key = _snake(str(raw_key))
        path = f"{prefix}{raw_key}"
        if key not in names:
            warnings.append(f"unknown config key {path!r} ignored")
            continue
        tp = hints[key]
        if dataclasses.is_dataclass(tp):
            warnings += merge_into(getattr(target, key), value, f"{path}.")
        elif typing.get_origin(tp) is dict:
            warnings += _merge_dict(getattr(target, key), value, tp, f"{path}.", DICT_TEMPLATES.get(key))
        else:
            setattr(target, key, _coerce(value, tp, path))
    return warnings


def _merge_dict(target: dict[str, Any], data: Any, tp: Any, prefix: str, template: str | None) -> list[str]:
    if not isinstance(data, Mapping):
        raise ConfigError(prefix.rstrip("."), f"expected a table, got {data!r}")
    _key_tp, value_tp = typing.get_args(tp)
    warnings: list[str] = []
    for name, value in data.items():
        path = f"{prefix}{name}"
        if isinstance(value_tp, type) and dataclasses.is_dataclass(value_tp):
            if name not in target:
                base = target.get(template) if template else None
                target[name] = copy.deepcopy(base) if base is not None else value_tp()
            warnings += merge_into(target[name], value, f"{path}.")
        elif typing.get_origin(value_tp) is dict:
            warnings += _merge_dict(target.setdefault(name, {}), value, value_tp, f"{path}.", None)
        else:
            target[str(name)] = _coerce(value, value_tp, path)
    return warnings


def validate(config: Config) -> None:
    """Cross-field checks the type system cannot express."""
    if config.index.max_file_bytes <= 0:
        raise ConfigError("index.max_file_bytes", "must be a positive number of bytes")
    if config.index.workers < 0:
        raise ConfigError("index.workers", "must be 0 (automatic) or a positive count")
    from ctx_lsp.tokens import ENCODINGS as KNOWN_ENCODINGS

    for name, agent in config.agents.items():
        if agent.tier not in (1, 2, 3):
            raise ConfigError(f"agents.{name}.tier", f"must be 1, 2 or 3, got {agent.tier}")
        for key in ("budget", "docs_cap"):
            if getattr(agent, key) <= 0:
                raise ConfigError(f"agents.{name}.{key}", "must be a positive token count")
    if "default" not in config.agents:
        raise ConfigError("agents.default", "the default agent cannot be removed")
    for name, weight in config.weights.items():
        if name not in CONTRIBUTORS:
            raise ConfigError(f"weights.{name}", f"unknown contributor; use one of {', '.join(CONTRIBUTORS)}")
        if not 0 <= weight <= 10:
            raise ConfigError(f"weights.{name}", f"must be between 0 and 10, got {weight}")
    for wname, wtype in config.context_window_types.items():
        for cname, policy in wtype.contributors.items():
            key = f"context_window_types.{wname}.contributors.{cname}"
            if cname not in CONTRIBUTORS:
                raise ConfigError(key, f"unknown contributor; use one of {', '.join(CONTRIBUTORS)}")
            if not 0 <= policy.min_pct <= policy.target_pct <= policy.max_pct <= 1:
                raise ConfigError(key, "needs 0 <= min_pct <= target_pct <= max_pct <= 1")
        for cname in wtype.condensation_order:
            if cname not in CONTRIBUTORS:
                raise ConfigError(
                    f"context_window_types.{wname}.condensation_order",
                    f"unknown contributor {cname!r}; use any of {', '.join(CONTRIBUTORS)}",
                )
        if not 0 <= wtype.output_reserve_pct < 1:
            raise ConfigError(f"context_window_types.{wname}.output_reserve_pct", "must be in [0, 1)")
        if wtype.max_tier not in (1, 2, 3):
            raise ConfigError(f"context_window_types.{wname}.max_tier", "must be 1, 2 or 3")
        for rule in wtype.adjustments:
            if rule not in ADJUSTMENT_RULES:
                raise ConfigError(
                    f"context_window_types.{wname}.adjustments",
                    f"unknown rule {rule!r}; use any of {', '.join(ADJUSTMENT_RULES)}",
                )
    if config.default_context_window_type not in config.context_window_types:
        raise ConfigError(
            "default_context_window_type", f"unknown type; use one of {', '.join(config.context_window_types)}"
        )
    for model, limit in config.model_limits.items():
        if limit <= 0:
            raise ConfigError(f"model_limits.{model}", "must be a positive token count")
    if config.artifacts_budget <= 0:
        raise ConfigError("artifacts_budget", "must be a positive token count")
    if config.tokenizer not in KNOWN_ENCODINGS:
        raise ConfigError(
            "tokenizer", f"unknown encoding {config.tokenizer!r}; use one of {', '.join(KNOWN_ENCODINGS)}"
        )


def _read_toml(path: Path, root: Path) -> dict[str, Any]:
    """A workspace config file, read through the gate (it may be a link out of the
    workspace or a FIFO). Raises ConfigError for invalid TOML, CtxError or OSError when
    the file is refused or unreadable."""
    data = read_file(path, [root], MAX_CONFIG_BYTES).data
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(str(path.name), f"not valid TOML: {err}") from err
    except RecursionError as err:  # tomllib recurses per nested array or table: `x = [[[…]]]`
        raise ConfigError(str(path.name), "nested too deeply for the TOML reader") from err


def resolve_path(value: str, root: Path | None) -> Path:
    """A path-valued setting: `~` expanded, relative to the workspace root."""
    path = Path(value).expanduser()
    return root / path if root is not None and not path.is_absolute() else path


def _outside(value: str, root: Path) -> bool:
    try:
        return not inside(os.path.realpath(resolve_path(value, root)), [root])
    except (OSError, ValueError):
        return True


def confine(config: Config, root: Path) -> list[str]:
    """Drop what a workspace's own config files may not set: paths that resolve outside
    the workspace (links followed), and secret opt-ins. Returns a warning per value."""
    warnings: list[str] = []
    why = "a workspace's config may only name paths inside it; set it in your editor's settings to use it"
    for library, folders in list(config.docs.folders.items()):
        kept = []
        for folder in folders:
            if _outside(folder, root):
                warnings.append(f"docs.folders.{library}: {folder!r} is outside the workspace, refused ({why})")
            else:
                kept.append(folder)
        config.docs.folders[library] = kept
    interpreter = config.python.interpreter
    if interpreter and _outside(interpreter, root):
        warnings.append(f"python.interpreter: {interpreter!r} is outside the workspace, refused ({why})")
        config.python.interpreter = ""
    if config.index.include_secrets:
        warnings.append(
            f"index.include_secrets: {config.index.include_secrets!r} refused; only your editor's settings "
            "may opt secret files back in, never a workspace's config"
        )
        config.index.include_secrets = []
    return warnings


def _workspace_table(root: Path, name: str, warnings: list[str]) -> Any:
    """The ctx-lsp table of one workspace config file; None if absent, refused or not
    valid TOML (each a warning: a cloned repository's file never stops the server)."""
    path = root / name
    if not os.path.lexists(path):
        return None
    try:
        data = _read_toml(path, root)
    except ConfigError as err:
        warnings.append(f"{name} not read: {err.args[0].split(': ', 1)[-1]}; fix it or remove it, the defaults apply")
        return None
    except (CtxError, OSError) as err:
        warnings.append(f"{name} not read: {err}")
        return None
    if name != "pyproject.toml":
        return data
    tool = data.get("tool")
    return tool.get("ctx-lsp") if isinstance(tool, Mapping) else None


MAX_DROPPED_SETTINGS = 50
"""Wrong keys dropped one at a time from one source before the whole source is ignored."""


def _normal(key: str) -> str:
    """A key as the config reads it, whatever its spelling (`maxFileBytes`, `max-file-bytes`)."""
    return key.replace("_", "").replace("-", "").lower()


def without_key(options: Mapping[str, Any], path: str) -> dict[str, Any] | None:
    """`options` less the setting at the dotted `path` (matched in any spelling), or None
    if they hold no such key."""
    parts = path.split(".")
    copy: dict[str, Any] = dict(options)
    node: dict[str, Any] = copy
    for i, part in enumerate(parts):
        match = next((k for k in node if _normal(str(k)) == _normal(part)), None)
        if match is None:
            return None
        child = node[match]
        if i == len(parts) - 1 or not isinstance(child, Mapping):
            del node[match]  # the setting, or the table that should have held it
            return copy
        node[match] = dict(child)
        node = node[match]
    return None


def merge_leniently(config: Config, table: Any, source: str) -> tuple[Config, list[str]]:
    """`config` with one workspace source's table laid over it, each wrong key dropped
    with a warning that names the source, the key and the fix, so the others still apply.

    A workspace's config file comes with the repository, maybe a stranger's clone: one bad
    value in it must never switch the tool off (issue 20), just as one bad editor setting
    does not. The result is always valid; `config` is not changed.
    """
    if not isinstance(table, Mapping):
        return config, [f"{source}: expected a table, got {table!r}; ignored"]
    warnings: list[str] = []
    for _ in range(MAX_DROPPED_SETTINGS):
        trial = copy.deepcopy(config)
        try:
            unknown = merge_into(trial, table)
            validate(trial)
        except ConfigError as err:
            lighter = without_key(table, err.key)
            if lighter is None:
                warnings.append(f"{source}: {err}; the whole table is ignored, fix that value")
                return config, warnings
            warnings.append(f"{source}: {err}; that key is ignored and the others apply, fix or remove it")
            table = lighter
            continue
        return trial, [*warnings, *(f"{source}: {w}" for w in unknown)]
    warnings.append(f"{source}: more than {MAX_DROPPED_SETTINGS} wrong keys; the whole table is ignored")
    return config, warnings


def load(root: Path | None, overrides: Mapping[str, Any] | None = None) -> LoadedConfig:
    """Build the effective config for a workspace root plus editor/client overrides."""
    config = Config()
    warnings: list[str] = []
    sources: list[str] = ["defaults"]
    if root is not None:
        for name in ("pyproject.toml", *CONFIG_FILE_NAMES):
            table = _workspace_table(root, name, warnings)
            if table is not None:
                source = "pyproject.toml [tool.ctx-lsp]" if name == "pyproject.toml" else name
                config, found = merge_leniently(config, table, source)
                warnings += found
                sources.append(source)
        warnings += confine(config, root)
    trusted: list[str] = []
    if overrides:
        warnings += merge_into(config, overrides)
        sources.append("client")
        user = Config()
        merge_into(user, overrides)
        trusted = [str(resolve_path(f, root)) for folders in user.docs.folders.values() for f in folders]
        user_interpreter = bool(user.python.interpreter) and user.python.interpreter == config.python.interpreter
    else:
        user_interpreter = False
    validate(config)
    return LoadedConfig(config, tuple(warnings), tuple(sources), tuple(trusted), user_interpreter)
