"""The libraries a workspace declares, for `ctx.prewarmDocs`.

Read from `pyproject.toml` (PEP 621 `[project]` dependencies and optional dependencies,
PEP 735 `[dependency-groups]`, Poetry's dependency tables) and `requirements*.txt` files
(plus the files they include with `-r`). Only names are kept: which version is
installed is what the environment says, not what a specifier allows.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from ctx_lsp.docs.environment import normalize_name
from ctx_lsp.errors import CtxError
from ctx_lsp.gate import read_text

__all__ = ["declared_dependencies", "project_name", "requirement_name"]

log = logging.getLogger(__name__)

REQUIREMENTS_GLOBS = ("requirements*.txt", "requirements/*.txt", "requirements*.in")
MAX_INCLUDE_DEPTH = 5
MAX_WORKSPACE_FILE_BYTES = 1_000_000
"""A pyproject.toml or requirements file larger than this is not one."""
"""`-r` chains deeper than this are cut: they are cycles more often than real layering."""

_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_EGG = re.compile(r"#egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_POETRY_NON_PACKAGES = frozenset({"python"})


def requirement_name(line: str) -> str | None:
    """The distribution name of a PEP 508 requirement or a requirements-file line, without
    extras, versions, markers or URLs; None for options and lines naming no package."""
    line = line.split(" #", 1)[0].strip()
    if not line or line.startswith("#"):
        return None
    if line.startswith("-"):
        egg = _EGG.search(line)
        return egg.group(1) if egg else None
    if "://" in line.split("@", 1)[0] or line.startswith((".", "/")):
        egg = _EGG.search(line)
        return egg.group(1) if egg else None
    match = _NAME.match(line)
    return match.group(1) if match else None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield item  # PEP 735 `{include-group = ...}` tables name groups, not packages


def _pyproject_requirements(data: Mapping[str, Any]) -> Iterator[str]:
    project = data.get("project", {})
    if isinstance(project, dict):
        yield from _strings(project.get("dependencies"))
        optional = project.get("optional-dependencies", {})
        if isinstance(optional, dict):
            for group in optional.values():
                yield from _strings(group)
    groups = data.get("dependency-groups", {})
    if isinstance(groups, dict):
        for group in groups.values():
            yield from _strings(group)
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        group_tables = poetry.get("group", {})
        if isinstance(group_tables, dict):
            tables += [g.get("dependencies") for g in group_tables.values() if isinstance(g, dict)]
        for table in tables:
            if isinstance(table, dict):
                yield from (name for name in table if name.lower() not in _POETRY_NON_PACKAGES)


def read_pyproject(root: Path) -> Mapping[str, Any]:
    """The workspace's pyproject.toml, read through the gate (it may be a link out of the
    workspace or a FIFO); {} if absent, refused or not TOML."""
    path = root / "pyproject.toml"
    try:
        return tomllib.loads(read_text(path, [root], MAX_WORKSPACE_FILE_BYTES))
    except FileNotFoundError:
        return {}
    except (OSError, CtxError, tomllib.TOMLDecodeError) as err:
        log.warning("%s: not readable as TOML (%s); its dependencies are ignored", path, err)
        return {}


def project_name(root: Path | None) -> str:
    """The workspace's own distribution name (PEP 621 or Poetry), or ""."""
    if root is None:
        return ""
    data = read_pyproject(root)
    project = data.get("project", {})
    if isinstance(project, dict) and isinstance(project.get("name"), str):
        return project["name"]
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    name = poetry.get("name") if isinstance(poetry, dict) else None
    return name if isinstance(name, str) else ""


def _requirements_lines(path: Path, depth: int, seen: set[Path], root: Path) -> Iterator[str]:
    """Lines of a requirements file and the files it includes (`-r`), each read through
    the gate: an include may not lead out of the workspace (`-r ~/.ssh/id_rsa` would put
    the key's lines into the declared names)."""
    resolved = path.resolve()
    if resolved in seen or depth > MAX_INCLUDE_DEPTH:
        return
    seen.add(resolved)
    try:
        text = read_text(path, [root], MAX_WORKSPACE_FILE_BYTES)
    except (OSError, CtxError):
        return
    for raw in text.splitlines():
        line = raw.strip()
        include = re.match(r"^(?:-r|--requirement)\s*=?\s*(\S+)", line)
        if include:
            yield from _requirements_lines(path.parent / include.group(1), depth + 1, seen, root)
            continue
        yield line


def _requirements_files(root: Path) -> list[Path]:
    found: dict[Path, None] = {}
    for pattern in REQUIREMENTS_GLOBS:
        for path in sorted(root.glob(pattern)):
            if path.is_file():
                found[path] = None
    return list(found)


def _unique(names: Iterable[str | None], exclude: str) -> list[str]:
    out: dict[str, str] = {}
    for name in names:
        if name:
            key = normalize_name(name)
            if key != exclude and key not in out:
                out[key] = name
    return list(out.values())


def declared_dependencies(root: Path | None) -> list[str]:
    """Names of the distributions the workspace declares, first spelling kept, in file
    order, without the workspace's own project."""
    if root is None:
        return []
    names = [requirement_name(r) for r in _pyproject_requirements(read_pyproject(root))]
    seen: set[Path] = set()
    for path in _requirements_files(root):
        names += [requirement_name(line) for line in _requirements_lines(path, 0, seen, root)]
    return _unique(names, normalize_name(project_name(root)))
