"""Checks of the eval's own logic on a tiny git repo made in tmp (no network, no Aider).

Run: python -m pytest benchmarks/eval/test_eval.py -q
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bm25_baseline
import metrics
import run as runner
from gitrepo import GitRepo, Hunk
from instances import clean_message, definitions, extract, find_answer_lines, is_test_path, task_is_usable
from metrics import Bundle, Piece
from systems import Bm25System, parse_aider_map

MOD_V1 = '''\
"""A module."""


def helper(x):
    return x + 1


class Foo:
    def bar(self):
        return 1

    def baz(self, items):
        total = 0
        for i in items:
            total += i
        return total


class Other:
    def baz(self):
        return "other"
'''

MOD_V2 = MOD_V1.replace(
    "        total = 0\n", "        if not items:\n            return None\n        total = 0\n"
).replace("    def baz(self, items):", "    def qux(self):\n        return 2\n\n    def baz(self, items):")

OTHER_V1 = """\
import os


@decorator
def load(path):
    # load
    os.fspath(path)
    return open(path).read()


def save(path, data):
    os.fspath(path)
"""

# Lines 6-8 of load become one: a too-short line (6), a line that also occurs in save (7)
# and a modified line (8); only line 8 identifies itself.
OTHER_V2 = OTHER_V1.replace(
    "    # load\n    os.fspath(path)\n    return open(path).read()", '    return open(path, encoding="utf-8").read()'
)


def git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture()
def tiny_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "pkg/mod.py", MOD_V1)
    write(root, "pkg/other.py", OTHER_V1)
    write(root, "tests/test_mod.py", "def test_x():\n    assert True\n")
    write(root, "README.md", "# tiny\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial import of the tiny package for tests")
    write(root, "pkg/mod.py", MOD_V2)
    write(root, "pkg/other.py", OTHER_V2)
    write(root, "tests/test_mod.py", "def test_x():\n    assert 1\n")
    write(root, "CHANGES.md", "- fixed\n")
    git(root, "add", "-A")
    git(
        root,
        "commit",
        "-q",
        "-m",
        "Make Foo.baz return None for empty input\n\nAlso close files in load.\n\n"
        "Fixes #12\n\nSigned-off-by: Someone <s@example.com>",
    )
    write(root, "pkg/mod.py", MOD_V2 + "\n__version__ = '2'\n")
    git(root, "commit", "-q", "-am", "Bump version to 2.0 for the next release today")
    return root


def test_extracts_one_instance_with_files_functions_and_open_file(tiny_repo: Path) -> None:
    insts = extract(tiny_repo)
    assert len(insts) == 1  # the bump and the root commit are skipped
    inst = insts[0]
    assert inst.files == ["pkg/mod.py", "pkg/other.py"]  # test file and CHANGES.md excluded
    assert "Signed-off-by" not in inst.task and "Fixes #12" in inst.task
    quals = {(f["path"], f["qualname"]) for f in inst.functions}
    # Foo.baz modified; qux inserted between bar and baz touches class Foo; load modified.
    assert quals == {("pkg/mod.py", "Foo.baz"), ("pkg/mod.py", "Foo"), ("pkg/other.py", "load")}
    load = next(f for f in inst.functions if f["qualname"] == "load")
    assert load["start_line"] == 4 and load["def_line"] == 5  # decorator vs def line
    assert inst.open_file == "pkg/mod.py"  # the most changed file
    files, funcs = inst.answer("open")
    assert files == ["pkg/other.py"] and [f["qualname"] for f in funcs] == ["load"]
    assert inst.parent == git(tiny_repo, "rev-parse", "HEAD~2").strip()


def test_bare_repo_and_workspace(tiny_repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(tiny_repo), str(bare)], check=True)
    inst = extract(bare)[0]
    ws = GitRepo(bare).workspace(inst.parent, tmp_path / "ws")
    assert (ws / "pkg" / "mod.py").read_text() == MOD_V1
    assert bm25_baseline.list_files(ws) == ["README.md", "pkg/mod.py", "pkg/other.py", "tests/test_mod.py"]
    assert GitRepo(bare).workspace(inst.parent, tmp_path / "ws") == ws  # cached


def test_history_workspace_holds_nothing_after_the_parent(tiny_repo: Path, tmp_path: Path) -> None:
    """A --with-history workspace is a repository at the parent with its history and no later
    commit, ref, remote or FETCH_HEAD: the fix being measured cannot leak in."""
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(tiny_repo), str(bare)], check=True)
    inst = extract(bare)[0]
    ws = GitRepo(bare).history_workspace(inst.parent, tmp_path / "ws-history")
    assert (ws / "pkg" / "mod.py").read_text() == MOD_V1
    assert git(ws, "rev-parse", "HEAD").strip() == inst.parent
    every = git(ws, "rev-list", "--all", "--reflog").split()
    assert every == [inst.parent]  # the tiny repo's history up to the parent is one commit
    assert inst.commit not in every
    assert subprocess.run(["git", "-C", str(ws), "cat-file", "-e", inst.commit], capture_output=True).returncode != 0
    assert git(ws, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/eval"]
    assert git(ws, "remote").strip() == ""
    assert not (ws / ".git" / "FETCH_HEAD").exists()
    assert git(ws, "status", "--porcelain").strip() == ""
    assert bm25_baseline.list_files(ws) == ["README.md", "pkg/mod.py", "pkg/other.py", "tests/test_mod.py"]
    assert GitRepo(bare).history_workspace(inst.parent, tmp_path / "ws-history") == ws  # cached


def test_helpers() -> None:
    assert is_test_path("tests/foo.py") and is_test_path("src/test_x.py")
    assert is_test_path("a/b_test.py") and not is_test_path("src/testing_utils.py")
    assert clean_message("Fix it\n\n--HG--\nbranch : trunk\nCo-authored-by: x") == "Fix it"
    assert not task_is_usable("Bump version", "Bump version to 3.0 for release soon ok")
    assert not task_is_usable("Fix", "Fix")
    assert task_is_usable("Fix crash", "Fix crash when the encoding is None (#355)")
    defs = {d.qualname: d for d in definitions(MOD_V1)}
    assert set(defs) == {"helper", "Foo", "Foo.bar", "Foo.baz", "Other", "Other.baz"}
    assert [s.name for s in defs["Foo.baz"].chain] == ["Foo", "baz"]


FOO_BAZ = {
    "path": "pkg/mod.py",
    "qualname": "Foo.baz",
    "kind": "def",
    "start_line": 12,
    "def_line": 12,
    "end_line": 16,
    "chain": [
        {"kind": "class", "name": "Foo", "line": 8, "text": "class Foo:"},
        {"kind": "def", "name": "baz", "line": 12, "text": "def baz(self, items):"},
    ],
}


def test_function_found_rules() -> None:
    # A map block showing only Other.baz must not count as showing Foo.baz.
    other_only = Piece("pkg/mod.py", "class Foo:\n    def bar(self):\nclass Other:\n    def baz(self):\n")
    assert not metrics.piece_shows_function(other_only, FOO_BAZ)
    chain_ok = Piece("pkg/mod.py", "class Foo:\n...\n    def baz(self, items):\n")
    assert metrics.piece_shows_function(chain_ok, FOO_BAZ)
    # With a range, the range must cover the def line; then `def baz` alone is enough.
    assert metrics.piece_shows_function(Piece("pkg/mod.py", "12  def baz(self, items):", 12, 16), FOO_BAZ)
    assert not metrics.piece_shows_function(Piece("pkg/mod.py", "def baz(self):", 19, 21), FOO_BAZ)
    assert not metrics.piece_shows_function(Piece("pkg/other.py", chain_ok.content), FOO_BAZ)
    # Numbered outline of the whole file: the gutter line for def_line decides.
    outline = " 8│ class Foo:\n 9│     def bar(self)\n12│     def baz(self, items)\n"
    assert metrics.piece_shows_function(Piece("pkg/mod.py", outline, 1, 21), FOO_BAZ)
    other_outline = " 8│ class Foo:\n 9│     def bar(self)\n20│ class Other:\n21│     def baz(self)\n"
    assert not metrics.piece_shows_function(Piece("pkg/mod.py", other_outline, 1, 21), FOO_BAZ)
    whole = Piece("pkg/mod.py", MOD_V1)  # a whole file shows everything in it
    assert metrics.piece_shows_function(whole, FOO_BAZ)


def test_score_and_aggregate(tiny_repo: Path) -> None:
    inst = extract(tiny_repo)[0]
    bundle = Bundle([Piece("pkg/mod.py", MOD_V1), Piece(None, "# README")], "some text", 0.01, 3)
    row = runner.score(inst, "cold", 100, bundle)
    assert row["files_found"] == ["pkg/mod.py"] and row["file_recall"] == 0.5
    assert row["func_recall"] == pytest.approx(2 / 3) and not row["overrun"]
    assert row["lines_total"] == 4 and row["line_recall"] == pytest.approx(3 / 4)  # other.py:8 not shown
    row_open = runner.score(inst, "open", 100, bundle)
    assert row_open["file_recall"] == 0.0 and row_open["func_recall"] == 0.0
    assert row_open["lines_total"] == 1 and row_open["line_recall"] == 0.0
    big = runner.score(inst, "cold", 1, bundle)
    assert big["overrun"]
    rows = [
        dict(row, system="s", mode="cold", budget=100),
        dict(row_open, system="s", mode="open", budget=100),
        {"error": "boom", "system": "s", "mode": "cold", "budget": 100, "files_total": 2, "funcs_total": 3}
        | {"lines_total": 4},
        dict(row, system="s", mode="cold", budget=100, lines_total=0, lines_found=[], line_recall=None),
    ]
    summ = runner.aggregate(rows)
    cold = summ["s|cold|100"]
    assert cold["file_recall"] == pytest.approx((0.5 + 0 + 0.5) / 3)  # error counts as 0
    assert cold["errors"] == 1
    # Line recall: the row without qualifying lines is left out, the error counts as 0.
    assert cold["n_with_lines"] == 2 and cold["line_recall"] == pytest.approx(0.375)
    assert cold["line_recall_pooled"] == pytest.approx(3 / 8)
    table = runner.markdown_table(summ, ["s"], ["cold", "open"], [100])
    assert "| s | cold | 3 (3/2) |" in table and "line R@100" in table


def test_changed_lines(tiny_repo: Path) -> None:
    inst = extract(tiny_repo)[0]
    got = {p: [(ln["line"], ln["text"], ln["kind"]) for ln in lines] for p, lines in inst.answer_lines.items()}
    assert got == {
        # Two pure insertions: after blank line 11 (anchors: 10 above, skipping the blank, and 12
        # below) and after line 12 (anchors 12 and 13). "return 1" is exactly 8 characters.
        "pkg/mod.py": [
            (10, "return 1", "anchor"),
            (12, "def baz(self, items):", "anchor"),
            (13, "total = 0", "anchor"),
        ],
        # Modified lines 6-8: "# load" is too short, "os.fspath(path)" occurs twice in the file.
        "pkg/other.py": [(8, "return open(path).read()", "changed")],
    }
    assert [(ln["path"], ln["line"]) for ln in inst.lines("open")] == [("pkg/other.py", 8)]
    assert len(inst.lines("cold")) == 4


def test_find_answer_lines_rules() -> None:
    src = "a = compute()\n\nx = 1\nresult = compute_all()\na = compute()\n\n\nfinal_value = 2\n"
    # Modified lines 3-5: "x = 1" too short, "a = compute()" occurs twice; only line 4 counts.
    assert [ln["line"] for ln in find_answer_lines(src, [Hunk(3, 3, 3, 1)])] == [4]
    # Pure insertion after line 6 (blank): the nearest non-blank lines are 5 (a duplicate) and 8.
    assert [(ln["line"], ln["kind"]) for ln in find_answer_lines(src, [Hunk(6, 0, 7, 2)])] == [(8, "anchor")]
    # Insertion at the top of the file: only the line below; a line both changed and an anchor counts once.
    top = find_answer_lines(src, [Hunk(0, 0, 1, 1), Hunk(4, 1, 5, 1), Hunk(4, 0, 6, 1)])
    assert [(ln["line"], ln["kind"]) for ln in top] == [(4, "changed")]


def _ln(path: str, line: int, text: str) -> dict:
    return {"path": path, "line": line, "text": text}


def test_line_found_rules() -> None:
    baz = _ln("pkg/mod.py", 12, "def baz(self, items):")
    total = _ln("pkg/mod.py", 13, "total = 0")
    # A whole file (BM25) shows every line; another file's piece never does.
    assert metrics.piece_shows_line(Piece("pkg/mod.py", MOD_V1), total)
    assert not metrics.piece_shows_line(Piece("pkg/other.py", MOD_V1), total)
    # A ctx-lsp section with a gutter: the gutter is ignored, the range and the number must fit.
    focused = " 12│     def baz(self, items):\n 13│         total = 0\n    │ …\n"
    assert metrics.piece_shows_line(Piece("pkg/mod.py", focused, 12, 16), total)
    assert metrics.piece_shows_line(Piece("pkg/mod.py", focused, 12, 16), baz)
    # The text is there but the section's range does not cover the line.
    assert not metrics.piece_shows_line(Piece("pkg/mod.py", focused, 1, 5), total)
    assert not metrics.piece_shows_line(Piece("pkg/mod.py", "        total = 0\n", 1, 5), total)
    # A ranged section whose gutter puts the text at another line number.
    assert not metrics.piece_shows_line(Piece("pkg/mod.py", "  3│         total = 0\n", 1, 21), total)
    # An outline's signature with an appended summary is not the whole line.
    outline = " 12│     def baz(self, items)  # Sum the items.\n"
    assert not metrics.piece_shows_line(Piece("pkg/mod.py", outline, 1, 21), baz)
    # An Aider map block (no range) needs only the text: a signature, never a body line.
    aider = parse_aider_map("pkg/mod.py:\n⋮\n│class Foo:\n⋮\n│    def baz(self, items):\n⋮\n", {"pkg/mod.py"})[0]
    assert metrics.piece_shows_line(aider, baz) and not metrics.piece_shows_line(aider, total)
    # Part of a line is not the line.
    assert not metrics.piece_shows_line(Piece("pkg/mod.py", "total = 0 if x else 1"), total)
    bundle = Bundle([Piece("pkg/mod.py", focused, 12, 16), Piece(None, "total = 0")], "", 0.0)
    assert metrics.found_lines(bundle, [baz, total, _ln("pkg/other.py", 8, "total = 0")]) == [baz, total]


def test_bm25_packs_whole_files_within_budget(tiny_repo: Path) -> None:
    inst = extract(tiny_repo)[0]
    ws = GitRepo(tiny_repo).workspace(inst.parent, tiny_repo.parent / "ws")
    files = bm25_baseline.list_files(ws)
    assert bm25_baseline.tokenize("get_HTTPResponse.parseURL pkg/mod.py") == [
        "get",
        "http",
        "response",
        "parse",
        "url",
        "pkg",
        "mod",
    ]
    system = Bm25System()
    b = system.bundle(ws, files, "Foo baz items total", 10_000, None)
    assert next(p.path for p in b.pieces) == "pkg/mod.py"
    assert "pkg/other.py" not in b.paths()  # no query term in it: not retrieved
    small = system.bundle(ws, files, "Foo baz items total", 20, None)
    assert small.pieces == [] and small.text == ""
    opened = system.bundle(ws, files, "Foo baz items total", 10_000, "pkg/other.py")
    assert [p.path for p in opened.pieces][:2] == ["pkg/other.py", "pkg/mod.py"]


def test_parse_aider_map() -> None:
    text = (
        "\nREADME.md\n\npkg/mod.py:\n⋮\n│class Foo:\n⋮\n│    def baz(self, items):\n⋮\n"
        "\npkg/other.py:\n│def load(path):\n"
    )
    pieces = parse_aider_map(text, {"README.md", "pkg/mod.py", "pkg/other.py"})
    assert [p.path for p in pieces] == ["README.md", "pkg/mod.py", "pkg/other.py"]
    assert metrics.piece_shows_function(pieces[1], FOO_BAZ)


def test_chunk_baseline_packs_disjoint_numbered_windows_within_budget() -> None:
    """The chunk baseline shows the window holding the task's words first, with line
    numbers the line-recall rule reads, never overlapping windows, never over budget."""
    lines = [f"value_{n} = compute(value_{n - 1})" for n in range(1, 200)]
    lines[120] = "charset = detect_charset(raw_bytes)"
    index = bm25_baseline.ChunkIndex({"pkg/decode.py": lines, "pkg/other.py": lines[:50]})
    chosen = bm25_baseline.pack_chunks(index, "detect the charset", 1200)
    assert chosen and sum(n for *_, n in chosen) <= 1200
    path, start, end, block, _ = chosen[0]
    assert path == "pkg/decode.py" and start <= 121 <= end
    piece = Piece(path, block, start, end)
    assert metrics.piece_shows_line(piece, {"path": path, "line": 121, "text": lines[120]})
    covered: set[tuple[str, int]] = set()
    for path, start, end, *_ in chosen:
        span = {(path, n) for n in range(start, end + 1)}
        assert not span & covered
        covered |= span


# --------------------------------------------------------------------------- TypeScript, Go, Rust

TS_V1 = """\
import { x } from './x'

/** Build the greeting. */
export const greet = (name: string): string => {
  return `hello ${name}`
}

export class Router<T> {
  routes: string[] = []

  add(path: string): void {
    this.routes.push(path)
  }

  match = (path: string) => {
    return this.routes.includes(path)
  }
}
"""
TS_V2 = TS_V1.replace("return `hello ${name}`", "return `hello, ${name}!`").replace(
    "this.routes.push(path)", "this.routes.push(path.toLowerCase())"
)

GO_V1 = """\
package stack

// Stack is a LIFO.
type Stack[T any] struct {
\titems []T
}

// Push adds x on top.
func (s *Stack[T]) Push(x T) {
\ts.items = append(s.items, x)
}

func New[T any]() *Stack[T] {
\treturn &Stack[T]{}
}
"""
GO_V2 = GO_V1.replace(
    "\ts.items = append(s.items, x)", "\tif s == nil {\n\t\treturn\n\t}\n\ts.items = append(s.items, x)"
)

RS_V1 = """\
pub struct Buf<T> {
    data: Vec<T>,
}

impl<T: Clone> Source for Buf<T> {
    /// Read everything.
    fn read(&self) -> Vec<T> {
        self.data.clone()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_back_what_was_written() {
        assert_eq!(1, 1);
    }
}
"""
RS_V2 = RS_V1.replace("        self.data.clone()", "        self.data.iter().cloned().collect()").replace(
    "assert_eq!(1, 1);", "assert_eq!(2, 2);"
)


@pytest.fixture()
def poly_repo(tmp_path: Path) -> Path:
    """One commit per language, each changing one function (and, in Rust, a test module)."""
    pytest.importorskip("tree_sitter_typescript")
    pytest.importorskip("tree_sitter_go")
    pytest.importorskip("tree_sitter_rust")
    root = tmp_path / "poly"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "src/greet.ts", TS_V1)
    write(root, "src/greet.test.ts", "test('x', () => {})\n")
    write(root, "stack/stack.go", GO_V1)
    write(root, "src/buf.rs", RS_V1)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial import of the polyglot fixtures")
    write(root, "src/greet.ts", TS_V2)
    write(root, "src/greet.test.ts", "test('y', () => {})\n")
    git(root, "commit", "-q", "-am", "fix(router): match paths case-insensitively and punctuate the greeting")
    write(root, "stack/stack.go", GO_V2)
    git(root, "commit", "-q", "-am", "Push on a nil stack must not panic (#42)")
    write(root, "src/buf.rs", RS_V2)
    git(root, "commit", "-q", "-am", "perf(buf): read without cloning the whole vector at once")
    git(root, "commit", "-q", "--allow-empty", "-m", "chore(deps): update every dependency to its latest")
    return root


def _gold(root: Path, lang: str) -> list:
    return extract(root, lang=lang)


def test_typescript_gold_arrow_const_and_class_method(poly_repo: Path) -> None:
    (inst,) = _gold(poly_repo, "typescript")  # the chore and other languages' commits are not TS tasks
    assert inst.lang == "typescript" and inst.files == ["src/greet.ts"]  # the .test.ts is not an answer
    fns = {f["qualname"]: f for f in inst.functions}
    assert set(fns) == {"greet", "Router.add"}
    assert fns["greet"]["def_line"] == 4 and fns["greet"]["start_line"] == 3  # JSDoc belongs to it
    assert [s["name"] for s in fns["Router.add"]["chain"]] == ["Router", "add"]
    # A map-like piece (no range): the class, then the method inside its block.
    shown = Piece("src/greet.ts", "export class Router<T> {\n  add(path: string): void {\n")
    assert metrics.piece_shows_function(shown, fns["Router.add"])
    other = Piece("src/greet.ts", "export class Other {\n}\nexport class Router<T> {\n  routes: string[]\n")
    assert not metrics.piece_shows_function(other, fns["Router.add"])
    assert metrics.piece_shows_function(Piece("src/greet.ts", "export const greet = (name: string)"), fns["greet"])
    assert not metrics.piece_shows_function(Piece("src/greet.ts", "greet('x')\n"), fns["greet"])
    assert {ln["text"] for ln in inst.answer_lines["src/greet.ts"]} == {
        "return `hello ${name}`",
        "this.routes.push(path)",
    }


def test_go_gold_receiver_method(poly_repo: Path) -> None:
    (inst,) = _gold(poly_repo, "go")
    (fn,) = inst.functions
    assert fn["qualname"] == "Stack.Push" and fn["def_line"] == 9 and fn["start_line"] == 8
    # Found when the method's line is shown, receiver included; not for another type's Push.
    assert metrics.piece_shows_function(Piece("stack/stack.go", "func (s *Stack[T]) Push(x T) {"), fn)
    assert not metrics.piece_shows_function(Piece("stack/stack.go", "func (q *Queue[T]) Push(x T) {"), fn)
    ranged = Piece(
        "stack/stack.go", "  9│ func (s *Stack[T]) Push(x T) {\n 10│ \ts.items = append(s.items, x)\n", 9, 10
    )
    assert metrics.piece_shows_function(ranged, fn)


def test_rust_gold_impl_method_and_test_module_left_out(poly_repo: Path) -> None:
    (inst,) = _gold(poly_repo, "rust")
    # The change inside #[cfg(test)] mod tests is test code: neither a function nor a line of the answer.
    assert [f["qualname"] for f in inst.functions] == ["Buf.read"]
    assert [ln["line"] for ln in inst.answer_lines["src/buf.rs"]] == [8]
    fn = inst.functions[0]
    assert fn["def_line"] == 7 and fn["start_line"] == 6  # the /// doc comment belongs to it
    # Aider-like map: the impl header then the method; another impl block of Buf first is fine.
    two_blocks = "impl<T> Buf<T> {\n    fn new() -> Self {\n}\n"
    two_blocks += "impl<T: Clone> Source for Buf<T> {\n    fn read(&self) -> Vec<T> {\n"
    assert metrics.piece_shows_function(Piece("src/buf.rs", two_blocks), fn)
    wrong = "impl<T: Clone> Source for Other<T> {\n    fn read(&self) -> Vec<T> {\n"
    assert not metrics.piece_shows_function(Piece("src/buf.rs", wrong), fn)


def test_language_rules() -> None:
    pytest.importorskip("tree_sitter_typescript")
    pytest.importorskip("tree_sitter_rust")
    import langs

    assert langs.detect_language(["a.go", "b.go", "c_test.go", "x.py"]) == "go"
    assert langs.is_test_path("src/a.test.tsx", "typescript") and langs.is_test_path("runtime-tests/x.ts", "typescript")
    assert langs.is_test_path("pkg/a_test.go", "go") and langs.is_test_path("crate/tests/it.rs", "rust")
    assert not langs.is_answer_candidate("examples/demo.rs", "rust") and langs.is_answer_candidate("src/lib.rs", "rust")
    assert langs.is_answer_candidate("src/index.ts", "typescript") and not langs.is_answer_candidate("a.py", "go")
    src = "impl<'a> Display for &'a mut crate::x::Bar<'a> {\n    fn fmt(&self) {}\n}\n"
    assert [d.qualname for d in langs.definitions(src, "a.rs")] == ["Bar", "Bar.fmt"]
    # A file with a syntax error still gives its definitions; only the ERROR region is unusable.
    root = langs.parse("function ok() {}\nconst x = = 1\nfunction fine() {}\n", "a.ts")
    assert langs.error_ranges(root) == [(2, 2)]
    assert [d.qualname for d in langs.definitions("", "a.ts", root)] == ["ok", "fine"]


def test_bm25_reads_the_instance_language(tmp_path: Path) -> None:
    write(tmp_path, "stack/stack.go", GO_V1)
    write(tmp_path, "tool.py", "def push():\n    pass\n")
    system = Bm25System()
    system.set_language("go")
    files = bm25_baseline.list_files(tmp_path)
    b = system.bundle(tmp_path, files, "Push on a nil stack", 10_000, None)
    assert b.paths() == {"stack/stack.go"} and "```go\n" in b.text
