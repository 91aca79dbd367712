"""The examples in docs/ run: docs/examples/lsp_client.py against a real `ctx-lsp serve`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import SAMPLE_FILES

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def test_the_lsp_client_example_gets_a_bundle_and_a_symbol(sample_workspace: Path) -> None:
    """Ensure that the custom-agent example initializes, prints a bundle and a symbol's body, and exits cleanly."""
    example = str(EXAMPLES / "lsp_client.py")
    done = subprocess.run(
        [sys.executable, example, str(sample_workspace), "assemble bundle", "TokenCounter.count"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Context for: assemble bundle\n")
    assert "def assemble_bundle(sections: list[str], budget: int) -> list[str]:" in done.stdout
    body = "\n".join(SAMPLE_FILES["pkg/tokens.py"].split("\n")[14:17])
    assert f"-- TokenCounter.count (pkg/tokens.py:15-17)\n{body}\n" in done.stdout
