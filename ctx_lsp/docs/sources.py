"""Where library docs come from, all offline and without importing anything.

The workspace's Python environment is found by asking its interpreter for its import
paths (a subprocess: the workspace's `.venv` is not the server's interpreter). Installed
distributions are then read from their `*.dist-info` / `*.egg-info` directories: the
METADATA headers (name, version, summary), the description (usually the README), and
the file list (RECORD) that says which `.py`/`.pyi` files belong to the distribution.
Those files are parsed with tree-sitter (`python_api`), never imported: importing runs
user code with side effects, and it would load it into the server's own interpreter.

Add to that `llms.txt` / `llms-full.txt` files (in a distribution's directories or the
workspace root) and docs folders named in config.

Distributions are enumerated with our own directory scan rather than
`importlib.metadata.distributions`: we need each one's dist-info directory (for its
stamp and its `llms.txt`), which importlib does not expose publicly, and parsing every
METADATA with the `email` package took 0.45 s for 234 distributions here where reading
the headers ourselves takes a few milliseconds.
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctx_lsp.docs.python_api import module_drafts, module_name, parse_module
from ctx_lsp.docs.sections import Draft, Kind, document_drafts, document_format

__all__ = [
    "LibraryEntry",
    "SitePaths",
    "add_extra_docs",
    "find_interpreter",
    "library_drafts",
    "normalize_name",
    "scan_distributions",
    "site_paths",
]

log = logging.getLogger(__name__)

INTERPRETER_TIMEOUT_S = 5.0
"""Asking an interpreter for its paths takes ~30 ms; a hung or broken one must not stall
the first docs request for long, so after this we use the server's own environment."""

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

MAX_DOC_FILE_BYTES = 2_000_000

LLMS_FILES = ("llms-full.txt", "llms.txt")
"""In preference order: where a directory has both, llms-full.txt is the content and
llms.txt mostly links to it, so only the first found is read."""

DOC_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt")
PYTHON_SUFFIXES = (".py", ".pyi")

SKIPPED_DIRS = frozenset({"tests", "test", "_vendor", "vendor", "vendored", "__pycache__"})
"""Directories whose files are not the library's API: its tests, and other libraries
copied into it (`pip/_vendor`), which would answer topics with someone else's docs."""

SKIPPED_DOC_DIRS = SKIPPED_DIRS | {"_build", "node_modules"}
"""Also skipped in docs folders: Sphinx output and JavaScript dependencies."""

SKIPPED_FILES = frozenset({"conftest.py", "setup.py", "__main__.py"})

_NORMALIZE = re.compile(r"[-_.]+")
_EDITABLE_MAPPING = re.compile(r"^MAPPING\s*(?::[^=\n]*)?=\s*(\{.*?\})\s*$", re.M | re.S)


def normalize_name(name: str) -> str:
    """PEP 503: case-insensitive, and runs of "-", "_", "." are the same character."""
    return _NORMALIZE.sub("-", name).lower().strip("-")


# --- the workspace's interpreter and its paths --------------------------------------------


def find_interpreter(
    workspace_root: Path | None, configured: str | None, environ: Mapping[str, str]
) -> str:
    """The Python whose packages the workspace uses: the configured one (relative to the
    workspace root), else the workspace's `.venv`/`venv`, else `$VIRTUAL_ENV`, else ours."""
    if configured:
        path = Path(configured).expanduser()
        if not path.is_absolute() and workspace_root is not None:
            path = workspace_root / path
        return str(path)
    candidates: list[Path] = []
    if workspace_root is not None:
        candidates += [workspace_root / ".venv", workspace_root / "venv"]
    if environ.get("VIRTUAL_ENV"):
        candidates.append(Path(environ["VIRTUAL_ENV"]))
    for venv in candidates:
        for exe in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
            if exe.is_file():
                return str(exe)
    return sys.executable


_PATHS_SCRIPT = """\
import json, site, sys, sysconfig
std = {sysconfig.get_path('stdlib'), sysconfig.get_path('platstdlib')}
paths = [p for p in site.getsitepackages() + sys.path if p and p not in std]
if sys.prefix == sys.base_prefix:
    paths.append(site.getusersitepackages())
print(json.dumps(paths))
"""
"""Run with `-I` (no PYTHONPATH, no user site, no current directory on the path): the
environment's own paths, with `.pth` entries (editable installs) already applied. The
user site is added back by hand outside a virtual environment, where pip may put
packages; inside one, it is not visible to the interpreter either."""


@dataclass(frozen=True, slots=True)
class SitePaths:
    interpreter: str
    paths: tuple[Path, ...]
    warning: str = ""
    """Why the interpreter could not be asked and the server's own paths are used instead."""


def _existing_dirs(paths: Iterable[str]) -> tuple[Path, ...]:
    seen: dict[str, Path] = {}
    for p in paths:
        if p and p not in seen and os.path.isdir(p):
            seen[p] = Path(p)
    return tuple(seen.values())


def own_site_paths() -> tuple[Path, ...]:
    import site
    import sysconfig

    std = {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
    return _existing_dirs(p for p in [*site.getsitepackages(), *sys.path] if p not in std)


def site_paths(interpreter: str, timeout: float = INTERPRETER_TIMEOUT_S) -> SitePaths:
    """The import paths of `interpreter`, or the server's own (with a warning) if it
    cannot be run: no docs request fails because a venv is broken."""
    try:
        done = subprocess.run(
            [interpreter, "-I", "-c", _PATHS_SCRIPT],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
        paths = json.loads(done.stdout.strip().splitlines()[-1])
        if not isinstance(paths, list):
            raise ValueError("expected a JSON list of paths")
        return SitePaths(interpreter, _existing_dirs(str(p) for p in paths))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as err:
        warning = f"python.interpreter {interpreter!r} could not be asked for its paths ({err}); using ctx-lsp's own environment"
        log.warning(warning)
        return SitePaths(sys.executable, own_site_paths(), warning)


# --- installed distributions ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    """One library docs can be asked about: an installed distribution, or a name that
    only docs folders / an `llms.txt` provide (then `dist_dir` is "")."""

    name: str
    key: str
    """`normalize_name(name)`: the catalog key."""
    version: str
    summary: str
    import_names: tuple[str, ...]
    dist_dir: str
    site_dir: str
    content_type: str = ""
    extra_docs: tuple[str, ...] = ()
    """Docs folders and `llms.txt` files from config or the workspace root."""
    stamp: str = ""
    """Changes when the installed files or the extra docs change (reinstall, new docs
    file), so cached results of the same version are not reused after a rebuild."""


@dataclass(slots=True)
class _Headers:
    values: dict[str, str] = field(default_factory=dict)
    header_lines: int = 0
    """Lines before the description body (headers and the blank line)."""


def _read_text(path: Path, limit: int = MAX_DOC_FILE_BYTES) -> str:
    with open(path, "rb") as f:
        return f.read(limit).decode("utf-8", "replace")


def _metadata_file(dist_dir: Path) -> Path | None:
    if dist_dir.is_file():  # `foo.egg-info` as a single PKG-INFO file
        return dist_dir
    for name in ("METADATA", "PKG-INFO"):
        path = dist_dir / name
        if path.is_file():
            return path
    return None


def parse_headers(text: str) -> _Headers:
    """RFC 822 style headers up to the first blank line; the first occurrence of a
    header wins, continuation lines are joined."""
    headers = _Headers()
    last = ""
    lines = text.split("\n")
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        if not line:
            headers.header_lines = i + 1
            return headers
        if line[0] in " \t" and last:
            headers.values[last] += "\n" + line
            continue
        name, sep, value = line.partition(":")
        if not sep:
            continue
        last = name.strip().lower()
        if last in headers.values:
            last = ""  # repeated header (Classifier, Requires-Dist): keep the first, skip
            continue
        headers.values[last] = value.strip()
    headers.header_lines = len(lines)
    return headers


def _name_from_dirname(dirname: str) -> tuple[str, str]:
    stem = dirname.rsplit(".", 1)[0]
    name, _, version = stem.partition("-")
    return name, version.split("-")[0]


def _record_import_names(dist_dir: Path) -> tuple[str, ...]:
    """Top-level modules and packages from RECORD (wheels without `top_level.txt`)."""
    try:
        record = _read_text(dist_dir / "RECORD", 20_000_000)
    except OSError:
        return ()
    names: dict[str, None] = {}
    for line in record.splitlines():
        path = line.rsplit(",", 2)[0] if line.count(",") >= 2 else line
        first, sep, _ = path.partition("/")
        if first.startswith(("..", "__editable__", "__pycache__")) or first.endswith((".dist-info", ".data")):
            continue
        if sep:
            names[first] = None
        elif first.endswith((*PYTHON_SUFFIXES, ".so", ".pyd")):
            names[first.split(".", 1)[0]] = None
    return tuple(n for n in names if n.isidentifier())


def _import_names(dist_dir: Path) -> tuple[str, ...]:
    top_level = dist_dir / "top_level.txt"
    if top_level.is_file():
        try:
            names = tuple(n.strip().replace("/", ".") for n in _read_text(top_level).splitlines() if n.strip())
            if names:
                return names
        except OSError:
            pass
    return _record_import_names(dist_dir)


def _stamp(*paths: str) -> str:
    """A short digest of the paths' modification times (missing paths count as 0)."""
    digest = hashlib.sha1()
    for path in paths:
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            mtime = 0
        digest.update(f"{path}\0{mtime}\0".encode())
    return digest.hexdigest()[:16]


def read_distribution(dist_dir: Path, site_dir: Path) -> LibraryEntry | None:
    """A catalog entry from a dist-info/egg-info directory, reading only its headers."""
    metadata = _metadata_file(dist_dir)
    if metadata is None:
        return None
    try:
        with open(metadata, "rb") as f:
            head = f.read(64_000).decode("utf-8", "replace")
    except OSError:
        return None
    headers = parse_headers(head).values
    fallback_name, fallback_version = _name_from_dirname(dist_dir.name)
    name = headers.get("name") or fallback_name
    if not name:
        return None
    is_dir = dist_dir.is_dir()
    return LibraryEntry(
        name=name,
        key=normalize_name(name),
        version=headers.get("version") or fallback_version,
        summary=" ".join(headers.get("summary", "").split()),
        import_names=_import_names(dist_dir) if is_dir else (),
        dist_dir=str(dist_dir),
        site_dir=str(site_dir),
        content_type=headers.get("description-content-type", ""),
        stamp=_stamp(str(dist_dir), str(metadata)),
    )


def scan_distributions(paths: Sequence[Path]) -> list[LibraryEntry]:
    """Every distribution on `paths`; the first one of a name wins, as for imports."""
    found: dict[str, LibraryEntry] = {}
    for site_dir in paths:
        try:
            names = sorted(e.name for e in os.scandir(site_dir))
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            entry = read_distribution(site_dir / name, site_dir)
            if entry is not None and entry.key not in found:
                found[entry.key] = entry
    return list(found.values())


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
        stamp = f"{base.stamp}+{_stamp(*docs, *files)}"
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
        record = _read_text(Path(entry.dist_dir) / "RECORD", 20_000_000)
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
            match = _EDITABLE_MAPPING.search(_read_text(finder))
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
            source = f.path.read_bytes()
        except OSError:
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
    metadata = _metadata_file(Path(entry.dist_dir))
    if metadata is None:
        return []
    try:
        text = _read_text(metadata)
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


def doc_file_drafts(path: Path, label: str, display: str, kind: str) -> list[Draft]:
    try:
        if path.stat().st_size > MAX_DOC_FILE_BYTES:
            return []
        text = _read_text(path)
    except OSError:
        return []
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
            if name.lower().endswith(DOC_SUFFIXES):
                found.append(Path(dirpath) / name)
                if len(found) >= MAX_DOC_FILES:
                    return found
    return found


def extra_doc_drafts(entry: LibraryEntry, workspace_root: Path | None) -> list[Draft]:
    """Docs folders and workspace `llms.txt` files configured for the library."""
    drafts: list[Draft] = []
    for doc in entry.extra_docs:
        folder = Path(doc)
        for path in _doc_folder_files(folder):
            display = _display(path, workspace_root) if workspace_root else path.as_posix()
            kind = Kind.LLMS if path.name in LLMS_FILES else Kind.GUIDE
            label = f"{entry.name} {path.name}" if kind == Kind.LLMS else display
            drafts += doc_file_drafts(path, label, display, kind)
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


def library_drafts(entry: LibraryEntry, paths: Sequence[Path], workspace_root: Path | None) -> list[Draft]:
    """All sections of one library, in overview order: description, llms.txt, docs
    folders, then the API of its modules (shallowest first)."""
    files = python_files(entry, paths)
    return [
        *description_drafts(entry),
        *package_llms_drafts(entry, files),
        *extra_doc_drafts(entry, workspace_root),
        *python_drafts(files),
    ]


def workspace_llms_files(workspace_root: Path | None) -> list[Path]:
    if workspace_root is None:
        return []
    return [workspace_root / name for name in LLMS_FILES if (workspace_root / name).is_file()]


def llms_title(path: Path) -> str:
    """The `# Title` an llms.txt starts with (the format's one required element)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    return line.strip().lstrip("#").strip() if line.startswith("# ") else ""
    except OSError:
        pass
    return ""
