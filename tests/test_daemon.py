"""`ctx-lsp daemon`: a warm engine per workspace behind a private socket, used by `bundle`
and `show` when it runs — same answers, same errors, the disk's latest state, and a CLI
that falls back to in-process whenever the daemon is not there to answer."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctx_lsp.daemon.address import socket_path


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "pyproject.toml", "[project]\nname = 'shop'\n")
    write(
        root,
        "shop/cart.py",
        '"""The shopping cart."""\n\n\nclass Cart:\n    def add_item(self, sku, qty):\n'
        '        """Add qty of sku."""\n        return {sku: qty}\n\n    def total_price(self):\n        return 0\n',
    )
    write(
        root,
        "shop/checkout.py",
        "from shop.cart import Cart\n\n\ndef checkout(cart: Cart):\n    return cart.total_price()\n",
    )
    return root


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def env(runtime: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "CTX_LSP_NO_DAEMON"}
    out["XDG_RUNTIME_DIR"] = str(runtime)
    return out


def cli(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctx_lsp", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def daemon_pid(env: dict[str, str], workspace: Path) -> int | None:
    r = cli(env, "daemon", "status", "--workspace", str(workspace))
    return int(r.stdout.split("pid ", 1)[1].split(",", 1)[0]) if r.returncode == 0 else None


@pytest.fixture
def daemon(workspace: Path, env: dict[str, str]) -> Iterator[int]:
    r = cli(env, "daemon", "start", "--workspace", str(workspace))
    assert r.returncode == 0, r.stderr
    pid = daemon_pid(env, workspace)
    assert pid is not None
    yield pid
    cli(env, "daemon", "stop", "--workspace", str(workspace))
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def requests_served(env: dict[str, str], workspace: Path) -> int:
    r = cli(env, "daemon", "status", "--workspace", str(workspace))
    return int(r.stdout.split(" requests", 1)[0].rsplit(" ", 1)[1])


def test_bundle_through_the_daemon_is_the_in_process_bundle(workspace: Path, env: dict[str, str], daemon: int) -> None:
    """Ensure that `bundle` uses a running daemon and gives what the in-process call gives."""
    args = ["bundle", "--workspace", str(workspace), "--query", "cart total price", "--budget", "2000"]
    before = requests_served(env, workspace)
    via = cli(env, *args, "--format", "json")
    assert via.returncode == 0, via.stderr
    assert requests_served(env, workspace) == before + 2  # the bundle, and the status call itself
    direct = cli(env, *args, "--format", "json", "--no-daemon")
    assert direct.returncode == 0, direct.stderr
    a, b = json.loads(via.stdout), json.loads(direct.stdout)
    assert a["text"] == b["text"] and a["total_tokens"] == b["total_tokens"]
    assert "def total_price" in a["text"] or "total_price" in a["text"]
    markdown = cli(env, *args, "--explain")
    assert markdown.returncode == 0 and markdown.stdout == b["text"]
    assert "-- why (" in markdown.stderr and "shop/cart.py" in markdown.stderr


def test_an_edit_just_made_is_in_the_next_answer(workspace: Path, env: dict[str, str], daemon: int) -> None:
    """Ensure that a change made right before a call is in its answer (the daemon waits
    for its watcher), and so is a removal."""
    cart = workspace / "shop" / "cart.py"
    cart.write_text(cart.read_text() + "\n\ndef apply_coupon_zq(cart, code):\n    return code\n")
    r = cli(env, "show", "apply_coupon_zq", "--workspace", str(workspace))
    assert r.returncode == 0, r.stderr
    assert "def apply_coupon_zq(cart, code):" in r.stdout
    bundle = cli(env, "bundle", "--workspace", str(workspace), "--query", "apply coupon zq", "--budget", "1500")
    assert "apply_coupon_zq" in bundle.stdout
    cart.write_text(cart.read_text().replace("apply_coupon_zq", "apply_voucher"))
    gone = cli(env, "show", "apply_coupon_zq", "--workspace", str(workspace))
    assert gone.returncode == 1 and "no definition named 'apply_coupon_zq'" in gone.stderr


def test_bad_params_are_refused_as_in_process(workspace: Path, env: dict[str, str], daemon: int) -> None:
    """Ensure that the daemon's refusal names the CLI option, exactly as in-process."""
    args = ["bundle", "--workspace", str(workspace), "--query", "cart", "--model", "gpt-4o", "--utilization", "most"]
    via, direct = cli(env, *args), cli(env, *args, "--no-daemon")
    assert via.returncode == direct.returncode == 2
    assert via.stderr == direct.stderr and "--utilization" in via.stderr
    outside = cli(env, "bundle", "--workspace", str(workspace), "--query", "x", "--open", "/etc/hostname")
    assert outside.returncode == 2 and "--open" in outside.stderr and "outside the workspace" in outside.stderr


def test_a_dead_daemon_means_in_process(workspace: Path, env: dict[str, str], daemon: int) -> None:
    """Ensure that a killed daemon (its socket left behind) costs nothing but speed, and
    that a new one replaces the stale socket."""
    os.kill(daemon, signal.SIGKILL)
    time.sleep(0.2)
    r = cli(env, "bundle", "--workspace", str(workspace), "--query", "checkout", "--budget", "1500")
    assert r.returncode == 0 and "checkout" in r.stdout
    assert cli(env, "daemon", "status", "--workspace", str(workspace)).returncode == 1
    again = cli(env, "daemon", "start", "--workspace", str(workspace))
    assert again.returncode == 0, again.stderr
    assert daemon_pid(env, workspace) not in (None, daemon)


def test_garbage_on_the_socket_gets_an_answer_and_the_daemon_goes_on(
    workspace: Path, env: dict[str, str], daemon: int, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ensure that a request that is not JSON, not an object, or an unknown method is
    answered with an error, and the daemon keeps serving."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = socket_path(workspace)
    assert path is not None and oct(path.stat().st_mode & 0o777) == oct(0o600)
    for raw in (b"not json\n", b"[1, 2]\n", b'{"method": "format_disk"}\n'):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(10)
            conn.connect(str(path))
            conn.sendall(raw)
            answer = json.loads(conn.makefile("rb").readline())
        assert "error" in answer and answer["error"]["message"]
    assert daemon_pid(env, workspace) == daemon


def test_a_runtime_dir_others_can_enter_is_refused(workspace: Path, env: dict[str, str], runtime: Path) -> None:
    """Ensure that sockets are never made or used in a directory other users can enter."""
    (runtime / "ctx-lsp").mkdir(mode=0o700)
    os.chmod(runtime / "ctx-lsp", 0o777)
    r = cli(env, "daemon", "start", "--workspace", str(workspace))
    assert r.returncode == 2 and "open to other users" in r.stderr
    bundle = cli(env, "bundle", "--workspace", str(workspace), "--query", "cart", "--budget", "1500")
    assert bundle.returncode == 0 and "Cart" in bundle.stdout  # in-process


def test_idle_daemon_exits_and_removes_its_socket(workspace: Path, env: dict[str, str], runtime: Path) -> None:
    """Ensure that a daemon nobody calls goes away by itself, leaving no socket."""
    r = cli(env, "daemon", "start", "--workspace", str(workspace), "--idle-timeout", "1")
    assert r.returncode == 0, r.stderr
    pid = int(r.stdout.split("pid ", 1)[1].split(",", 1)[0])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the idle daemon did not exit")
    assert not any(p.suffix == ".sock" for p in (runtime / "ctx-lsp").iterdir())


def test_a_bundle_asking_to_wait_for_the_history_gets_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ensure that the daemon answers a bundle at once while its history is still being
    read, and that `wait_history` (the CLI's --wait-history) waits for the read."""
    import threading

    from ctx_lsp.daemon.server import Daemon
    from ctx_lsp.index import history_loader
    from ctx_lsp.index.git_history import read_history
    from tests.contributors.test_history_prior import HISTORY, TASK
    from tests.index.git_fixtures import make_repo

    ws = tmp_path / "ws"
    make_repo(ws, HISTORY)
    gate = threading.Event()

    def held(root: str, **kw: object) -> object:
        assert gate.wait(30)
        return read_history(root, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(history_loader, "read_history", held)
    daemon = Daemon(ws)
    try:
        daemon.engine.index()  # starts the read, held at the gate
        request = {"method": "bundle", "params": {"query": TASK, "budget": 4000}, "explain": True}
        reasons = json.dumps(daemon.answer(request)["explanation"])
        assert "history:" not in reasons
        threading.Timer(0.2, gate.set).start()  # the wait below is what sees it open
        reasons = json.dumps(daemon.answer({**request, "wait_history": True})["explanation"])
        assert "history: changed together with src/parser.py" in reasons
    finally:
        gate.set()
        daemon.engine.close()
