"""Ignore patterns read as git reads them: a bad line is skipped, never fatal.

A cloned repository's ignore files are untrusted input. psf/black's test data holds two
`.gitignore` files whose only line is `!`, which git skips; compiled all at once, one such
line raised out of the whole scan and nothing was indexed. So each line is compiled on
its own: a line git would skip (an invalid pattern, or a range such as `[z-a]` that can
match nothing) is left out and reported with its file and line, and every other line of
that file, and every other ignore file, still applies.

Matching must stay cheap whatever a pattern says. Python's backtracking `re` takes time
exponential in the number of wildcards for some paths (`*a*a*a*a*a*b` against a long
name: 17 s for one check; three `**` against a 3,000-deep path: over two minutes), where
git's own matcher does not. When google-re2 is installed (a core dependency on the
platforms it has wheels for) pathspec matches through RE2, in linear time, and one
file's patterns are one compiled set. Without it, a pattern with more than
`MAX_WILDCARDS_WITHOUT_RE2` wildcards is skipped and reported instead of risking a hang.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import pathspec
from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from ctx_lsp.index.linear_regex import has_re2

__all__ = [
    "MAX_PATTERNS_PER_FILE",
    "CompiledPatterns",
    "PatternProblem",
    "compile_patterns",
    "has_linear_matcher",
    "split_lines",
]

MAX_PATTERNS_PER_FILE = 10_000
"""Patterns applied from one ignore file. Every path is checked against every pattern of
every ignore file above it, so a megabyte of patterns would make each check slow; real
ignore files hold tens to hundreds. The rest of an overlong file is reported, not applied."""

MAX_WILDCARDS_WITHOUT_RE2 = 2
"""Without RE2, two wildcard runs keep the worst check quadratic in the path's length;
three `**` took 139 s for one 3,000-segment path."""

_STARS = re.compile(r"\*+")


@dataclass(frozen=True, slots=True)
class PatternProblem:
    """One pattern left out, with where it came from: status lists these under `problems`."""

    source: str
    """The ignore file as a workspace-relative path (`a/.gitignore`, `.git/info/exclude`),
    or the setting it came from (`index.ignore`)."""
    line: int
    """1-based line in `source`; 0 for a problem of the whole file."""
    pattern: str
    why: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        if not self.pattern:
            return f"{where}: {self.why}"
        return f"{where}: pattern {self.pattern!r} skipped: {self.why}"


@dataclass(frozen=True, slots=True)
class CompiledPatterns:
    spec: pathspec.GitIgnoreSpec | None
    """None when no line holds a pattern (empty, comments only, or every one skipped)."""
    problems: tuple[PatternProblem, ...]


def has_linear_matcher() -> bool:
    """Whether pathspec can match through RE2 here (google-re2 importable)."""
    return has_re2()


def compile_patterns(sources: Sequence[tuple[str, Sequence[str]]]) -> CompiledPatterns:
    """One spec from the lines of one or more ignore sources, in order (a later line wins
    over an earlier one, as within one git ignore file). Never raises for what a line
    holds: a line that cannot be applied is a `PatternProblem`."""
    kept: list[tuple[PatternProblem, GitIgnoreSpecPattern]] = []
    """Each pattern applied, with the problem it would be if it had to be skipped."""
    problems: list[PatternProblem] = []
    for source, lines in sources:
        count = 0
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.startswith("#"):
                continue
            if count == MAX_PATTERNS_PER_FILE:
                why = f"only its first {MAX_PATTERNS_PER_FILE:,} patterns apply; lines from here on are not read"
                problems.append(PatternProblem(source, number, "", why))
                break
            pattern, why = _compile_line(line)
            if pattern is None:
                problems.append(PatternProblem(source, number, line, why))
            elif pattern.include is not None:
                kept.append((PatternProblem(source, number, line, _SLOW), pattern))
                count += 1
    spec = _linear_spec([p for _, p in kept]) if kept and has_linear_matcher() else None
    if spec is None and kept:
        safe: list[GitIgnoreSpecPattern] = []
        for problem, pattern in kept:
            if _wildcards(problem.pattern) <= MAX_WILDCARDS_WITHOUT_RE2:
                safe.append(pattern)
            else:
                problems.append(problem)
        problems.sort(key=lambda p: (p.source, p.line))
        spec = pathspec.GitIgnoreSpec(safe, backend="simple") if safe else None
    return CompiledPatterns(spec, tuple(problems))


_SLOW = (
    f"more than {MAX_WILDCARDS_WITHOUT_RE2} wildcards can take exponential time to match without google-re2; "
    "install it to apply this pattern"
)


def split_lines(text: str) -> list[str]:
    """An ignore file's lines as git splits them (`add_patterns_from_buffer` in git's
    dir.c): a leading UTF-8 byte order mark dropped, lines ended by `\n` only, one `\r`
    before it dropped, and a line cut at a NUL byte (git keeps it as a C string).

    Not `str.splitlines`, which also ends a line at `\r`, a form feed, `\x1c`-`\x1e`,
    `\x85`, U+2028 and U+2029: `n.py\x0co.py` is one pattern to git, matching nothing,
    but was two that ignored both files; and a BOM kept made the first pattern
    `\ufeffm.py`, so a file git ignores was indexed (found by the workspace fuzz test).
    """
    return [line.removesuffix("\r").split("\0", 1)[0] for line in text.removeprefix("\ufeff").split("\n")]


def _wildcards(line: str) -> int:
    """Unbounded wildcards in a pattern: `**` counts once, any other run of `*` once per
    star (pathspec turns `***` into three)."""
    return sum(1 if run == "**" else len(run) for run in _STARS.findall(line))


def _compile_line(line: str) -> tuple[GitIgnoreSpecPattern | None, str]:
    """A line's pattern, or None and why git would not apply it either."""
    stripped = line.rstrip(" ")
    if stripped != stripped.rstrip():
        # git trims trailing spaces only: `m.py<TAB>` names a file ending in a tab. pathspec
        # strips every trailing whitespace, so it ignored `m.py` (found by the workspace
        # fuzz test), and an escaped tab is an error to it.
        return None, "ends in a tab or other whitespace, which git keeps as part of the name; not applied"
    if stripped.removeprefix("!") and not stripped.removeprefix("!").strip("/"):
        # `/`, `!/`, `//`: git matches nothing with them; pathspec read `!/` as re-including
        # every directory, so `a/` then `!/` indexed a/ (found by the workspace fuzz test).
        return None, "only slashes, so it can match nothing (git applies it to nothing either)"
    if stripped.endswith("/**/"):
        # pathspec compiles `a/**/` to match `a` itself; git matches only the directories
        # below it (so `a/m.py` stays). `a/**/*/` is what git means (found by the
        # workspace fuzz test).
        line = stripped + "*/"
    try:
        with warnings.catch_warnings():  # `[[` compiles with a FutureWarning ("nested set"): noise
            warnings.simplefilter("ignore", FutureWarning)
            return GitIgnoreSpecPattern(line), ""
    except GitIgnorePatternError:
        return None, "not a valid pattern (git skips it too)"
    except re.error as err:
        return None, f"{err.msg}, so it can match nothing"
    except Exception as err:  # pathspec's own bug on an odd line must not stop the scan
        return None, f"could not be read ({type(err).__name__}: {err})"


def _linear_spec(patterns: list[GitIgnoreSpecPattern]) -> pathspec.GitIgnoreSpec | None:
    """The patterns matched through RE2, as one compiled set; None if RE2 cannot take
    them (a set of more than about 4,000 patterns exceeds its memory limit)."""
    try:
        return pathspec.GitIgnoreSpec(patterns, backend="re2")
    except Exception:
        return None
