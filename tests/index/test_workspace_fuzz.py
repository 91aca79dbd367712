"""The workspace itself fuzzed (issue 20, deliverable 5): random hostile trees on disk,
through the real `Engine`, no mocks.

Each example writes a small tree: `.gitignore` files at random depths holding random
patterns (valid, invalid, negations, `**`, directory-only, wildcard-heavy) or random bytes,
a `.git/info/exclude`, workspace config files of every kind (`pyproject.toml` with a
`[tool.ctx-lsp]` table of random keys and values, `ctx-lsp.toml`, `.ctx-lsp.toml`, invalid
TOML, binary), links in the workspace and out of it (to a canary directory beside it), and
odd names (spaces, a newline, `$(x)`, unicode, `...`). Then index, status, a bundle, a
search and outlines must answer, and:

- every ordinary source file (`.py`) that git does not ignore is indexed, and none that it
  does: real `git check-ignore --no-index` is the oracle (the engine's own configured
  `index.ignore` globs are checked the same way, in a scratch repository);
- nothing outside the workspace is read: the canary's marker is in no status, bundle,
  search hit or outline, and (Linux) an audit hook on `open` and directory listings sees
  no path outside the workspace but Python's own files, `/proc`, `/dev` and the ctx-lsp
  package; the gate (`ctx_lsp/gate.py`) alone may open a workspace link that resolves
  outside, because it refuses it on the open descriptor before reading a byte.

The seed budget is fixed (`derandomize=True`) so CI runs the same examples every time.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctx_lsp
from ctx_lsp.engine import BundleRequest, Engine
from ctx_lsp.errors import CtxError
from ctx_lsp.wire import to_wire
from tests.conftest import write_tree as _write

MARKER = "CANARY_OUTSIDE_5d2e9f0a"
"""In every file of the canary directory beside the workspace; never in any output."""
GIT = shutil.which("git")
EXAMPLES = int(os.environ.get("CTX_FUZZ_EXAMPLES", "60"))
"""Fixed budget: about 15 s on a shared 2-core machine (each example is a fresh engine
over a tree of up to ~25 files, plus two `git check-ignore` runs). Setting
`CTX_FUZZ_EXAMPLES` runs that many random (not derandomized) examples, to hunt."""
HUNTING = "CTX_FUZZ_EXAMPLES" in os.environ

DIR_NAMES = ["a", "b", "src", "x y", "...", "$(x)", "naïve", "深", "nl\nx", "-rf", "m"]
"""None is a built-in ignore (`build`, `env`...) or a secret name: their fate is the
oracle's alone."""
PY_NAMES = ["m.py", "n.py", "x y.py", "$(echo x).py", "ü.py", "...py", "nl\nb.py", "#c.py", "!b.py", "[ab].py", "é.py"]
OTHER_NAMES = ["notes.txt", "README.md", "data.json", "Makefile"]

SEGMENTS = [
    *DIR_NAMES[:6],
    "m.py",
    "n.py",
    "*",
    "**",
    "?",
    "*.py",
    "[ab]*",
    "[!a]*",
    "[^m]*",
    "m*",
    "*y*",
    "?.py",
    "*a*a*a*a*b",
    "x\\ y",
    "\\#c.py",
    "\\!b.py",
    "\\[ab\\].py",
    "[[:alpha:]].py",
]
INVALID = ["!", "\\", "[z-a]", "a\\", "[", "[z-a]*.py", "!/", "**/a/**/a/**/b", "#comment", "", "   ", "\\ "]


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """One ignore-file line: a composed pattern, an invalid one, or random text."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(INVALID))
    if kind == 1:
        return draw(st.text(max_size=12).map(lambda s: s.replace("\n", "")))
    parts = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3))
    text = "/".join(parts)
    if draw(st.booleans()) and draw(st.booleans()):
        text = "/" + text
    if draw(st.integers(0, 4)) == 0:
        text += "/"
    if draw(st.integers(0, 3)) == 0:
        text = "!" + text
    if draw(st.integers(0, 6)) == 0:
        text += draw(st.sampled_from([" ", "  ", "\\ ", "\t"]))
    return text


@st.composite
def ignore_files(draw: st.DrawFn) -> bytes:
    """A whole ignore file: lines joined by `\\n` or `\\r\\n` (a BOM first, sometimes), or
    random bytes."""
    if draw(st.integers(0, 7)) == 0:
        return draw(st.binary(max_size=64))
    lines = draw(st.lists(patterns(), max_size=6))
    sep = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = sep.join(lines) + (sep if draw(st.booleans()) else "")
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


SCALARS = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12),
    st.sampled_from(["o200k_base", "cl100k_base", "nope", "**", "*.py", "..", "/etc", "~/.ssh", "../outside"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
CONFIG_KEYS: dict[str, list[str]] = {
    "tokenizer": [],
    "index": ["ignore", "max_file_bytes", "respect_gitignore", "watch", "workers", "cache", "include_secrets"],
    "agents": ["default", "planner", "x"],
    "weights": ["retrieval", "codebase_map", "nope"],
    "default_context_window_type": [],
    "model_limits": ["gpt-x"],
    "artifacts_budget": [],
    "docs": ["require_topic", "allow_full_library", "folders"],
    "python": ["interpreter"],
    "nonsense": [],
}


@st.composite
def config_tables(draw: st.DrawFn) -> dict[str, Any]:
    """A `[tool.ctx-lsp]` table: known keys (right or wrong types) and unknown ones."""
    table: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(CONFIG_KEYS)), max_size=4, unique=True)):
        subs = CONFIG_KEYS[key]
        if subs and draw(st.booleans()):
            table[key] = {
                sub: draw(_sub_value(sub)) for sub in draw(st.lists(st.sampled_from(subs), max_size=3, unique=True))
            }
        else:
            table[key] = draw(VALUES)
    return table


def _sub_value(sub: str) -> st.SearchStrategy[Any]:
    if sub in ("ignore", "include_secrets"):
        return st.lists(patterns(), max_size=3) | VALUES
    if sub in ("default", "planner", "x"):
        return st.fixed_dictionaries({}, optional={"tier": VALUES, "budget": VALUES, "docs_cap": VALUES}) | VALUES
    return VALUES


def toml_value(value: Any) -> str:
    """`value` as TOML (inline tables and arrays; strings as basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_value(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"


@st.composite
def config_files(draw: st.DrawFn) -> tuple[bool, bytes]:
    """(whether it is a table's body, the file's bytes): random bytes, invalid TOML, or
    a table of random keys and values."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return False, draw(st.binary(max_size=48))
    if kind == 1:
        return False, b'[tool.ctx-lsp\ntokenizer = = 5\n"unterminated'
    table = draw(config_tables())
    body = "\n".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in table.items())
    return True, body.encode("utf-8")


@dataclass
class Tree:
    dirs: list[str]
    py: dict[str, str]
    """Ordinary source files: path → content (each defines a unique function)."""
    other: list[str]
    ignores: dict[str, bytes]
    """Directory ("" for the root) → its .gitignore's bytes."""
    exclude: bytes | None
    configs: dict[str, tuple[bool, bytes]]
    """`pyproject.toml` / `ctx-lsp.toml` / `.ctx-lsp.toml` → `config_files()` (a
    pyproject's table gets its `[tool.ctx-lsp]` header)."""
    links: list[tuple[str, str]] = field(default_factory=list)
    """(path in the workspace, kind of target)."""


LINK_KINDS = ["out_file", "out_dir", "out_ignore", "in_ignore", "in_file", "in_dir", "loop", "self", "dangling"]


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    dirs = [""]
    for _ in range(draw(st.integers(0, 6))):
        parent = draw(st.sampled_from(dirs))
        if parent.count("/") >= 3:
            continue
        name = draw(st.sampled_from(DIR_NAMES))
        path = f"{parent}/{name}" if parent else name
        if path not in dirs:
            dirs.append(path)
    py: dict[str, str] = {}
    for i in range(draw(st.integers(1, 10))):
        d = draw(st.sampled_from(dirs))
        name = draw(st.sampled_from(PY_NAMES))
        path = f"{d}/{name}" if d else name
        py.setdefault(path, f'"""Module {i}."""\n\n\ndef fuzz_func_{i}(value):\n    return value + {i}\n')
    other = [f"{d}/{n}" if d else n for d in dirs for n in OTHER_NAMES if draw(st.integers(0, 5)) == 0]
    ignores = {d: draw(ignore_files()) for d in draw(st.lists(st.sampled_from(dirs), max_size=4, unique=True))}
    exclude = draw(st.none() | ignore_files())
    configs = {
        name: draw(config_files())
        for name in draw(st.lists(st.sampled_from(["pyproject.toml", "ctx-lsp.toml", ".ctx-lsp.toml"]), unique=True))
    }
    links = []
    for _ in range(draw(st.integers(0, 4))):
        d = draw(st.sampled_from(dirs))
        kind = draw(st.sampled_from(LINK_KINDS))
        suffix = ".py" if "file" in kind else ""
        name = {"out_ignore": ".gitignore", "in_ignore": ".gitignore"}.get(kind, f"link_{kind}{len(links)}{suffix}")
        path = f"{d}/{name}" if d else name
        if kind.endswith("_ignore") and d in ignores:
            continue
        links.append((path, kind))
    if draw(st.integers(0, 5)) == 0 and "pyproject.toml" not in configs:
        links.append(("pyproject.toml", "out_config"))
    if draw(st.integers(0, 5)) == 0 and exclude is None:
        links.append((".git/info/exclude", "out_ignore"))
    return Tree(dirs, py, other, ignores, exclude, configs, links)


def write_canary(outside: Path) -> None:
    """The directory beside the workspace: each file would show its marker if read."""
    (outside / "docs").mkdir(parents=True, exist_ok=True)
    (outside / "canary.py").write_text(f'"""{MARKER}"""\n\n\ndef fuzz_func_0(value):\n    return "{MARKER}"\n')
    (outside / "docs" / "guide.md").write_text(f"# Guide\n\n{MARKER}\n")
    # Read as an ignore file, its first line would hide every source file and its second
    # would be listed, marker and all, under `problems`.
    (outside / "ignore").write_text(f"*.py\n[z-a]{MARKER}\n")
    (outside / "pyproject.toml").write_text(f'[tool.ctx-lsp]\n"{MARKER}" = 1\nindex = {{ignore = ["*.py"]}}\n')


def write_tree(tree: Tree, ws: Path, outside: Path) -> None:
    for d in tree.dirs:
        (ws / d).mkdir(parents=True, exist_ok=True)
    for rel, text in tree.py.items():
        (ws / rel).write_text(text)
    for rel in tree.other:
        (ws / rel).write_text("plain text\n")
    for d, data in tree.ignores.items():
        (ws / d / ".gitignore").write_bytes(data)
    if tree.exclude is not None:
        (ws / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (ws / ".git" / "info" / "exclude").write_bytes(tree.exclude)
    for name, (is_table, data) in tree.configs.items():
        if name == "pyproject.toml" and is_table:
            data = b'[project]\nname = "fuzz"\n\n[tool.ctx-lsp]\n' + data
        (ws / name).write_bytes(data)
    inside_py = sorted(tree.py)
    (ws / "patterns.txt").write_text("*.py\n")  # what an `in_ignore` link leads to
    for rel, kind in tree.links:
        path = ws / rel
        if os.path.lexists(path):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        target: str | Path = {
            "out_file": outside / "canary.py",
            "out_dir": outside,
            "out_ignore": outside / "ignore",
            "in_ignore": ws / "patterns.txt",
            "out_config": outside / "pyproject.toml",
            "in_file": ws / inside_py[0],
            "in_dir": ws / tree.dirs[-1],
            "loop": path.parent,
            "self": path.name,
            "dangling": ws / "missing" / "nothing.py",
        }[kind]
        os.symlink(target, path)


# ---------------------------------------------------------------- the git oracle


def git_env() -> dict[str, str]:
    """No global or system config: only the workspace's own ignore files count."""
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", HOME=tempfile.gettempdir())
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return env


def git_ignored(repo: Path, paths: Sequence[str]) -> set[str]:
    """The paths (relative to `repo`, a git work tree) that git's ignore rules exclude."""
    if not paths:
        return set()
    out = subprocess.run(
        [GIT or "git", "-c", f"core.excludesFile={os.devnull}", "check-ignore", "--no-index", "-z", "--stdin"],
        cwd=repo,
        input=b"".join(p.encode() + b"\0" for p in paths),
        capture_output=True,
        env=git_env(),
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr.decode(errors="replace")
    return {p.decode() for p in out.stdout.split(b"\0") if p}


def git_init(path: Path) -> None:
    subprocess.run([GIT or "git", "init", "-q", str(path)], check=True, env=git_env())


def configured_ignored(scratch: Path, globs: Sequence[str], paths: Sequence[str]) -> set[str]:
    """The paths `index.ignore` excludes, as git reads the same lines (they are
    gitignore-style globs): a scratch repository whose root .gitignore holds them."""
    if not globs:
        return set()
    git_init(scratch)
    (scratch / ".gitignore").write_text("\n".join(globs) + "\n")
    return git_ignored(scratch, paths)


# ---------------------------------------------------------------- the audit hook


@dataclass
class _Recorder:
    ws: str
    opens: list[tuple[str, str, str, bool]] = field(default_factory=list)
    """(event, path as passed, resolved, opened by the gate)."""


_recording: _Recorder | None = None
_hook_lock = threading.Lock()
_hook_installed = False
GATE_FILE = os.path.join(os.path.dirname(ctx_lsp.__file__), "gate.py")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    rec = _recording
    if rec is None or event not in ("open", "os.scandir", "os.listdir"):
        return
    raw = args[0] if args else None
    if raw is None or isinstance(raw, int):
        return
    try:
        path = os.path.abspath(os.fsdecode(os.fspath(raw)))
        real = os.path.realpath(path)
        caller = sys._getframe(1).f_code.co_filename
    except Exception:
        return
    rec.opens.append((event, path, real, os.path.abspath(caller) == GATE_FILE))


def _install_hook() -> None:
    global _hook_installed
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_audit)  # permanent for the process; idle unless recording
            _hook_installed = True


def _allowed_outside() -> tuple[str, ...]:
    """What the engine may read outside a workspace: Python and its packages (ctx-lsp's
    own data files included), the kernel's pseudo-files, the machine's locale data."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(ctx_lsp.__file__)}
    roots |= {p for p in sysconfig.get_paths().values() if p}
    roots |= set(site.getsitepackages()) | {site.getusersitepackages()}
    roots |= {"/proc", "/dev", "/sys", "/usr/lib/locale", "/usr/share/zoneinfo", "/etc/localtime"}
    return tuple(os.path.realpath(r) for r in roots)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@contextmanager
def recording(ws: Path) -> Iterator[_Recorder]:
    global _recording
    _install_hook()
    rec = _Recorder(str(ws))
    _recording = rec
    try:
        yield rec
    finally:
        _recording = None


def outside_opens(rec: _Recorder) -> list[tuple[str, str, str]]:
    """Opens and listings of paths outside the workspace and outside what is allowed.
    The gate's own open of a workspace path that resolves outside is allowed: it checks
    the open descriptor and refuses it before reading (ctx_lsp/gate.py, step 3)."""
    allowed = _allowed_outside()
    bad = []
    for event, path, real, by_gate in rec.opens:
        if _inside(real, rec.ws) or any(_inside(real, a) for a in allowed):
            continue
        if by_gate and _inside(path, rec.ws):
            continue
        bad.append((event, path, real))
    return bad


# ---------------------------------------------------------------- the property


@dataclass
class Answers:
    status: dict[str, Any]
    texts: list[str]
    indexed: set[str]


def exercise(ws: Path, tree: Tree) -> tuple[Engine, Answers]:
    """Index, status, a bundle, searches and outlines: each must answer."""
    engine = Engine([ws])
    engine.index()
    status = to_wire(engine.status())
    texts = [json.dumps(status, default=str)]
    for query in ("fuzz_func_0 value", "canary guide", ""):  # never the marker: a bundle echoes its query
        result = engine.bundle(BundleRequest(query=query, budget=4000))
        texts.append(result.text)
        texts += [s.content for s in result.sections]
        texts.append(json.dumps(to_wire(result.snapshot), default=str))
        texts += [repr(h) for h in engine.search(query or "value", limit=50)]
    root = str(ws.resolve())
    indexed = {os.path.relpath(p, root).replace(os.sep, "/") for p in engine.workspace.files}
    for rel in sorted(indexed)[:3]:
        # An indexed file may be refused on read; never an exception of another kind.
        with contextlib.suppress(CtxError):
            texts.append(engine.outline(os.path.join(root, rel), tier=3).content)
    return engine, Answers(status, texts, indexed)


def expected_indexed(engine: Engine, ws: Path, scratch: Path, tree: Tree) -> tuple[set[str], set[str]]:
    """(the source files that must be indexed, the ones whose verdict is not compared)."""
    config = engine.loaded.config.index
    candidates = sorted(tree.py)
    exclude = ws / ".git" / "info" / "exclude"
    if exclude.is_symlink():  # git follows it out of the workspace; ctx-lsp reads nothing there
        exclude.unlink()
    ignored = git_ignored(ws, candidates) if config.respect_gitignore else set()
    ignored |= configured_ignored(scratch, config.ignore, candidates)
    too_big = {p for p in candidates if len(tree.py[p].encode()) > config.max_file_bytes}
    # git matches bytes: `?` and a bracket take one byte, where pathspec takes one
    # character, so for a non-ASCII name behind such a pattern the two may differ.
    patterns_text = b"".join([*tree.ignores.values(), tree.exclude or b""]).decode("utf-8", "replace")
    patterns_text += "\n".join(config.ignore)
    byte_wise = "?" in patterns_text or "[" in patterns_text
    unsure = {p for p in candidates if byte_wise and not p.isascii()}
    # git knows POSIX classes in brackets (`[[:alpha:]]`); pathspec does not (left open).
    if "[:" in patterns_text:
        unsure = set(candidates)
    return set(candidates) - ignored - too_big - unsure, unsure


needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed: the oracle for ignored paths is git itself")


@needs_git
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not HUNTING,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tree=trees())
def test_any_workspace_is_indexed_as_git_reads_it_and_nothing_outside_is_read(tmp_path: Path, tree: Tree) -> None:
    """Ensure that whatever ignore files, config files, links and names a workspace holds,
    index, status, bundles, search and outlines answer; the source files indexed are
    exactly those git does not ignore; and nothing outside the workspace is read."""
    base = Path(tempfile.mkdtemp(dir=tmp_path))
    ws, outside, scratch = base / "ws", base / "outside", base / "scratch"
    write_canary(outside)
    git_init(ws)
    (ws / ".git" / "info" / "exclude").unlink(missing_ok=True)
    write_tree(tree, ws, outside)

    with recording(ws.resolve()) as rec:
        engine, answers = exercise(ws, tree)
    try:
        must, unsure = expected_indexed(engine, ws, scratch, tree)
        got = {p for p in answers.indexed if p in tree.py}
        assert got - unsure == must, (
            f"indexed but ignored by git: {sorted(got - unsure - must)}; "
            f"not indexed though git keeps it: {sorted(must - got)}; problems: {answers.status['problems']}"
        )
        for text in answers.texts:
            assert MARKER not in text, f"the outside canary was served: {text[:300]!r}"
        if sys.platform.startswith("linux"):
            assert outside_opens(rec) == []
        # Every `!`-only line of an ignore file the walk read is listed with file and line.
        for d, data in tree.ignores.items():
            rel = f"{d}/.gitignore" if d else ".gitignore"
            lines = data.decode("utf-8", "replace").split("\n")
            for number, line in enumerate(lines, 1):
                if line.rstrip("\r") == "!" and not _dir_excluded(engine, d):
                    assert any(p.startswith(f"{rel}:{number}: ") for p in answers.status["problems"]), (
                        rel,
                        number,
                        answers.status["problems"],
                    )
    finally:
        engine.close()
        shutil.rmtree(base, ignore_errors=True)


def _dir_excluded(engine: Engine, rel_dir: str) -> bool:
    """Whether the walk never entered `rel_dir` (it or an ancestor is ignored)."""
    if not rel_dir:
        return False
    folder = next(iter(engine.workspace._folders))
    return folder.rules.is_excluded(rel_dir, True)


# ---------------------------------------------------------------- named regressions (issue 20)


def _engine(ws: Path) -> tuple[Engine, dict[str, Any], set[str]]:
    engine = Engine([ws])
    engine.index()
    root = str(ws.resolve())
    return engine, to_wire(engine.status()), {os.path.relpath(p, root) for p in engine.workspace.files}


def test_black_bang_only_ignore_files_at_two_depths_index_everything(tmp_path: Path) -> None:
    """Ensure that psf/black's two `.gitignore` files whose only line is `!` index every
    source file, with both patterns listed under problems (file and line)."""
    ws = _write(
        tmp_path / "ws",
        {
            "src/black/__init__.py": "def format_str():\n    return 1\n",
            "tests/data/invalid_gitignore_tests/.gitignore": "!\n",
            "tests/data/invalid_gitignore_tests/a.py": "A = 1\n",
            "tests/data/invalid_nested_gitignore_tests/a/.gitignore": "!\n",
            "tests/data/invalid_nested_gitignore_tests/a/b.py": "B = 1\n",
        },
    )
    engine, status, indexed = _engine(ws)
    engine.close()
    assert {p for p in indexed if p.endswith(".py")} == {
        "src/black/__init__.py",
        "tests/data/invalid_gitignore_tests/a.py",
        "tests/data/invalid_nested_gitignore_tests/a/b.py",
    }
    problems = status["problems"]
    assert any(p.startswith("tests/data/invalid_gitignore_tests/.gitignore:1: pattern '!'") for p in problems)
    assert any(p.startswith("tests/data/invalid_nested_gitignore_tests/a/.gitignore:1: pattern '!'") for p in problems)


def test_an_empty_range_is_skipped_and_the_other_lines_apply(tmp_path: Path) -> None:
    """Ensure that `[z-a]` in a .gitignore is listed and skipped, and the file's other
    lines still ignore what they name."""
    ws = _write(tmp_path / "ws", {".gitignore": "[z-a]\ngen_*.py\n", "m.py": "M = 1\n", "gen_x.py": "G = 1\n"})
    engine, status, indexed = _engine(ws)
    engine.close()
    assert "m.py" in indexed and "gen_x.py" not in indexed
    assert any(p.startswith(".gitignore:1: pattern '[z-a]'") for p in status["problems"])


def test_a_wrong_tokenizer_in_pyproject_is_dropped_with_a_warning(tmp_path: Path) -> None:
    """Ensure that `[tool.ctx-lsp] tokenizer = 5` neither stops indexing nor a bundle:
    the key is named in a config warning and the default applies."""
    files = {"pyproject.toml": "[tool.ctx-lsp]\ntokenizer = 5\n", "m.py": "def f():\n    return 1\n"}
    ws = _write(tmp_path / "ws", files)
    engine, status, indexed = _engine(ws)
    result = engine.bundle(BundleRequest(query="f", budget=2000))
    engine.close()
    assert "m.py" in indexed and "m.py" in result.text
    assert any("tokenizer" in w for w in status["config"]["warnings"])
    assert status["tokenizer"] == "o200k_base"


SERVICE_ACCOUNT = (
    '{"type": "service_account", "project_id": "p", "private_key_id": "SECRETMARK_SA_1",'
    ' "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7SECRETMARK_SA_2'
    '\\n-----END PRIVATE KEY-----\\n", "client_email": "a@p.iam.gserviceaccount.com"}\n'
)
DOCKER_CONFIG = '{"auths": {"registry.example.com": {"auth": "SECRETMARK_DOCKER_dXNlcjpwYXNz"}}}\n'


@pytest.mark.parametrize(
    ("rel", "content", "kind"),
    [
        ("deploy/my-project-3f2a1c.json", SERVICE_ACCOUNT, "service_account_key"),
        (".docker/config.json", DOCKER_CONFIG, "cloud_credentials"),
        ("ci/registry.json", DOCKER_CONFIG, "docker_auth"),
    ],
)
def test_a_credential_file_under_an_ordinary_name_is_never_served(
    tmp_path: Path, rel: str, content: str, kind: str
) -> None:
    """Ensure that a service-account key or a Docker config with `auths`, whatever it is
    called, is in no bundle, search hit, outline or symbol, and status counts its kind."""
    ws = _write(tmp_path / "ws", {rel: content, "m.py": "def registry_auth():\n    return 'service account'\n"})
    engine, status, indexed = _engine(ws)
    texts = [json.dumps(status)]
    for query in ("service account private key", "registry auths", "gserviceaccount auth"):
        texts.append(engine.bundle(BundleRequest(query=query, budget=8000, tier=3)).text)
        texts += [repr(h) for h in engine.search(query, limit=50)]
    with pytest.raises(CtxError):
        engine.outline(str(ws / rel), tier=3)
    engine.close()
    assert rel not in indexed
    assert not any("SECRETMARK" in t for t in texts)
    assert status["secrets"]["kept_out"].get(kind) == 1


@pytest.mark.parametrize(
    ("ignore", "kept", "ignored"),
    [
        (b"\xef\xbb\xbfgen.py\n", ["m.py"], ["gen.py"]),  # a BOM first: git drops it
        (b"m.py\x0cgen.py\n", ["m.py", "gen.py"], []),  # a form feed ends no line for git
        (b"gen.py\r\n", ["m.py"], ["gen.py"]),  # CRLF: git drops the CR
        (b"a/**/\n", ["a/m.py"], ["a/b/m.py"]),  # `a/**/` is the directories below a, not a
        (b"a/\t\nm.py\t \ngen.py \n", ["a/m.py", "m.py"], ["gen.py"]),  # git trims spaces, not tabs
        (b"a/\n!/\n", [], ["a/m.py"]),  # `!/` re-includes nothing
    ],
)
def test_ignore_files_are_read_as_git_reads_them(
    tmp_path: Path, ignore: bytes, kept: list[str], ignored: list[str]
) -> None:
    """Ensure the divergences from git the fuzz test found stay fixed."""
    files: dict[str, str | bytes] = {".gitignore": ignore}
    files.update({p: "X = 1\n" for p in [*kept, *ignored]})
    engine, _status, indexed = _engine(_write(tmp_path / "ws", files))
    engine.close()
    assert set(kept) <= indexed and not set(ignored) & indexed


def test_a_linked_gitignore_is_not_followed_and_a_newline_in_a_name_still_matches(tmp_path: Path) -> None:
    """Ensure that a `.gitignore` that is a symbolic link is not read (git does not follow
    one) and is listed, and that a pattern matches under a directory named with a newline."""
    ws = _write(
        tmp_path / "ws",
        {"patterns.txt": "*.py\n", "sub/m.py": "X = 1\n", ".gitignore": "gen.py\n", "nl\nx/gen.py": "G = 1\n"},
    )
    os.symlink(ws / "patterns.txt", ws / "sub" / ".gitignore")
    engine, status, indexed = _engine(ws)
    engine.close()
    assert "sub/m.py" in indexed and "nl\nx/gen.py" not in indexed
    assert any(p.startswith("sub/.gitignore: a symbolic link") for p in status["problems"])


def test_a_config_file_nested_too_deeply_is_a_warning(tmp_path: Path) -> None:
    """Ensure that a `pyproject.toml` of 5,000-deep arrays (tomllib recurses per level, so
    it raised RecursionError and initialize failed, found by the attack run) is a config
    warning, and the workspace is indexed."""
    deep = "[tool.ctx-lsp]\nx = " + "[" * 5000 + "]" * 5000 + "\n"
    engine, status, indexed = _engine(_write(tmp_path / "ws", {"pyproject.toml": deep, "m.py": "M = 1\n"}))
    engine.close()
    assert "m.py" in indexed
    assert any("pyproject.toml not read: nested too deeply" in w for w in status["config"]["warnings"])
