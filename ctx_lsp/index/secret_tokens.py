"""Token-shaped secrets inside ordinary files: masked where the text is read, never served.

A `settings.py` that holds a live GitHub token is still code the agent needs; keeping the
whole file out would cost the bundle its most relevant file, serving it would leak the
token. So each token is replaced by a marker of the same line (`[masked by ctx-lsp:
github_token]`): line numbers, outlines and everything derived from the text stay as
they were, and the secret never reaches the index, a bundle, a search hit, an outline or
a symbol body. Every read of a workspace file for the index or for rendering, and every
editor buffer, passes through `mask_tokens` (see `files.py`, `folders.py`, `workspace.py`).

Why these patterns and not `detect-secrets`: run over Django 5.2's 6,918 files it took
280 s (25 files/s, against ~4 s for our whole cold index), and flagged 249 files, nearly
all through its keyword and entropy plugins, that is, false positives. Its precise
plugins are prefix-anchored regular expressions for issued tokens; the ones below follow
the same formats (AWS key ids, GitHub, GitLab, Slack, Stripe, npm, PyPI, Google API keys,
OpenAI and Anthropic keys, JWTs). One scan finds whether any kind's literal prefix occurs
(`linear_regex.any_literal`: ~35 µs for a file of Django's, on average); only then are
the kinds whose prefix is there tried.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctx_lsp.index.linear_regex import any_literal

__all__ = ["MASK_PREFIX", "TOKEN_KINDS", "TokenKind", "mask_tokens", "mask_tokens_text"]


@dataclass(frozen=True, slots=True)
class TokenKind:
    name: str
    anchors: tuple[bytes, ...]
    """Literal substrings every match holds; the regex runs only if one occurs."""
    pattern: re.Pattern[bytes]


def _kind(name: str, anchors: Sequence[bytes], pattern: bytes) -> TokenKind:
    return TokenKind(name, tuple(anchors), re.compile(pattern))


TOKEN_KINDS: tuple[TokenKind, ...] = (
    _kind(
        "aws_access_key_id",
        (b"AKIA", b"ASIA", b"ABIA", b"ACCA"),
        rb"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Z0-9])",
    ),
    _kind(
        "aws_secret_access_key",
        (b"aws_secret", b"AWS_SECRET", b"SecretAccessKey", b"secretAccessKey"),
        rb"(?i)(?:aws_?secret_?access_?key|secretaccesskey)[\"']?\s*[:=]>?\s*[\"']?"
        rb"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    ),
    _kind("github_token", (b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"), rb"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    _kind("github_token", (b"github_pat_",), rb"\bgithub_pat_[A-Za-z0-9_]{22,255}"),
    _kind("gitlab_token", (b"glpat-", b"glptt-", b"gldt-"), rb"\bgl(?:pat|ptt|dt)-[A-Za-z0-9_-]{20,64}"),
    _kind("slack_token", (b"xox",), rb"\bxox[abposr]-[0-9A-Za-z-]{10,}"),
    _kind(
        "slack_webhook",
        (b"hooks.slack.com/services/",),
        rb"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
    ),
    _kind("stripe_key", (b"k_live_",), rb"\b[rs]k_live_[0-9a-zA-Z]{24,}"),
    _kind("npm_token", (b"npm_",), rb"\bnpm_[A-Za-z0-9]{36}\b"),
    _kind("pypi_token", (b"pypi-AgEIcHlwaS5vcmc",), rb"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    _kind("google_api_key", (b"AIza",), rb"\bAIza[0-9A-Za-z_-]{35}"),
    _kind("openai_key", (b"T3BlbkFJ",), rb"\bsk-[A-Za-z0-9_-]*T3BlbkFJ[A-Za-z0-9_-]+"),
    _kind("anthropic_key", (b"sk-ant-",), rb"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{40,}"),
    _kind("jwt", (b"eyJ",), rb"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
)
"""Issued-token formats, each anchored on its literal prefix (the AWS secret key has none:
it is a 40-character base64 string, masked only where it is assigned to a name that says
what it is: the named group `secret` is what a pattern masks, when it has one)."""

MASK_PREFIX = "[masked by ctx-lsp: "

_MAY_HOLD_TOKEN = any_literal([anchor for kind in TOKEN_KINDS for anchor in kind.anchors])
"""One scan for every kind's prefix: almost no file holds one (none of Django's 4,013)."""


def mask_tokens(data: bytes) -> tuple[bytes, tuple[str, ...]]:
    """`data` with every token replaced by a marker naming its kind, and the kinds found
    (sorted, each once). Lines are never joined or split."""
    if not _MAY_HOLD_TOKEN(data):
        return data, ()
    found: set[str] = set()
    for kind in TOKEN_KINDS:
        if not any(anchor in data for anchor in kind.anchors):
            continue
        marker = _marker(kind.name)
        if "secret" in kind.pattern.groupindex:
            data, count = kind.pattern.subn(functools.partial(_mask_group, marker=marker), data)
        else:
            data, count = kind.pattern.subn(marker, data)
        if count:
            found.add(kind.name)
    return data, tuple(sorted(found))


def mask_tokens_text(text: str) -> tuple[str, tuple[str, ...]]:
    """`mask_tokens` for text that is already decoded (an editor buffer)."""
    data, found = mask_tokens(text.encode("utf-8", "surrogatepass"))
    if not found:
        return text, ()
    return data.decode("utf-8", "surrogatepass"), found


def _mask_group(match: re.Match[bytes], marker: bytes) -> bytes:
    start, end = match.span("secret")
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + marker + whole[end - offset :]


def _marker(name: str) -> bytes:
    return f"{MASK_PREFIX}{name}]".encode()
