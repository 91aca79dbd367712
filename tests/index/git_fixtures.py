"""Small git repositories made with the real `git`, for the history reader's tests.

`git` runs only here, to build fixtures, with the user's and the system's config kept
out; the code under test never runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from ctx_lsp import gate

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def git(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    full = {**os.environ, **GIT_ENV, **(env or {})}
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=full)
    return out.stdout.strip()


def commit(repo: Path, message: str, files: Mapping[str, str], when: int) -> str:
    """Write `files` (path → text; "" deletes), commit them at time `when`, return the sha."""
    for rel, text in files.items():
        path = repo / rel
        if text == "":
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    date = f"{when} +0000"
    git(repo, "commit", "-q", "-m", message, env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return git(repo, "rev-parse", "HEAD")


def make_repo(repo: Path, commits: Sequence[tuple[str, Mapping[str, str]]]) -> list[str]:
    """A repository at `repo` with `commits` (message, files) oldest first; their shas."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    return [commit(repo, message, files, 1_700_000_000 + 60 * i) for i, (message, files) in enumerate(commits)]


CO_CHANGE_HISTORY: list[tuple[str, Mapping[str, str]]] = [
    ("Start the parser and its lexer", {"src/parser.py": "def parse():\n    pass\n", "src/lexer.py": "X = 1\n"}),
    ("Teach the parser nested brackets", {"src/parser.py": "def parse():\n    return 1\n", "src/lexer.py": "X = 2\n"}),
    ("Add the renderer for tables", {"src/render.py": "def render():\n    pass\n"}),
    ("Parse escaped quotes", {"src/parser.py": "def parse():\n    return 2\n", "src/lexer.py": "X = 3\n"}),
    ("Document the command line", {"README.md": "# tool\n"}),
]
"""parser.py changed three times, each time with lexer.py; render.py alone."""


PROCESS_EVENTS = ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.fork", "os.forkpty")
NETWORK_EVENTS = ("socket.connect", "socket.getaddrinfo")
FILE_EVENTS = ("open", "os.listdir", "os.scandir")
GATE_FILE = os.path.realpath(gate.__file__)
_recorders: list[list[tuple[str, tuple, bool]]] = []
_hooked = False


def _hook(event: str, args: tuple) -> None:
    if _recorders and (event.startswith(PROCESS_EVENTS) or event in NETWORK_EVENTS or event in FILE_EVENTS):
        by_gate = os.path.realpath(sys._getframe(1).f_code.co_filename) == GATE_FILE
        for record in _recorders:
            record.append((event, args, by_gate))


@contextmanager
def audited() -> Iterator[list[tuple[str, tuple, bool]]]:
    """The audit events (processes, network, opens and listings) raised in this block,
    each with whether the read gate raised it. An audit hook cannot be removed, so one
    hook serves every test and records only inside blocks."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_hook)
        _hooked = True
    record: list[tuple[str, tuple, bool]] = []
    _recorders.append(record)
    try:
        yield record
    finally:
        _recorders.remove(record)


def started(record: list[tuple[str, tuple, bool]]) -> list[str]:
    """Processes started and network reached, from an `audited` record."""
    return [event for event, _, _ in record if event.startswith(PROCESS_EVENTS) or event in NETWORK_EVENTS]


def opened_outside(record: list[tuple[str, tuple, bool]], root: Path) -> list[str]:
    """Paths opened or listed outside `root` (resolved), from an `audited` record. The
    gate's own open of a path inside `root` that resolves outside is allowed: it refuses
    the descriptor before reading a byte (ctx_lsp/gate.py, step 3)."""
    real_root = os.path.realpath(root)

    def inside(path: str) -> bool:
        return path == real_root or path.startswith(real_root + os.sep)

    out = []
    for event, args, by_gate in record:
        if event not in FILE_EVENTS or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
            continue
        given = os.path.abspath(os.fsdecode(args[0]))
        path = os.path.realpath(given)
        if inside(path) or (by_gate and inside(given)) or path.startswith(("/proc/", sys.prefix, sys.base_prefix)):
            continue
        out.append(path)
    return out
