"""Kinds of files a bundle treats specially, whichever contributor would offer them.

Tests match a task's words as well as the code they test, and the graph ranks them high
because they import everything; a bundle ranks them far down unless the task is about
tests (`mentions_tests`). An agent told where the code is finds its tests by name.

Changelogs and release notes are written in the project's own words — every class and
function the project has, named once per release — so they match almost any task text
and rank high in the reference graph, while they say nothing about the code as it is. A
bundle leaves them out unless the task is about them (`wants_changelog`).
"""

from __future__ import annotations

import functools
import posixpath
import re

from ctx_lsp.code.languages import language_for

__all__ = ["is_changelog", "is_test_path", "mentions_tests", "wants_changelog"]

PATH_KINDS_CACHED = 1 << 16
"""Paths whose kinds are remembered: each bundle asks of every file it weighs (~370 a
Django bundle), and the answer is the path's alone (a workspace's paths are the bound)."""

PROSE_SUFFIXES = frozenset({"", ".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".rdoc"})
"""A changelog is prose. `index/changes.py`, `history/` or `news.py` are code whatever
their names say, so only these extensions (or none: `NEWS`, `CHANGES`) can be one."""

_CHANGELOG_NAME = re.compile(
    r"^(?:change[-_ ]?logs?|changes|history|news|releases?|release[-_ ]?notes|whats[-_ ]?new)(?:[-_. ].*)?$",
    re.IGNORECASE,
)
"""`CHANGELOG.md`, `CHANGES.rst`, `HISTORY`, `NEWS.txt`, `RELEASE_NOTES.md`,
`releases-2.x.md`, … but not `RELEASING.md` (how to release) or `newsletter.md`."""

_CHANGELOG_DIRS = frozenset(
    {
        "changelog",
        "changelog.d",
        "changelogs",
        "changes",
        "newsfragments",
        "news.d",
        "release-notes",
        "release_notes",
        "releasenotes",
        "releases",
        "whatsnew",
        "whats-new",
        "whats_new",
    }
)
"""Folders of release notes: Django's `docs/releases/`, CPython's `Doc/whatsnew/` and
`Misc/NEWS.d/`, towncrier's `changelog.d/` and `newsfragments/`."""

_CHANGELOG_WORDS = re.compile(
    r"\b(?:change[- ]?logs?|releases?|released|release[- ]notes|news|what[’']?s[- ]?new)\b",
    re.IGNORECASE,
)
"""The words that make a task about changelogs. Whole words only. "change(s)", "history"
and "version" are left out: "the port changes", "the history of redirects" and "the
version check" are how code tasks are phrased. A query matching by accident only lets changelogs
compete again on their ranking, as they always did."""


@functools.lru_cache(maxsize=PATH_KINDS_CACHED)
def is_changelog(path: str) -> bool:
    """Whether a workspace-relative path (with `/`) is a changelog or release notes."""
    directory, name = posixpath.split(path.lower())
    if posixpath.splitext(name)[1] not in PROSE_SUFFIXES:
        return False
    return bool(_CHANGELOG_NAME.match(name)) or any(part in _CHANGELOG_DIRS for part in directory.split("/"))


def wants_changelog(query: str) -> bool:
    """Whether the task text asks about changelogs, releases or release notes."""
    return bool(_CHANGELOG_WORDS.search(query))


@functools.lru_cache(maxsize=PATH_KINDS_CACHED)
def is_test_path(path: str) -> bool:
    """Whether a workspace-relative path (with `/`) is a test module: under a `test(s)` or
    `testing` folder, `test_*`, `*_test(s).py` or `conftest.py`, or named or placed as its
    language says tests are (`LanguageSpec.test_suffixes`, `test_dirs`: `x.test.ts`,
    `x_test.go`, `FooTest.java`, `__tests__/`)."""
    parts = path.lower().split("/")
    name = parts[-1]
    if (
        any(p in ("test", "tests", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
        or name == "conftest.py"
    ):
        return True
    spec = language_for(path)
    if spec is None:
        return False
    return path.rsplit("/", 1)[-1].endswith(spec.test_suffixes) or any(p in spec.test_dirs for p in parts[:-1])


def mentions_tests(query: str) -> bool:
    """Whether the task text is about tests (then tests compete on their own ranking)."""
    q = query.lower()
    return any(w in q for w in ("test", "pytest", "fixture"))
