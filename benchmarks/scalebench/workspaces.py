"""What the runner needs to know of a workspace: its code per language, its queries, the file it edits.

A file is code if the ctx-lsp language layer claims it (`ctx_lsp.code.languages.language_for`,
the table the index itself uses), so a TypeScript, Go or Rust workspace is described the
same way as Django: files and bytes per language, largest first.

- a generated workspace (`.bench-workspace.json` stamp): the stamp's queries and edit target;
- Django (a `django/__init__.py` at the root): hand-written tasks (as in `bundle_bench.py`);
- anything else: tasks naming definitions of its files in any language, read from the
  language layer's own outline of a seeded sample (per-language regexes would be a second
  parser of ten syntaxes to keep in step with the one the index uses; the outline names
  exactly what ctx-lsp can find).

The edit target of a non-generated workspace is an ordinary file (not a test, migration,
`__init__` or `index` barrel) of its main language — the one with the most bytes among
those the didChange rows can append a definition to — whose size is nearest 8 KB, the kind
of file a developer has open.

ctx-lsp is imported where used, not with this module: `scale.py --ctx-lsp-root DIR` puts
DIR on the path first, so the runner reads the same language table as the tree it measures.
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scalebench.generate import STAMP

if TYPE_CHECKING:
    from ctx_lsp.code.languages import LanguageSpec

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
KERNEL_QUERIES = (
    "copy_process duplicates the mm of the parent on fork",
    "scheduler picks the next task from a runqueue",
    "ext4 journal commit of a transaction",
    "tcp retransmit timer after a lost segment",
    "page fault handler allocates an anonymous page",
    "slab allocator frees an object back to its cache",
    "cgroup attaches a task to a new cgroup",
    "futex wait and wake on a user address",
    "path lookup follows a symlink in the vfs",
    "rcu grace period runs the callbacks",
    "queue_work on a workqueue of a given cpu",
    "kmalloc gfp flags in atomic context",
    "signal delivery to a stopped process",
    "ioctl of a character device driver",
    "netfilter hook registration",
    "block layer merges a bio into a request",
    "oom killer chooses a victim task",
    "hrtimer expiry on the timer base",
    "pci probe of a network driver",
    "epoll wait returns ready file descriptors",
)
KERNEL_EDIT_TARGET = "kernel/fork.c"
KERNEL_SYMBOL = "copy_process"
WARMUP_QUERIES = ("project layout overview", "configuration settings loading")
SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".ctx-lsp", ".venv", "venv", "build", "dist"}
EDIT_TARGET_BYTES = 8000
BARREL_STEMS = frozenset({"__init__", "index"})
"""Files that mostly re-export (`__init__.py`, `index.ts`): not what a developer edits."""
NOT_ORDINARY_DIRS = frozenset({"tests", "test", "migrations", "build", "docs"})

APPENDED_DEFINITIONS = {
    "python": "\n\ndef {name}(value):\n    return value\n",
    "typescript": "\n\nexport function {name}(value: number): number {{\n  return value;\n}}\n",
    "javascript": "\n\nexport function {name}(value) {{\n  return value;\n}}\n",
    "go": "\n\nfunc {name}(value int) int {{\n\treturn value\n}}\n",
    "rust": "\n\npub fn {name}(value: u32) -> u32 {{\n    value\n}}\n",
    "c": "\n\nint {name}(int value) {{\n    return value;\n}}\n",
    "cpp": "\n\nint {name}(int value) {{\n    return value;\n}}\n",
    "ruby": "\n\ndef {name}(value)\n  value\nend\n",
}
"""What the didChange rows append to the edit target, per language (keyed by the language
layer's names): a top-level definition the outline picks up, so a bundle can show it.
Java and C# have none: a method outside a class does not parse."""

DERIVED_NAME = re.compile(r"[A-Za-z]\w{3,}")
"""A definition name worth a query: four characters or more (not `id`, `run`)."""
GENERIC_NAMES = frozenset({"constructor", "toString", "toJSON", "String", "equals", "hashCode", "main", "init"})
"""Names every other file of some language defines: a task naming one names nothing."""
LOWER_WORD = re.compile(r"\b[a-z]{5,}\b")
"""A whole lowercase word (not the tail of `DataSource`)."""
KEYWORDS = frozenset(
    [
        "return",
        "import",
        "class",
        "while",
        "yield",
        "async",
        "await",
        "const",
        "export",
        "extends",
        "implements",
        "interface",
        "public",
        "private",
        "protected",
        "static",
        "readonly",
        "string",
        "number",
        "boolean",
        "false",
        "super",
        "throw",
        "throws",
        "typeof",
        "undefined",
        "function",
        "default",
        "package",
        "struct",
        "switch",
        "break",
        "continue",
    ]
)
"""Words a file's text is full of in some language, that no task would use: the
fallback for files whose outline has no documentation."""


@dataclass(frozen=True, slots=True)
class LanguageShare:
    """One language's part of a workspace: its files (in walk order: folders and names
    sorted, a folder's files before its subfolders') and their bytes."""

    name: str
    files: tuple[Path, ...]
    bytes: int


@dataclass
class WorkspaceInfo:
    root: Path
    kind: str  # "generated" | "django" | "other"
    label: str
    queries: list[str]
    edit_target: Path
    languages: tuple[LanguageShare, ...]
    """Largest first (by bytes)."""
    symbol: str = ""
    """A definition `ctx/symbol` is asked for (the edit target's first, unless hand-picked)."""

    @property
    def code_files(self) -> list[Path]:
        return sorted(p for share in self.languages for p in share.files)

    @property
    def main_language(self) -> str:
        """The language of the edit target (the main one, see the module docstring)."""
        from ctx_lsp.code.languages import language_for

        spec = language_for(str(self.edit_target))
        return spec.name if spec is not None else ""

    def files_of(self, language: str) -> tuple[Path, ...]:
        return next((share.files for share in self.languages if share.name == language), ())

    @property
    def suffixes(self) -> list[str]:
        """The last suffix of every code file (`.py`, `.ts`), for the naive scan, which
        must not import ctx-lsp: these are what the language layer claimed here."""
        return sorted({p.suffix.lower() for p in self.code_files if p.suffix})

    def summary(self) -> str:
        """`2,823 python (18.3 MB), 112 javascript (1.3 MB)`."""
        return ", ".join(f"{len(s.files):,} {s.name} ({s.bytes / 1e6:.1f} MB)" for s in self.languages)

    def appended_definition(self, name: str) -> str:
        """The text a didChange appends to the edit target: a definition called `name`."""
        return APPENDED_DEFINITIONS[self.main_language].format(name=name)


def code_files(root: Path) -> dict[str, list[Path]]:
    """Every file under `root` the language layer claims, by language (skipping
    dot-directories and caches; in walk order). Ambiguous extensions (`.h`) are decided by the
    file's folder, as the index does before it has read the file."""
    from ctx_lsp.code.languages import language_for

    out: dict[str, list[Path]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            spec = language_for(path)
            if spec is not None:
                out.setdefault(spec.name, []).append(Path(path))
    return out


def shares(files: dict[str, list[Path]]) -> tuple[LanguageShare, ...]:
    """Files and bytes per language, largest first."""
    out = []
    for name, paths in files.items():
        size = 0
        for path in paths:
            try:
                size += path.stat().st_size
            except OSError:
                continue
        out.append(LanguageShare(name, tuple(paths), size))
    return tuple(sorted(out, key=lambda s: (-s.bytes, s.name)))


def _ordinary(path: Path, root: Path, spec: LanguageSpec | None = None) -> bool:
    """Not a test, migration, re-export barrel or generated build file."""
    from ctx_lsp.code.languages import language_for

    spec = spec or language_for(str(path))
    parts = path.relative_to(root).as_posix().split("/")
    test_dirs = NOT_ORDINARY_DIRS | set(spec.test_dirs if spec else ())
    return not (
        path.name.split(".", 1)[0] in BARREL_STEMS
        or path.name.startswith("test")
        or (spec is not None and path.name.endswith(spec.test_suffixes))
        or any(p in test_dirs for p in parts[:-1])
    )


def _edit_target(root: Path, languages: tuple[LanguageShare, ...]) -> Path:
    editable = [s for s in languages if s.name in APPENDED_DEFINITIONS] or list(languages)
    if not editable:
        raise ValueError(f"{root}: no file of any language ctx-lsp reads")
    files = editable[0].files
    sized = [(abs(p.stat().st_size - EDIT_TARGET_BYTES), p.as_posix(), p) for p in files if _ordinary(p, root)]
    if not sized:
        sized = [(0, p.as_posix(), p) for p in files]
    return min(sized)[2]


def definitions(path: Path) -> tuple[list[str], list[str]]:
    """Names the file defines and words of its documentation, from the language layer's
    outline (what the index sees); words of its text if it documents nothing."""
    from ctx_lsp.code.languages import language_for, outline_in

    try:
        data = path.read_bytes()
    except OSError:
        return [], []
    spec = language_for(str(path), data)
    if spec is None:
        return [], []
    outline = outline_in(spec, data)
    names = [s.name for s in outline.symbols if DERIVED_NAME.fullmatch(s.name) and s.name not in GENERIC_NAMES]
    words = LOWER_WORD.findall(" ".join([outline.docstring, *(s.doc for s in outline.symbols)]))
    if len(words) < 2:
        text = data.decode("utf-8", errors="replace")
        words = [w for w in LOWER_WORD.findall(text) if w not in KEYWORDS]
    return names, words


def _derived_queries(root: Path, files: list[Path], n: int, seed: int) -> list[str]:
    """Tasks that name a definition and a few words from its file (for an unknown
    workspace), from a seeded sample of its ordinary code files in every language."""
    rng = random.Random(seed)
    pool = [p for p in files if _ordinary(p, root)] or files
    queries: list[str] = []
    for path in rng.sample(pool, min(len(pool), n * 4)):
        names, words = definitions(path)
        if not names or len(words) < 2:
            continue
        queries.append(f"fix {rng.choice(names)} when the {rng.choice(words)} {rng.choice(words)} is missing")
        if len(queries) == n:
            break
    return queries or ["overview of the main module"]


def describe(root: Path, seed: int = 0) -> WorkspaceInfo:
    root = root.resolve()
    languages = shares(code_files(root))
    stamp_path = root / STAMP
    if stamp_path.is_file():
        stamp = json.loads(stamp_path.read_text())
        label = f"generated {stamp['files']:,}-file workspace (seed {stamp['seed']})"
        return WorkspaceInfo(root, "generated", label, list(stamp["queries"]), root / stamp["edit_target"], languages)
    from scalebench.kernel import is_kernel

    if is_kernel(root):
        label = f"Linux kernel ({root.name})"
        target = root / KERNEL_EDIT_TARGET
        return WorkspaceInfo(root, "kernel", label, list(KERNEL_QUERIES), target, languages, KERNEL_SYMBOL)
    target = _edit_target(root, languages)
    if (root / "django" / "__init__.py").is_file():
        return WorkspaceInfo(root, "django", f"Django sdist ({root.name})", list(DJANGO_QUERIES), target, languages)
    files = sorted(p for share in languages for p in share.files)
    queries = _derived_queries(root, files, len(DJANGO_QUERIES), seed)
    return WorkspaceInfo(root, "other", root.name, queries, target, languages)


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
