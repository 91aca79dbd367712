"""Tests for ctx_lsp/docs/python_api.py: public API and docstrings read with tree-sitter."""

from __future__ import annotations

import textwrap

from ctx_lsp.docs.python_api import UNDOCUMENTED_WEIGHT, module_drafts, module_name, parse_module
from ctx_lsp.docs.sections import Kind

SOURCE = textwrap.dedent(
    '''\
    """Tools for widgets.

    A longer module description.
    """
    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        def hidden_in_type_checking(): ...

    DEFAULT_SIZE = 3
    """Size used when none is given."""
    _PRIVATE_CONSTANT = 1
    logger = object()

    try:
        def fast(x):  # behind a try: still API
            """Fast path."""
    except ImportError:
        def fast(x):
            """Slow path."""

    @decorator(option=True)
    def build(
        size: int,  # the size
        *,
        name: str = "w",
    ) -> "Widget":
        """Build a widget.

        Args:
            size: how big.
        """

    def _helper():
        """Private."""

    class Widget(Base):
        """A widget."""

        color: str = "red"
        """The colour."""
        _cache = {}

        def __init__(self, size: int) -> None:
            """Make one."""

        @property
        def area(self) -> int:
            """The area.

            Computed from the size.
            """

        def _private(self): ...
        def __repr__(self): ...

    class Bare:
        pass
    '''
).encode()


def test_module_api() -> None:
    """Ensure that public names are kept with whole docstrings, private and
    TYPE_CHECKING-only names are not, and the first of two alternative defs wins."""
    api = parse_module(SOURCE)
    assert api.docstring == "Tools for widgets.\n\nA longer module description."
    assert [c.name for c in api.constants] == ["DEFAULT_SIZE"]
    assert api.constants[0].doc == "Size used when none is given."
    assert [f.name for f in api.functions] == ["fast", "build"]
    assert api.functions[0].doc == "Fast path."
    build = api.functions[1]
    assert build.signature == 'def build(size: int, *, name: str = "w") -> "Widget"'
    assert build.decorators == ("@decorator(option=True)",)
    assert build.doc == "Build a widget.\n\nArgs:\n    size: how big."
    widget = api.classes[0]
    assert widget.header.signature == "class Widget(Base)"
    assert [m.name for m in widget.methods] == ["__init__", "area"]
    assert [f.name for f in widget.fields] == ["color"]
    assert widget.fields[0].doc == "The colour."


def test_all_decides_what_is_public() -> None:
    """Ensure that a literal __all__ overrides the underscore convention."""
    api = parse_module(
        b'__all__ = ["_special", "VALUE"]\nVALUE = 1\nOTHER = 2\ndef _special(): ...\ndef public(): ...\n'
    )
    assert [f.name for f in api.functions] == ["_special"]
    assert [c.name for c in api.constants] == ["VALUE"]


def test_computed_all_is_ignored() -> None:
    """Ensure that an __all__ we cannot read statically falls back to the underscore rule."""
    api = parse_module(b"__all__ = [n for n in dir()]\ndef public(): ...\ndef _private(): ...\n")
    assert [f.name for f in api.functions] == ["public"]


def test_drafts() -> None:
    """Ensure one section per module docstring, public function and class, plus methods
    with more than a one-line docstring; members are listed in the class section."""
    drafts = module_drafts("pkg.widgets", parse_module(SOURCE), "/site/pkg/widgets.py", "pkg/widgets.py")
    by_title = {d.title: d for d in drafts}
    assert set(by_title) == {
        "pkg.widgets",
        "pkg.widgets.fast",
        "pkg.widgets.build",
        "pkg.widgets.Widget",
        "pkg.widgets.Widget.area",
        "pkg.widgets.Bare",
    }
    assert by_title["pkg.widgets"].kind == Kind.MODULE
    assert "- `DEFAULT_SIZE = 3` — Size used when none is given." in by_title["pkg.widgets"].text
    widget = by_title["pkg.widgets.Widget"].text
    assert widget.startswith("### pkg.widgets.Widget\nSource: pkg/widgets.py:")
    assert "- `@property def area(self) -> int` — The area." in widget
    assert '- `color: str = "red"` — The colour.' in widget
    assert "_private" not in widget and "__repr__" not in widget
    assert "Computed from the size." in by_title["pkg.widgets.Widget.area"].text
    assert by_title["pkg.widgets.Bare"].weight == UNDOCUMENTED_WEIGHT
    assert by_title["pkg.widgets.build"].weight == 1.0


def test_syntax_errors_are_tolerated() -> None:
    """Ensure that a file tree-sitter cannot fully parse still yields what it recovered."""
    api = parse_module(b'def ok():\n    """Fine."""\n\ndef broken(:\n    pass\n')
    assert "ok" in [f.name for f in api.functions]


def test_module_name() -> None:
    """Ensure that file paths map to dotted module names, packages to their __init__."""
    assert module_name(("pkg", "sub", "mod.py")) == "pkg.sub.mod"
    assert module_name(("pkg", "__init__.pyi")) == "pkg"
    assert module_name(("single.py",)) == "single"
