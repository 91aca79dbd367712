"""Code units: syntax-aligned pieces of a file, every non-blank line in exactly one."""

from __future__ import annotations

import itertools

from ctx_lsp.code.outline import outline_for, split_lines
from ctx_lsp.code.units import UNIT_MAX_LINES, CodeUnit, code_units


def units_of(path: str, text: str) -> tuple[list[str], tuple[CodeUnit, ...]]:
    lines = split_lines(text)
    return lines, code_units(outline_for(path, text.encode()), lines)


def assert_partition(lines: list[str], units: tuple[CodeUnit, ...]) -> None:
    """Units are in line order, disjoint, and cover every non-blank line."""
    covered: set[int] = set()
    last = 0
    for u in units:
        assert u.start > last and u.end >= u.start
        last = u.end
        covered.update(range(u.start, u.end + 1))
    for n, line in enumerate(lines, 1):
        if line.strip():
            assert n in covered, f"line {n} in no unit: {line!r}"


PYTHON = '''"""A module."""

import os
import sys

LIMIT = 10


class Store:
    """Keeps things."""

    size: int = 0

    def get(self, key):
        return self.items[key]

    def put(self, key, value):
        self.items[key] = value


def helper(x):
    def inner(y):
        return y

    return inner(x)
'''


def test_python_units_follow_definitions() -> None:
    lines, units = units_of("m.py", PYTHON)
    assert_partition(lines, units)
    spans = {(u.owner, u.kind, u.first): (u.start, u.end) for u in units}
    assert spans[("Store", "header", True)] == (9, 12)  # class line, docstring, attribute
    assert spans[("Store.get", "definition", True)] == (14, 15)
    assert spans[("Store.put", "definition", True)] == (17, 18)
    assert spans[("helper", "definition", True)] == (21, 25)  # the nested function stays inside
    module = [u for u in units if u.kind == "module"]
    assert module and module[0].start == 1 and all(u.owner == "" for u in module)


GO_DECLARATIONS = """package cobra

import "fmt"

var initializers []func()

// EnablePrefixMatching allows to set automatic prefix matching.
// Set this to true to enable it.
var EnablePrefixMatching = false

// EnableCommandSorting controls sorting of the slice of commands.
// To disable sorting, set it to false.
var EnableCommandSorting = true

// MousetrapHelpText enables an information splash screen on Windows.
var MousetrapHelpText = "This is a command line tool."

// MousetrapDisplayDuration controls how long the text is displayed.
var MousetrapDisplayDuration = 5

func OnInitialize(y ...func()) {
	initializers = append(initializers, y...)
}
"""


def test_a_run_of_short_declarations_is_one_unit_until_it_is_a_dozen_lines() -> None:
    """A fix adds a declaration beside its neighbours: the unit a task's words hit must
    show them (cut at every blank line after six, `EnablePrefixMatching` and
    `EnableCommandSorting` were in two units)."""
    lines, units = units_of("cobra.go", GO_DECLARATIONS)
    assert_partition(lines, units)
    holding = next(u for u in units if u.start <= 9 <= u.end)  # var EnablePrefixMatching
    assert holding.kind == "module" and holding.start <= 5 and holding.end >= 13
    assert holding.lines < 19  # and still cut: the next blank-line block after a dozen lines
    assert next(u for u in units if u.start <= 23 <= u.end).owner == "OnInitialize"


def test_long_function_is_cut_at_blank_lines_never_inside_a_docstring() -> None:
    doc = "\n".join(f"    paragraph {i}\n" for i in range(12))
    body = "\n".join(f"    x{i} = {i}\n    y{i} = x{i}\n" for i in range(30))
    text = f'def long(a):\n    """Doc.\n\n{doc}    """\n{body}\n'
    lines, units = units_of("m.py", text)
    assert_partition(lines, units)
    pieces = [u for u in units if u.owner == "long"]
    assert len(pieces) > 2
    assert pieces[0].first and not any(p.first for p in pieces[1:])
    assert all(p.lines <= UNIT_MAX_LINES for p in pieces)
    closing = next(n for n, line in enumerate(lines, 1) if line.strip() == '"""')
    for p in pieces[1:]:  # a piece after the first starts after the docstring or at a hard cut
        if p.start <= closing:
            assert pieces[0].lines == UNIT_MAX_LINES or p.start - 1 == pieces[0].end


def test_go_methods_rust_impls_and_typescript_classes_make_units() -> None:
    go = 'package s\n\nimport "fmt"\n\ntype Stack[T any] struct {\n\titems []T\n}\n\n' + (
        "func (s *Stack[T]) Push(v T) {\n\ts.items = append(s.items, v)\n\tfmt.Println(v)\n}\n"
    )
    lines, units = units_of("s.go", go)
    assert_partition(lines, units)
    assert any(u.owner == "Stack.Push" and u.first for u in units)

    rust = "struct Buf { n: usize }\n\nimpl Buf {\n    fn read(&self) -> usize {\n        self.n\n    }\n}\n"
    lines, units = units_of("b.rs", rust)
    assert_partition(lines, units)
    assert any(u.owner == "Buf.read" and u.kind == "definition" for u in units)

    ts = "/* a\n\n   comment */\nexport class A {\n  x = 1;\n\n  run(): void {\n    go();\n  }\n}\n"
    lines, units = units_of("a.ts", ts)
    assert_partition(lines, units)
    assert any(u.owner == "A.run" for u in units)
    assert any(u.owner == "A" and u.kind == "header" for u in units)


def test_text_and_markdown_have_no_units() -> None:
    assert units_of("n.txt", "just words\n")[1] == ()
    assert units_of("r.md", "# Title\n\nwords\n")[1] == ()


def test_lines_too_long_to_show_are_in_no_unit() -> None:
    """Ensure that a line over UNIT_LINE_MAX_CHARS is in no unit: a function is shown around
    it, and an import block holding one is left to the outline's collapsed import line."""
    names = ", ".join(f"Name{i}" for i in range(40))
    text = f"import os\nfrom m import ({names})\n\n\ndef f():\n    a = 1\n    b = '{'x' * 200}'\n    return a\n"
    lines, units = units_of("m.py", text)
    assert all(len(lines[n - 1]) <= 160 for u in units for n in range(u.start, u.end + 1))
    assert not any(u.kind == "module" for u in units)  # the import block holds the long line
    assert [(u.start, u.end, u.first) for u in units if u.owner == "f"] == [(5, 6, True), (8, 8, False)]


def test_containers_nested_a_thousand_deep_do_not_exhaust_the_stack() -> None:
    """Ensure that a (generated or hostile) file nesting classes far deeper than any code
    does still gets units, without recursing once per level."""
    depth = 1500
    text = "".join(f"{' ' * i}class C{i}:\n" for i in range(depth)) + f"{' ' * depth}x = 1\n"
    _, units = units_of("deep.py", text)
    assert units  # the lines short enough to show (the deeper ones are over 160 characters)
    assert all(a.end < b.start for a, b in itertools.pairwise(units))
