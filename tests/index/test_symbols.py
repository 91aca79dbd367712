"""Tests for ctx_lsp/index/symbols.py: one symbol's code on demand (ctx/symbol's core)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_lsp.config import Config
from ctx_lsp.engine import Engine
from ctx_lsp.errors import NotFound, OutsideWorkspace
from ctx_lsp.index.symbols import MAX_TOKENS_CAP, SymbolTable, lookup, render_markdown
from ctx_lsp.index.workspace import Workspace
from ctx_lsp.tokens import counter_for
from ctx_lsp.vocabulary import SymbolRequest, SymbolResult
from tests.conftest import write_tree

COUNTER = counter_for()

CLIENT = textwrap.dedent(
    '''\
    """A client."""

    import functools

    RETRIES = {
        "connect": 3,

        "read": 5,
    }


    @functools.total_ordering
    class Client:
        """Talks to a server."""

        def __init__(self, host: str) -> None:
            self.host = host

        def send(self, data: bytes) -> int:
            """Send bytes."""
            return len(data)

        def close(self) -> None:
            pass


    def send(data: bytes) -> int:
        """Send with a fresh client."""
        return Client("localhost").send(data)
    '''
)
SERVER = textwrap.dedent(
    '''\
    """A server."""


    class Server:
        def send(self, data: bytes) -> None:
            print(data)

        def serve(self) -> None:
            def send(reply):
                return reply

            send(b"ok")
    '''
)
FILES: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/client.py": CLIENT,
    "pkg/server.py": SERVER,
    "docs/guide.md": "# Guide\n\n## Install\n\nRun pip.\n\n## Use\n\nCall send.\n",
}


class Indexed:
    """A real workspace and symbol table over `files`, and `ask` as ctx/symbol asks."""

    def __init__(
        self, root: Path, files: Mapping[str, str | bytes] = FILES, scores: Mapping[str, float] | None = None
    ) -> None:
        write_tree(root, dict(files))
        config = Config()
        config.index.cache = False
        self.root = root
        self.workspace = Workspace([root], config)
        self.table = SymbolTable()
        self.workspace.subscribe(self.table.update)
        self.workspace.index()
        self.scores = {str(root / rel): score for rel, score in (scores or {}).items()}

    def ask(
        self, name: str, *, path: str | None = None, include_body: bool = True, max_tokens: int | None = None
    ) -> SymbolResult:
        request = SymbolRequest(name, path, include_body, max_tokens)
        return lookup(request, self.table, self.workspace, COUNTER, lambda: self.scores)


@pytest.fixture
def indexed(tmp_path: Path) -> Indexed:
    return Indexed(tmp_path / "ws")


def source_lines(root: Path, rel: str, start: int, end: int) -> str:
    return "\n".join((root / rel).read_text().split("\n")[start - 1 : end]) + "\n"


def test_a_qualname_gives_its_exact_source_decorators_and_docstring_included(indexed: Indexed) -> None:
    """Ensure that a qualname resolves to one definition whose body is its exact source lines."""
    result = indexed.ask("Client")
    assert (result.total_matches, result.ambiguous, result.note) == (1, False, None)
    match = result.matches[0]
    assert (match.path, match.qualname, match.kind) == ("pkg/client.py", "Client", "class")
    assert (match.range.start_line, match.range.end_line) == (12, 24)
    assert match.body == source_lines(indexed.root, "pkg/client.py", 12, 24)
    assert match.body.startswith('@functools.total_ordering\nclass Client:\n    """Talks to a server."""')
    assert match.tokens == COUNTER.count(match.body) and not match.truncated
    assert match.uri == (indexed.root / "pkg/client.py").as_uri()
    assert match.signature == "class Client"


def test_module_qualified_and_call_style_names_resolve(indexed: Indexed) -> None:
    """Ensure that `pkg.client.Client.send` and `Client.send()` mean `Client.send`."""
    for name in ("pkg.client.Client.send", "Client.send()", "  Client.send "):
        result = indexed.ask(name)
        assert [m.qualname for m in result.matches] == ["Client.send"], name
        assert result.matches[0].body == source_lines(indexed.root, "pkg/client.py", 19, 21)


def test_a_bare_name_lists_every_definition_exact_first(tmp_path: Path) -> None:
    """Ensure that an ambiguous bare name lists its candidates: the exact (top-level) one
    first, then by graph rank, functions local to a function last."""
    indexed = Indexed(tmp_path / "ws", scores={"pkg/server.py": 1.0, "pkg/client.py": 0.2})
    result = indexed.ask("send", include_body=False)
    assert result.ambiguous and result.total_matches == 4
    assert [(m.path, m.qualname) for m in result.matches] == [
        ("pkg/client.py", "send"),
        ("pkg/server.py", "Server.send"),
        ("pkg/client.py", "Client.send"),
        ("pkg/server.py", "Server.serve.send"),
    ]
    assert all(m.body is None and m.tokens == 0 for m in result.matches)
    assert result.note is not None and "4 definitions answer to 'send'" in result.note and "path" in result.note


def test_graph_rank_orders_namesakes_in_a_real_engine(tmp_path: Path) -> None:
    """Ensure that of two files defining `helper`, the one the rest of the code uses comes first."""
    files: dict[str, str | bytes] = {
        "pkg/__init__.py": "",
        "pkg/used.py": "def helper():\n    return 1\n",
        "pkg/unused.py": "def helper():\n    return 2\n",
        **{f"pkg/user{i}.py": f"from pkg.used import helper\n\n\ndef f{i}():\n    return helper()\n" for i in range(3)},
    }
    engine = Engine([write_tree(tmp_path / "ws", files)], {"index": {"cache": False, "watch": False}})
    engine.index()
    result = engine.symbol(SymbolRequest("helper"))
    assert [m.path for m in result.matches] == ["pkg/used.py", "pkg/unused.py"]
    engine.close()


def test_a_multi_line_constant_spans_its_whole_value(indexed: Indexed) -> None:
    """Ensure that a constant's range covers its whole literal, blank lines inside included."""
    match = indexed.ask("RETRIES").matches[0]
    assert (match.kind, match.range.start_line, match.range.end_line) == ("constant", 5, 9)
    assert match.body == 'RETRIES = {\n    "connect": 3,\n\n    "read": 5,\n}\n'
    listed = indexed.ask("RETRIES", include_body=False).matches[0]
    assert (listed.range.end_line, listed.body) == (9, None)


def test_a_markdown_heading_is_a_symbol_too(indexed: Indexed) -> None:
    """Ensure that a heading name gives its section."""
    match = indexed.ask("Install").matches[0]
    assert (match.kind, match.qualname, match.body) == ("heading", "Guide > Install", "## Install\n\nRun pip.\n\n")
    assert "```markdown\n## Install" in render_markdown(indexed.ask("Install"))


def test_a_long_body_is_cut_at_a_line_and_says_how_to_get_the_rest(tmp_path: Path) -> None:
    """Ensure that a body over max_tokens keeps whole lines (cut before a member), counts
    its real tokens, and ends with a marker naming the lines, members and a max_tokens."""
    methods = "\n".join(
        f"    def method_{i}(self, value: int) -> int:\n        total = value * {i}\n        return total + {i}\n"
        for i in range(40)
    )
    indexed = Indexed(tmp_path / "ws", {"big.py": f'class Big:\n    """Many methods."""\n\n{methods}'})
    whole = indexed.ask("Big", max_tokens=MAX_TOKENS_CAP).matches[0]
    assert not whole.truncated
    cut = indexed.ask("Big", max_tokens=200).matches[0]
    assert cut.truncated and cut.tokens <= 200 and cut.tokens == COUNTER.count(cut.body or "")
    *kept, marker = (cut.body or "").rstrip("\n").split("\n")
    assert (whole.body or "").startswith("\n".join(kept) + "\n")
    assert kept[-1].strip().startswith("return"), "the cut lands after a whole method"
    assert marker.startswith("# … ") and "more lines not shown" in marker
    assert "members: method_" in marker and "'Big.method_" in marker
    suggested = int(marker.split("max_tokens=")[1].split()[0])
    assert suggested >= whole.tokens
    assert not indexed.ask("Big", max_tokens=suggested).matches[0].truncated


def test_matches_share_the_budget_in_rank_order(tmp_path: Path) -> None:
    """Ensure that with several matches the best gets its body, later ones only whole and
    only while the budget lasts, and those left out are still listed."""
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    files: dict[str, str | bytes] = {
        "a.py": "def run():\n    return 1\n",
        "b.py": f"def run():\n{body}\n",
        "c.py": "def run():\n    return 3\n",
    }
    indexed = Indexed(tmp_path / "ws", files, scores={"a.py": 1.0, "b.py": 0.5, "c.py": 0.1})
    result = indexed.ask("run", max_tokens=300)
    assert [m.path for m in result.matches] == ["a.py", "b.py", "c.py"]
    a, b, c = result.matches
    assert a.body == "def run():\n    return 1\n" and b.body is None and c.body == "def run():\n    return 3\n"
    assert sum(m.tokens for m in result.matches) <= 300
    assert result.note is not None and "1 more match listed without a body (run)" in result.note


def test_an_unknown_name_suggests_close_names(indexed: Indexed) -> None:
    """Ensure that no match is an empty answer with a note of close names, not an error."""
    for name, close in (("sned", "send"), ("Clinet.send", "Client.send"), ("Client.sned", "Client.send")):
        result = indexed.ask(name)
        assert (result.matches, result.total_matches, result.ambiguous) == ((), 0, False)
        assert result.note is not None and f"no definition named {name!r}" in result.note
        assert close in result.note.split("close names: ")[1], result.note
    nothing = indexed.ask("zzqqxx")
    assert nothing.note is not None and "nor one close to it" in nothing.note


def test_path_restricts_to_a_file_or_folder(indexed: Indexed) -> None:
    """Ensure that path narrows the lookup to one file or folder, relative or absolute or a URI's path."""
    in_server = indexed.ask("send", path="pkg/server.py", include_body=False)
    assert {m.qualname for m in in_server.matches} == {"Server.send", "Server.serve.send"}
    absolute = indexed.ask("send", path=str(indexed.root / "pkg" / "client.py"), include_body=False)
    assert {m.qualname for m in absolute.matches} == {"send", "Client.send"}
    in_folder = indexed.ask("send", path="pkg", include_body=False)
    assert in_folder.total_matches == 4
    missing_here = indexed.ask("Server", path="pkg/client.py")
    assert missing_here.matches == () and missing_here.note is not None and "in pkg/client.py" in missing_here.note


def test_a_path_outside_or_missing_is_refused(indexed: Indexed) -> None:
    """Ensure that a path outside the workspace is refused and a missing one is NotFound."""
    (indexed.root.parent / "secret.py").write_text("def send():\n    pass\n")
    with pytest.raises(OutsideWorkspace):
        indexed.ask("send", path="../secret.py")
    with pytest.raises(NotFound, match="path: nowhere.py"):
        indexed.ask("send", path="nowhere.py")


def test_an_editor_buffer_wins_over_the_disk(indexed: Indexed) -> None:
    """Ensure that an open, unsaved buffer's text (and its shifted lines) is what is shown."""
    twice = '        """Send bytes, twice."""\n        data = data * 2\n'
    edited = CLIENT.replace('        """Send bytes."""\n', twice)
    indexed.workspace.open_document(str(indexed.root / "pkg/client.py"), edited, 2, edited=True)
    match = indexed.ask("Client.send").matches[0]
    assert "data = data * 2" in (match.body or "") and (match.range.start_line, match.range.end_line) == (19, 22)
    after = indexed.ask("close").matches[0]
    assert after.range.start_line == 24 and after.body == "    def close(self) -> None:\n        pass\n"


def test_a_file_changed_on_disk_since_indexing_is_shown_as_it_is_now(indexed: Indexed) -> None:
    """Ensure that a body is cut from the text actually read, relocated in its new outline."""
    path = indexed.root / "pkg/client.py"
    path.write_text("# a new first line\n\n" + CLIENT)
    match = indexed.ask("Client.send").matches[0]
    assert (match.range.start_line, match.range.end_line) == (21, 23)
    assert match.body == source_lines(indexed.root, "pkg/client.py", 21, 23)


@settings(max_examples=30, deadline=None)
@given(max_tokens=st.integers(min_value=100, max_value=1500), name=st.sampled_from(["Big", "method_3", "run"]))
def test_bodies_never_exceed_max_tokens(big_workspace: Indexed, max_tokens: int, name: str) -> None:
    """Ensure that for any budget the bodies together stay within it, each a real count,
    and every body is the definition's first lines (plus a marker when cut)."""
    result = big_workspace.ask(name, max_tokens=max_tokens)
    assert sum(m.tokens for m in result.matches) <= max_tokens
    for m in result.matches:
        if m.body is None:
            continue
        assert m.tokens == COUNTER.count(m.body)
        source = source_lines(big_workspace.root, m.path, m.range.start_line, m.range.end_line)
        shown = m.body.rstrip("\n").split("\n")
        kept = shown[:-1] if m.truncated else shown
        assert source.startswith("\n".join(kept))


@pytest.fixture(scope="module")
def big_workspace(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    methods = "\n".join(
        f"    def method_{i}(self):\n" + "".join(f"        a{j} = {j}\n" for j in range(i)) for i in range(30)
    )
    files: dict[str, str | bytes] = {
        "big.py": f"class Big:\n{methods}",
        "a.py": "def run():\n" + "".join(f"    b{j} = {j}\n" for j in range(80)),
        "b.py": "def run():\n    return 2\n",
        "c.py": "class C:\n    def method_3(self):\n        return 3\n",
    }
    return Indexed(tmp_path_factory.mktemp("symbols") / "ws", files)


def test_a_file_deleted_since_indexing_is_listed_without_a_body(indexed: Indexed) -> None:
    """Ensure that a definition whose file went away (the watcher has not caught up) is
    still listed from the index, without a body, and the note says why."""
    (indexed.root / "pkg/server.py").unlink()
    result = indexed.ask("Server.send")
    assert [(m.qualname, m.body) for m in result.matches] == [("Server.send", None)]
    assert result.note is not None and "could not read the source of Server.send" in result.note


POLYGLOT = {
    "stack/stack.go": (
        "package stack\n\n// Stack is a LIFO.\ntype Stack[T any] struct{ items []T }\n\n"
        "// Push adds v.\nfunc (s *Stack[T]) Push(v T) {\n\ts.items = append(s.items, v)\n}\n"
    ),
    "src/buf.rs": (
        "pub struct Buf<T> { data: Vec<T> }\n\npub trait Source { fn read(&mut self) -> usize; }\n\n"
        "impl<T> Source for Buf<T> {\n    fn read(&mut self) -> usize {\n        self.data.len()\n    }\n}\n"
    ),
    "src/store.ts": (
        "export class Store {\n  getState(): number {\n    return this.state\n  }\n}\n"
        "export const createStore = () => new Store()\n"
    ),
}


def test_type_member_names_resolve_in_go_rust_and_typescript(tmp_path: Path) -> None:
    """Ensure that `Type.member` finds a Go method by its receiver type, a Rust method by
    its impl type and a TypeScript method by its class, with bodies, and that
    module-qualified and bare names work too."""
    indexed = Indexed(tmp_path / "ws", POLYGLOT)
    push = indexed.ask("Stack.Push")
    assert [m.qualname for m in push.matches] == ["Stack.Push"]
    assert "s.items = append(s.items, v)" in (push.matches[0].body or "")
    read = indexed.ask("Buf.read")
    assert [m.qualname for m in read.matches] == ["Buf.read"] and "self.data.len()" in (read.matches[0].body or "")
    state = indexed.ask("store.Store.getState")
    assert [m.qualname for m in state.matches] == ["Store.getState"] and state.matches[0].path == "src/store.ts"
    assert [m.qualname for m in indexed.ask("createStore").matches] == ["createStore"]
    assert "```typescript" in render_markdown(state)
