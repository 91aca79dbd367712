"""Tests for ctx_lsp/contributors/kinds.py, and for the contributors that apply it
(retrieval and the codebase map leave changelogs out unless the task is about them)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctx_lsp.contributors.codebase_map import CodebaseMap
from ctx_lsp.contributors.kinds import is_changelog, is_test_path, wants_changelog
from ctx_lsp.contributors.retrieval import Retrieval
from ctx_lsp.index.graph.ranking import FileRank
from tests.contributors.conftest import context, offer_of, paths


@pytest.mark.parametrize(
    "path",
    [
        "CHANGELOG.md",
        "changelog",
        "CHANGES.rst",
        "HISTORY.txt",
        "NEWS",
        "RELEASE.md",
        "RELEASES.md",
        "RELEASE_NOTES.md",
        "release-notes.md",
        "Changelog-1.x.md",
        "docs/changelog.md",
        "docs/releases/5.2.txt",
        "Doc/whatsnew/3.12.rst",
        "changelog.d/123.feature.md",
        "Misc/NEWS.d/next/Library/2024.rst",
        "docs/whats-new.md",
    ],
)
def test_changelogs_and_release_notes(path: str) -> None:
    """Ensure that changelogs and release notes are recognised by name or folder, any case."""
    assert is_changelog(path)


@pytest.mark.parametrize(
    "path",
    [
        "ctx_lsp/index/changes.py",
        "ctx_lsp/history/windowing.py",
        "news.py",
        "releases/models.py",
        "src/history.ts",
        "RELEASING.md",
        "docs/newsletter.md",
        "README.md",
        "docs/changing-things.md",
    ],
)
def test_code_and_other_docs_are_not_changelogs(path: str) -> None:
    """Ensure that code named like a changelog (`changes.py`, a `history/` package) and docs
    that only start alike are never taken for one."""
    assert not is_changelog(path)


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("what changed in the changelog", True),
        ("write the release notes for 0.28", True),
        ("which version added retries", False),
        ("keep the header if only the port changes", False),
        ("the history of redirects is wrong", False),
        ("What's new in 2.0", True),
        ("update HISTORY and NEWS", True),
        ("list the changes since the last release", True),
        ("fix client timeout retries", False),
        ("change the parser to accept tabs", False),
        ("sys.version_info check in compat", False),
        ("getVersion returns None", False),
    ],
)
def test_which_tasks_want_changelogs(query: str, wanted: bool) -> None:
    """Ensure that only tasks that speak of changelogs, changes, releases, history, news or
    versions as words want changelogs; identifiers and "change" as a verb do not."""
    assert wants_changelog(query) is wanted


CHANGELOG = """\
# Changelog

## 0.28.1

* Client timeout retries fixed; `Client.send` retries on connect timeout.

## 0.28.0

* Timeout handling in Client.send reworked, client retries on timeout.
"""

FILES = {
    "httpx/_client.py": (
        "from httpx._config import Timeout\n\n\n"
        "class Client:\n"
        '    """An HTTP client with timeout retries."""\n\n'
        "    def send(self, request, timeout: Timeout):\n"
        '        """Send, with retries on timeout."""\n'
        "        return request\n"
    ),
    "httpx/_config.py": 'class Timeout:\n    """Timeout configuration."""\n',
    "CHANGELOG.md": CHANGELOG,
    "docs/releases/0.28.md": CHANGELOG.replace("# Changelog", "# Release 0.28"),
}


def test_retrieval_leaves_changelogs_out_unless_asked(make_engine) -> None:
    """Ensure that changelogs matching the task's words are not retrieved, unless the task
    is about them."""
    engine = make_engine(FILES)
    ctx = context(engine, {"query": "client timeout retries"})
    assert {"CHANGELOG.md", "docs/releases/0.28.md"} & {r.path for r in ctx.ranked}  # they do match
    found = paths(offer_of(Retrieval(), ctx))
    assert "httpx/_client.py" in found
    assert "CHANGELOG.md" not in found and "docs/releases/0.28.md" not in found
    asked = paths(offer_of(Retrieval(), context(engine, {"query": "changelog of client timeout retries"})))
    assert "CHANGELOG.md" in asked


def test_codebase_map_leaves_changelogs_out_unless_asked(make_engine) -> None:
    """Ensure that the map never lists changelogs for a task that is not about them. The
    reference graph holds Python files only today, so a graph rank that puts a changelog
    first (as one over every text file might) is made up here."""
    engine = make_engine(FILES)

    def mapped(query: str) -> list[str]:
        ctx = context(engine, {"query": query})
        assert ctx.rank is not None
        changelog = next(f for f in engine.workspace.files.values() if f.path == "CHANGELOG.md")
        ctx.rank = replace(ctx.rank, files=(FileRank(changelog.abs_path, changelog.path, 1.0), *ctx.rank.files))
        return paths(offer_of(CodebaseMap(), ctx))

    found = mapped("Client Timeout")
    assert "httpx/_config.py" in found and "CHANGELOG.md" not in found
    assert "CHANGELOG.md" in mapped("release history of Client Timeout")


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("src/store.test.ts", True),
        ("src/components/__tests__/Button.tsx", True),
        ("src/store.ts", False),
        ("cart/cart_test.go", True),
        ("cart/cart.go", False),
        ("src/main/java/com/acme/CartTest.java", True),
        ("src/main/java/com/acme/Contest.java", False),
        ("spec/models/cart_spec.rb", True),
        ("lib/cart.rb", False),
        ("Shop.Tests/CartTests.cs", True),
        ("net/http_unittest.cc", True),
        ("pkg/tests/test_api.py", True),
        ("pkg/api.py", False),
    ],
)
def test_test_files_of_every_language(path: str, is_test: bool) -> None:
    """Ensure that test files are told by each language's conventions, not Python's only."""
    assert is_test_path(path) == is_test
