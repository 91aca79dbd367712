"""Shared fixtures: a generated workspace on disk, and e2e tests ordered last."""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

SAMPLE_FILES = {
    "pkg/__init__.py": '"""The sample package."""\n',
    "pkg/tokens.py": textwrap.dedent(
        '''\
        """Token counting for budgets."""

        import math
        from dataclasses import dataclass

        DEFAULT_ENCODING = "o200k_base"


        @dataclass(frozen=True)
        class TokenCounter:
            """Counts tokens in text."""

            name: str

            def count(self, text: str) -> int:
                """Return the number of tokens."""
                return math.ceil(len(text) / 4)


        def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
            """Count tokens with the default encoding."""
            return TokenCounter(encoding).count(text)
        '''
    ),
    "pkg/bundle.py": textwrap.dedent(
        '''\
        """Bundle assembly."""

        from pkg.tokens import count_tokens


        def assemble_bundle(sections: list[str], budget: int) -> list[str]:
            """Keep sections while they fit the budget."""
            kept = []
            used = 0
            for section in sections:
                cost = count_tokens(section)
                if used + cost > budget:
                    break
                kept.append(section)
                used += cost
            return kept
        '''
    ),
    "README.md": "# Sample\n\nA sample workspace.\n\n## Usage\n\nCall `assemble_bundle`.\n",
    "notes.txt": "plain notes\n",
}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def sample_workspace(tmp_path: Path) -> Path:
    """A small Python project with a package, docs and a plain text file."""
    return write_tree(tmp_path / "ws", SAMPLE_FILES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run e2e tests (subprocess servers) after the fast unit tests, as pygls does."""
    for item in items:
        if "e2e" in item.nodeid.split("/"):
            item.add_marker(pytest.mark.e2e)
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)


T = TypeVar("T")


def within(fn: Callable[[], T], timeout: float = 5.0) -> T:
    """Run `fn` in a daemon thread; fail instead of hanging the suite if it blocks."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:
            box["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"still blocked after {timeout}s"
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
