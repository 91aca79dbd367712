"""Thin, read-only access to a git repository (bare or not) for the eval.

Everything goes through ``git --git-dir=...`` so the fetched mirrors under
/work/.mirror (bare, no work tree) can be used as they are, and nothing is ever
written into them. Workspaces for the systems under test are materialised with
``git archive`` into /tmp, once per parent commit, and reused; with ``--with-history``
each is instead a repository holding the history up to the parent commit and nothing
after it (``history_workspace``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WS_ROOT = Path(os.environ.get("CTX_EVAL_WS", "/tmp/eval-ws"))
DEFAULT_HISTORY_WS_ROOT = Path(os.environ.get("CTX_EVAL_WS_HISTORY", "/tmp/eval-ws-history"))
HISTORY_DEPTH = 3000
"""Commits of history a history workspace holds (``--depth``): more than ctx-lsp reads."""
HISTORY_BRANCH = "eval"

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def resolve_git_dir(path: str | os.PathLike[str]) -> Path:
    """Return the git dir of ``path`` (a bare repo, a .git dir, or a work tree)."""
    p = Path(path).resolve()
    if (p / ".git").exists():
        out = subprocess.run(
            ["git", "-C", str(p), "rev-parse", "--absolute-git-dir"],
            check=True,
            capture_output=True,
            text=True,
        )
        return Path(out.stdout.strip())
    return p


def repo_name(git_dir: Path) -> str:
    """A short stable name: 'owner+name' for /work/.mirror/owner+name/repo, else the dir name."""
    parts = [x for x in git_dir.parts if x not in ("repo", ".git")]
    name = parts[-1] if parts else "repo"
    return name.removesuffix(".git")


@dataclass(frozen=True)
class Hunk:
    """One ``-U0`` hunk: ``old_count == 0`` means a pure insertion after ``old_start``."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int


class GitRepo:
    """Read-only helper bound to one git dir."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.git_dir = resolve_git_dir(path)
        self.name = repo_name(self.git_dir)

    def git(self, *args: str, binary: bool = False) -> str | bytes:
        proc = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args],
            check=True,
            capture_output=True,
        )
        return proc.stdout if binary else proc.stdout.decode("utf-8", "replace")

    def text(self, *args: str) -> str:
        out = self.git(*args)
        assert isinstance(out, str)
        return out

    def is_shallow(self) -> bool:
        return self.text("rev-parse", "--is-shallow-repository").strip() == "true"

    def rev_parse(self, rev: str) -> str:
        return self.text("rev-parse", "--verify", f"{rev}^{{commit}}").strip()

    def commits(self, rev: str = "HEAD", since: str | None = None) -> list[tuple[str, str, str]]:
        """Non-merge commits reachable from ``rev`` (after ``since``), newest first.

        Returns (sha, parent, author); root commits are skipped (no parent to diff).
        """
        span = f"{since}..{rev}" if since else rev
        args = ["log", "--no-merges", "--format=%H %P%x00%an", span]
        rows = []
        for line in self.text(*args).splitlines():
            head, _, author = line.partition("\x00")
            shas = head.split()
            if len(shas) != 2:  # root commit: nothing to diff against
                continue
            rows.append((shas[0], shas[1], author))
        return rows

    def message_and_date(self, sha: str) -> tuple[str, str]:
        """Full message and committer date (ISO, for reporting the time span)."""
        out = self.text("log", "-1", "--format=%cI%n%B", sha)
        date, _, message = out.partition("\n")
        return message, date.strip()

    def numstat(self, parent: str, sha: str) -> list[tuple[str, int, int]]:
        """(path, added, deleted) per changed text file; renames split into delete + add."""
        rows = []
        out = self.text("diff", "--numstat", "--no-renames", parent, sha)
        for line in out.splitlines():
            added, deleted, path = line.split("\t", 2)
            if added == "-":  # binary
                continue
            rows.append((path, int(added), int(deleted)))
        return rows

    def hunks(self, parent: str, sha: str, path: str) -> list[Hunk]:
        out = self.text("diff", "-U0", "--no-renames", parent, sha, "--", path)
        hunks = []
        for line in out.splitlines():
            m = _HUNK_RE.match(line)
            if m:
                hunks.append(
                    Hunk(
                        int(m.group(1)),
                        int(m.group(2) if m.group(2) is not None else 1),
                        int(m.group(3)),
                        int(m.group(4) if m.group(4) is not None else 1),
                    )
                )
        return hunks

    def exists(self, rev: str, path: str) -> bool:
        proc = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "cat-file", "-e", f"{rev}:{path}"],
            capture_output=True,
        )
        return proc.returncode == 0

    def show(self, rev: str, path: str) -> str:
        return self.text("show", f"{rev}:{path}")

    def workspace(self, rev: str, root: Path = DEFAULT_WS_ROOT) -> Path:
        """Materialise ``rev`` as a plain directory (cached) and return its path.

        Extraction goes to a temp dir first and is renamed into place, so an
        interrupted run never leaves a half-written workspace behind.
        """
        dest = root / self.name / rev
        if dest.is_dir():
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{rev[:12]}-", dir=dest.parent))
        try:
            proc = subprocess.Popen(
                ["git", f"--git-dir={self.git_dir}", "archive", "--format=tar", rev],
                stdout=subprocess.PIPE,
            )
            assert proc.stdout is not None
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(tmp, filter="data")
                else:  # Python < 3.10.12 / 3.11.4
                    tar.extractall(tmp)
            if proc.wait() != 0:
                raise RuntimeError(f"git archive {rev} failed")
            os.replace(tmp, dest)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return dest

    def history_workspace(self, rev: str, root: Path = DEFAULT_HISTORY_WS_ROOT, depth: int = HISTORY_DEPTH) -> Path:
        """``rev`` checked out in a repository that holds its history and nothing after it.

        ``git init`` + ``git fetch --no-tags --depth N <mirror> <rev>`` fetches only objects
        reachable from ``rev``; the one branch points at it, no remote is configured and
        FETCH_HEAD is removed, so no later commit (the fix being measured) can leak in.
        Built in a temp dir and renamed into place, like ``workspace``.
        """
        dest = root / self.name / rev
        if (dest / ".git").is_dir():
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{rev[:12]}-", dir=dest.parent))
        try:

            def git(*args: str) -> None:
                subprocess.run(["git", "-C", str(tmp), *args], check=True, capture_output=True)

            git("init", "-q", "-b", HISTORY_BRANCH)
            git("fetch", "-q", "--no-tags", f"--depth={depth}", str(self.git_dir), rev)
            git("update-ref", f"refs/heads/{HISTORY_BRANCH}", rev)
            git("reset", "-q", "--hard", rev)
            (tmp / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
            os.replace(tmp, dest)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return dest
