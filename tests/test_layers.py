"""The architecture as a test: imports inside ctx_lsp only point down (DESIGN: Architecture)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ctx_lsp"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("vocabulary", "errors", "relevance"),
    ("cancel", "allocator", "activity"),
    ("gate",),
    ("tokens",),
    ("config",),
    ("code",),
    ("index",),
    ("docs", "history"),
    ("contributors",),
    ("assembly",),
    ("params", "wire"),
    ("first_pass", "status"),
    ("engine",),
    ("server", "mcp", "daemon"),
    ("cli",),
    ("__main__",),
)
"""Lowest first. A module may import anything in a lower layer and within its own package;
never a higher layer, nor a sibling in its own layer (unless listed in SAME_LAYER)."""

SAME_LAYER: set[tuple[str, str]] = set()
"""Pairs within one layer allowed to import (first imports second); none so far: siblings
in a layer (docs and history, params and wire) stay independent of each other."""


def layer_of(top: str) -> int:
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"ctx_lsp.{top} is in no layer: add it to LAYERS in tests/test_layers.py")


def imports_of(path: Path) -> list[str]:
    """Top-level ctx_lsp names a module imports (ctx_lsp.index.graph → 'index')."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n.split(".")[1] for n in names if n.startswith("ctx_lsp.")]
    return found


def test_imports_point_down() -> None:
    """Ensure that no module imports from a layer above its own."""
    upward = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        top = rel.parts[0].removesuffix(".py")
        if top == "__init__":
            continue
        for target in imports_of(path):
            if target == top:
                continue
            if layer_of(target) > layer_of(top) or (
                layer_of(target) == layer_of(top) and (top, target) not in SAME_LAYER
            ):
                upward.append(f"{rel} imports ctx_lsp.{target}")
    assert not upward, "imports pointing up:\n" + "\n".join(sorted(upward))


def test_the_core_never_imports_pygls() -> None:
    """Ensure that only the server adapter imports pygls or lsprotocol."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "server":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [module or ""]
            if any(n.split(".")[0] in ("pygls", "lsprotocol") for n in names):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert not offenders, offenders
