"""Tests for ctx_lsp/code/outline_rows.py: what an outline shows, row by row."""

from __future__ import annotations

import textwrap

import pytest

from ctx_lsp.code.languages.python import outline_python
from ctx_lsp.code.outline import outline_for
from ctx_lsp.code.outline_rows import (
    IMPORT_LINE_MAX_CHARS,
    KEY_IMPORTS,
    SHORT_SIGNATURE_CHARS,
    _short_signature,
    code_rows,
    focused_rows,
    markdown_rows,
)
from ctx_lsp.code.tiers import render
from ctx_lsp.tokens import counter_for
from ctx_lsp.vocabulary import Tier


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("def f(a)", "def f(a)"),
        (
            "def progressbar(iterable: Iterable[V] | None = None, length: int | None = None, "
            "label: str | None = None, show_eta: bool = True) -> ProgressBar[V]",
            "def progressbar(…) -> ProgressBar[V]",
        ),
        (
            "def f(a: dict[str, int], " + "b" * 60 + ": dict[str, tuple[int, int, int]], c: int = 3) -> None",
            "def f(a: dict[str, int], …) -> None",
        ),
        ("def g(a: int, b: int, c: int, d: int, e: int) -> None", "def g(a: int, b: int, …) -> None"),
        ("def x(" + "a" * 200 + ") -> int", "def x(…) -> int"),
    ],
)
def test_short_signatures_cut_at_a_top_level_parameter(signature: str, expected: str) -> None:
    """Ensure that pruned outlines cut long signatures between parameters (never inside
    brackets), keep the return annotation, and leave short ones alone."""
    assert _short_signature(signature) == expected
    assert len(_short_signature(signature)) <= max(len(expected), SHORT_SIGNATURE_CHARS)


# --- the import line ---------------------------------------------------------------------------

LONG_IMPORTS = textwrap.dedent(
    """\
    from __future__ import annotations

    import datetime
    import logging
    import typing
    from contextlib import asynccontextmanager, contextmanager

    import httpcore
    from . import sibling
    from ._auth import Auth, BasicAuth, FunctionAuth
    from ._config import (
        DEFAULT_LIMITS,
        DEFAULT_MAX_REDIRECTS,
        DEFAULT_TIMEOUT_CONFIG,
        Limits,
        Proxy,
        Timeout,
    )
    from ._models import Cookies, Headers, Request, Response
    from ._types import AsyncByteStream, AuthTypes, CertTypes, CookieTypes, HeaderTypes, ProxyTypes, QueryParamTypes
    from ._urls import URL, QueryParams
    from ._utils import URLPattern, get_environment_proxies


    class Client:
        def send(self, request: Request) -> Response: ...
    """
)


def import_row(source: str) -> str | None:
    outline = outline_python(source.encode())
    rows, units = code_rows(outline, source.split("\n"), (), {})
    found = [row.text for row in rows if units[row.unit].key == (KEY_IMPORTS,)]
    return found[0] if found else None


def test_long_import_line_lists_modules_within_the_limit() -> None:
    """Ensure that a long collapsed import line becomes the modules only, within the limit:
    the project's own (relative) first, then other libraries, the standard library last,
    with how many were cut — not ~900 characters of names."""
    row = import_row(LONG_IMPORTS)
    assert row is not None and len(row) <= IMPORT_LINE_MAX_CHARS
    assert row.startswith("# imports: .sibling, ._auth, ._config, ._models, ._types, ._urls, ._utils, httpcore")
    shown = row.removeprefix("# imports: ").split(", …(+")[0].split(", ")
    hidden = int(row.rsplit("(+", 1)[1].removesuffix(" more)"))
    assert len(shown) + hidden == 12  # every module but __future__, each once
    assert "Timeout" not in row and "annotations" not in row


def test_short_import_line_is_unchanged() -> None:
    """Ensure that an import line within the limit still shows the statements, names included."""
    assert import_row("import os\nfrom pathlib import Path\n\ndef f(): ...\n") == "import os; from pathlib import Path"


def test_tier3_keeps_long_imports_verbatim() -> None:
    """Ensure that only the outline's import line is shortened: the whole file is the file."""
    counter = counter_for()
    full = render("client.py", LONG_IMPORTS, outline_python(LONG_IMPORTS.encode()), Tier.FULL, counter)
    assert full.content == LONG_IMPORTS
    outline = render("client.py", LONG_IMPORTS, outline_python(LONG_IMPORTS.encode()), Tier.OUTLINE, counter)
    assert max(len(line) for line in outline.content.split("\n")) <= IMPORT_LINE_MAX_CHARS + 10  # the gutter


def test_focused_file_shows_its_imports_as_written() -> None:
    """Ensure that a file shown with bodies (tier 2) shows its module-level import
    statements as written, continuation lines included and `__future__` left out, while
    its outline (tier 1) keeps the one collapsed line; nested imports stay in their body."""
    source = textwrap.dedent(
        """\
        from __future__ import annotations

        import os
        from ._models import (
            Request,
            Response,
        )


        def send(request):
            import json
            return Response(json.dumps(request))
        """
    )
    counter = counter_for()
    outline = outline_python(source.encode())
    focused = render("client.py", source, outline, Tier.FOCUSED, counter, focus=("send",))
    assert "    Request," in focused.content and " 3│ import os" in focused.content
    assert "from ._models import (" in focused.content and "__future__" not in focused.content
    assert focused.content.count("import json") == 1
    plain = render("client.py", source, outline, Tier.OUTLINE, counter)
    assert "    Request," not in plain.content
    assert "import os; from ._models import (Request, Response)" in plain.content


def test_focused_file_keeps_a_long_import_line_collapsed() -> None:
    """Ensure that a focused file with an import line over the limit keeps the short
    collapsed form: 900 characters of names are waste, written or not."""
    names = ", ".join(f"Name{i}" for i in range(40))
    source = f"from ._models import {names}\n\n\ndef send(request):\n    return Name0(request)\n"
    counter = counter_for()
    focused = render("client.py", source, outline_python(source.encode()), Tier.FOCUSED, counter, focus=("send",))
    assert "Name39" not in focused.content and "._models" in focused.content
    assert "return Name0(request)" in focused.content


# --- readable markdown rows --------------------------------------------------------------------

BADGED_README = textwrap.dedent(
    """\
    # <img src="logo.png" width="40"> Project

    [![CI](https://github.com/o/p/actions/workflows/ci.yml/badge.svg)](https://github.com/o/p/actions)
    [![PyPI](https://img.shields.io/pypi/v/p.svg)](https://pypi.org/project/p/)

    <p align="center">
      <img src="https://example.org/screenshot.png">
    </p>

    Project does things.

    ```html
    <p align="center">kept: code</p>
    ```

    ## Usage

    Call `run()`.
    """
)


def test_markdown_headings_and_sections_are_readable() -> None:
    """Ensure that markdown outline rows drop a heading's HTML, and that a focused section
    shows its lines without HTML and badges, each row with its own (true) line number and
    the blank lines that leaves shown once."""
    outline = outline_for("README.md", BADGED_README.encode())
    lines = BADGED_README.split("\n")
    rows, units = markdown_rows(outline)
    assert [row.text for row in rows] == ["# Project", "## Usage"]
    project = outline.symbols[0].qualname  # as written, HTML included: the outline is the file's
    focused, _ = focused_rows(rows, units, outline, lines, [project])
    shown = [(row.line, row.text) for row in focused]
    assert shown[:4] == [(1, "# Project"), (2, ""), (10, "Project does things."), (11, "")]
    assert (13, '<p align="center">kept: code</p>') in shown
    assert all(lines[number - 1] == text or not text or "Project" in text for number, text in shown)
    assert not any("badge" in text or "<img" in text for _, text in shown)
    assert focused[-1].ends == (project,) and focused[-1].text == "Call `run()`."  # no blank last row


def test_short_signatures_cut_the_parameters_after_the_name() -> None:
    """Ensure that a Go method's receiver is not taken for its parameters, and a result
    list after the parameters is kept."""
    signature = "func (c *Command) Find(args []string, strict bool) (*Command, []string, error)"
    assert _short_signature(signature, name="Find") == "func (c *Command) Find(…) (*Command, []string, error)"
    generic = "def all_in[T: int, U: (bytes, str), *Ts, **P](first_argument, second_argument)"
    assert _short_signature(generic, name="all_in") == "def all_in[T: int, U: (bytes, str), *Ts, **P](…)"
