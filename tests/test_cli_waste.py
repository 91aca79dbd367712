"""Tests for ctx_lsp/cli/ end to end, called in-process through `main(argv)`: bundles and
docs without waste (changelogs, HTML and badges, long import lines, docs that match nothing)."""

from __future__ import annotations

import json
from pathlib import Path

from ctx_lsp.cli import main
from ctx_lsp.code.outline_rows import IMPORT_LINE_MAX_CHARS
from tests.conftest import write_tree

README = """\
<p align="center">
  <a href="https://www.python-httpx.org/"><img width="350" src="https://example.org/butterfly.png" alt='HTTPX'></a>
</p>

<p align="center"><strong>HTTPX</strong> <em>- A next-generation HTTP client for Python.</em></p>

<p align="center">
<a href="https://github.com/encode/httpx/actions">
    <img src="https://github.com/encode/httpx/workflows/Test%20Suite/badge.svg" alt="Test Suite">
</a>
</p>

[![PyPI](https://img.shields.io/pypi/v/httpx.svg)](https://pypi.org/project/httpx/)

# HTTPX

Install with `pip install httpx`.

## Timeouts and retries

Timeouts are configured per client with `Timeout`; connects are retried.
"""

CHANGELOG = """\
# Changelog

## 0.28.1

* Client timeout retries: `Client.send` retries on a connect timeout.
"""

MODELS = ", ".join(f"Name{i}" for i in range(40))

CLIENT = f'''\
import datetime
import logging
import typing
from contextlib import contextmanager

from ._config import Timeout
from ._models import ({MODELS})
from ._types import ({MODELS.replace("Name", "Type")})


class Client:
    """An HTTP client that retries on timeout."""

    def send(self, request, timeout: Timeout):
        """Send a request, retrying when the connect times out."""
        return request
'''


def waste_workspace(root: Path) -> Path:
    return write_tree(
        root,
        {
            "README.md": README,
            "CHANGELOG.md": CHANGELOG,
            "httpx/__init__.py": "",
            # Long enough that the file is never shown whole at 4K: its outline is what is tested.
            "httpx/_client.py": CLIENT + "".join(f"\n\ndef helper_{i}(v):\n    return v + {i}\n" for i in range(400)),
            "httpx/_config.py": 'class Timeout:\n    """Timeouts: connect, read, write."""\n',
        },
    )


def test_bundle_shows_no_changelog_html_badges_or_long_import_lines(tmp_path: Path, capsys) -> None:
    """Ensure that a bundle for a task about the code shows the README without HTML or
    badges, no changelog, and the client's imports on one short line."""
    workspace = waste_workspace(tmp_path / "ws")
    argv = ["bundle", "--workspace", str(workspace), "--query", "client timeout retries", "--budget", "4000"]
    assert main([*argv, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    by_path = {s["path"]: s for s in result["sections"]}
    assert "CHANGELOG.md" not in by_path
    assert {"README.md", "httpx/_client.py"} <= set(by_path)
    readme = by_path["README.md"]["content"]
    for waste in ("<p", "<img", "<a ", "badge", "shields.io"):
        assert waste not in readme
    assert "Timeouts are configured per client" in readme
    client = by_path["httpx/_client.py"]["content"]
    assert max(len(line) for line in client.split("\n")) <= IMPORT_LINE_MAX_CHARS + 8  # + the gutter
    assert "Name39" not in client and "._models" in client
    assert main([*argv[:3], "--query", "changelog of client timeout retries", "--budget", "4000"]) == 0
    assert "CHANGELOG.md" in capsys.readouterr().out


def test_docs_topic_that_matches_nothing_exits_1_with_topics(tmp_path: Path, capsys) -> None:
    """Ensure that `docs` on a topic nothing matches prints no docs, says so with topics
    that would match on stderr, and exits 1 (0 is docs found, 2 an error)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert main(["docs", "pygls", "--topic", "qwxzzy blorf", "--workspace", str(workspace)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "No section of pygls" in err and "qwxzzy blorf" in err and "Quickstart" in err
    assert main(["docs", "pygls", "--topic", "qwxzzy blorf", "--workspace", str(workspace), "--format", "json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["matched"] is False and result["content"] == "" and result["note"].startswith("No section")
    assert main(["docs", "pygls", "--topic", "custom requests", "--workspace", str(workspace)]) == 0
    assert "send_request" in capsys.readouterr().out


def test_bundle_docs_that_match_nothing_warn_and_add_no_section(tmp_path: Path, capsys) -> None:
    """Ensure that library docs asked for in a bundle that match nothing are a snapshot
    warning, not a section of unrelated docs."""
    workspace = waste_workspace(tmp_path / "ws")
    argv = ["bundle", "--workspace", str(workspace), "--query", "client timeout", "--budget", "4000"]
    assert main([*argv, "--docs", "pygls:qwxzzy blorf", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert not any(s["contributor"] == "library_docs" for s in result["sections"])
    assert any("pygls" in w and "qwxzzy blorf" in w for w in result["snapshot"]["warnings"])
