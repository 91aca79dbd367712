"""What the runner needs to know of a workspace: its queries, the file it edits, its files.

- a generated workspace (`.bench-workspace.json` stamp): the stamp's queries and edit target;
- Django (a `django/__init__.py` at the root): hand-written tasks (as in `bundle_bench.py`);
- anything else: tasks made from identifiers its `.py` files define (seeded, deterministic).

The edit target of a non-generated workspace is the ordinary module (not a test, migration
or `__init__`) whose size is nearest 8 KB, the kind of file a developer has open.
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

from scalebench.generate import STAMP

DJANGO_QUERIES = (
    "fix the queryset filter on related fields",
    "migration autodetector renames a model",
    "template engine cache loader invalidation",
    "form field validation error messages",
    "csrf middleware token rotation",
    "admin changelist pagination",
    "url resolver reverse with namespaces",
    "database backend connection timezone",
    "model field deconstruct default",
    "management command output",
    "session backend cache expiry",
    "serializer json datetime",
    "static files storage manifest",
    "authentication backend permission check",
    "signals post_save dispatch",
    "test client follow redirects",
    "QuerySet.bulk_create ignores conflicts on postgres",
    "RequestFactory builds a multipart POST with files",
    "paginator orphans on the last page",
    "password reset token expires after timeout",
)
WARMUP_QUERIES = ("project layout overview", "configuration settings loading")
SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".ctx-lsp", ".venv", "venv", "build", "dist"}
EDIT_TARGET_BYTES = 8000


@dataclass
class WorkspaceInfo:
    root: Path
    kind: str  # "generated" | "django" | "other"
    label: str
    queries: list[str]
    edit_target: Path
    py_files: list[Path]


def py_files(root: Path) -> list[Path]:
    """Every `.py` file under `root`, skipping dot-directories and caches (sorted)."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        out += [Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py")]
    return out


def _ordinary(path: Path, root: Path) -> bool:
    rel = path.relative_to(root).as_posix()
    parts = rel.split("/")
    return not (
        path.name == "__init__.py"
        or path.name.startswith("test")
        or any(p in ("tests", "test", "migrations", "build", "docs") for p in parts[:-1])
    )


def _edit_target(root: Path, files: list[Path]) -> Path:
    sized = [(abs(p.stat().st_size - EDIT_TARGET_BYTES), p.as_posix(), p) for p in files if _ordinary(p, root)]
    if not sized:
        sized = [(0, p.as_posix(), p) for p in files]
    return min(sized)[2]


def _derived_queries(root: Path, files: list[Path], n: int, seed: int) -> list[str]:
    """Tasks that name a definition and a few words from its file (for an unknown workspace)."""
    rng = random.Random(seed)
    pool = [p for p in files if _ordinary(p, root)] or files
    queries: list[str] = []
    for path in rng.sample(pool, min(len(pool), n * 4)):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        names = re.findall(r"^\s*(?:def|class)\s+([A-Za-z]\w{3,})", text, re.M)
        words = [w for w in re.findall(r"[a-z]{5,}", text) if w not in ("return", "import", "class", "while")]
        if not names or len(words) < 2:
            continue
        queries.append(f"fix {rng.choice(names)} when the {rng.choice(words)} {rng.choice(words)} is missing")
        if len(queries) == n:
            break
    return queries or ["overview of the main module"]


def describe(root: Path, seed: int = 0) -> WorkspaceInfo:
    root = root.resolve()
    files = py_files(root)
    stamp_path = root / STAMP
    if stamp_path.is_file():
        stamp = json.loads(stamp_path.read_text())
        label = f"generated {stamp['files']:,}-file workspace (seed {stamp['seed']})"
        return WorkspaceInfo(root, "generated", label, list(stamp["queries"]), root / stamp["edit_target"], files)
    if (root / "django" / "__init__.py").is_file():
        return WorkspaceInfo(
            root, "django", f"Django sdist ({root.name})", list(DJANGO_QUERIES), _edit_target(root, files), files
        )
    return WorkspaceInfo(
        root,
        "other",
        root.name,
        _derived_queries(root, files, len(DJANGO_QUERIES), seed),
        _edit_target(root, files),
        files,
    )


def listed_files(root: Path) -> list[str]:
    """Workspace files as a git checkout would list them (the root `.gitignore` honoured), for
    Aider, which lists a repository with `git ls-files`."""
    import pathspec

    ignore = root / ".gitignore"
    spec = pathspec.PathSpec.from_lines("gitwildmatch", ignore.read_text().splitlines()) if ignore.is_file() else None
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        keep = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS or d.startswith("."):
                continue
            if spec is not None and spec.match_file(rel_dir + d + "/"):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = rel_dir + name
            if spec is None or not spec.match_file(rel):
                out.append(rel)
    return out
