"""The CLI on a workspace that is not Python: a small generated TypeScript repository."""

from __future__ import annotations

from pathlib import Path

from ctx_lsp.cli import main
from tests.conftest import write_tree

VALIDATORS = """
import { Issue } from "./issues"

/** Validates an email address: a local part, an @ and a domain. */
export function validateEmail(input: string): Issue | null {
  const at = input.lastIndexOf("@")
  if (at <= 0) {
    return { code: "invalid_email", message: "missing local part" }
  }
  const domain = input.slice(at + 1)
  return DOMAIN_PATTERN.test(domain) ? null : { code: "invalid_email", message: "bad domain" }
}

export class StringSchema {
  private checks: Check[] = []
  email(): StringSchema {
    this.checks.push({ kind: "email", run: validateEmail })
    return this
  }
  parse(value: unknown): string { return runChecks(this.checks, value) }
}

const DOMAIN_PATTERN = /^[a-z0-9.-]+\\.[a-z]{2,}$/i
"""


def _repo(root: Path) -> Path:
    files = {
        "package.json": '{"name": "schema", "version": "1.0.0"}\n',
        "src/validators.ts": VALIDATORS,
        "src/issues.ts": "export interface Issue { code: string; message: string }\n",
        "src/index.ts": 'export * from "./validators"\nexport * from "./issues"\n',
    }
    for n in range(12):
        files[f"src/util{n}.ts"] = (
            f"/** Helper {n}. */\nexport function helper{n}(x: number): number {{\n  return x * {n}\n}}\n"
        )
    return write_tree(root, files)


def test_bundle_on_a_typescript_repo_shows_the_function_a_query_names(tmp_path: Path, capsys) -> None:
    """Ensure that `ctx-lsp bundle --query` naming a TypeScript identifier shows that
    function's body, not only its file's name."""
    ws = _repo(tmp_path / "ws")
    assert (
        main(["bundle", "--workspace", str(ws), "--query", "validateEmail rejects plus sign", "--budget", "2000"]) == 0
    )
    out = capsys.readouterr().out
    assert "src/validators.ts" in out
    assert 'const at = input.lastIndexOf("@")' in out


def test_show_finds_a_typescript_member_by_type_and_name(tmp_path: Path, capsys) -> None:
    """Ensure that `ctx-lsp show StringSchema.email` finds the method, body included."""
    ws = _repo(tmp_path / "ws")
    assert main(["show", "StringSchema.email", "--workspace", str(ws), "--no-daemon"]) == 0
    out = capsys.readouterr().out
    assert "## StringSchema.email — src/validators.ts" in out
    assert "```typescript" in out and "this.checks.push" in out
