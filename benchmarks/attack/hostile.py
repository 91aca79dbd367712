"""Issue 20's family of the attack run: hostile workspaces.

Each input is a whole workspace a stranger's repository could be: bad ignore files of every
kind (invalid patterns, catastrophic-backtracking ones against long names and deep trees,
binary, a link out, a FIFO, 10,001 lines), bad config of every kind, secrets under ordinary
names and token-shaped strings in ordinary source, link loops, deep trees, an unreadable
directory, huge one-line files and odd names. The real server is started on it, and:

- **clean**: initialize answers, indexing ends within the bound, every ordinary `.py` file
  is indexed (status `files_by_language.python`), each expected problem or config warning
  is listed, and every request below answers with no marker in any output;
- **missed**: it answered, but an ordinary file is not indexed or a problem is not listed
  (a failure, like the three below);
- **leak**, **hang**, **exit**: as in the other families (`run.py`).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import string
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client import Server
from world import World, marker, pem_block, write

FAMILY = "hostile workspaces"
INDEX_BOUND_S = 60.0
"""A workspace must be indexed within this long (Django's cold index is ~4 s)."""


@dataclass
class Case:
    name: str
    build: Callable[[World], None]
    python: int
    """Ordinary `.py` files the index must hold (the base package's included)."""
    problems: list[str] = field(default_factory=list)
    """Substrings each of which some `problems` entry or config warning must hold."""
    probes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Requests beyond the common ones (relative uris are made absolute)."""


BASE_PY = 4


def base(world: World) -> None:
    """An ordinary package every workspace holds, and the canary outside."""
    ws = world.ws
    write(ws / "pkg" / "__init__.py", "")
    write(ws / "pkg" / "tokens.py", '"""Token counting."""\n\n\ndef count_tokens(text):\n    return len(text)\n')
    write(
        ws / "pkg" / "session.py", "from pkg.tokens import count_tokens\n\n\ndef send(r):\n    return count_tokens(r)\n"
    )
    write(ws / "pkg" / "config.py", "def load_settings():\n    return {'region': 'eu'}\n")
    write(world.outside / "stolen.py", f'"""{world.outside_marker}"""\n\n\ndef count_tokens(t):\n    return 0\n')
    write(world.outside / "ignore", f"*.py\n[z-a]{world.outside_marker}\n")
    write(world.outside / "pyproject.toml", f'[tool.ctx-lsp]\n"{world.outside_marker}" = 1\n')


def secret(world: World, name: str, prefix: str = "SECRETMK") -> str:
    m = marker(prefix)
    world.secret_markers[name] = m
    return m


def deep_dir(top: Path, name: str, depth: int) -> Path:
    """`top/name/name/...` `depth` deep, made one level at a time (`mkdir(parents=True)`
    recurses once per level and hits the recursion limit)."""
    path = top
    for _ in range(depth):
        path = path / name
        path.mkdir(exist_ok=True)
    return path


def rand(chars: str, n: int) -> str:
    return "".join(secrets.choice(chars) for _ in range(n))


# ---------------------------------------------------------------- the workspaces

UP_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits


def cases() -> list[Case]:
    found: list[Case] = []

    def case(name: str, python: int = BASE_PY, problems: list[str] | None = None, probes: Any = None) -> Any:
        def register(fn: Callable[[World], None]) -> Callable[[World], None]:
            found.append(Case(name, fn, python, problems or [], probes or []))
            return fn

        return register

    @case(
        "black: '!' ignore files at two depths", BASE_PY + 2, ["invalid_gitignore_tests/.gitignore:1", "a/.gitignore:1"]
    )
    def _(w: World) -> None:
        write(w.ws / "tests/data/invalid_gitignore_tests/.gitignore", "!\n")
        write(w.ws / "tests/data/invalid_gitignore_tests/x.py", "X = 1\n")
        write(w.ws / "tests/data/invalid_nested_gitignore_tests/a/.gitignore", "!\n")
        write(w.ws / "tests/data/invalid_nested_gitignore_tests/a/b.py", "B = 1\n")

    @case("[z-a], trailing backslash, '[' and '!/' with valid lines", BASE_PY + 1, ["'[z-a]'", ".gitignore:2"])
    def _(w: World) -> None:
        write(w.ws / ".gitignore", "[z-a]\nfoo\\\n[\n!/\ngen_*.py\n")
        write(w.ws / "gen_1.py", "G = 1\n")
        write(w.ws / "kept.py", "K = 1\n")

    @case("binary .gitignore", BASE_PY + 1)
    def _(w: World) -> None:
        (w.ws / ".gitignore").write_bytes(bytes(range(256)) * 4 + b"\x00\xff\xfe")
        write(w.ws / "m.py", "M = 1\n")

    @case("*a*a*a*a*a*a*a*b against 250-character names", BASE_PY + 20)
    def _(w: World) -> None:
        write(w.ws / ".gitignore", "*a*a*a*a*a*a*a*b\n*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n")
        for i in range(20):
            write(w.ws / "long" / (f"{i:02d}" + "a" * 245 + ".py"), f"L{i} = 1\n")

    @case("**/a/**/a/**/b against a 1,000-deep tree", BASE_PY + 1)
    def _(w: World) -> None:
        write(w.ws / ".gitignore", "**/a/**/a/**/b\n**/a/**/a/**/a/**/a/**/a/**/b\n")
        write(deep_dir(w.ws, "a", 1000) / "deep.py", "D = 1\n")

    @case("10,001-line .gitignore", BASE_PY + 1, ["only its first 10,000 patterns apply"])
    def _(w: World) -> None:
        write(w.ws / ".gitignore", "".join(f"nothing_{i}_*.tmp\n" for i in range(10_001)) + "*.py\n")
        write(w.ws / "m.py", "M = 1\n")

    @case(".git/info/exclude with bad lines, BOM and CRLF", BASE_PY + 1, [".git/info/exclude:2"])
    def _(w: World) -> None:
        (w.ws / ".git" / "info").mkdir(parents=True)
        (w.ws / ".git" / "info" / "exclude").write_bytes(b"\xef\xbb\xbfgen.py\r\n[z-a]\r\n!\r\n")
        write(w.ws / "gen.py", "G = 1\n")
        write(w.ws / "m.py", "M = 1\n")

    @case(".gitignore linked out of the workspace, and linked inside", BASE_PY + 2, ["a symbolic link"])
    def _(w: World) -> None:
        os.symlink(w.outside / "ignore", w.ws / ".gitignore")
        write(w.ws / "patterns.txt", "*.py\n")
        write(w.ws / "sub" / "m.py", "M = 1\n")
        os.symlink(w.ws / "patterns.txt", w.ws / "sub" / ".gitignore")
        write(w.ws / "n.py", "N = 1\n")

    @case(".gitignore a FIFO, and one a directory", BASE_PY + 2)
    def _(w: World) -> None:
        os.mkfifo(w.ws / ".gitignore")
        (w.ws / "sub" / ".gitignore").mkdir(parents=True)
        write(w.ws / "sub" / "m.py", "M = 1\n")
        write(w.ws / "n.py", "N = 1\n")

    config_cases = [
        ("pyproject tokenizer = 5", "pyproject.toml", "[tool.ctx-lsp]\ntokenizer = 5\n", ["tokenizer"]),
        ("pyproject [tool] ctx-lsp = 5", "pyproject.toml", '[tool]\n"ctx-lsp" = 5\n', ["expected a table"]),
        (
            "pyproject index.ignore a string",
            "pyproject.toml",
            '[tool.ctx-lsp.index]\nignore = "*.py"\n',
            ["index.ignore"],
        ),
        (
            "ctx-lsp.toml max_file_bytes = -1, budget 'lots', unknown keys",
            "ctx-lsp.toml",
            '[index]\nmax_file_bytes = -1\n[agents.default]\nbudget = "lots"\n[nonsense]\nx = 1\n',
            ["max_file_bytes", "budget"],
        ),
        ("ctx-lsp.toml invalid TOML", "ctx-lsp.toml", "[index\nignore = = [\n", ["ctx-lsp.toml not read"]),
        ("pyproject.toml invalid TOML", "pyproject.toml", '[project\nname = "x\n', ["pyproject.toml not read"]),
        (".ctx-lsp.toml binary", ".ctx-lsp.toml", "\x00\x01\x02\xff", [".ctx-lsp.toml not read"]),
        ("pyproject 5,000-deep arrays", "pyproject.toml", "[tool.ctx-lsp]\nx = " + "[" * 5000 + "]" * 5000 + "\n", []),
        (
            "pyproject include_secrets opts .env in",
            "pyproject.toml",
            '[tool.ctx-lsp.index]\ninclude_secrets = ["*"]\n',
            [],
        ),
        (
            "pyproject index.respect_gitignore = 'no', weights wrong",
            "pyproject.toml",
            '[tool.ctx-lsp]\nweights = {retrieval = "high"}\n[tool.ctx-lsp.index]\nrespect_gitignore = "no"\n',
            ["respect_gitignore"],
        ),
    ]
    for label, fname, text, problems in config_cases:

        def build(w: World, fname: str = fname, text: str = text) -> None:
            path = w.ws / fname
            if "\x00" in text:
                path.write_bytes(text.encode("latin-1"))
            else:
                write(path, text)
            m = secret(w, ".env")
            write(w.ws / ".env", f"API_KEY={m}\n")

        found.append(Case(f"config: {label}", build, BASE_PY, problems))

    @case("config: pyproject.toml a link out, ctx-lsp.toml a FIFO", BASE_PY, ["pyproject.toml not read"])
    def _(w: World) -> None:
        os.symlink(w.outside / "pyproject.toml", w.ws / "pyproject.toml")
        os.mkfifo(w.ws / "ctx-lsp.toml")

    secret_probes = [
        ("ctx/outline", {"uri": "deploy/my-project-3f2a1c.json", "tier": 3}),
        ("ctx/outline", {"uri": "cluster/admin.yaml", "tier": 3}),
        ("ctx/outline", {"uri": "config/app.json", "tier": 3}),
        ("ctx/bundle", {"query": "private key", "open": ["deploy/my-project-3f2a1c.json"], "budget": 8000}),
    ]

    @case("secrets by content under ordinary names, and by path", BASE_PY, probes=secret_probes)
    def _(w: World) -> None:
        b64 = base64.b64encode(secrets.token_bytes(120)).decode()
        m = secret(w, "service account")
        write(
            w.ws / "deploy" / "my-project-3f2a1c.json",
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": "prod",
                    "private_key_id": m,
                    "private_key": f"-----BEGIN PRIVATE KEY-----\n{b64}{m}\n-----END PRIVATE KEY-----\n",
                    "client_email": "deploy@prod.iam.gserviceaccount.com",
                }
            ),
        )
        m = secret(w, "docker config")
        write(w.ws / ".docker" / "config.json", json.dumps({"auths": {"ghcr.io": {"auth": m}}}))
        m = secret(w, "docker auths elsewhere")
        write(w.ws / "ci" / "registry.json", json.dumps({"auths": {"registry.example.com": {"auth": m}}}))
        m = secret(w, "kubeconfig key")
        t = secret(w, "kubeconfig token")
        write(
            w.ws / "cluster" / "admin.yaml",
            "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\nusers:\n- name: admin\n  user:\n"
            f"    client-key-data: {m}\n    token: {t}\n",
        )
        m = secret(w, "aws credentials")
        write(
            w.ws / ".aws" / "credentials",
            f"[default]\naws_access_key_id = AKIA{rand(UP_DIGITS, 16)}\naws_secret_access_key = {m}\n",
        )
        m = secret(w, "tfvars")
        write(w.ws / "infra" / "prod.tfvars", f'db_password = "{m}"\n')
        m = secret(w, "private key escaped in JSON")
        write(w.ws / "config" / "app.json", json.dumps({"name": "app", "signing_key": pem_block(m)}))
        m = secret(w, "pem file by content")
        write(w.ws / "notes" / "deploy_key.txt", f"deploy key\n{pem_block(m)}")

    token_probes = [
        ("ctx/outline", {"uri": "app/settings.py", "tier": 3}),
        ("ctx/outline", {"uri": "app/clients.py", "tier": 3}),
        ("ctx/symbol", {"name": "AWS_SECRET_ACCESS_KEY", "include_body": True}),
        ("ctx/symbol", {"name": "make_client", "include_body": True}),
        ("ctx/bundle", {"query": "github token slack stripe", "open": ["app/settings.py"], "tier": 3, "budget": 16000}),
        (
            "ctx/bundle",
            {"query": "settings", "focus": {"uri": "app/clients.py", "position": {"line": 3, "character": 0}}},
        ),
    ]

    @case("token-shaped strings in ordinary .py files", BASE_PY + 2, probes=token_probes)
    def _(w: World) -> None:
        tokens = {
            "aws key id": "AKIA" + rand(UP_DIGITS, 16),
            "aws secret": rand(ALNUM + "/+", 40),
            "github": "ghp_" + rand(ALNUM, 36),
            "slack": "xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24),
            "stripe": "sk_live_" + rand(ALNUM, 28),
            "jwt": "eyJ" + rand(ALNUM, 20) + ".eyJ" + rand(ALNUM, 30) + "." + rand(ALNUM, 32),
        }
        w.secret_markers.update({f"token {k}": v for k, v in tokens.items()})
        write(
            w.ws / "app" / "settings.py",
            '"""Settings for the app: tokens and keys."""\n\n'
            f'AWS_ACCESS_KEY_ID = "{tokens["aws key id"]}"\n'
            f'AWS_SECRET_ACCESS_KEY = "{tokens["aws secret"]}"\n'
            f'GITHUB_TOKEN = "{tokens["github"]}"\n'
            f'SLACK_TOKEN = "{tokens["slack"]}"\n'
            f'STRIPE_KEY = "{tokens["stripe"]}"\n\n\ndef settings():\n    return GITHUB_TOKEN\n',
        )
        write(
            w.ws / "app" / "clients.py",
            "import requests\n\n\ndef make_client():\n"
            f'    headers = {{"Authorization": "Bearer {tokens["jwt"]}"}}\n'
            f'    return requests.Session(), headers, "{tokens["slack"]}"\n',
        )

    @case("symlink loops, links out, 1,800 nested directories, unreadable directory", BASE_PY + 2 + (os.geteuid() == 0))
    def _(w: World) -> None:
        (w.ws / "loop").mkdir()
        os.symlink(w.ws / "loop", w.ws / "loop" / "again")
        os.symlink("self", w.ws / "self")
        os.symlink(w.outside, w.ws / "outside_dir")
        os.symlink(w.outside / "stolen.py", w.ws / "stolen_link.py")
        write(deep_dir(w.ws, "d", 1800) / "bottom.py", "BOTTOM = 1\n")  # 3,600 bytes: PATH_MAX is 4,096
        locked = w.ws / "locked"
        write(locked / "hidden.py", "H = 1\n")
        locked.chmod(0)
        write(w.ws / "open.py", "O = 1\n")

    @case("huge one-line files, 5,000-deep brackets, NUL bytes, Latin-1, BOM+CRLF", BASE_PY + 4)
    def _(w: World) -> None:
        write(w.ws / "huge_line.py", "X = [" + "1, " * 600_000 + "]\n")  # 1.8 MB: too large, listed
        write(w.ws / "big_line.py", "Y = '" + "a" * 900_000 + "'\n")
        write(w.ws / "brackets.py", "Z = " + "[" * 5000 + "]" * 5000 + "\n")
        (w.ws / "nul.py").write_bytes(b"A = 1\x00\x00\n")
        (w.ws / "latin.py").write_bytes("# caf\xe9\nS = 'na\xefve'\n".encode("latin-1"))
        (w.ws / "bom.py").write_bytes(b"\xef\xbb\xbfdef f():\r\n    return 1\r\n")

    @case("odd names: spaces, newline, $(x), unicode, '...', '-rf'", BASE_PY + 6)
    def _(w: World) -> None:
        for rel in ["x y/m n.py", "nl\nx/m.py", "$(touch pwned)/a.py", "naïve/深.py", ".../dots.py", "-rf/--help.py"]:
            write(w.ws / rel, "V = 1\n")
        write(w.ws / ".gitignore", "*.tmp\nnl?x/ignored.py\n")
        write(w.ws / "nl\nx" / "ignored.py", "I = 1\n")

    return found


# ---------------------------------------------------------------- the run


COMMON: list[tuple[str, dict[str, Any]]] = [
    ("ctx/bundle", {"query": "count tokens session", "budget": 8000}),
    ("ctx/bundle", {"query": "api key secret token password private key", "budget": 32000, "tier": 3}),
    ("ctx/search", {"query": "token key secret password auth", "limit": 50}),
    ("ctx/outline", {"uri": "pkg/tokens.py", "tier": 3}),
    ("ctx/symbol", {"name": "count_tokens", "include_body": True}),
]


def absolute(world: World, params: dict[str, Any]) -> dict[str, Any]:
    out = dict(params)
    if "uri" in out:
        out["uri"] = world.uri(out["uri"])
    if "open" in out:
        out["open"] = [world.uri(u) for u in out["open"]]
    if "focus" in out:
        out["focus"] = {**out["focus"], "uri": world.uri(out["focus"]["uri"])}
    return out


def fam_hostile(run: Any) -> None:
    all_cases = cases()
    if run.quick:
        all_cases = all_cases[::2]
    for number, case in enumerate(all_cases):
        root = run.tmp / f"hostile{number}"
        root.mkdir()
        world = World(
            root, root / "ws", root / "outside", root / "outside" / "home", marker("CANARYOUT"), marker("CANARYHOME")
        )
        world.ws.mkdir()
        (world.home / ".ssh").mkdir(parents=True)
        (world.home / ".ssh" / "id_rsa").write_text(pem_block(world.home_marker))
        base(world)
        try:
            case.build(world)
            one(run, case, world)
        except Exception as err:  # the harness's own failure: named, and the next case runs
            run.extra.setdefault("harness_errors", []).append(f"{FAMILY} / {case.name}: {type(err).__name__}: {err}")
        finally:
            locked = world.ws / "locked"
            if locked.exists():
                locked.chmod(0o755)
            # Not shutil.rmtree: it recurses once per level of the deep trees.
            subprocess.run(["rm", "-rf", str(root)], check=False)


def one(run: Any, case: Case, world: World) -> None:
    label = case.name
    srv = Server(world.ws, home=world.home, netns=run.netns, log=run.tmp / f"hostile-{id(case)}.log")
    srv.world = world  # type: ignore[attr-defined]
    started = time.monotonic()
    init = srv.call(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": world.ws.as_uri(),
            "workspaceFolders": [{"uri": world.ws.as_uri(), "name": "ws"}],
            "capabilities": {},
        },
        timeout=30,
    )
    if init is None or "error" in init:
        outcome = "exit" if not srv.alive() else ("hang" if init is None else "exit")
        run.record(
            FAMILY, f"{label}: initialize", outcome, f"initialize: {json.dumps(init)[:200]}; {srv.stderr_tail()}"
        )
        srv.kill()
        return
    srv.notify("initialized", {})
    report = srv.wait_indexed(timeout=INDEX_BOUND_S)
    elapsed = time.monotonic() - started
    found = run.scan(world, bytes(srv.out))
    if found is not None:
        run.record(FAMILY, f"{label}: initialize + index", "leak", f"{found[0]} marker", found[1])
    elif report is None or report.get("indexing"):
        run.record(
            FAMILY,
            f"{label}: initialize + index",
            "hang" if srv.alive() else "exit",
            f"not indexed in {INDEX_BOUND_S}s",
        )
        srv.kill()
        return
    else:
        listed = [*report.get("problems", []), *(report.get("config") or {}).get("warnings", [])]
        python = (report.get("files_by_language") or {}).get("python", 0)
        missing = [p for p in case.problems if not any(p in entry for entry in listed)]
        notes = []
        if python != case.python:
            notes.append(f"{python} .py files indexed, want {case.python}")
        if missing:
            notes.append(f"not listed: {missing}")
        outcome = "missed" if notes else "clean"
        note = "; ".join(notes) or f"indexed in {elapsed:.1f}s, {len(listed)} problems/warnings listed"
        run.record(FAMILY, f"{label}: initialize + index + status", outcome, note, json.dumps(listed)[:300])
    for method, params in [*COMMON, *case.probes]:
        params = absolute(world, params)
        run.call_input(FAMILY, f"{label}; {method} {json.dumps(params)[:160]}", srv, method, params, timeout=30)
    run.call_input(
        FAMILY, f"{label}; ctx.status", srv, "workspace/executeCommand", {"command": "ctx.status", "arguments": []}
    )
    # Not run.finish: its search for scripts that ran (`rglob`) recurses once per level of
    # the deep trees; none of these workspaces names an interpreter.
    ok, note = srv.shutdown()
    run.record(FAMILY, f"{label}: shutdown + exit", "clean" if ok else ("hang" if "alive" in note else "exit"), note)
    found = run.scan(world, srv.log_path.read_bytes())
    if found is not None:
        run.extra.setdefault("stderr_markers", []).append({"family": FAMILY, "what": found[0]})
