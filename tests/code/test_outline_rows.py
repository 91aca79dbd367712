"""Tests for ctx_lsp/code/outline_rows.py: what an outline shows, row by row."""

from __future__ import annotations

import pytest

from ctx_lsp.code.outline_rows import SHORT_SIGNATURE_CHARS, _short_signature


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("def f(a)", "def f(a)"),
        (
            "def progressbar(iterable: Iterable[V] | None = None, length: int | None = None, "
            "label: str | None = None, show_eta: bool = True) -> ProgressBar[V]",
            "def progressbar(iterable: Iterable[V] | None = None, …) -> ProgressBar[V]",
        ),
        (
            "def f(a: dict[str, int], " + "b" * 60 + ": dict[str, tuple[int, int, int]], c: int = 3) -> None",
            "def f(a: dict[str, int], …) -> None",
        ),
        ("def x(" + "a" * 200 + ") -> int", "def x(…) -> int"),
    ],
)
def test_short_signatures_cut_at_a_top_level_parameter(signature: str, expected: str) -> None:
    """Ensure that pruned outlines cut long signatures between parameters (never inside
    brackets), keep the return annotation, and leave short ones alone."""
    assert _short_signature(signature) == expected
    assert len(_short_signature(signature)) <= max(len(expected), SHORT_SIGNATURE_CHARS)
