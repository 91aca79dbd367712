"""Fixtures for library docs: fake distributions in a site-packages dir under tmp_path,
and one shared `LibraryDocs` over the real environment (pygls and lsprotocol are
ctx-lsp's own dependencies, so they are installed wherever the tests run)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from ctx_lsp.docs.library import LibraryDocs
from ctx_lsp.tokens import TokenCounter, counter_for


def make_dist(
    site: Path,
    name: str,
    version: str,
    files: Mapping[str, str],
    *,
    summary: str = "",
    description: str = "",
    content_type: str = "text/markdown",
    top_level: tuple[str, ...] | None = None,
    record: bool = True,
) -> Path:
    """A wheel-style install: the files plus `<name>-<version>.dist-info` with METADATA
    (headers, then the description as the body), optional top_level.txt and a RECORD."""
    site.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir()
    headers = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {summary}",
        "Requires-Dist: something (>=1)",
        f"Description-Content-Type: {content_type}",
    ]
    (dist / "METADATA").write_text("\n".join(headers) + "\n\n" + textwrap.dedent(description), encoding="utf-8")
    if top_level is not None:
        (dist / "top_level.txt").write_text("\n".join(top_level) + "\n", encoding="utf-8")
    if record:
        rows = [f"{rel},sha256=x,1" for rel in files] + [f"{dist.name}/METADATA,,", f"{dist.name}/RECORD,,"]
        (dist / "RECORD").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return dist


FOO_FILES = {
    "foo/__init__.py": '''\
        """Foo: frobnicates widgets.

        Importing this package is forbidden in these tests: docs must come from the source.
        """
        raise RuntimeError("foo must never be imported by ctx-lsp")

        def frobnicate(widget: str, *, times: int = 1) -> str:
            """Frobnicate a widget.

            Repeats the frobnication `times` times and returns the frobnicated widget.
            """
            return widget * times

        def _secret() -> None:
            """Private helper, never documented."""
        ''',
    "foo/widgets.py": '''\
        """Widget models."""

        MAX_WIDGETS = 10

        class Widget:
            """A widget that can be frobnicated."""

            size: int = 3
            """How big the widget is."""

            def spin(self, speed: float) -> None:
                """Spin the widget.

                Faster speeds spin it more.
                """

            def _hidden(self):
                pass
        ''',
    "foo/tests/test_foo.py": '''\
        def test_frobnicate_in_tests():
            """Tests are not API."""
        ''',
}

FOO_README = """\
# Foo

Foo frobnicates widgets quickly.

## Installation

pip install foo

## Frobnication guide

Call `frobnicate` with a widget to frobnicate it.
"""


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return counter_for()


@pytest.fixture
def fake_site(tmp_path: Path) -> Path:
    """A site-packages dir with `foo` (whose __init__ raises on import) and `bar-baz`,
    a distribution whose import name (`barbaz`) differs from its name."""
    site = tmp_path / "site-packages"
    make_dist(site, "foo", "1.0", FOO_FILES, summary="Frobnicates widgets", description=FOO_README, top_level=("foo",))
    make_dist(
        site,
        "bar-baz",
        "2.3",
        {"barbaz/__init__.py": '"""Bar baz."""\n\ndef baz():\n    """Do the baz."""\n'},
        summary="The barbaz package",
    )
    return site


@pytest.fixture
def fake_docs(fake_site: Path, tmp_path: Path, counter: TokenCounter) -> LibraryDocs:
    return LibraryDocs(tmp_path / "ws", counter, site_paths=[fake_site])


@pytest.fixture(scope="session")
def real_docs(counter: TokenCounter) -> LibraryDocs:
    """The real environment, found the way the server finds it (no workspace, no venv:
    our own interpreter, asked in a subprocess). Shared so each library parses once."""
    return LibraryDocs(None, counter, environ={})
