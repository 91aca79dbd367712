"""The workspace's Python environment: its interpreter, its import paths, and the
distributions installed there — the catalog library docs can be asked about.

The environment is found by asking the workspace's interpreter for its import paths (a
subprocess: the workspace's `.venv` is not the server's interpreter). Installed
distributions are then read from their `*.dist-info` / `*.egg-info` directories: the
METADATA headers (name, version, summary) and the import names (`top_level.txt`, else
RECORD). Nothing is imported: importing runs user code with side effects, and it would
load it into the server's own interpreter.

Distributions are enumerated with our own directory scan rather than
`importlib.metadata.distributions`: we need each one's dist-info directory (for its
stamp and its `llms.txt`), which importlib does not expose publicly, and parsing every
METADATA with the `email` package took 0.45 s for 234 distributions here where reading
the headers ourselves takes a few milliseconds.

Separate from `sources.py`, which reads one library's docs (its description, `llms.txt`,
docs folders and Python files) once the catalog says where the library is: finding the
environment runs once per workspace, reading a library once per cold docs lookup.
"""

from __future__ import annotations

import errno
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

from ctx_lsp.errors import CtxError
from ctx_lsp.gate import inside, read_head

__all__ = [
    "LibraryEntry",
    "SitePaths",
    "find_interpreter",
    "is_trusted_interpreter",
    "normalize_name",
    "scan_distributions",
    "site_paths",
    "venv_site_paths",
]

log = logging.getLogger(__name__)

INTERPRETER_TIMEOUT_S = 5.0
"""Asking an interpreter for its paths takes ~30 ms; a hung or broken one must not stall
the first docs request for long, so after this we use the server's own environment."""

MAX_DOC_FILE_BYTES = 2_000_000
"""Bytes read from one text file (METADATA, top_level.txt, a docs page) unless a caller
asks for more: past this it is not documentation anyone reads."""

PYTHON_SUFFIXES = (".py", ".pyi")

_NORMALIZE = re.compile(r"[-_.]+")


def normalize_name(name: str) -> str:
    """PEP 503: case-insensitive, and runs of "-", "_", "." are the same character."""
    return _NORMALIZE.sub("-", name).lower().strip("-")


# --- the workspace's interpreter and its paths --------------------------------------------


def find_interpreter(workspace_root: Path | None, configured: str | None, environ: Mapping[str, str]) -> str:
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
        warning = (
            f"python.interpreter {interpreter!r} could not be asked for its paths ({err}); "
            "using ctx-lsp's own environment"
        )
        log.warning(warning)
        return SitePaths(sys.executable, own_site_paths(), warning)


def is_trusted_interpreter(interpreter: str, workspace_root: Path | None, named_by_user: bool) -> bool:
    """Whether ctx-lsp may *run* `interpreter` to ask for its paths. A program inside the
    workspace is the workspace's, and a cloned repository is not trusted: its `.venv/bin/python`
    (or an interpreter its own config names) may be any script. Only the user's settings
    may name one to run; outside the workspace ($VIRTUAL_ENV, ours) it is the user's."""
    if named_by_user or workspace_root is None:
        return True
    try:
        real = os.path.realpath(interpreter)
        return not inside(real, [workspace_root]) and not inside(os.path.abspath(interpreter), [workspace_root])
    except (OSError, ValueError):
        return False


PTH_MAX_BYTES = 64 * 1024
"""A `.pth` file is a few lines; anything bigger is not read."""


def venv_site_paths(interpreter: str, workspace_root: Path) -> SitePaths:
    """The import paths of a virtual environment inside the workspace, found by reading its
    layout rather than running its interpreter (`is_trusted_interpreter`): the
    `site-packages` folders next to `pyvenv.cfg`, and the plain path lines of their `.pth`
    files (editable installs). Only folders that really lie inside the workspace count, so a
    link in a cloned `.venv` cannot lead docs to the user's files."""
    venv = Path(interpreter).parent.parent
    if not (venv / "pyvenv.cfg").is_file():
        warning = (
            f"python.interpreter {interpreter!r} is inside the workspace but not in a virtual environment "
            "(no pyvenv.cfg); it is not run (a workspace's programs are not trusted): using ctx-lsp's own "
            "environment; name it in your editor's settings to run it"
        )
        log.warning(warning)
        return SitePaths(sys.executable, own_site_paths(), warning)
    sites = sorted(
        {
            *venv.glob("lib/python3*/site-packages"),
            *venv.glob("lib64/python3*/site-packages"),
            *venv.glob("Lib/site-packages"),
        }
    )
    found: list[str] = []
    for site in sites:
        found.append(str(site))
        for pth in sorted(site.glob("*.pth")):
            try:
                text = read_head(pth, [workspace_root], PTH_MAX_BYTES).decode("utf-8", "replace")
            except (CtxError, OSError):
                continue
            for line in text.splitlines():
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    found.append(str(site / line) if not os.path.isabs(line) else line)
    contained = [p for p in found if inside(os.path.realpath(p), [workspace_root])]
    return SitePaths(interpreter, _existing_dirs(contained))


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


def read_text_capped(path: Path, limit: int = MAX_DOC_FILE_BYTES) -> str:
    """The first `limit` bytes of a file as text, bad UTF-8 replaced (installed files are
    not ours to trust). Through the gate: a FIFO or a device in an environment must not
    block or flood a docs lookup; a refusal is an OSError like any unreadable file."""
    try:
        return read_head(path, None, limit).decode("utf-8", "replace")
    except CtxError as err:
        raise OSError(errno.EINVAL, str(err)) from err


def metadata_file(dist_dir: Path) -> Path | None:
    """The METADATA (dist-info) or PKG-INFO (egg-info) of a distribution, if it has one."""
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
        record = read_text_capped(dist_dir / "RECORD", 20_000_000)
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
            names = tuple(n.strip().replace("/", ".") for n in read_text_capped(top_level).splitlines() if n.strip())
            if names:
                return names
        except OSError:
            pass
    return _record_import_names(dist_dir)


def mtime_stamp(*paths: str) -> str:
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
    metadata = metadata_file(dist_dir)
    if metadata is None:
        return None
    try:
        head = read_text_capped(metadata, 64_000)
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
        stamp=mtime_stamp(str(dist_dir), str(metadata)),
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
