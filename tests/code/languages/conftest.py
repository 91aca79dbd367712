"""Helpers for the language tests: outlines of snippets, looked up by qualname."""

from __future__ import annotations

import textwrap

from ctx_lsp.code.outline import Outline, Symbol, outline_for


def outline_of(path: str, source: str) -> Outline:
    return outline_for(path, textwrap.dedent(source).lstrip("\n").encode())


def by_qualname(outline: Outline) -> dict[str, Symbol]:
    return {s.qualname: s for s in outline.symbols}
