"""Files that hold secrets: never indexed, searched, bundled, outlined or listed.

An agent's context is sent to a model provider and may be logged, cached or echoed back
into a pull request; a `.env` or a private key in it is a leaked credential. So files
whose *name* says they hold secrets (`.env*`, keys, keystores, credentials, tokens for
package registries, Terraform variables) are kept out by default, before a byte of them
is read, and files whose *content* is a credential store are kept out once read, whatever
their name (`credential_kind`): a private key (also one escaped inside a JSON string), a
cloud service-account key, a Docker `auths` config, a kubeconfig with a key or token, an
AWS credentials file. Real ones are named anything (`my-project-3f2a1c.json`). Status
counts them under `secret` and by kind (`secret_kinds`), never by name. Token-shaped
strings inside ordinary files are masked, not kept out: `secret_tokens.py`.

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

from ctx_lsp.index.linear_regex import any_literal

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
        "kubeconfig",
        ".kubeconfig",
    }
)
"""Exact file names (compared lowercased)."""

SECRET_SUFFIXES = (
    ".env",
    ".tfvars",
    ".tfvars.json",
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
every secret a deployment used) and variables (where its inputs are passed)."""

SECRET_PREFIXES = (".env.", "secrets.", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
"""`.env.local`, `.env.production`, `secrets.yaml`, `id_rsa.old`, `id_ed25519.pub`."""

SECRET_JSON_PREFIXES = ("credentials", "client_secret")
"""`credentials.json`, `credentials-prod.json`, Google's `client_secret_….json`."""

SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".kube"})
"""Every file below these (a home directory opened as a workspace): `.aws/config` and
`.aws/credentials`, `.kube/config`."""

SECRET_PATH_SUFFIXES = (".docker/config.json",)
"""Whole trailing paths: a `.docker/` folder of Dockerfiles is ordinary, its `config.json`
(the registry logins) is not."""

DEFAULT_PATTERNS: tuple[str, ...] = (
    *sorted(SECRET_NAMES),
    ".env.*",
    *(f"*{s}" for s in SECRET_SUFFIXES),
    "secrets.*",
    *(f"{p}*" for p in SECRET_PREFIXES[2:]),
    *(f"{p}*.json" for p in SECRET_JSON_PREFIXES),
    *(f"{d}/" for d in sorted(SECRET_DIRS)),
    *SECRET_PATH_SUFFIXES,
    "(content) a private key (PEM or OpenSSH, also escaped inside a string)",
    '(content) a service-account key ({"type": "service_account", "private_key": ...})',
    '(content) a Docker config with registry "auths"',
    "(content) a kubeconfig with a client key, token or password",
    "(content) an AWS credentials file",
)
"""The defaults in words, for status and the README."""

PRIVATE_KEY = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    rb"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or one escaped inside a JSON or code string
    rb"(?:[A-Za-z-]+:[^\n]*(?:\r?\n|\\n))*(?:\r?\n|\\n)?"  # PEM / PGP headers (Proc-Type:, Version:)
    rb"[A-Za-z0-9+/=]{40,}"
)
"""A private key block as the tools write it: the BEGIN line, then base64 on the next
lines (in a file, or with `\\n` escapes inside a JSON string, as in a service-account
key). A string that merely mentions `-----BEGIN PRIVATE KEY-----` is not one."""

SERVICE_ACCOUNT = re.compile(rb'"type"\s*:\s*"service_account"')
SERVICE_ACCOUNT_KEY = re.compile(rb'"private_key(?:_id)?"\s*:\s*"[^"]')
DOCKER_AUTHS = re.compile(rb'"auths"\s*:\s*\{')
DOCKER_LOGIN = re.compile(rb'"(?:auth|identitytoken|password)"\s*:\s*"[^"]{4,}"')
KUBECONFIG = re.compile(rb"(?m)^kind:\s*[\"']?Config[\"']?\s*$")
KUBE_CREDENTIAL = re.compile(rb"(?m)^\s*(?:client-key-data|token|password|auth-provider):\s*\S")
INI_SECTION = re.compile(rb"(?m)^\s*\[[^\]\n]+\]\s*$")
AWS_SECRET_LINE = re.compile(
    rb"(?mi)^\s*aws_(?:secret_access_key|session_token)\s*=\s*[A-Za-z0-9/+=]{16,}\s*$",
)
"""An AWS credentials or config file: INI sections holding a secret key or session token
as a bare value. `aws_secret_access_key = os.environ[...]` in code is not one."""

PRIVATE_KEY_KIND = "private_key"

_MAY_HOLD_CREDENTIALS = any_literal([b"PRIVATE KEY", b"service_account", b'"auths"', b"kind:", b"aws_", b"AWS_"])
"""One scan for what every kind below starts from; almost no file holds any."""


def secret_pattern(rel_path: str) -> str | None:
    """The default pattern a workspace-relative posix path matches, or None."""
    parts = rel_path.split("/")
    for part in parts[:-1]:
        if part.lower() in SECRET_DIRS:
            return f"{part.lower()}/"
    lower = rel_path.lower()
    for suffix in SECRET_PATH_SUFFIXES:
        if lower == suffix or lower.endswith("/" + suffix):
            return suffix
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


def credential_kind(data: bytes) -> str | None:
    """The kind of credential store a file's content is, whatever it is called; None for
    anything else; the most specific kind first (a service-account key holds a private
    key). One scan for the literals every kind holds rules out almost every file: ~20 µs
    for a file of Django's on average, with RE2."""
    if not _MAY_HOLD_CREDENTIALS(data):
        return None
    if b"service_account" in data and SERVICE_ACCOUNT.search(data) and SERVICE_ACCOUNT_KEY.search(data):
        return "service_account_key"
    if b"PRIVATE KEY" in data and PRIVATE_KEY.search(data) is not None:
        return PRIVATE_KEY_KIND
    if b'"auths"' in data and DOCKER_AUTHS.search(data) and DOCKER_LOGIN.search(data):
        return "docker_auth"
    if b"kind:" in data and KUBECONFIG.search(data) and KUBE_CREDENTIAL.search(data):
        return "kubeconfig"
    if (b"aws_" in data or b"AWS_" in data) and AWS_SECRET_LINE.search(data) and INI_SECTION.search(data):
        return "aws_credentials"
    return None


def holds_private_key(data: bytes) -> bool:
    return b"PRIVATE KEY" in data and PRIVATE_KEY.search(data) is not None


NAME_KINDS = (
    ("env_file", (".env", ".envrc", ".env.*", "*.env")),
    ("terraform", ("*.tfstate", "*.tfstate.backup", "*.tfvars", "*.tfvars.json")),
    ("keystore", ("*.p12", "*.pfx", "*.keystore", "*.jks")),
    ("private_key", ("*.pem", "*.key", "*.p8", "*.ppk", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*")),
    ("cloud_credentials", (".aws/", ".kube/", "kubeconfig", ".kubeconfig", ".docker/config.json", ".dockercfg")),
    ("ssh_or_gpg", (".ssh/", ".gnupg/")),
)
"""Status counts secrets by kind, never by name: the kind of each default pattern (any
other pattern is `credentials`)."""


def kind_of_pattern(pattern: str) -> str:
    for kind, patterns in NAME_KINDS:
        if pattern in patterns:
            return kind
    return "credentials"


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
