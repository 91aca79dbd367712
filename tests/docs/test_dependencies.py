"""Tests for ctx_lsp/docs/dependencies.py: a workspace's declared dependencies."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx_lsp.docs.dependencies import declared_dependencies, project_name, requirement_name

PYPROJECT = """\
[project]
name = "my-app"
dependencies = [
    "pygls>=2,<3",
    "tomli>=2; python_version < '3.11'",
    "requests[socks] ~= 2.31",
    "My_App",
]

[project.optional-dependencies]
test = ["pytest>=8", "hypothesis"]

[dependency-groups]
dev = ["ruff", {include-group = "test"}]

[tool.poetry.dependencies]
python = "^3.10"
attrs = "^23"

[tool.poetry.group.docs.dependencies]
sphinx = "*"
"""


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("pygls>=2,<3", "pygls"),
        ("requests[socks]~=2.31 ; python_version>'3'", "requests"),
        ("zope.interface==6", "zope.interface"),
        ("name @ https://example.com/name.whl", "name"),
        ("tiktoken  # counts tokens", "tiktoken"),
        ("-e git+https://github.com/a/b.git#egg=bee", "bee"),
        ("-e .", None),
        ("--index-url https://x", None),
        ("./local/path", None),
        ("# comment", None),
        ("", None),
    ],
)
def test_requirement_name(line: str, name: str | None) -> None:
    """Ensure only the distribution name survives extras, versions, markers and comments."""
    assert requirement_name(line) == name


def test_pyproject_and_requirements(tmp_path: Path) -> None:
    """Ensure names come from every pyproject table and requirements file (following -r),
    deduplicated by normalized name, without the project itself."""
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "requirements.txt").write_text("-r requirements/base.txt\nPyGLS==2.1\nwatchfiles\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "base.txt").write_text("-r ../requirements.txt\nnumpy>=2\n")
    (tmp_path / "requirements-dev.txt").write_text("black\n")
    assert declared_dependencies(tmp_path) == [
        "pygls",
        "tomli",
        "requests",
        "pytest",
        "hypothesis",
        "ruff",
        "attrs",
        "sphinx",
        "black",
        "numpy",
        "watchfiles",
    ]
    assert project_name(tmp_path) == "my-app"


def test_no_or_broken_files(tmp_path: Path) -> None:
    """Ensure a workspace without declarations, or with an unparsable pyproject, gives []."""
    assert declared_dependencies(tmp_path) == []
    assert declared_dependencies(None) == []
    (tmp_path / "pyproject.toml").write_text("[project\nbroken")
    assert declared_dependencies(tmp_path) == []
    assert project_name(tmp_path) == ""
