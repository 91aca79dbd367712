"""Build eval instances from a repository's git history.

An instance is one real commit: its message is the *task*, the non-test source
files of the repository's language it changed (as they were in the parent) are the
*answer files*, and the functions/classes whose lines it touched are the *answer
functions* (Python: ``ast``; TypeScript/JavaScript, Go, Rust: tree-sitter, see
``langs.py``). The
systems under test only ever see the parent commit, so this measures whether a
context bundle built from the task text (and optionally the file being worked
on) contains the code the real change needed.

Usage::

    python benchmarks/eval/instances.py REPO_PATH --out FILE.jsonl [--max N] [--since REV] [--lang L]

REPO_PATH may be a bare git dir (e.g. /work/.mirror/owner+name/repo) or a work tree.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import langs
from gitrepo import GitRepo, Hunk

MIN_TASK_WORDS = 6
MAX_FILES = 6
DEFAULT_MAX_LINES = 400
# Bump when what an instance records changes: cached pools (run.load_pool) are keyed by it.
# 2: answer_lines (the changed lines' text, for line recall).
# 3: languages (TypeScript/JavaScript, Go, Rust); Python instances are unchanged.
INSTANCES_VERSION = 3
MIN_LINE_CHARS = 8  # a changed line must be at least this long (stripped) to identify itself

# Subjects that describe housekeeping rather than a task a coding agent would get.
SKIP_SUBJECT_RE = re.compile(
    r"^\s*(\[pre-commit\.ci\]|bump\b|release|releasing\b|version\b|merge\b|format|reformat|"
    r"black\b|isort\b|pre-commit|typo|fix(ed)? typo|lint\b|flake8|ruff\b|mypy\b|pyupgrade|"
    r"changelog|changes\b|prepare\b|revert\b|update (copyright|changelog|changes|version|"
    r"requirements|deps|dependencies|pre-commit)|start version|docs?\b|documentation\b)",
    re.IGNORECASE,
)
# Pure typing work: the "task" would be "add annotations", which is not what we measure.
TYPING_SUBJECT_RE = re.compile(
    r"\b(typing|type hints?|type annotations?|annotations?|type check(ing)?|py\.typed)\b",
    re.IGNORECASE,
)
# Lines that are VCS-conversion or bot noise inside messages, not part of the task.
NOISE_LINE_RE = re.compile(
    r"^(--HG--|branch\s*:.*|\*?\s*\[pre-commit\.ci\].*|for more information, see https://pre-commit\.ci)$",
    re.IGNORECASE,
)
TRAILER_RE = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|"
    r"suggested-by|helped-by|change-id|cc|pr-url|reviewed-on)\s*:.*$",
    re.IGNORECASE,
)
BOT_AUTHOR_RE = re.compile(r"\[bot\]|pre-commit-ci|dependabot", re.IGNORECASE)
# Outside Python (whose rules above stay as they were, so its instances do not move):
# conventional-commit housekeeping types and more bots.
CONVENTIONAL_SKIP_RE = re.compile(
    r"^\s*(chore|ci|build|style|tests?|bench|release|deps|docs?)\s*(\([^)]*\))?\s*!?\s*:", re.IGNORECASE
)
MORE_BOTS_RE = re.compile(r"renovate|github-actions|mergify", re.IGNORECASE)


def is_test_path(path: str) -> bool:
    """Tests are not answers: under a test(s)/ dir, or test_*.py, *_test.py, conftest.py."""
    return langs.is_test_path(path, "python")


def is_answer_candidate(path: str) -> bool:
    """A non-test .py file outside docs/ (docs/conf.py and doc examples are not code tasks)."""
    return langs.is_answer_candidate(path, "python")


def clean_message(message: str) -> str:
    """Commit message as the task text: subject + body, trailers removed, issue refs kept."""
    lines = [ln.rstrip() for ln in message.strip().splitlines()]
    kept = [ln for ln in lines if not TRAILER_RE.match(ln.strip()) and not NOISE_LINE_RE.match(ln.strip())]
    text = "\n".join(kept).strip()
    text = re.sub(r"^\[svn\]\s*", "", text)
    return re.sub(r"\n{3,}", "\n\n", text)


def task_is_usable(subject: str, task: str, lang: str = "python") -> bool:
    if SKIP_SUBJECT_RE.match(subject) or TYPING_SUBJECT_RE.search(subject):
        return False
    if lang != "python" and CONVENTIONAL_SKIP_RE.match(subject):
        return False
    return len(re.findall(r"[A-Za-z0-9_]+", task)) >= MIN_TASK_WORDS


# --------------------------------------------------------------------------- ast side


@dataclass(frozen=True)
class Scope:
    """One class/def on the path to a definition: how it looks in source."""

    kind: str  # "class" | "def"
    name: str
    line: int  # the `def`/`class` line (decorators excluded)
    text: str  # that line, stripped


@dataclass(frozen=True)
class Definition:
    """A module-level function/class or a member of a class (recursively).

    Functions nested inside functions are folded into their enclosing function:
    a change inside a closure is a change to the function an agent would open.
    """

    qualname: str
    kind: str
    start_line: int  # first decorator line
    def_line: int
    end_line: int
    chain: tuple[Scope, ...]


def definitions(source: str) -> list[Definition]:
    """Index of class-level and module-level definitions; raises SyntaxError if unparsable."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out: list[Definition] = []

    def visit(body: Iterable[ast.stmt], prefix: str, chain: tuple[Scope, ...]) -> None:
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            kind = "class" if isinstance(node, ast.ClassDef) else "def"
            text = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
            scope = Scope(kind, node.name, node.lineno, text)
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            qual = f"{prefix}{node.name}"
            here = (*chain, scope)
            out.append(Definition(qual, kind, start, node.lineno, node.end_lineno or node.lineno, here))
            if isinstance(node, ast.ClassDef):
                visit(node.body, qual + ".", here)

    visit(tree.body, "", ())
    return out


def innermost(defs: list[Definition], first: int, last: int) -> Definition | None:
    """The deepest definition whose range contains all of lines first..last."""
    best: Definition | None = None
    for d in defs:
        if d.start_line <= first and last <= d.end_line and (best is None or len(d.chain) > len(best.chain)):
            best = d
    return best


def touched_definitions(defs: list[Definition], hunks: list[Hunk], by_line: bool = False) -> list[Definition]:
    """Definitions (innermost per changed line) whose parent lines the diff deletes or modifies.

    A pure insertion after line L touches the definition that contains both L and
    L+1, i.e. code inserted strictly inside it (adding a method between two
    methods touches the class, not the neighbouring method).

    ``by_line``: definitions are told apart by qualname *and* definition line (Rust's
    ``impl Display for Foo`` and ``impl Debug for Foo`` both have a ``Foo.fmt``; TS
    overloads share a name). Python keeps one per qualname, as it always has.
    """
    hit: dict[object, Definition] = {}
    for h in hunks:
        if h.old_count == 0:
            spans = [(h.old_start, h.old_start + 1)] if h.old_start > 0 else []
        else:
            spans = [(ln, ln) for ln in range(h.old_start, h.old_start + h.old_count)]
        for first, last in spans:
            d = innermost(defs, first, last)
            if d is not None:
                hit[(d.qualname, d.def_line) if by_line else d.qualname] = d
    return sorted(hit.values(), key=lambda d: d.start_line)


def find_answer_lines(source: str, hunks: list[Hunk]) -> list[dict]:
    """The parent lines a diff changes, as text a bundle can be checked for.

    Changed = the parent-side lines a hunk removes or modifies; for a pure
    insertion after line L, the nearest non-blank parent line at or above L and
    the nearest at or below L+1 (the code the insertion sits between). A line
    counts only if its stripped text is at least ``MIN_LINE_CHARS`` long and
    occurs once in the file, so the text identifies the line. Returns
    ``{"line": n, "text": stripped, "kind": "changed" | "anchor"}`` per line,
    sorted by line number (1-based, as in the diff).
    """
    lines = [ln.strip() for ln in source.split("\n")]
    counts: dict[str, int] = {}
    for text in lines:
        counts[text] = counts.get(text, 0) + 1

    def nonblank(start: int, step: int) -> int | None:
        n = start
        while 1 <= n <= len(lines):
            if lines[n - 1]:
                return n
            n += step
        return None

    picked: dict[int, str] = {}
    for h in hunks:
        if h.old_count == 0:
            for n, kind in ((nonblank(h.old_start, -1), "anchor"), (nonblank(h.old_start + 1, 1), "anchor")):
                if n is not None:
                    picked.setdefault(n, kind)
        else:
            for n in range(h.old_start, h.old_start + h.old_count):
                if 1 <= n <= len(lines):
                    picked[n] = "changed"
    return [
        {"line": n, "text": lines[n - 1], "kind": kind}
        for n, kind in sorted(picked.items())
        if len(lines[n - 1]) >= MIN_LINE_CHARS and counts[lines[n - 1]] == 1
    ]


# --------------------------------------------------------------------------- instances


@dataclass
class Instance:
    repo: str
    commit: str
    parent: str
    task: str
    files: list[str]
    functions: list[dict]
    open_file: str | None
    changed_lines: dict[str, int] = field(default_factory=dict)
    # path -> [{"line", "text", "kind"}]: see find_answer_lines()
    answer_lines: dict[str, list[dict]] = field(default_factory=dict)
    git_dir: str = ""
    date: str = ""
    lang: str = "python"

    @property
    def id(self) -> str:
        return f"{self.repo}@{self.commit[:12]}"

    def answer(self, mode: str) -> tuple[list[str], list[dict]]:
        """Answer set for a mode: in 'open' mode the opened file is excluded."""
        if mode == "open":
            files = [f for f in self.files if f != self.open_file]
            funcs = [f for f in self.functions if f["path"] != self.open_file]
            return files, funcs
        return list(self.files), list(self.functions)

    def lines(self, mode: str) -> list[dict]:
        """Changed lines of the mode's answer files, each as ``{"path", "line", "text"}``."""
        files = self.answer(mode)[0]
        return [
            {"path": path, "line": ln["line"], "text": ln["text"]}
            for path in files
            for ln in self.answer_lines.get(path, [])
        ]

    @classmethod
    def from_json(cls, row: dict) -> Instance:
        return cls(**{k: row[k] for k in cls.__dataclass_fields__ if k in row})


def _outside(hunks: list[Hunk], ranges: list[tuple[int, int]]) -> list[Hunk]:
    """The hunks (split to single lines) that do not fall in any of ``ranges``."""
    if not ranges:
        return hunks

    def inside(line: int) -> bool:
        return any(a <= line <= b for a, b in ranges)

    out: list[Hunk] = []
    for h in _split(hunks):
        if h.old_count == 0:
            if not (inside(h.old_start) and inside(h.old_start + 1)):
                out.append(h)
        elif not inside(h.old_start):
            out.append(h)
    return out


def _split(hunks: list[Hunk]) -> list[Hunk]:
    """Hunks that change several parent lines split into one hunk per line."""
    out: list[Hunk] = []
    for h in hunks:
        if h.old_count <= 1:
            out.append(h)
        else:
            out += [Hunk(n, 1, h.new_start, h.new_count) for n in range(h.old_start, h.old_start + h.old_count)]
    return out


def build_instance(repo: GitRepo, sha: str, parent: str, max_lines: int, lang: str = "python") -> Instance | None:
    message, date = repo.message_and_date(sha)
    subject = message.strip().splitlines()[0] if message.strip() else ""
    task = clean_message(message)
    if not task_is_usable(subject, task, lang):
        return None
    stats = [(p, a, d) for p, a, d in repo.numstat(parent, sha) if langs.is_answer_candidate(p, lang)]
    if not 1 <= len(stats) <= MAX_FILES:
        return None
    if sum(a + d for _, a, d in stats) > max_lines:
        return None
    files: list[str] = []
    changed: dict[str, int] = {}
    functions: list[dict] = []
    lines: dict[str, list[dict]] = {}
    for path, added, deleted in stats:
        if not repo.exists(parent, path):  # a new file cannot be found in the parent
            continue
        source = repo.show(parent, path)
        hunks = repo.hunks(parent, sha, path)
        try:
            if lang == "python":
                defs: list = definitions(source)
            else:
                root = langs.parse(source, path)
                defs = langs.definitions(source, path, root)
                # Changes to test code inside a source file (Rust's #[cfg(test)] modules)
                # are not answers; a file changed only there is not an answer file.
                hunks = _outside(hunks, langs.test_ranges(source, path, root))
                if not hunks:
                    continue
                errors = langs.error_ranges(root)
                if errors and len(_outside(hunks, errors)) < len(_split(hunks)):
                    raise SyntaxError(f"{path}: a changed line is in a region tree-sitter cannot parse")
        except (SyntaxError, ValueError):
            # Python 2 era source (or a file tree-sitter cannot parse cleanly): its
            # function answers would be incomplete. Skip the commit.
            return None
        files.append(path)
        changed[path] = added + deleted
        lines[path] = find_answer_lines(source, hunks)
        for d in touched_definitions(defs, hunks, by_line=lang != "python"):
            functions.append(
                {
                    "path": path,
                    "qualname": d.qualname,
                    "kind": d.kind,
                    "start_line": d.start_line,
                    "def_line": d.def_line,
                    "end_line": d.end_line,
                    "chain": [asdict(s) for s in d.chain],
                }
            )
    if not files:
        return None
    open_file = max(files, key=lambda p: (changed[p], -files.index(p)))
    return Instance(
        repo=repo.name,
        commit=sha,
        parent=parent,
        task=task,
        files=sorted(files),
        functions=functions,
        open_file=open_file,
        changed_lines=changed,
        answer_lines=lines,
        git_dir=str(repo.git_dir),
        date=date,
        lang=lang,
    )


def extract(
    repo_path: str | Path,
    max_instances: int | None = None,
    since: str | None = None,
    rev: str = "HEAD",
    max_lines: int = DEFAULT_MAX_LINES,
    progress: bool = False,
    lang: str | None = None,
) -> list[Instance]:
    """Instances from newest to oldest non-merge commit (deterministic for a given history).

    ``lang``: the language whose files are answers; by default the one with the most
    non-test source files at ``rev`` (``langs.detect_language``).
    """
    repo = GitRepo(repo_path)
    lang = lang or repo_language(repo, rev)
    out: list[Instance] = []
    commits = repo.commits(rev, since)
    for i, (sha, parent, author) in enumerate(commits):
        if BOT_AUTHOR_RE.search(author) or (lang != "python" and MORE_BOTS_RE.search(author)):
            continue
        inst = build_instance(repo, sha, parent, max_lines, lang)
        if inst is not None:
            out.append(inst)
            if max_instances is not None and len(out) >= max_instances:
                break
        if progress and i % 200 == 0:
            print(f"[instances] {repo.name}: {i}/{len(commits)} commits, {len(out)} kept", file=sys.stderr)
    return out


def repo_language(repo: GitRepo, rev: str = "HEAD") -> str:
    return langs.detect_language(repo.text("ls-tree", "-r", "--name-only", rev).splitlines())


def write_jsonl(instances: list[Instance], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for inst in instances:
            fh.write(json.dumps(asdict(inst), sort_keys=True) + "\n")


def read_jsonl(path: str | Path) -> list[Instance]:
    with open(path, encoding="utf-8") as fh:
        return [Instance.from_json(json.loads(line)) for line in fh if line.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", help="git dir (bare is fine) or work tree")
    ap.add_argument("--out", required=True, help="output .jsonl")
    ap.add_argument("--max", type=int, default=None, help="stop after N instances")
    ap.add_argument("--since", default=None, help="only commits after REV (REV..HEAD)")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--lang", choices=langs.LANGUAGES, default=None, help="default: the repo's main language")
    ap.add_argument(
        "--max-lines",
        type=int,
        default=DEFAULT_MAX_LINES,
        help="skip commits changing more non-test source lines than this",
    )
    args = ap.parse_args(argv)
    repo = GitRepo(args.repo)
    insts = extract(args.repo, args.max, args.since, args.rev, args.max_lines, progress=True, lang=args.lang)
    write_jsonl(insts, args.out)
    nfun = sum(len(i.functions) for i in insts)
    nlines = sum(len(i.lines("cold")) for i in insts)
    nopen = sum(1 for i in insts if i.answer("open")[0])
    print(
        f"{repo.name}: {len(insts)} instances ({nfun} functions, {nlines} lines, {nopen} usable in open mode);"
        f" shallow={repo.is_shallow()} -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
