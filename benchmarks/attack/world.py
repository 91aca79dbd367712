"""Throwaway worlds: a workspace with secrets inside, a canary outside, a fake HOME."""

from __future__ import annotations

import base64
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

SECRET_NAMES = [
    ".env",
    ".env.local",
    ".env.production",
    "config/.env",
    "id_rsa",
    "key.pem",
    "credentials.json",
    ".npmrc",
    "secrets.yaml",
]
PEM_FILE = "notes/deploy_key.txt"
"""Not a secret by name: kept out only because its content is a private key."""


def marker(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(8).upper()}"


@dataclass
class World:
    root: Path
    ws: Path
    outside: Path
    home: Path
    outside_marker: str
    home_marker: str
    secret_markers: dict[str, str] = field(default_factory=dict)
    baits: dict[str, str] = field(default_factory=dict)
    """Queryable words next to each marker: a query may name a bait (the server may echo
    the query), a response must never hold a marker (never sent in any request)."""
    modules: list[str] = field(default_factory=list)
    subdirs: list[str] = field(default_factory=list)

    @property
    def markers(self) -> dict[str, str]:
        found = {self.outside_marker: "outside canary", self.home_marker: "HOME canary"}
        found.update({m: f"secret {name}" for name, m in self.secret_markers.items()})
        found["root:x:0:0:"] = "/etc/passwd"
        return found

    def bait(self, name: str) -> str:
        return self.baits.setdefault(name, marker("BAIT"))

    def uri(self, rel: str) -> str:
        return (self.ws / rel).as_uri()

    def exec_marker_files(self) -> list[Path]:
        return [p for p in self.outside.rglob("EXECUTED_*")] + [p for p in self.ws.rglob("EXECUTED_*")]


def pem_block(m: str) -> str:
    """A private key as the tools write it (base64 lines of 64), the marker inside a line."""
    b64 = base64.b64encode(secrets.token_bytes(200)).decode()
    lines = [b64[:64], (m + b64[64:])[:64], b64[128:192]]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----\n"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_world(root: Path, modules: int = 40, subdirs: int = 8) -> World:
    ws, outside, home = root / "ws", root / "outside", root / "outside" / "home"
    world = World(root, ws, outside, home, marker("CANARYOUT"), marker("CANARYHOME"))
    # Outside: code that answers the natural queries better than the workspace does.
    write(
        outside / "stolen.py",
        f'"""{world.bait("outside")} {world.outside_marker} token counting."""\n\n\ndef count_tokens(text):\n'
        f'    """Count tokens. {world.outside_marker}"""\n    return "{world.outside_marker}"\n\n\n'
        f'def stolen_function():\n    return "{world.outside_marker}"\n',
    )
    write(
        outside / "docs" / "guide.md",
        f"# Guide\n\nTokens and sessions. {world.bait('outside')} {world.outside_marker}\n",
    )
    write(outside / "docs" / "api.md", f"# API\n\ncount_tokens(text) {world.outside_marker}\n")
    write(home / "docs" / "guide.md", f"# Home guide\n\nTokens. {world.home_marker}\n")
    write(home / ".ssh" / "id_rsa", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{world.home_marker}\n")
    # Inside.
    write(ws / "pyproject.toml", '[project]\nname = "sample"\nversion = "0.1"\n')
    write(ws / "pkg" / "__init__.py", "")
    write(
        ws / "pkg" / "tokens.py",
        '"""Token counting."""\n\n\ndef count_tokens(text):\n    """Count tokens in text."""\n'
        "    return len(text.split())\n\n\nclass Session:\n    def send(self, request):\n"
        "        return count_tokens(request)\n",
    )
    for i in range(modules):
        name = f"pkg/mod_{i}.py"
        write(
            ws / name,
            f'"""Module {i}: sessions and tokens."""\n\nfrom pkg.tokens import count_tokens\n\n\n'
            f"def func_{i}(text):\n    return count_tokens(text) + {i}\n\n\nclass Thing{i}:\n"
            f"    def run(self):\n        return func_{i}('x')\n",
        )
        world.modules.append(name)
    for k in range(subdirs):
        write(ws / "pkg" / f"sub_{k}" / "a.py", f"def sub_func_{k}():\n    return {k}\n")
        world.subdirs.append(f"pkg/sub_{k}")
    write(
        ws / "config" / "settings.py",
        'import os\n\n\ndef load_settings():\n    """Read SECRET_KEY, API_KEY and the database password from .env."""\n'
        "    return {'secret_key': os.environ.get('SECRET_KEY'), 'api_key': os.environ.get('API_KEY')}\n",
    )
    for name in SECRET_NAMES:
        m = marker("SECRETMK")
        world.secret_markers[name] = m
        b = world.bait(name)
        if name.endswith(".json"):
            text = f'{{"type": "service_account", "note": "{b}", "private_key": "{m}", "client_secret": "{m}"}}\n'
        elif name in ("id_rsa", "key.pem"):
            text = f"{b}\n{pem_block(m)}"
        elif name.endswith(".yaml"):
            text = f"api_key: {b} {m}\npassword: {m}\n"
        elif name == ".npmrc":
            text = f"# {b}\n//registry.npmjs.org/:_authToken={m}\n"
        else:
            text = f"# {b}\nSECRET_KEY={m}\nAPI_KEY={m}\nDATABASE_PASSWORD={m}\n"
        write(ws / name, text)
    m = marker("SECRETMK")
    world.secret_markers[PEM_FILE] = m
    write(ws / PEM_FILE, f"deploy key {world.bait(PEM_FILE)}\n{pem_block(m)}")
    # In-workspace links out.
    os.symlink(outside, ws / "linkdir")
    os.symlink(outside / "stolen.py", ws / "linkfile.py")
    os.symlink(outside / "docs", ws / "linkdocs")
    return world


def snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every path under `roots` (links not followed) with its size and mtime."""
    found: dict[str, tuple[int, int]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in dirnames + filenames:
                p = os.path.join(dirpath, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                found[p] = (st.st_size, st.st_mtime_ns)
    return found


def written(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(p for p, v in after.items() if before.get(p) != v and not os.path.isdir(p))
