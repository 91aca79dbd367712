"""Where one library's docs come from, all offline and without importing anything.

A library's sections are read from: the package description in its METADATA (usually
the README), `llms.txt` / `llms-full.txt` files (in a distribution's directories or the
workspace root), docs folders named in config, and the `.py`/`.pyi` files that belong to
the distribution (RECORD, else its import names on the import paths). Those files are
parsed with tree-sitter (`python_api`), never imported: importing runs user code with
side effects, and it would load it into the server's own interpreter.

Which libraries exist and where they are installed is `environment.py`'s; this module
starts from one catalog entry and stays within per-library caps, so a cold lookup of a
big library stays bounded.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctx_lsp.docs.environment import (
    MAX_DOC_FILE_BYTES,
    PYTHON_SUFFIXES,
    LibraryEntry,
    metadata_file,
    mtime_stamp,
    normalize_name,
    parse_headers,
    read_text_capped,
)
from ctx_lsp.docs.python_api import module_drafts, module_name, parse_module
from ctx_lsp.docs.sections import Draft, Kind, document_drafts, document_format
from ctx_lsp.errors import CtxError
from ctx_lsp.gate import read_file
from ctx_lsp.index.secret_files import credential_kind, secret_pattern

__all__ = [
    "add_extra_docs",
    "library_drafts",
]

MAX_FILES_PER_LIBRARY = 400
"""Python files parsed per library, shallowest first (public modules tend to sit near the
top): enough for pygls or requests whole, a bounded slice of numpy or botocore."""

MAX_FILE_BYTES = 1_000_000
"""A bigger `.py` file is generated data, not documentation (lsprotocol's 477 KB
`types.py`, which is documentation, still fits)."""

MAX_LIBRARY_BYTES = 8_000_000
"""Source bytes parsed per library: bounds a cold lookup to about a second."""

MAX_DOC_FILES = 400
"""Markdown/rst/txt files read per docs folder."""

LLMS_FILES = ("llms-full.txt", "llms.txt")
"""In preference order: where a directory has both, llms-full.txt is the content and
llms.txt mostly links to it, so only the first found is read."""

DOC_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt")

SKIPPED_DIRS = frozenset({"tests", "test", "_vendor", "vendor", "vendored", "__pycache__"})
"""Directories whose files are not the library's API: its tests, and other libraries
copied into it (`pip/_vendor`), which would answer topics with someone else's docs."""

SKIPPED_DOC_DIRS = SKIPPED_DIRS | {"_build", "node_modules"}
"""Also skipped in docs folders: Sphinx output and JavaScript dependencies."""

SKIPPED_FILES = frozenset({"conftest.py", "setup.py", "__main__.py"})

Roots = Sequence[Path] | None
"""Where docs files named by config may resolve to (None: anywhere). Workspace docs are
read through the gate with these, so a docs folder swapped for a link out of the
workspace after the config was checked serves nothing."""

_EDITABLE_MAPPING = re.compile(r"^MAPPING\s*(?::[^=\n]*)?=\s*(\{.*?\})\s*$", re.M | re.S)


# --- docs attached by config ------------------------------------------------------------------


def add_extra_docs(
    entries: Mapping[str, LibraryEntry], extra_docs: Mapping[str, Sequence[str]]
) -> dict[str, LibraryEntry]:
    """The catalog with docs folders and workspace `llms.txt` files attached; a name only
    extra docs provide becomes a library of its own (version "")."""
    merged = dict(entries)
    for library, docs in extra_docs.items():
        key = normalize_name(library)
        docs = tuple(docs)
        base = merged.get(key)
        if base is None:
            base = LibraryEntry(library, key, "", "", (library.replace("-", "_"),), "", "")
        files = [str(f) for doc in docs for f in _doc_folder_files(Path(doc))]
        stamp = f"{base.stamp}+{mtime_stamp(*docs, *files)}"
        merged[key] = LibraryEntry(
            base.name,
            key,
            base.version,
            base.summary,
            base.import_names,
            base.dist_dir,
            base.site_dir,
            base.content_type,
            base.extra_docs + docs,
            stamp,
        )
    return merged


# --- the files of one library -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A Python file of a library and the directory its module names are relative to."""

    path: Path
    root: Path


def _skipped(parts: Sequence[str]) -> bool:
    return any(p in SKIPPED_DIRS or p.startswith(".") for p in parts[:-1]) or parts[-1] in SKIPPED_FILES


def _record_files(entry: LibraryEntry) -> list[SourceFile]:
    """The distribution's own Python files as RECORD lists them: exact even for
    namespace packages whose directory several distributions share."""
    try:
        record = read_text_capped(Path(entry.dist_dir) / "RECORD", 20_000_000)
    except OSError:
        return []
    site = Path(entry.site_dir)
    files = []
    for line in record.splitlines():
        rel = line.rsplit(",", 2)[0] if line.count(",") >= 2 else line.strip()
        if not rel.endswith(PYTHON_SUFFIXES) or rel.startswith(("..", "/")):
            continue
        parts = rel.split("/")
        if parts[0].startswith("__editable__") or parts[0].endswith(".dist-info") or _skipped(parts):
            continue
        files.append(SourceFile(site / rel, site))
    return files


def _editable_roots(entry: LibraryEntry) -> dict[str, Path]:
    """Import name → source directory from a setuptools editable finder's MAPPING."""
    roots: dict[str, Path] = {}
    site = Path(entry.site_dir)
    try:
        finders = [p for p in site.iterdir() if p.name.startswith("__editable__") and p.suffix == ".py"]
    except OSError:
        return roots
    wanted = set(entry.import_names)
    for finder in finders:
        try:
            match = _EDITABLE_MAPPING.search(read_text_capped(finder))
            mapping = ast.literal_eval(match.group(1)) if match else {}
        except (OSError, ValueError, SyntaxError):
            continue
        if isinstance(mapping, dict):
            roots.update({k: Path(v) for k, v in mapping.items() if k in wanted and isinstance(v, str)})
    return roots


def _walk_python(root: Path, top: Path) -> list[SourceFile]:
    if top.is_file():
        return [SourceFile(top, root)]
    files = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(PYTHON_SUFFIXES) and name not in SKIPPED_FILES:
                files.append(SourceFile(Path(dirpath) / name, root))
    return files


def _import_name_files(entry: LibraryEntry, paths: Sequence[Path]) -> list[SourceFile]:
    """Files of the library's import names found on the import paths: for editable
    installs (RECORD lists only a `.pth` or a finder), egg-info installs and docs-only
    libraries whose name matches a package."""
    editable = _editable_roots(entry) if entry.site_dir else {}
    files: list[SourceFile] = []
    for name in entry.import_names:
        if name in editable:
            target = editable[name]
            files += _walk_python(target.parent, target if target.exists() else target.with_suffix(".py"))
            continue
        rel = name.replace(".", "/")
        for root in paths:
            for candidate in (root / rel, root / f"{rel}.py", root / f"{rel}.pyi"):
                if candidate.exists():
                    files += _walk_python(root, candidate)
            if any(f.root == root for f in files):
                break
    return files


def python_files(entry: LibraryEntry, paths: Sequence[Path]) -> list[SourceFile]:
    """The library's Python files, shallowest first, within the per-library caps."""
    files = _record_files(entry) if entry.dist_dir else []
    if not files:
        files = _import_name_files(entry, paths)
    unique = {str(f.path): f for f in files}
    ordered = sorted(unique.values(), key=lambda f: (len(f.path.relative_to(f.root).parts), str(f.path)))
    kept: list[SourceFile] = []
    total = 0
    for f in ordered:
        try:
            size = f.path.stat().st_size
        except OSError:
            continue
        if size > MAX_FILE_BYTES or total + size > MAX_LIBRARY_BYTES:
            continue
        kept.append(f)
        total += size
        if len(kept) >= MAX_FILES_PER_LIBRARY:
            break
    return kept


def _display(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def python_drafts(files: Sequence[SourceFile]) -> list[Draft]:
    """Sections of every file; where a `.pyi` stub and its `.py` both define a symbol, the
    longer section is kept (the stub has the types, the source the docstrings)."""
    by_title: dict[tuple[str, str], Draft] = {}
    for f in files:
        try:
            source = read_file(f.path, None, MAX_FILE_BYTES).data
        except (OSError, CtxError):
            continue
        rel = f.path.relative_to(f.root)
        for draft in module_drafts(module_name(rel.parts), parse_module(source), str(f.path), rel.as_posix()):
            key = (draft.title, draft.kind)
            kept = by_title.get(key)
            if kept is None or len(draft.text) > len(kept.text):
                by_title[key] = draft
    return list(by_title.values())


def description_drafts(entry: LibraryEntry) -> list[Draft]:
    """The package description (its README, as uploaded to PyPI) split by heading."""
    if not entry.dist_dir:
        return []
    metadata = metadata_file(Path(entry.dist_dir))
    if metadata is None:
        return []
    try:
        text = read_text_capped(metadata)
    except OSError:
        return []
    headers = parse_headers(text)
    lines = text.split("\n")
    body = "\n".join(lines[headers.header_lines :])
    first_line = headers.header_lines + 1
    if not body.strip():  # Metadata 1.x/2.0: the description is a header
        raw = headers.values.get("description", "")
        body = re.sub(r"\n(?: {7}\||\s{1,8})", "\n", raw)
        first_line = 1
    if not body.strip() or body.strip() == "UNKNOWN":
        return []
    display = _display(metadata, Path(entry.site_dir)) if entry.site_dir else metadata.name
    return document_drafts(
        body,
        label=f"{entry.name} README",
        path=str(metadata),
        display=display,
        kind=Kind.README,
        fmt=document_format("", entry.content_type),
        first_line=first_line,
    )


def _llms_in(directory: Path) -> Path | None:
    for name in LLMS_FILES:
        path = directory / name
        if path.is_file():
            return path
    return None


def doc_file_drafts(path: Path, label: str, display: str, kind: str, roots: Roots = None) -> list[Draft]:
    """One docs page's sections; nothing for a page that is refused, unreadable, over the
    size limit, or holds a private key."""
    try:
        data = read_file(path, roots, MAX_DOC_FILE_BYTES).data
    except (OSError, CtxError):
        return []
    if credential_kind(data) is not None:
        return []
    text = data.decode("utf-8", "replace")
    return document_drafts(
        text, label=label, path=str(path), display=display, kind=kind, fmt=document_format(path.name)
    )


def _doc_folder_files(folder: Path) -> list[Path]:
    if folder.is_file():
        return [folder]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DOC_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.lower().endswith(DOC_SUFFIXES) and secret_pattern(name) is None:
                found.append(Path(dirpath) / name)
                if len(found) >= MAX_DOC_FILES:
                    return found
    return found


def extra_doc_drafts(entry: LibraryEntry, workspace_root: Path | None, roots: Roots = None) -> list[Draft]:
    """Docs folders and workspace `llms.txt` files configured for the library, each file
    read only if it resolves inside `roots`."""
    drafts: list[Draft] = []
    for doc in entry.extra_docs:
        folder = Path(doc)
        for path in _doc_folder_files(folder):
            display = _display(path, workspace_root) if workspace_root else path.as_posix()
            kind = Kind.LLMS if path.name in LLMS_FILES else Kind.GUIDE
            label = f"{entry.name} {path.name}" if kind == Kind.LLMS else display
            drafts += doc_file_drafts(path, label, display, kind, roots)
    return drafts


def package_llms_drafts(entry: LibraryEntry, files: Sequence[SourceFile]) -> list[Draft]:
    """`llms.txt` shipped in the dist-info directory or a top-level package directory."""
    directories: list[Path] = [Path(entry.dist_dir)] if entry.dist_dir and Path(entry.dist_dir).is_dir() else []
    tops = {f.root / f.path.relative_to(f.root).parts[0] for f in files if len(f.path.relative_to(f.root).parts) > 1}
    directories += sorted(tops)
    drafts: list[Draft] = []
    for directory in directories:
        path = _llms_in(directory)
        if path is not None:
            root = Path(entry.site_dir) if entry.site_dir else directory.parent
            drafts += doc_file_drafts(path, f"{entry.name} {path.name}", _display(path, root), Kind.LLMS)
    return drafts


def library_drafts(
    entry: LibraryEntry, paths: Sequence[Path], workspace_root: Path | None, roots: Roots = None
) -> list[Draft]:
    """All sections of one library, in overview order: description, llms.txt, docs
    folders (within `roots`), then the API of its modules (shallowest first)."""
    files = python_files(entry, paths)
    return [
        *description_drafts(entry),
        *package_llms_drafts(entry, files),
        *extra_doc_drafts(entry, workspace_root, roots),
        *python_drafts(files),
    ]


def workspace_llms_files(workspace_root: Path | None) -> list[Path]:
    if workspace_root is None:
        return []
    return [workspace_root / name for name in LLMS_FILES if (workspace_root / name).is_file()]


def llms_title(path: Path, roots: Roots = None) -> str:
    """The `# Title` an llms.txt starts with (the format's one required element)."""
    try:
        text = read_file(path, roots, MAX_DOC_FILE_BYTES).data.decode("utf-8", "replace")
    except (OSError, CtxError):
        return ""
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip() if line.startswith("# ") else ""
    return ""
