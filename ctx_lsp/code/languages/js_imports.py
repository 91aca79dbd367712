"""Where a JavaScript or TypeScript import leads: the files a specifier may name.

Relative specifiers are probed with each script extension and `index.*` (as bundlers and
TypeScript do); bare ones go through the workspace's `tsconfig.json`/`jsconfig.json`
(`paths`, `baseUrl`, relative `extends`) and the repository's own workspace packages
(package.json `workspaces`, pnpm-workspace.yaml). Shared by `javascript.py` and
`typescript.py`; the reference graph matches the keys (`paths.py`).
"""

from __future__ import annotations

import functools
import glob
import json
import os
import posixpath
import re

from ctx_lsp.code.languages.paths import joined, path_key
from ctx_lsp.code.outline import Import

__all__ = ["CONFIG_FILES", "SCRIPT_EXTENSIONS", "import_keys", "import_probes", "reload_configs"]

SCRIPT_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
"""What a relative specifier without its extension may name, in the order bundlers try."""


CONFIG_FILES = ("tsconfig.json", "jsconfig.json", "package.json", "pnpm-workspace.yaml")
"""What resolution reads (see `reload_configs`); `extends` targets are not watched."""


def reload_configs() -> None:
    """Forget the configs read: one of `CONFIG_FILES` changed."""
    _path_config.cache_clear()
    _workspace_packages.cache_clear()


def import_keys(rel_path: str) -> tuple[str, ...]:
    return (path_key(rel_path),)


def import_probes(rel_path: str, imp: Import, root: str) -> list[tuple[str, ...]]:
    """A relative specifier (`./store`, `../utils/index.js`) as the files it may name:
    itself, with each script extension (`./x.js` also names `x.ts`, as TypeScript's ESM
    resolution does), and its folder's `index.*`. A bare specifier goes through the
    workspace's `tsconfig.json`/`jsconfig.json` (`paths`, then `baseUrl`); others are
    packages outside the workspace (package workspaces are not resolved yet)."""
    if imp.module.startswith("."):
        base = joined(rel_path, imp.module)
        return [] if base is None else [_file_candidates(base)]
    groups = _workspace_package_probes(imp.module, root)
    config = _path_config(root)
    if config is None:
        return groups
    base_url, patterns = config
    specifier = imp.module
    for pattern, targets in patterns:
        star = _matched_star(pattern, specifier)
        if star is None:
            continue
        for target in targets:
            path = posixpath.normpath(target.replace("*", star, 1))
            if not path.startswith(".."):
                groups.append(_file_candidates(path))
    if base_url is not None:
        path = posixpath.normpath(posixpath.join(base_url, specifier))
        if not path.startswith(".."):
            groups.append(_file_candidates(path))
    return groups


def _workspace_package_probes(specifier: str, root: str) -> list[tuple[str, ...]]:
    """`@acme/ui` or `@acme/ui/button` as a package of the repository's workspaces: its
    entry point's source (`source`, `types`, `module`, `main` with `dist/`→`src/`), then
    `src/index.*` and `index.*`; a subpath through the package's `exports` map, else in
    its folder or its `src/`."""
    packages = _workspace_packages(root)
    if not packages:
        return []
    parts = specifier.split("/")
    count = 2 if specifier.startswith("@") else 1
    name, subpath = "/".join(parts[:count]), "/".join(parts[count:])
    found = packages.get(name)
    if found is None:
        return []
    folder, entries, subpaths = found
    join = posixpath.join
    if subpath:
        groups = []
        for pattern, targets in subpaths:
            star = _matched_star(pattern, subpath)
            if star is not None:
                groups += [_file_candidates(join(folder, t.replace("*", star, 1))) for t in targets]
        return [*groups, _file_candidates(join(folder, subpath)), _file_candidates(join(folder, "src", subpath))]
    groups = [_file_candidates(join(folder, entry)) for entry in entries]
    groups += [_file_candidates(join(folder, "src/index")), _file_candidates(join(folder, "index"))]
    return groups


_ENTRY_FIELDS = ("source", "types", "typings", "module", "main")
_SCRIPT_SUFFIX = re.compile(r"\.(?:d\.ts|[mc]?[jt]sx?)$")


def _entries(manifest: dict) -> tuple[str, ...]:
    """A package's entry points as source paths without their extension."""
    found = [manifest[f] for f in _ENTRY_FIELDS if isinstance(manifest.get(f), str)]
    exports = manifest.get("exports")
    found.extend(_targets(exports.get(".") if isinstance(exports, dict) else exports))
    return _sources(found)


def _subpath_exports(manifest: dict) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(subpath pattern without `./`, its targets as sources) of an `exports` map."""
    exports = manifest.get("exports")
    if not isinstance(exports, dict):
        return ()
    return tuple(
        (key[2:], _sources(_targets(value)))
        for key, value in exports.items()
        if isinstance(key, str) and key.startswith("./") and key != "./package.json"
    )


def _targets(value: object) -> list[str]:
    """The paths an `exports` value names: itself, or its conditions' (one level deep)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        found = []
        for inner in value.values():
            if isinstance(inner, str):
                found.append(inner)
            elif isinstance(inner, dict):
                found.extend(v for v in inner.values() if isinstance(v, str))
        return found
    return []


def _sources(found: list[str]) -> tuple[str, ...]:
    """Paths without their script extension, built ones (`dist/x`) also as `src/x`."""
    out = []
    for entry in found:
        path = posixpath.normpath(_SCRIPT_SUFFIX.sub("", entry))
        if path.startswith(".."):
            continue
        out.append(path)
        if path.startswith(("dist/", "lib/", "build/", "out/")):
            out.append("src/" + path.split("/", 1)[1])
    return tuple(dict.fromkeys(out))


def _workspace_globs(root: str) -> list[str]:
    """The package folders' patterns: package.json `workspaces`, pnpm-workspace.yaml."""
    manifest = _read_jsonc(os.path.join(root, "package.json")) or {}
    declared = manifest.get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    patterns = [p for p in declared if isinstance(p, str)] if isinstance(declared, list) else []
    try:
        with open(os.path.join(root, "pnpm-workspace.yaml"), encoding="utf-8", errors="replace") as f:
            for line in f:
                item = line.strip()
                if item.startswith("- "):
                    patterns.append(item[2:].strip().strip("'\""))
    except OSError:
        pass
    return [p for p in patterns if not p.startswith("!")]


MAX_WORKSPACE_PACKAGES = 500
_Package = tuple[str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]


@functools.lru_cache(maxsize=32)
def _workspace_packages(root: str) -> dict[str, _Package]:
    """Package name → (its folder in the workspace folder, entry points, subpath exports)
    for the repository's own packages. Read once per process, like the tsconfig."""
    packages: dict[str, _Package] = {}
    for pattern in _workspace_globs(root):
        for manifest_path in sorted(glob.glob(os.path.join(root, pattern, "package.json"), recursive=True)):
            if "node_modules" in manifest_path or len(packages) >= MAX_WORKSPACE_PACKAGES:
                continue
            manifest = _read_jsonc(manifest_path)
            name = manifest.get("name") if manifest else None
            if isinstance(name, str) and manifest is not None:
                folder = os.path.relpath(os.path.dirname(manifest_path), root).replace(os.sep, "/")
                packages.setdefault(name, (folder, _entries(manifest), _subpath_exports(manifest)))
    return packages


def _matched_star(pattern: str, specifier: str) -> str | None:
    """What `*` stands for when `specifier` matches a `paths` pattern ("" for an exact one)."""
    if "*" not in pattern:
        return "" if pattern == specifier else None
    prefix, _, suffix = pattern.partition("*")
    if specifier.startswith(prefix) and specifier.endswith(suffix) and len(specifier) >= len(prefix) + len(suffix):
        return specifier[len(prefix) : len(specifier) - len(suffix)]
    return None


_JSONC_NOISE = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
MAX_EXTENDS = 5


def _read_jsonc(path: str) -> dict | None:
    """A tsconfig file: JSON with comments and trailing commas."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
        data = json.loads(_TRAILING_COMMA.sub(r"\1", _JSONC_NOISE.sub(lambda m: m.group(1) or "", text)))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@functools.lru_cache(maxsize=32)
def _path_config(root: str) -> tuple[str | None, tuple[tuple[str, tuple[str, ...]], ...]] | None:
    """(baseUrl, `paths` with targets) of the workspace folder's tsconfig/jsconfig, relative
    to the folder, following relative `extends` (the child's options win). Read once per
    process: a changed config is seen by the next process."""
    for name in CONFIG_NAMES:
        config_path = os.path.join(root, name)
        if os.path.isfile(config_path):
            break
    else:
        return None
    chain: list[tuple[str, dict]] = []
    current: str | None = config_path
    while current is not None and len(chain) < MAX_EXTENDS:
        data = _read_jsonc(current)
        if data is None:
            break
        chain.append((current, data.get("compilerOptions") or {}))
        extends = data.get("extends")
        if isinstance(extends, list):
            extends = extends[0] if extends else None
        if isinstance(extends, str) and extends.startswith("."):
            current = os.path.normpath(os.path.join(os.path.dirname(current), extends))
            if not current.endswith(".json"):
                current += ".json"
        else:
            current = None
    base_url: str | None = None
    paths: dict = {}
    paths_base: str | None = None
    for path, compiler in reversed(chain):  # the base first, so the child's options win
        folder = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
        if isinstance(compiler.get("baseUrl"), str):
            base_url = posixpath.normpath(posixpath.join(folder, compiler["baseUrl"]))
        if isinstance(compiler.get("paths"), dict):
            paths = compiler["paths"]
            paths_base = folder
    prefix = base_url if base_url is not None else (paths_base or ".")
    patterns = tuple(
        (pattern, tuple(posixpath.join(prefix, t) for t in targets if isinstance(t, str)))
        for pattern, targets in paths.items()
        if isinstance(pattern, str) and isinstance(targets, list)
    )
    if base_url is None and not patterns:
        return None
    return base_url, patterns


def _file_candidates(base: str) -> tuple[str, ...]:
    """Keys of the files a specifier's path may name (see `import_probes`)."""
    stem = base
    for extension in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(extension):
            stem = base[: -len(extension)]
            break
    candidates = [base, *(stem + e for e in SCRIPT_EXTENSIONS), *(f"{base}/index{e}" for e in SCRIPT_EXTENSIONS)]
    return tuple(path_key(c) for c in dict.fromkeys(candidates) if c)
