"""Tests for ctx_lsp/index/secret_tokens.py: token-shaped secrets masked inside ordinary files."""

from __future__ import annotations

import pytest

from ctx_lsp.index.secret_tokens import mask_tokens, mask_tokens_text

TOKENS = [
    ("aws_access_key_id", 'key = "AKIAIOSFODNN7EXAMPLE"'),
    ("aws_secret_access_key", 'aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"'),
    ("aws_secret_access_key", "SecretAccessKey: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github_token", "token = 'ghp_" + "a1B2" * 9 + "'"),
    ("github_token", "GITHUB_PAT=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("gitlab_token", "glpat-" + "x" * 20),
    ("slack_token", "SLACK = 'xoxb-1234567890-abcdefghij'"),
    ("slack_webhook", "url = 'https://hooks.slack.com/services/T000/B000/XXXXXXXX'"),
    ("stripe_key", "stripe.api_key = 'sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "'"),
    ("npm_token", "//registry.npmjs.org/:_authToken=npm_" + "a" * 36),
    ("pypi_token", "password = pypi-AgEIcHlwaS5vcmc" + "B" * 60),
    ("google_api_key", "key=AIza" + "S" * 35),
    ("openai_key", "OPENAI_API_KEY=sk-proj-abc123T3BlbkFJxyz789"),
    ("anthropic_key", "ANTHROPIC_API_KEY=sk-ant-api03-" + "k" * 80),
    ("jwt", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P"),
]


@pytest.mark.parametrize(("kind", "line"), TOKENS)
def test_each_token_kind_is_masked_on_its_line(kind: str, line: str) -> None:
    """Ensure that each issued-token format is replaced by a marker naming its kind, on the
    same line (line numbers and everything around the token stay as they were)."""
    data = f"before = 1\n{line}\nafter = 2\n".encode()
    masked, kinds = mask_tokens(data)
    assert kinds == (kind,)
    assert f"[masked by ctx-lsp: {kind}]".encode() in masked
    assert masked.count(b"\n") == data.count(b"\n") and masked.startswith(b"before = 1\n")
    assert masked.endswith(b"\nafter = 2\n")


@pytest.mark.parametrize(
    "line",
    [
        "ghp_short = 1",
        "def test_ghp_prefix(): pass",
        "AKIA = 'prefix only'",
        "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']",
        "header = 'eyJhbGciOiJIUzI1NiJ9'",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "xox = 'not a token'",
    ],
)
def test_ordinary_code_is_left_alone(line: str) -> None:
    """Ensure that prefixes, test keys and names that merely look like tokens are not masked."""
    assert mask_tokens(line.encode()) == (line.encode(), ())


def test_text_masking_matches_bytes_masking() -> None:
    """Ensure that an editor buffer is masked exactly as the same file on disk is."""
    text = "é = 'xoxb-1234567890-abcdefghij'\nplain = 1\n"
    masked, kinds = mask_tokens_text(text)
    assert masked.encode() == mask_tokens(text.encode())[0] and kinds == ("slack_token",)
    assert mask_tokens_text("nothing here\n") == ("nothing here\n", ())
