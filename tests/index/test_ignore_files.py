"""Tests for ctx_lsp/index/ignore_files.py: ignore patterns compiled line by line, as git reads them."""

from __future__ import annotations

import pytest

from ctx_lsp.index import ignore_files
from ctx_lsp.index.ignore_files import MAX_PATTERNS_PER_FILE, compile_patterns, has_linear_matcher


def _ignored(compiled: ignore_files.CompiledPatterns, path: str) -> bool:
    assert compiled.spec is not None
    return bool(compiled.spec.check_file(path).include)


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("!", "not a valid pattern"),
        ("\\", "not a valid pattern"),
        ("build\\", "not a valid pattern"),
        ("[z-a]", "bad character range z-a, so it can match nothing"),
        ("src/a[b-a]c.py", "bad character range"),
    ],
)
def test_a_line_git_skips_is_reported_and_the_rest_applies(bad: str, why: str) -> None:
    """Ensure that a pattern git would skip is left out with its source, line and pattern
    named, and the lines before and after it still apply (psf/black's `!`-only files)."""
    compiled = compile_patterns([("tests/data/.gitignore", ["*.log", bad, "build/", "!keep.log"])])
    assert [(p.source, p.line, p.pattern) for p in compiled.problems] == [("tests/data/.gitignore", 2, bad)]
    assert why in compiled.problems[0].why
    assert str(compiled.problems[0]).startswith(f"tests/data/.gitignore:2: pattern {bad!r} skipped: ")
    assert _ignored(compiled, "a.log") and _ignored(compiled, "build/") and not _ignored(compiled, "keep.log")


def test_a_file_of_only_a_bad_line_has_no_spec() -> None:
    """Ensure that a file whose only pattern is skipped yields no spec (nothing to match),
    not an error, and comments and blank lines are no patterns."""
    compiled = compile_patterns([("a/.gitignore", ["# comment", "", "!"])])
    assert compiled.spec is None and len(compiled.problems) == 1


def test_later_sources_win_over_earlier_ones() -> None:
    """Ensure that patterns of a later source override an earlier one's, as a .gitignore
    overrides .git/info/exclude in git."""
    compiled = compile_patterns([(".git/info/exclude", ["*.tmp"]), (".gitignore", ["!keep.tmp"])])
    assert _ignored(compiled, "x.tmp") and not _ignored(compiled, "keep.tmp")


def test_an_overlong_file_applies_its_first_patterns_and_says_so() -> None:
    """Ensure that an ignore file with more patterns than the cap applies the first ones and
    reports the line where it stopped, instead of making every check slow."""
    lines = [f"gen{i}/" for i in range(MAX_PATTERNS_PER_FILE + 5)]
    compiled = compile_patterns([(".gitignore", lines)])
    assert _ignored(compiled, "gen0/") and _ignored(compiled, f"gen{MAX_PATTERNS_PER_FILE - 1}/")
    assert not _ignored(compiled, f"gen{MAX_PATTERNS_PER_FILE}/")
    assert [(p.line, p.pattern) for p in compiled.problems] == [(MAX_PATTERNS_PER_FILE + 1, "")]


@pytest.mark.skipif(not has_linear_matcher(), reason="google-re2 is not installed here")
@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 250 + "c"),
        ("**/a/**/a/**/a/**/a/**/b", "/".join(["a"] * 3000) + "/c"),
    ],
)
def test_wildcard_heavy_patterns_are_applied_with_re2(pattern: str, path: str) -> None:
    """Ensure that patterns which make a backtracking matcher take exponential time are
    applied (RE2 matches in linear time; with pathspec's default backend the first case
    takes minutes) and match as git would."""
    compiled = compile_patterns([(".gitignore", [pattern])])
    assert compiled.problems == ()
    assert not _ignored(compiled, path)
    assert _ignored(compiled, path[:-1] + "b")


def test_without_re2_wildcard_heavy_patterns_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that without RE2 a pattern with more than two wildcards is skipped and
    reported (naming the fix), while ordinary patterns still apply."""
    monkeypatch.setattr(ignore_files, "has_linear_matcher", lambda: False)
    compiled = compile_patterns([(".gitignore", ["**/*.pyc", "*a*a*b", "**/a/**/b/**/c", "***x"])])
    assert [p.pattern for p in compiled.problems] == ["*a*a*b", "**/a/**/b/**/c", "***x"]
    assert all("google-re2" in p.why for p in compiled.problems)
    assert _ignored(compiled, "pkg/x.pyc")
