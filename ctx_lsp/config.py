"""Configuration: a tree of dataclasses with a default on every field, and one loader.

Sources are merged in DESIGN's order, later wins: built-in defaults → `[tool.ctx-lsp]` in
`pyproject.toml` → `ctx-lsp.toml` / `.ctx-lsp.toml` at the workspace root →
`initializationOptions` / `workspace/didChangeConfiguration` → per-request params.

Unknown keys are warnings (a typo must not stop the server), wrong types are errors that
name the key path, because a silently ignored `max_file_bytes = "1MB"` would be worse than
a refusal. Keys may be written snake_case or camelCase (editors send camelCase).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ctx_lsp.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MAX_FILE_BYTES = 1_000_000
"""Files above 1 MB are listed but not parsed: they are almost always generated or data."""

CONFIG_FILE_NAMES = ("ctx-lsp.toml", ".ctx-lsp.toml")


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


@dataclass
class Config:
    """The whole configuration. Later issues add agents, contributors and docs here."""

    tokenizer: str = "o200k_base"
    """tiktoken encoding used for every count: `o200k_base` or `cl100k_base`."""
    index: IndexConfig = field(default_factory=IndexConfig)


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A config plus the warnings found while reading it (shown in status, never fatal)."""

    config: Config
    warnings: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


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
        raise ConfigError(prefix or "config", f"expected a table, got {data!r}")
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
        else:
            setattr(target, key, _coerce(value, tp, path))
    return warnings


def validate(config: Config) -> None:
    """Cross-field checks the type system cannot express."""
    if config.index.max_file_bytes <= 0:
        raise ConfigError("index.max_file_bytes", "must be a positive number of bytes")
    if config.index.workers < 0:
        raise ConfigError("index.workers", "must be 0 (automatic) or a positive count")
    from ctx_lsp.tokens import ENCODINGS as KNOWN_ENCODINGS

    if config.tokenizer not in KNOWN_ENCODINGS:
        raise ConfigError(
            "tokenizer", f"unknown encoding {config.tokenizer!r}; use one of {', '.join(KNOWN_ENCODINGS)}"
        )


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(str(path.name), f"not valid TOML: {err}") from err


def load(root: Path | None, overrides: Mapping[str, Any] | None = None) -> LoadedConfig:
    """Build the effective config for a workspace root plus editor/client overrides."""
    config = Config()
    warnings: list[str] = []
    sources: list[str] = ["defaults"]
    if root is not None:
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            try:
                table = _read_toml(pyproject).get("tool", {}).get("ctx-lsp")
            except (ConfigError, OSError) as err:
                warnings.append(f"pyproject.toml not read: {err}")
                table = None
            if table is not None:
                warnings += merge_into(config, table)
                sources.append("pyproject.toml [tool.ctx-lsp]")
        for name in CONFIG_FILE_NAMES:
            candidate = root / name
            if candidate.is_file():
                warnings += merge_into(config, _read_toml(candidate))
                sources.append(name)
    if overrides:
        warnings += merge_into(config, overrides)
        sources.append("client")
    validate(config)
    return LoadedConfig(config, tuple(warnings), tuple(sources))
