"""Tests for ctx_lsp/code/python.py: tree-sitter outlines of Python source."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_lsp.code.languages import python as python_module
from ctx_lsp.code.languages.python import outline_python
from ctx_lsp.code.outline import Outline, Symbol, outline_for, outline_from_json, outline_to_json, split_lines
from tests.code.conftest import SAMPLE


def by_qualname(o: Outline) -> dict[str, Symbol]:
    return {s.qualname: s for s in o.symbols}


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    for number, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return number
    raise AssertionError(needle)


def test_module_docstring_and_counts(sample: Outline) -> None:
    """Ensure that the module docstring is its first line, after a shebang and comments."""
    assert sample.language == "python"
    assert sample.docstring == "Sample module for outlines."
    assert sample.line_count == len(SAMPLE.splitlines())
    assert not sample.has_errors


def test_symbols_in_source_order_with_nesting(sample: Outline) -> None:
    """Ensure that nested definitions are flattened in source order with depth and parent."""
    assert [(s.qualname, s.kind, s.depth, s.parent) for s in sample.symbols] == [
        ("compat", "function", 0, ""),
        ("compat", "function", 0, ""),
        ("Foo", "class", 0, ""),
        ("Foo.bar", "method", 1, "Foo"),
        ("Foo.baz", "method", 1, "Foo"),
        ("Foo.baz.inner", "function", 2, "Foo.baz"),
        ("Foo.Inner", "class", 1, "Foo"),
        ("Foo.Inner.method", "method", 2, "Foo.Inner"),
        ("Foo.debug_only", "method", 1, "Foo"),
        ("top", "function", 0, ""),
        ("multi", "function", 0, ""),
        ("in_with", "function", 0, ""),
    ]


def test_signatures(sample: Outline) -> None:
    """Ensure that signatures keep parameters, defaults with colons, lambdas and dicts,
    annotations and return types, stop at the header's colon and drop comments."""
    s = by_qualname(sample)
    assert s["Foo"].signature == "class Foo(Base, metaclass=Meta)"
    assert s["Foo.bar"].signature == "def bar(self) -> int"
    assert s["Foo.baz"].signature == 'async def baz(self, *args, key: str = "k", **kw) -> "Foo"'
    assert s["Foo.baz"].is_async and not s["Foo.bar"].is_async
    assert s["top"].signature == ('def top(a, /, b={1: 2}, *, c=lambda x: x, d: dict[str, "int"] = {"k:v": 1}) -> None')
    assert s["multi"].signature == 'async def multi(a: int, b: str = ":") -> tuple[int, str]'
    assert s["Foo.Inner"].signature == "class Inner"
    assert s["compat"].signature == "def compat(x)"


def test_decorators_docs_and_lines(sample: Outline) -> None:
    """Ensure that decorators, first docstring lines and line ranges are right, with
    start_line on the first decorator and body_start_line on the body."""
    s = by_qualname(sample)
    foo = s["Foo"]
    assert foo.decorators == ("@dataclass(frozen=True)", "@other.decorator")
    assert foo.doc == "Foo does things."
    assert foo.start_line == line_of(SAMPLE, "@dataclass(frozen=True)")
    assert foo.body_start_line == line_of(SAMPLE, '"""Foo does things."""')
    assert foo.end_line == line_of(SAMPLE, "def debug_only") + 1
    bar = s["Foo.bar"]
    assert bar.decorators == ("@property",)
    assert bar.start_line == line_of(SAMPLE, "@property")
    assert bar.end_line == line_of(SAMPLE, "return helper(self.size)")
    assert s["Foo.baz"].doc == "Bazzes."
    assert s["top"].doc == "Raw docstring."
    assert s["multi"].body_start_line == line_of(SAMPLE, "await other()")
    assert s["in_with"].start_line == s["in_with"].end_line == s["in_with"].body_start_line


def test_calls_are_own_body_only(sample: Outline) -> None:
    """Ensure that calls are the simple names a body calls, without nested defs' calls."""
    s = by_qualname(sample)
    assert s["Foo.bar"].calls == ("helper",)
    assert s["Foo.baz"].calls == ("finish", "inner")
    assert s["Foo.baz.inner"].calls == ("deep_call",)
    assert s["top"].calls == ("print", "run")
    assert s["multi"].calls == ("other",)
    assert s["Foo"].calls == ()  # decorators run outside the class body
    assert [c.calls for c in sample.symbols if c.qualname == "compat"] == [("fspath",), ("str",)]


def test_imports(sample: Outline) -> None:
    """Ensure that every import form gives module, names and collapsed text, including
    imports under module-level if/try blocks."""
    got = [(i.line, i.module, i.names) for i in sample.imports]
    line = lambda needle: line_of(SAMPLE, needle)  # noqa: E731
    assert got == [
        (line("from __future__"), "__future__", ("annotations",)),
        (line("import os, sys"), "os", ("os",)),
        (line("import os, sys"), "sys", ("sys",)),
        (line("import xml.etree"), "xml.etree.ElementTree", ("xml.etree.ElementTree",)),
        (line("from collections"), "collections", ("OrderedDict", "defaultdict")),
        (line("from . import"), ".", ("sibling",)),
        (line("from ..pkg.mod"), "..pkg.mod", ("alpha", "beta")),
        (line("from star"), "star", ("*",)),
        (line("from typing import Iterator"), "typing", ("Iterator",)),
        (line("import ujson"), "ujson", ("ujson",)),
        (line("    import json"), "json", ("json",)),
    ]
    texts = {i.module: i.text for i in sample.imports}
    assert texts["..pkg.mod"] == "from ..pkg.mod import (alpha, beta)"
    assert texts["sys"] == "import os, sys as system"
    assert texts["collections"] == "from collections import OrderedDict as OD, defaultdict"


def test_constants(sample: Outline) -> None:
    """Ensure that module-level simple assignments (plain, annotated, aliases, dunder) are
    constants, first occurrence only, without TYPE_CHECKING or __main__ noise."""
    assert [(c.name, c.text) for c in sample.constants] == [
        ("MAX_SIZE", "MAX_SIZE = 10"),
        ("timeout", "timeout: float = 2.5"),
        ("Pair", "Pair = tuple[int, int]"),
        ("Alias", "type Alias = list[int]"),
        ("__all__", '__all__ = ["Foo", "top"]'),
        ("AtRuntime", "AtRuntime = 1"),
    ]
    assert sample.constants[0].line == line_of(SAMPLE, "MAX_SIZE = 10")


def test_long_constant_is_cut() -> None:
    """Ensure that a constant's text is its first line, cut to about 100 characters."""
    o = outline_python(b"TABLE = [" + b"1, " * 100 + b"]\nX = {\n  1: 2,\n}\n")
    table, x = o.constants
    assert len(table.text) <= 100 and table.text.endswith("…")
    assert x.text == "X = {"


def test_references_exclude_definitions_and_imports(sample: Outline) -> None:
    """Ensure that references count identifier uses, attribute names included, but not
    definition names or import statements."""
    refs = dict(sample.references)
    assert [name for name, _ in sample.references] == sorted(refs)
    assert refs["helper"] == 1 and refs["finish"] == 1 and refs["size"] == 2
    assert refs["run"] == 1 and refs["mod"] == 1  # pkg.mod.run(a)
    assert refs["top"] == 1  # the call under __main__, not the def
    assert "bar" not in refs and "baz" not in refs and "multi" not in refs
    assert "OrderedDict" not in refs and "defaultdict" not in refs and "ujson" not in refs
    assert refs["os"] == 1  # os.fspath(x); `import os` does not count
    assert all(count > 0 for count in refs.values())


def test_crlf_line_numbers_match_lf(sample: Outline) -> None:
    """Ensure that CRLF files give the same lines and text as LF files."""
    crlf = outline_python(SAMPLE.replace("\n", "\r\n").encode())
    assert [(s.qualname, s.start_line, s.end_line, s.body_start_line) for s in crlf.symbols] == [
        (s.qualname, s.start_line, s.end_line, s.body_start_line) for s in sample.symbols
    ]
    assert [s.signature for s in crlf.symbols] == [s.signature for s in sample.symbols]
    assert crlf.imports == sample.imports
    assert crlf.line_count == sample.line_count
    assert crlf.docstring == sample.docstring


def test_syntax_errors_still_outline() -> None:
    """Ensure that a file with syntax errors sets has_errors and keeps what parses."""
    src = b"import os\n\ndef good(a):\n    return a\n\ndef broken(:\n    pass\n\nclass Later:\n    def m(self): ...\n"
    o = outline_python(src)
    assert o.has_errors
    names = [s.qualname for s in o.symbols]
    assert "good" in names and "Later.m" in names
    assert [i.module for i in o.imports] == ["os"]


@pytest.mark.parametrize(
    "source",
    [
        b"",
        b"\n\n\n",
        b"# only a comment\n# and another",
        b'"""Only a docstring."""',
        b"\x00\x01\x02\xff\xfe binary \x00 junk \x89PNG\r\n\x1a\n",
        b"def f(:",
        b"class",
        b"@decorator_without_def\n",
        b"def f(a, b=\n",
        b'\xef\xbb\xbf"""BOM doc."""\ndef f(): pass\n',
    ],
)
def test_odd_inputs_do_not_raise(source: bytes) -> None:
    """Ensure that odd inputs outline without raising, without the fallback path."""
    o = python_module._outline_python(source)  # the unguarded path: must not raise either
    assert o == outline_python(source)
    assert o.line_count == len(split_lines(source.decode("utf-8", "replace")))


def test_empty_file() -> None:
    """Ensure that an empty file is an empty, error-free outline."""
    assert outline_python(b"") == Outline("python", "", (), (), (), (), 0, False)


def test_non_utf8_bytes() -> None:
    """Ensure that latin-1 bytes in strings and docstrings are decoded with replacement."""
    source = '"""Caf\xe9 module."""\ndef caf\xe9(): return "\xe9"\nX = "\xe9"\n'
    o = outline_python(source.encode("latin-1"))
    assert o.docstring == "Caf\ufffd module."
    assert o.constants[0].text == 'X = "\ufffd"'


def test_deep_nesting_does_not_recurse() -> None:
    """Ensure that 2,000 nested parentheses, 300 nested ifs and 200 nested defs outline
    without hitting the recursion limit."""
    parens = b"x = " + b"(" * 2000 + b"1" + b")" * 2000 + b"\n"
    assert python_module._outline_python(parens).constants[0].name == "x"
    ifs = b"".join(b"    " * i + b"if x:\n" for i in range(300)) + b"    " * 300 + b"import deep\n"
    o = python_module._outline_python(ifs)
    assert [i.module for i in o.imports] == ["deep"]
    defs = b"".join(b"    " * i + b"def f%d():\n" % i for i in range(200))
    defs += b"    " * 200 + b"pass\n"
    o = python_module._outline_python(defs)
    assert len(o.symbols) == 200
    assert o.symbols[-1].depth == 199
    assert o.symbols[-1].qualname == ".".join(f"f{i}" for i in range(200))


def test_big_file() -> None:
    """Ensure that a large generated file (about 0.4 MB) outlines completely."""
    chunk = b'def func_%d(a: int, b: str = "x") -> int:\n    """Doc %d."""\n    return call_%d(a)\n\n'
    src = b"".join(chunk % (i, i, i) for i in range(5_000))
    o = outline_python(src)
    assert len(o.symbols) == 5_000
    assert o.symbols[-1].signature == 'def func_4999(a: int, b: str = "x") -> int'
    assert o.symbols[-1].calls == ("call_4999",)


def test_threads_share_nothing() -> None:
    """Ensure that outlines made concurrently in threads equal the sequential ones."""
    sources = [SAMPLE.encode(), b"def a(): pass\n" * 50, b"class B:\n    def m(self): x()\n" * 30]
    expected = [outline_python(s) for s in sources]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(outline_python, sources * 8))
    assert got == expected * 8
    assert threading.active_count() >= 1


@given(st.binary(max_size=300))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_bytes_never_raise(source: bytes) -> None:
    """Ensure that arbitrary bytes outline without raising on the unguarded path."""
    o = python_module._outline_python(source)
    assert o.line_count == source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
    for s in o.symbols:
        assert 1 <= s.start_line <= s.body_start_line and s.start_line <= s.end_line


def test_stdlib_file_outlines_like_the_brief() -> None:
    """Ensure that a real stdlib module outlines with its known classes and functions."""
    import json.decoder

    path = json.decoder.__file__
    with open(path, "rb") as f:
        o = outline_for(path, f.read())
    names = [s.qualname for s in o.symbols]
    assert {"JSONDecoder", "JSONDecoder.decode", "JSONDecoder.raw_decode", "py_scanstring"} <= set(names)
    assert o.docstring == "Implementation of JSONDecoder"
    assert not o.has_errors


def _references_by_walk(source: bytes) -> tuple[tuple[str, int], ...]:
    """What `references` means, by a plain walk of every node: identifiers outside import
    statements, less one per definition name."""
    root = python_module.python_parser().parse(source).root_node
    counts: dict[str, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("import_statement", "import_from_statement", "future_import_statement"):
            continue
        if node.type == "identifier":
            name = (node.text or b"").decode("utf-8", "replace")
            counts[name] = counts.get(name, 0) + 1
        stack.extend(node.children)
    for symbol in outline_python(source).symbols:
        counts[symbol.name] = counts.get(symbol.name, 0) - 1
    return tuple(sorted((name, n) for name, n in counts.items() if n > 0))


@pytest.mark.parametrize(
    "source",
    [
        SAMPLE.encode(),
        b"import a.b as c, d\nfrom .x.y import (z as w, v)\nfrom m import *\nfrom __future__ import annotations\n"
        b"c.d(w, v, z)\nif x:\n    import q\n    q.r()\ndef f():\n    from p import f\n    return f(f)\n",
        b"print 'py2'\nmatch = 1\nmatch match:\n    case [a, *rest]: type = a\nclass C(B): x: int = y\n",
        b"def broken(:\n    import\n    return g(h)\nf'{name!r:{width}}' + caf\xc3\xa9\n",
    ],
)
def test_references_match_a_plain_walk(source: bytes) -> None:
    """Ensure that the query-based reference counts (identifiers sliced from the source,
    imports' identifiers found by a query over each import) equal a plain node walk's."""
    assert outline_python(source).references == _references_by_walk(source)


_PY_FRAGMENTS = [
    "import os\n",
    "from . import x as y\n",
    "@dec(1)\n",
    "async def f(a, *, b=2) -> int:\n",
    "class C(B, metaclass=M):\n",
    '    """Doc."""\n',
    "    return g(a).h()\n",
    "    def m(self): pass\n",
    "X: int = 3\n",
    "if TYPE_CHECKING:\n    import typing\n",
    "café = 'ü'\n",
    "def broken(:\n",
    "    x = (\n        1,  # c\n    )\n",
]


@given(st.lists(st.sampled_from(_PY_FRAGMENTS), max_size=12), st.binary(max_size=40))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_json_path_equals_the_outline_encoded(fragments: list[str], noise: bytes) -> None:
    """Ensure that the cold index's JSON path gives exactly the outline's JSON, and the
    outline that JSON decodes to, for code with and without syntax errors."""
    for source in ("".join(fragments).encode(), "".join(fragments).encode() + noise):
        outline = outline_python(source)
        text, built = python_module.outline_python_json(source)
        assert text == outline_to_json(outline)
        assert built == outline == outline_from_json(text)
