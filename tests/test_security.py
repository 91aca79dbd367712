"""Issue 12's file-level attacks, through the engine (the core every adapter calls): files
swapped after indexing, secrets in the workspace, requests and config that point outside,
and a cache that is a link out. `tests/e2e/test_security.py` repeats the main ones over LSP.

Real files, links, FIFOs and (where allowed) device nodes in tmp dirs; nothing mocked.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ctx_lsp.engine import BundleRequest, Engine, Focus
from ctx_lsp.errors import InvalidParam, NotFound
from ctx_lsp.index.store import CACHE_DIR_NAME, DB_FILE_NAME
from ctx_lsp.params import parse_bundle, parse_outline, parse_symbol, uri_to_path
from tests.conftest import SAMPLE_FILES, within, write_tree

T = TypeVar("T")

SECRET = "LEAKED_SECRET_7f3a9c"
"""In every secret file of the workspace."""
OUTSIDE = "OUTSIDE_CONTENT_b41e07"
"""In every file outside the workspace."""

FAKE_KEY = (
    b"-----BEGIN OPENSSH PRIVATE KEY-----\n"
    b"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    b"QyNTUxOQAAACDfakefakefakefakefakefakefakefakefakefakefakefakeAAAA\n"
    b"-----END OPENSSH PRIVATE KEY-----\n"
)
"""A made-up OpenSSH private key block: what the content check looks for."""

SECRET_FILES = {
    ".env": f"API_TOKEN={SECRET}\ncount_tokens budget\n",
    ".env.local": f"API_TOKEN={SECRET}\n",
    ".env.production": f"API_TOKEN={SECRET}\n",
    "config/.env": f"DATABASE_URL=postgres://app:{SECRET}@db/app\n",
    "deploy/server.pem": f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n-----END PRIVATE KEY-----\n",
    "deploy/server.key": f"{SECRET}\n",
    "deploy/id_rsa": f"{SECRET} count tokens\n",
    "deploy/id_ed25519": f"{SECRET}\n",
    "credentials.json": f'{{"client_secret": "{SECRET}", "about": "count tokens budget"}}\n',
    "certs/store.p12": f"{SECRET}\n",
    ".netrc": f"machine example.com password {SECRET}\n",
    ".npmrc": f"//registry.npmjs.org/:_authToken={SECRET}\n",
    ".pypirc": f"[pypi]\npassword = {SECRET}\n",
    "secrets.yaml": f"token: {SECRET}\n",
    "android/release.keystore": f"{SECRET}\n",
}
"""Each mentions what a natural query asks about (tokens, budget), so only the exclusion
keeps them out."""


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "outside",
        {
            "stolen.py": f'"""{OUTSIDE}"""\n\n\ndef count_tokens(text):\n    return "{OUTSIDE}"\n',
            "pkg/tokens.py": f'"""{OUTSIDE}"""\n\n\ndef count_tokens(text):\n    return "{OUTSIDE}"\n',
            "docs/guide.md": f"# Guide\n\n## Tokens\n\nCount tokens: {OUTSIDE}\n",
        },
    )


def engine_for(root: Path, overrides: dict[str, Any] | None = None) -> Engine:
    engine = Engine([root], {"index": {"watch": False}, **(overrides or {})})
    engine.index()
    return engine


@pytest.fixture
def engine(sample_workspace: Path, outside: Path) -> Iterator[Engine]:
    e = engine_for(sample_workspace)
    yield e
    e.close()


def bundle_text(engine: Engine, **fields: Any) -> str:
    result = within(lambda: engine.bundle(BundleRequest(**{"budget": 8000, "tier": 3, **fields})))
    return result.text + str(result.snapshot)


def swap(path: Path, replacement: Callable[[Path], None]) -> None:
    path.unlink()
    replacement(path)


# ---------------------------------------------------------------- files swapped after indexing


def link_out(root: Path, outside: Path, what: str) -> None:
    """Replace pkg/tokens.py ("file") or its directory ("parent-directory") with a link out."""
    if what == "file":
        swap(root / "pkg" / "tokens.py", lambda p: p.symlink_to(outside / "stolen.py"))
        return
    for name in ("tokens.py", "bundle.py", "__init__.py"):
        (root / "pkg" / name).unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(outside / "pkg")


@pytest.mark.parametrize("what", ["file", "parent-directory"])
def test_a_link_out_swapped_in_after_indexing_is_never_read(engine: Engine, outside: Path, what: str) -> None:
    """Ensure that a workspace file (or its directory) replaced after indexing by a link
    out of the workspace is not read, with or without a refresh in between, and that
    status names it as refused."""
    root = engine.roots[0]
    link_out(root, outside, what)
    assert OUTSIDE not in bundle_text(engine, query="count tokens TokenCounter")
    assert engine.status().refused.get("pkg/tokens.py") == "outside"
    engine.refresh([root / "pkg" / "tokens.py", root / "pkg"])
    assert OUTSIDE not in bundle_text(engine, query="count tokens TokenCounter")
    with pytest.raises(InvalidParam, match="outside the workspace") as info:
        engine.outline(str(root / "pkg" / "tokens.py"), 3)
    assert info.value.field == "uri"


@pytest.mark.parametrize("what", ["file", "parent-directory"])
def test_a_link_out_swapped_in_after_a_bundle_is_never_read(engine: Engine, outside: Path, what: str) -> None:
    """Ensure that a file rendered before it was swapped for a link out (its prepared basis
    kept, which spares re-reading an unchanged file) is read through the gate again, not
    served from the basis, and refused."""
    root = engine.roots[0]
    before = bundle_text(engine, query="count tokens TokenCounter", tier=1)
    assert "def count_tokens" in before and OUTSIDE not in before
    link_out(root, outside, what)
    assert OUTSIDE not in bundle_text(engine, query="tokens counted by count_tokens")
    assert engine.status().refused.get("pkg/tokens.py") == "outside"


def test_a_file_changed_after_a_bundle_is_shown_as_it_is_now(engine: Engine) -> None:
    """Ensure that a file rendered once and then changed on disk (no refresh: the watcher
    is off) is read again for the next bundle rather than served from its kept basis."""
    root = engine.roots[0]
    assert "changed_since_marker" not in bundle_text(engine, query="count tokens TokenCounter", tier=1)
    path = root / "pkg" / "tokens.py"
    path.write_text(path.read_text() + "\n\ndef changed_since_marker():\n    return 1\n")
    assert "changed_since_marker" in bundle_text(engine, query="tokens counted by count_tokens", tier=3)


def test_a_fifo_swapped_in_never_blocks(engine: Engine) -> None:
    """Ensure that a FIFO in place of an indexed file, or of a .gitignore the next refresh
    re-reads, blocks no bundle, outline, refresh or reindex, and shows in status."""
    root = engine.roots[0]
    swap(root / "pkg" / "tokens.py", os.mkfifo)
    assert "def count_tokens" not in bundle_text(engine, query="count tokens TokenCounter")
    assert engine.status().refused == {"pkg/tokens.py": "not_a_file"}
    with pytest.raises(NotFound, match="is a FIFO, not a regular file"):
        within(lambda: engine.outline(str(root / "pkg" / "tokens.py"), 3))
    os.mkfifo(root / ".gitignore")
    within(lambda: engine.refresh([root / ".gitignore"]))
    stats = within(lambda: engine.index(force=True))
    assert stats.skipped["not_a_file"] == 2 and engine.status().refused == {}
    assert "pkg/tokens.py" not in {f.path for f in engine.workspace.files.values()}


def test_a_device_swapped_in_is_refused_not_read(engine: Engine) -> None:
    """Ensure that a character device node (/dev/zero's numbers) in place of an indexed
    file is refused with a reason, never read (it would read until memory runs out)."""
    root = engine.roots[0]
    try:
        swap(root / "pkg" / "tokens.py", lambda p: os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 5)))
    except PermissionError:
        pytest.skip("mknod needs privileges here")
    assert "def count_tokens" not in bundle_text(engine, query="count tokens TokenCounter")
    assert engine.status().refused == {"pkg/tokens.py": "not_a_file"}
    with pytest.raises(NotFound, match="is a character device"):
        within(lambda: engine.outline(str(root / "pkg" / "tokens.py"), 3))


def test_a_file_grown_past_the_limit_is_refused(sample_workspace: Path) -> None:
    """Ensure that a file that grew past `index.max_file_bytes` since it was indexed is not
    read whole into a bundle."""
    engine = engine_for(sample_workspace, {"index": {"watch": False, "max_file_bytes": 5000}})
    (sample_workspace / "pkg" / "tokens.py").write_text("x = 1\n" * 2000)
    assert "x = 1" not in bundle_text(engine, query="count tokens TokenCounter")
    assert engine.status().refused == {"pkg/tokens.py": "too_large"}


def test_links_that_stay_inside_are_served(engine: Engine) -> None:
    """Ensure that a link inside the workspace pointing inside it is no attack: a request
    naming it is served (as its target), in outlines and as a working file."""
    root = engine.roots[0]
    (root / "alias.py").symlink_to(root / "pkg" / "tokens.py")
    (root / "pkgs").symlink_to(root / "pkg")
    assert "def count_tokens" in engine.outline(str(root / "alias.py"), 3).content
    assert "def count_tokens" in engine.outline(str(root / "pkgs" / "tokens.py"), 3).content
    result = engine.bundle(BundleRequest(open=(str(root / "alias.py"),), budget=4000))
    assert any(s.path == "pkg/tokens.py" and s.contributor == "working_files" for s in result.sections)


# ---------------------------------------------------------------- secrets


@pytest.fixture
def secrets_engine(tmp_path: Path) -> Iterator[Engine]:
    files = {**SAMPLE_FILES, **SECRET_FILES, "config/settings.py": "def load_settings():\n    return read('.env')\n"}
    files["notes.txt"] = (FAKE_KEY + f"\n{SECRET}\n".encode()).decode()
    e = engine_for(write_tree(tmp_path / "ws", files))
    yield e
    e.close()


def test_secrets_are_never_indexed_searched_bundled_or_listed(secrets_engine: Engine) -> None:
    """Ensure that secret files (by name, and a key by content) reach no search hit, no
    bundle (by natural queries, or focused on a file next to them) and no status list, and
    that status counts them as `secret`."""
    engine = secrets_engine
    status = engine.status()
    assert status.skipped["secret"] == len(SECRET_FILES) + 1  # + notes.txt, a key by content
    assert SECRET not in str(status) and not any(p in str(status) for p in SECRET_FILES if "/" in p)
    indexed = {f.path for f in engine.workspace.files.values()}
    assert not indexed & {*SECRET_FILES, "notes.txt"}
    for query in ("API_TOKEN", "client_secret", SECRET, "password", "count tokens budget", "private key"):
        assert not {h.path for h in engine.search(query)} & {*SECRET_FILES, "notes.txt"}
        if query != SECRET:  # the bundle's title repeats the query
            assert SECRET not in bundle_text(engine, query=query, budget=32000)
    focus = Focus(str(engine.roots[0] / "config" / "settings.py"), 0, 4)
    assert SECRET not in bundle_text(engine, query="load settings from .env", focus=focus)
    assert SECRET not in bundle_text(engine, query="settings", open=(str(engine.roots[0] / "config" / "settings.py"),))


def test_a_request_naming_a_secret_is_refused_naming_the_field(secrets_engine: Engine) -> None:
    """Ensure that ctx/outline (any tier), a focus and an open file naming a secret file get
    a refusal that names the field and says why, and never the content."""
    root = secrets_engine.roots[0]
    for rel in SECRET_FILES:
        with pytest.raises(InvalidParam, match=r"holds secrets \(matches '") as info:
            secrets_engine.outline(str(root / rel), 3)
        assert info.value.field == "uri" and SECRET not in str(info.value)
    with pytest.raises(InvalidParam) as info:
        secrets_engine.bundle(BundleRequest(open=(str(root / "pkg/tokens.py"), str(root / "config/.env"))))
    assert info.value.field == "open[1]"
    with pytest.raises(InvalidParam) as info:
        secrets_engine.bundle(BundleRequest(focus=Focus(str(root / "deploy/id_rsa"), 0, 0)))
    assert info.value.field == "focus.uri"
    # A secret by its content (a private key in notes.txt) is refused the same way, in
    # every field (the fresh attack run found it answered "not indexed", or not at all).
    key_file = str(root / "notes.txt")
    with pytest.raises(InvalidParam, match=r"holds secrets \(matches '\(content\)") as info:
        secrets_engine.outline(key_file, 3)
    assert info.value.field == "uri"
    with pytest.raises(InvalidParam) as info:
        secrets_engine.bundle(BundleRequest(open=(key_file,)))
    assert info.value.field == "open[0]"
    with pytest.raises(InvalidParam) as info:
        secrets_engine.bundle(BundleRequest(focus=Focus(key_file, 0, 0)))
    assert info.value.field == "focus.uri"
    with pytest.raises(InvalidParam) as info:
        secrets_engine.symbol(parse_symbol({"name": "x", "path": key_file}))
    assert info.value.field == "path"


def test_an_editor_buffer_of_a_secret_is_not_tracked(secrets_engine: Engine) -> None:
    """Ensure that a didOpen of a secret file, or an edit that pastes a key into a buffer,
    does not put it in the index (buffers are searched and bundled like files)."""
    root = secrets_engine.roots[0]
    with pytest.raises(NotFound, match="holds secrets"):
        secrets_engine.open_document(str(root / ".env"), f"API_TOKEN={SECRET}\n", 1)
    target = str(root / "pkg" / "bundle.py")
    secrets_engine.open_document(target, "def fine():\n    pass\n", 1)
    with pytest.raises(NotFound, match="private key"):
        secrets_engine.open_document(target, FAKE_KEY.decode() + SECRET, 2, edited=True)
    assert SECRET not in bundle_text(secrets_engine, query="bundle fine")
    assert secrets_engine.workspace.overlay_paths() == []


def test_the_users_settings_opt_a_secret_back_in(tmp_path: Path) -> None:
    """Ensure that index.include_secrets in the user's settings indexes a look-alike
    (`.env.example`), while the same key in the workspace's config is refused."""
    files = {**SAMPLE_FILES, ".env.example": "API_TOKEN=changeme\n", ".env": f"API_TOKEN={SECRET}\n"}
    files["ctx-lsp.toml"] = '[index]\ninclude_secrets = [".env"]\n'
    root = write_tree(tmp_path / "ws", files)
    engine = engine_for(root, {"index": {"watch": False, "include_secrets": [".env.example"]}})
    indexed = {f.path for f in engine.workspace.files.values()}
    assert ".env.example" in indexed and ".env" not in indexed
    assert any(w.startswith("index.include_secrets") for w in engine.status().config["warnings"])
    engine.reconfigure({"index": {"watch": False}})
    assert ".env.example" not in {f.path for f in engine.workspace.files.values()}


# ---------------------------------------------------------------- URIs outside the workspace


@pytest.mark.parametrize(
    "spelling", ["absolute", "dotdot", "encoded-dotdot", "encoded-upper", "link-out"], ids=lambda s: s
)
def test_outside_uris_are_refused_naming_their_field(engine: Engine, outside: Path, spelling: str) -> None:
    """Ensure that `uri`, `focus.uri` and `open[i]` refuse a file outside the workspace,
    whatever the spelling, with an InvalidParam naming that exact field."""
    root = engine.roots[0]
    (root / "link.py").symlink_to(outside / "stolen.py")
    target = {
        "absolute": (outside / "stolen.py").as_uri(),
        "dotdot": root.as_uri() + "/../outside/stolen.py",
        "encoded-dotdot": root.as_uri() + "/%2e%2e/outside/stolen.py",
        "encoded-upper": root.as_uri() + "/pkg/%2E%2E/%2E%2E/outside/stolen.py",
        "link-out": (root / "link.py").as_uri(),
    }[spelling]
    inside = (root / "pkg" / "tokens.py").as_uri()
    cases = [
        (lambda: engine.outline(parse_outline({"uri": target}).path), "uri"),
        (lambda: engine.bundle(parse_bundle({"focus": {"uri": target, "position": {"line": 0}}})), "focus.uri"),
        (lambda: engine.bundle(parse_bundle({"open": [target]})), "open[0]"),
        (lambda: engine.bundle(parse_bundle({"open": [inside, target]})), "open[1]"),
    ]
    for call, field in cases:
        with pytest.raises(InvalidParam, match="outside the workspace folders") as info:
            call()
        assert info.value.field == field and OUTSIDE not in str(info.value)


def test_uris_are_decoded_exactly_once() -> None:
    """Ensure that percent-escapes are decoded once: `%252e%252e` is a directory named
    `%2e%2e`, not `..`; a NUL is refused naming the field."""
    assert uri_to_path("file:///ws/%2e%2e/x.py", "uri") == Path("/ws/../x.py")
    assert uri_to_path("file:///ws/%252e%252e/x.py", "uri") == Path("/ws/%2e%2e/x.py")
    assert uri_to_path("file:///ws/a%20b.py", "uri") == Path("/ws/a b.py")
    with pytest.raises(InvalidParam) as info:
        uri_to_path("file:///ws/a%00.py", "open[3]")
    assert info.value.field == "open[3]"


# ---------------------------------------------------------------- workspace config pointing outside


def docs_answer(engine: Engine, library: str) -> str:
    try:
        return str(engine.docs(library, "tokens"))
    except Exception as err:
        return str(err)


@pytest.mark.parametrize("spelling", ["absolute", "dotdot", "link-out"])
def test_a_workspace_docs_folder_outside_is_not_served(tmp_path: Path, outside: Path, spelling: str) -> None:
    """Ensure that docs.folders in a workspace's pyproject.toml naming a folder outside it
    (absolute, `..`, or a link inside that leads out) is refused with a config warning
    naming the key, and that ctx/docs and a bundle with docs do not serve it."""
    value = {"absolute": str(outside / "docs"), "dotdot": "../outside/docs", "link-out": "linked-docs"}[spelling]
    pyproject = f'[project]\nname = "sample"\n\n[tool.ctx-lsp.docs.folders]\nevil = ["{value}"]\n'
    root = write_tree(tmp_path / "ws", {**SAMPLE_FILES, "pyproject.toml": pyproject})
    (root / "linked-docs").symlink_to(outside / "docs")
    engine = engine_for(root, {"python": {"interpreter": sys.executable}})
    assert any(w.startswith("docs.folders.evil") for w in engine.status().config["warnings"])
    assert OUTSIDE not in docs_answer(engine, "evil")
    assert OUTSIDE not in bundle_text(engine, query="tokens", docs=(("evil", "tokens"),))


def test_a_docs_folder_swapped_for_a_link_out_later_is_not_served(tmp_path: Path, outside: Path) -> None:
    """Ensure that a docs folder that was inside when the config was read, and is a link
    out by the time docs are read (a `git pull`), serves nothing from outside."""
    pyproject = '[project]\nname = "sample"\n\n[tool.ctx-lsp.docs.folders]\nguide = ["docs"]\n'
    root = write_tree(tmp_path / "ws", {**SAMPLE_FILES, "pyproject.toml": pyproject, "docs/guide.md": "# Guide\n"})
    engine = engine_for(root, {"python": {"interpreter": sys.executable}})
    (root / "docs" / "guide.md").unlink()
    (root / "docs").rmdir()
    (root / "docs").symlink_to(outside / "docs")
    assert OUTSIDE not in docs_answer(engine, "guide")


def test_the_users_own_docs_folder_outside_is_served(tmp_path: Path, outside: Path) -> None:
    """Ensure that a docs folder outside the workspace named in the user's own settings is
    read: the user's settings are trusted, a cloned repository's are not."""
    root = write_tree(tmp_path / "ws", SAMPLE_FILES)
    overrides = {"python": {"interpreter": sys.executable}, "docs": {"folders": {"guide": [str(outside / "docs")]}}}
    engine = engine_for(root, overrides)
    assert OUTSIDE in docs_answer(engine, "guide")


def test_requirements_cannot_include_a_file_outside(tmp_path: Path, outside: Path) -> None:
    """Ensure that a requirements file's `-r` include leading out of the workspace is not
    read: its lines would become "declared dependencies" in ctx.prewarmDocs' answer."""
    (outside / "reqs.txt").write_text(f"{OUTSIDE.lower()}-package\n")
    requirements = f"pygls\n-r {outside / 'reqs.txt'}\n-r ../outside/reqs.txt\n"
    root = write_tree(tmp_path / "ws", {"requirements.txt": requirements})
    engine = engine_for(root, {"python": {"interpreter": sys.executable}})
    assert engine.library_docs.declared_dependencies() == ["pygls"]


# ---------------------------------------------------------------- the cache

CACHE_LINKS = [CACHE_DIR_NAME, f"{CACHE_DIR_NAME}/{DB_FILE_NAME}", f"{CACHE_DIR_NAME}/{DB_FILE_NAME}-wal"]


@pytest.mark.parametrize("link", CACHE_LINKS)
def test_a_cache_that_is_a_link_out_is_not_written(sample_workspace: Path, tmp_path: Path, link: str) -> None:
    """Ensure that when `.ctx-lsp/`, its database or the database's journal is a link out of
    the workspace, nothing is created or written where it points: the index runs from
    memory and status says why."""
    target = tmp_path / "elsewhere"
    if link == CACHE_DIR_NAME:
        target.mkdir()
    else:
        (sample_workspace / CACHE_DIR_NAME).mkdir()
    (sample_workspace / link).symlink_to(target)
    engine = engine_for(sample_workspace, {"python": {"interpreter": sys.executable}})
    engine.docs("pygls", "custom requests")  # the docs cache, too
    status = engine.status()
    assert status.files_indexed == 5 and status.cache["locations"] == [":memory:"]
    assert any("symbolic link" in w for w in status.cache["warnings"]), status.cache
    engine.close()
    assert list(target.iterdir()) == [] if target.is_dir() else not target.exists()


# ---------------------------------------------------------------- secrets by content (issue 20)

PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "Q" * 64
CONTENT_SECRETS = {
    "deploy/my-project-3f2a1c.json": json.dumps(
        {
            "type": "service_account",
            "project_id": "count-tokens-budget",
            "private_key": f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----\n",
            "client_email": f"{SECRET}@example.iam.gserviceaccount.com",
        }
    ),
    "tools/registry.json": json.dumps({"auths": {"ghcr.io": {"auth": f"{SECRET}dXNlcg=="}}, "note": "count tokens"}),
    "ops/cluster.yaml": (
        "apiVersion: v1\nkind: Config\nclusters: []\nusers:\n- name: admin\n  user:\n"
        f"    token: {SECRET}\n# count tokens budget\n"
    ),
    "ops/aws.ini": (
        f"[default]\n# count tokens {SECRET}\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    ),
    "infra/prod.tfvars": f'db_password = "{SECRET}"\n# count tokens budget\n',
    "data/signing.json": json.dumps({"key": f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n", "note": SECRET}),
}
"""One credential store of each kind under an ordinary name (and `*.tfvars`, by name)."""

TOKENS = {
    "github_token": "ghp_" + "Ab1" * 12,
    "aws_access_key_id": "AKIA" + "Z7Q4" * 4,
    "slack_token": "xoxb-1234567890-" + "q1w2e3r4t5",
    "stripe_key": "sk_live_" + "9" * 24,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
SETTINGS = (
    '"""Settings: count tokens budget."""\n\n'
    + "".join(f'{kind.upper()} = "{token}"\n' for kind, token in TOKENS.items())
    + "\n\ndef load_settings():\n"
    + "".join(f"    use({kind.upper()})  # {token}\n" for kind, token in TOKENS.items())
)


@pytest.fixture
def content_secrets_engine(tmp_path: Path) -> Iterator[Engine]:
    e = engine_for(write_tree(tmp_path / "ws", {**SAMPLE_FILES, **CONTENT_SECRETS, "app/settings.py": SETTINGS}))
    yield e
    e.close()


def test_credential_stores_under_ordinary_names_are_never_served(content_secrets_engine: Engine) -> None:
    """Ensure that a file holding credentials, whatever it is called, reaches no index
    entry, search hit, bundle, outline or symbol, is refused when a request names it, and
    is counted in status by kind, never by path (issue 20: 12 leaks in 162 tries before)."""
    engine = content_secrets_engine
    root = engine.roots[0]
    indexed = {f.path for f in engine.workspace.files.values()}
    assert not indexed & set(CONTENT_SECRETS)
    for query in ("count tokens budget", "service account private key", "auths registry", "token", SECRET):
        assert not {h.path for h in engine.search(query)} & set(CONTENT_SECRETS)
        if query != SECRET:
            assert SECRET not in bundle_text(engine, query=query, budget=32000)
    for rel in CONTENT_SECRETS:
        with pytest.raises(InvalidParam, match="holds secrets") as info:
            engine.outline(str(root / rel), 3)
        assert SECRET not in str(info.value)
        with pytest.raises(InvalidParam):
            engine.symbol(parse_symbol({"name": "x", "path": str(root / rel)}))
    status = engine.status()
    assert status.secrets["kept_out"] == {
        "aws_credentials": 1,
        "docker_auth": 1,
        "kubeconfig": 1,
        "private_key": 1,
        "service_account_key": 1,
        "terraform": 1,
    }
    assert SECRET not in str(status) and not any(rel in str(status) for rel in CONTENT_SECRETS)


def test_tokens_in_an_ordinary_file_are_masked_everywhere(content_secrets_engine: Engine) -> None:
    """Ensure that token-shaped secrets inside an ordinary source file are masked in the
    bundle, the outline and a symbol's body, while the file itself is still served, with
    its line numbers intact; status counts the masked kinds."""
    engine = content_secrets_engine
    settings = str(engine.roots[0] / "app" / "settings.py")
    text = bundle_text(engine, query="load settings", open=(settings,))
    outline = engine.outline(settings, 3).content
    body = "".join(m.body or "" for m in engine.symbol(parse_symbol({"name": "load_settings"})).matches)
    for shown in (text, outline, body):
        assert "[masked by ctx-lsp: github_token]" in shown
        assert not [token for token in TOKENS.values() if token in shown]
    assert "load_settings" in text and "def load_settings" in body
    assert engine.status().secrets["masked"] == dict.fromkeys(sorted(TOKENS), 1)
    engine.open_document(settings, SETTINGS + f'\nLATE = "{TOKENS["github_token"]}"\n', 1, edited=True)
    assert TOKENS["github_token"] not in bundle_text(engine, query="load settings", open=(settings,))
