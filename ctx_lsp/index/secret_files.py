"""Files that hold secrets: never indexed, searched, bundled, outlined or listed.

An agent's context is sent to a model provider and may be logged, cached or echoed back
into a pull request; a `.env` or a private key in it is a leaked credential. So files
whose *name* says they hold secrets (`.env*`, keys, keystores, credentials, tokens for
package registries) are kept out by default, before a byte of them is read, and files
whose *content* is a private key (PEM or OpenSSH) are kept out once read, whatever their
name. Status counts them under `secret`, never by name.

A false positive (a `secrets.py` that holds code, a `.env.example` of placeholders) can be
opted back in with `index.include_secrets` globs. Only the user's own settings may do
that (see `config.py`): a cloned repository that opted its users' `.env` files back in
would hand their credentials to whatever agent reads the bundle.

Checked by name without pathspec (this runs for every file of every scan), except the
opt-in globs, which are only consulted for a file that matched a default.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pathspec

SECRET_NAMES = frozenset(
    {
        ".env",
        ".envrc",
        ".netrc",
        "_netrc",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        ".git-credentials",
        ".htpasswd",
        ".dockercfg",
        "credentials",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
    }
)
"""Exact file names (compared lowercased)."""

SECRET_SUFFIXES = (
    ".env",
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".p8",
    ".ppk",
    ".keystore",
    ".jks",
    ".tfstate",
    ".tfstate.backup",
)
"""Key and certificate stores, `prod.env`-style env files, Terraform state (which holds
every secret a deployment used)."""

SECRET_PREFIXES = (".env.", "secrets.", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
"""`.env.local`, `.env.production`, `secrets.yaml`, `id_rsa.old`, `id_ed25519.pub`."""

SECRET_JSON_PREFIXES = ("credentials", "client_secret")
"""`credentials.json`, `credentials-prod.json`, Google's `client_secret_….json`."""

SECRET_DIRS = frozenset({".ssh", ".gnupg"})
"""Every file below these (a home directory opened as a workspace)."""

DEFAULT_PATTERNS: tuple[str, ...] = (
    *sorted(SECRET_NAMES),
    ".env.*",
    *(f"*{s}" for s in SECRET_SUFFIXES),
    "secrets.*",
    *(f"{p}*" for p in SECRET_PREFIXES[2:]),
    *(f"{p}*.json" for p in SECRET_JSON_PREFIXES),
    *(f"{d}/" for d in sorted(SECRET_DIRS)),
    "(content) a PEM or OpenSSH private key",
)
"""The defaults in words, for status and the README."""

PRIVATE_KEY = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\r?\n"
    rb"(?:[A-Za-z-]+:[^\n]*\r?\n)*\r?\n?"  # PEM / PGP headers (Proc-Type:, Version:)
    rb"[A-Za-z0-9+/=]{40,}"
)
"""A private key block as the tools write it: the BEGIN line, then base64 on the next
lines. A string that merely mentions `-----BEGIN PRIVATE KEY-----` is not one."""


def secret_pattern(rel_path: str) -> str | None:
    """The default pattern a workspace-relative posix path matches, or None."""
    parts = rel_path.split("/")
    for part in parts[:-1]:
        if part.lower() in SECRET_DIRS:
            return f"{part.lower()}/"
    name = parts[-1].lower()
    if name in SECRET_NAMES:
        return name
    for prefix in SECRET_PREFIXES:
        if name.startswith(prefix):
            return ".env.*" if prefix == ".env." else f"{prefix}*"
    for suffix in SECRET_SUFFIXES:
        if name.endswith(suffix):
            return f"*{suffix}"
    for prefix in SECRET_JSON_PREFIXES:
        if name.startswith(prefix) and name.endswith(".json"):
            return f"{prefix}*.json"
    return None


def holds_private_key(data: bytes) -> bool:
    return b"PRIVATE KEY" in data and PRIVATE_KEY.search(data) is not None


class SecretRules:
    """The secret decision for one workspace: the defaults minus the opt-in globs."""

    def __init__(self, include: Sequence[str] = ()):
        self.include = tuple(include)
        self._include = pathspec.GitIgnoreSpec.from_lines(list(include)) if include else None

    def included(self, rel_path: str) -> bool:
        """Opted back in by the user: indexed like any file, content check included."""
        return self._include is not None and self._include.match_file(rel_path)

    def match(self, rel_path: str) -> str | None:
        """The default pattern that keeps this path out, or None (not a secret by name,
        or opted back in)."""
        pattern = secret_pattern(rel_path)
        if pattern is None or self.included(rel_path):
            return None
        return pattern

    def content_check(self, rel_path: str) -> bool:
        """Whether this file's content must be checked for a private key once read."""
        return not self.included(rel_path)
