"""Tests for ctx_lsp/index/secret_files.py: which files are secrets, by name and content."""

from __future__ import annotations

import json

import pytest

from ctx_lsp.index.secret_files import SecretRules, credential_kind, holds_private_key, secret_pattern
from tests.test_security import FAKE_KEY


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        (".env", ".env"),
        (".env.local", ".env.*"),
        (".env.production", ".env.*"),
        ("config/.env", ".env"),
        ("deploy/prod.env", "*.env"),
        (".envrc", ".envrc"),
        ("certs/server.pem", "*.pem"),
        ("certs/server.KEY", "*.key"),
        ("id_rsa", "id_rsa"),
        ("home/.ssh/id_ed25519", ".ssh/"),
        ("keys/id_rsa.pub", "id_rsa*"),
        ("keys/id_dsa", "id_dsa"),
        ("keys/id_ecdsa", "id_ecdsa"),
        ("credentials.json", "credentials*.json"),
        ("gcp/credentials-prod.json", "credentials*.json"),
        ("client_secret_123.apps.json", "client_secret*.json"),
        (".aws/credentials", ".aws/"),
        ("deploy/credentials", "credentials"),
        ("infra/prod.tfvars", "*.tfvars"),
        ("home/.docker/config.json", ".docker/config.json"),
        (".kube/config", ".kube/"),
        ("store.p12", "*.p12"),
        ("store.pfx", "*.pfx"),
        ("android/release.keystore", "*.keystore"),
        (".netrc", ".netrc"),
        (".npmrc", ".npmrc"),
        (".pypirc", ".pypirc"),
        ("secrets.yaml", "secrets.*"),
        ("app/secrets.py", "secrets.*"),
        ("infra/terraform.tfstate", "*.tfstate"),
        (".gnupg/pubring.kbx", ".gnupg/"),
    ],
)
def test_default_patterns(path: str, pattern: str) -> None:
    """Ensure that every kind of secret file the issue lists is caught by name."""
    assert secret_pattern(path) == pattern
    assert SecretRules().match(path) == pattern


@pytest.mark.parametrize(
    "path",
    ["pkg/environment.py", "env.py", "keys.py", "pkg/tokens.py", "README.md", ".envelope", "credentials.py", "monkey"],
)
def test_ordinary_files_are_not_secrets(path: str) -> None:
    assert secret_pattern(path) is None


def test_opt_in_globs_bring_a_file_back() -> None:
    """Ensure that include globs opt a path back in, for the name and the content check."""
    rules = SecretRules([".env.example", "app/secrets.py"])
    assert rules.match(".env.example") is None and not rules.content_check(".env.example")
    assert rules.match("app/secrets.py") is None
    assert rules.match(".env") == ".env" and rules.content_check("notes.txt")


def test_a_private_key_is_found_by_content_but_a_mention_is_not() -> None:
    assert holds_private_key(b"some notes\n" + FAKE_KEY)
    assert holds_private_key(FAKE_KEY.replace(b"OPENSSH ", b"RSA "))
    assert not holds_private_key(b'HEADER = "-----BEGIN PRIVATE KEY-----"\n')
    assert not holds_private_key(b"Look for '-----BEGIN PRIVATE KEY-----\\n' at the start.\n")


PEM = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
    + "Q" * 64
    + "\n-----END PRIVATE KEY-----\n"
)


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (json.dumps({"type": "service_account", "private_key_id": "1", "private_key": PEM}), "service_account_key"),
        (
            json.dumps({"type": "service_account", "private_key": "redacted-but-still-a-key-file"}),
            "service_account_key",
        ),
        (json.dumps({"key": PEM}), "private_key"),  # escaped inside a JSON string
        (PEM.replace("PRIVATE KEY", "EC PRIVATE KEY"), "private_key"),
        ('{\n  "auths": {\n    "registry.example.com": {"auth": "dXNlcjpwYXNz"}\n  }\n}\n', "docker_auth"),
        ('{"auths": {"ghcr.io": {"identitytoken": "abcd1234"}}}', "docker_auth"),
        ("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    client-key-data: LS0tLS1\n", "kubeconfig"),
        ("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: abc\n", "kubeconfig"),
        (
            "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            "aws_credentials",
        ),
        ("[profile ci]\nregion = eu-west-1\naws_session_token = FwoGZXIvYXdzEBYaDExampleToken==\n", "aws_credentials"),
    ],
)
def test_credential_stores_are_found_by_content(content: str, kind: str) -> None:
    """Ensure that each kind of credential store is recognised whatever the file is called
    (real service-account keys are named like `my-project-3f2a1c.json`)."""
    assert credential_kind(content.encode()) == kind


@pytest.mark.parametrize(
    "content",
    [
        '{"auths": {}, "credsStore": "desktop"}',  # logins kept in a helper, none in the file
        "kind: Config\nclusters: []\n",  # a kubeconfig without credentials
        "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']\n",  # code, not an INI file
        "kind: Deployment\nspec:\n  token: from-a-secret-ref\n",
        '{"type": "service_account"}',  # the word, without a key
        "Look for '-----BEGIN PRIVATE KEY-----\\n' at the start.\n",
    ],
)
def test_ordinary_content_is_not_a_credential_store(content: str) -> None:
    """Ensure that code and config that merely mention these formats are not kept out."""
    assert credential_kind(content.encode()) is None
