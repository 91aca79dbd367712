"""Attack run for issue 12: `python benchmarks/attack/run.py [--quick] [--out F.json]`.

Starts the real `ctx-lsp serve` over raw stdio in throwaway workspaces (a canary outside,
secrets inside) and classifies every input as clean, leak, hang or exit (issue 20's
hostile-workspaces family, `hostile.py`, also as missed: a file not indexed or a problem
not listed). See
benchmarks/README.md "Attack run".
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client import ANSWER_S, Server, frame
from hostile import FAMILY as HOSTILE
from hostile import fam_hostile
from world import PEM_FILE, SECRET_NAMES, World, make_world, snapshot, written

SEED = 12
PROBE = ("ctx/search", {"query": "count_tokens", "limit": 3})


class Run:
    def __init__(self, quick: bool, netns: bool, tmp: Path):
        self.quick = quick
        self.netns = netns
        self.tmp = tmp
        self.rnd = random.Random(SEED)
        self.records: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}
        self._n = 0

    def n(self, quick: int, full: int) -> int:
        return quick if self.quick else full

    # ------------------------------------------------------------ worlds / servers
    def world(self, modules: int = 40) -> World:
        self._n += 1
        root = self.tmp / f"w{self._n}"
        root.mkdir()
        return make_world(root, modules=modules)

    def server(self, world: World, options: dict[str, Any] | None = None, args: list[str] | None = None) -> Server:
        self._n += 1
        srv = Server(world.ws, home=world.home, netns=self.netns, log=self.tmp / f"serve{self._n}.log", args=args)
        srv.world = world  # type: ignore[attr-defined]
        if srv.initialize(options) is None:
            raise RuntimeError(f"initialize not answered: {srv.stderr_tail()}")
        srv.wait_indexed()
        return srv

    # ------------------------------------------------------------ one input
    def record(self, family: str, label: str, outcome: str, note: str = "", excerpt: str = "", spec: str = "") -> str:
        self.records.append(
            {"family": family, "input": label, "outcome": outcome, "note": note, "excerpt": excerpt, "spec": spec}
        )
        return outcome

    def scan(self, world: World, data: bytes) -> tuple[str, str] | None:
        text = data.decode("utf-8", "replace")
        for m, what in world.markers.items():
            at = text.find(m)
            if at >= 0:
                return what, text[max(0, at - 200) : at + 80]
        return None

    def attempt(
        self,
        family: str,
        label: str,
        srv: Server,
        send: Callable[[], Any],
        *,
        expect: str = "id",
        probe: bool = True,
        check: Callable[[Any], str] | None = None,
        timeout: float = ANSWER_S,
    ) -> str:
        """Send one input and judge it. `send` returns the id to wait for (expect="id"), or
        nothing; expect="any" waits for any new response (a batch, an id-null error)."""
        world: World = srv.world  # type: ignore[attr-defined]
        start = len(srv.out)
        answers0 = srv.answers + len(srv.batches)
        t0 = time.monotonic()
        msg_id = send()
        response = None
        outcome, note, spec = "clean", "", ""
        if expect == "id":
            response = srv.wait(msg_id, timeout)
            if response is None:
                outcome = "exit" if not srv.alive() else "hang"
                note = f"no answer to id {msg_id!r} within {timeout}s"
        elif expect == "any":
            deadline = time.monotonic() + timeout
            while srv.answers + len(srv.batches) <= answers0 and time.monotonic() < deadline:
                if not srv.alive():
                    break
                time.sleep(0.05)
            if srv.answers + len(srv.batches) <= answers0:
                outcome = "exit" if not srv.alive() else "hang"
                note = f"no response of any id within {timeout}s"
            else:
                with srv.cond:
                    last = srv.null_errors[-1:] if srv.null_errors else []
                response = last[0] if last else None
        elapsed = time.monotonic() - t0
        if outcome == "clean" and probe:
            for attempt in (1, 2):
                p = srv.call(*PROBE, timeout=ANSWER_S)
                if p is not None:
                    if attempt == 2:
                        note = "first probe unanswered (swallowed by the input's length), second answered"
                    break
            else:
                outcome = "exit" if not srv.alive() else "hang"
                note = "probe request not answered after the input (stream not recovered)"
        if outcome == "clean" and not srv.alive():
            outcome, note = "exit", f"process exited, code {srv.proc.returncode}"
        found = self.scan(world, bytes(srv.out[start:]))
        if found is not None:
            outcome, note = "leak", f"{found[0]} marker in a response"
        excerpt = json.dumps(response)[:300] if response is not None else ""
        if found is not None:
            excerpt = found[1]
        if check is not None and outcome == "clean":
            spec = check(response)
        if outcome == "clean" and spec == "" and elapsed > 2 and family == "protocol":
            note = f"answered in {elapsed:.1f}s"
        return self.record(family, label, outcome, note, excerpt, spec)

    def call_input(self, family: str, label: str, srv: Server, method: str, params: Any, **kw: Any) -> str:
        return self.attempt(family, label, srv, lambda: srv.request(method, params), **kw)

    def finish(self, family: str, srv: Server, before: dict[str, tuple[int, int]] | None = None) -> None:
        """Shutdown as an input; then files written outside, markers in stderr."""
        world: World = srv.world  # type: ignore[attr-defined]
        if srv.alive():
            ok, note = srv.shutdown()
            self.record(family, "shutdown + exit", "clean" if ok else ("hang" if "alive" in note else "exit"), note)
        else:
            srv.kill()
        self.check_outside(family, world, before)
        for path in world.exec_marker_files():
            if str(path) not in self.extra.setdefault("exec_seen", []):
                self.extra["exec_seen"].append(str(path))
                self.record(family, "code run from the workspace", "leak", f"a script named as python ran: {path}")
        found = self.scan(world, srv.log_path.read_bytes())
        if found is not None:
            self.extra.setdefault("stderr_markers", []).append({"family": family, "what": found[0]})

    def check_outside(self, family: str, world: World, before: dict[str, tuple[int, int]] | None) -> None:
        if before is None:
            return
        after = snapshot(world.outside)
        for path in written(before, after):
            data = b""
            try:
                if os.path.isfile(path) and not os.path.islink(path):
                    data = Path(path).read_bytes()[:50_000_000]
            except OSError:
                pass
            found = self.scan(world, data)
            what = f"file written outside the workspace: {path}"
            if "EXECUTED_" in path:
                continue  # recorded by finish()
            if found is not None or family == "cache":
                self.record(family, "write outside", "leak", what + (f" holding {found[0]}" if found else ""))
            else:
                self.extra.setdefault("outside_writes", []).append(path)


# ====================================================================== families
NATURAL = ["how are tokens counted", "count_tokens", "where is the session sent", "stolen_function", "token counting"]


def fam_symlinks(run: Run) -> None:
    fam = "symlink/special"
    rnd = random.Random(f"{SEED}-{fam}")
    total = run.n(12, 160)
    done = 0
    while done < total:
        world = run.world(modules=60)
        before = snapshot(world.outside)
        srv = run.server(world)
        free = list(world.modules)
        rnd.shuffle(free)
        dirs = list(world.subdirs)
        rnd.shuffle(dirs)
        while done < total and free and srv.alive():
            kind = rnd.choice(["file-link", "dir-link", "fifo", "chardev", "file-link", "link-to-dir"])
            if kind == "dir-link" and dirs:
                rel = dirs.pop()
                shutil.rmtree(world.ws / rel)
                os.symlink(world.outside, world.ws / rel)
                target = f"{rel}/stolen.py"
            else:
                kind = "file-link" if kind == "dir-link" else kind
                rel = free.pop()
                target = rel
                path = world.ws / rel
                path.unlink()
                if kind == "file-link":
                    os.symlink(world.outside / "stolen.py", path)
                elif kind == "link-to-dir":
                    os.symlink(world.outside, path)
                elif kind == "fifo":
                    os.mkfifo(path)
                else:
                    if os.geteuid() == 0:
                        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
                    else:
                        os.symlink("/dev/zero", path)
            time.sleep(rnd.choice([0, 0.05, 0.3, 1.0]))
            mod = target.rsplit("/", 1)[-1].removesuffix(".py")
            q = rnd.choice([*NATURAL, world.bait("outside"), mod, f"func_{mod.rsplit('_', 1)[-1]}"])
            choice = rnd.randrange(8)
            if choice == 0:
                method, params = "ctx/bundle", {"query": q, "budget": rnd.choice([2000, 8000, 32000])}
            elif choice == 1:
                method, params = "ctx/bundle", {"query": q, "open": [world.uri(target)], "budget": 8000}
            elif choice == 2:
                method = "ctx/bundle"
                params = {"query": q, "focus": {"uri": world.uri(target), "position": {"line": 3, "character": 0}}}
            elif choice == 3:
                method, params = "ctx/search", {"query": q, "limit": 20}
            elif choice in (4, 5):
                method, params = "ctx/outline", {"uri": world.uri(target), "tier": rnd.choice([1, 2, 3])}
            elif choice == 6:
                method, params = "ctx/symbol", {"name": rnd.choice(["count_tokens", "stolen_function", "run"])}
            else:
                method, params = "ctx/bundle", {"query": q, "tier": rnd.choice([1, 2, 3]), "budget": 16000}
            run.call_input(fam, f"{kind} {target}; {method} {json.dumps(params)[:160]}", srv, method, params)
            done += 1
        run.finish(fam, srv, before)


def fam_config(run: Run) -> None:
    fam = "config outside"
    rnd = random.Random(f"{SEED}-{fam}")
    configs = run.n(3, 18)
    for _c in range(configs):
        world = run.world(modules=5)
        outside_script = world.outside / "evil_python"
        ws_script = world.ws / ".venv" / "bin" / "python"
        for script in (outside_script, ws_script):
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_text(f'#!/bin/sh\necho ran > "{script.parent}/EXECUTED_{script.name}"\necho "[]"\n')
            script.chmod(0o755)
        (world.ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
        folder = rnd.choice(
            [str(world.outside / "docs"), "../outside/docs", "~/docs", "linkdocs", "~/.ssh", "linkdir/docs", "/etc"]
        )
        interp = rnd.choice([str(outside_script), ".venv/bin/python", "../outside/evil_python", "~/../evil_python"])
        where = rnd.choice(["pyproject", "ctx-lsp.toml", ".ctx-lsp.toml"])
        body = f'[docs.folders]\nevil = ["{folder}"]\n\n[python]\ninterpreter = "{interp}"\n'
        if where == "pyproject":
            text = '[project]\nname = "sample"\n\n' + body.replace("[docs", "[tool.ctx-lsp.docs").replace(
                "[python", "[tool.ctx-lsp.python"
            )
            (world.ws / "pyproject.toml").write_text(text)
        else:
            (world.ws / where).write_text(body)
        label = f"{where}: docs.folders={folder!r} python.interpreter={interp!r}"
        before = snapshot(world.outside)
        srv = run.server(world)
        inputs = [
            ("ctx/docs", {"library": "evil", "topic": rnd.choice(["tokens", "guide", "count_tokens", "api"])}),
            ("ctx/docs", {"library": "evil", "topic": world.bait("outside")}),
            ("ctx/docs", {"library": "evil", "topic": "sessions", "max_tokens": 20000}),
            ("ctx/resolveLibrary", {"name": rnd.choice(["evil", "requests", "pytest", "sample"])}),
            ("ctx/bundle", {"query": "tokens guide", "docs": [{"library": "evil", "topic": "tokens"}], "budget": 8000}),
            ("workspace/executeCommand", {"command": "ctx.prewarmDocs", "arguments": []}),
            ("ctx/docs", {"library": rnd.choice(["requests", "pytest", "sample"]), "topic": "session"}),
        ]
        for method, params in inputs:
            run.call_input(fam, f"{label}; {method} {json.dumps(params)}", srv, method, params, timeout=30)
        report = srv.status() or {}
        warnings = (report.get("config") or {}).get("warnings", [])
        if not any("docs.folders" in w for w in warnings):
            run.extra.setdefault("config_no_warning", []).append({"config": label, "warnings": warnings})
        time.sleep(0.5)
        run.finish(fam, srv, before)


def fam_cache(run: Run) -> None:
    fam = "cache"
    rnd = random.Random(f"{SEED}-{fam}")
    # A donor cache built from a workspace whose tokens.py holds the outside marker.
    donor = run.world(modules=5)
    (donor.ws / "pkg" / "tokens.py").write_text(f'"""{donor.outside_marker}"""\n\ndef count_tokens(t):\n    return 1\n')
    srv = run.server(donor)
    srv.shutdown()
    donor_db = donor.ws / ".ctx-lsp" / "index.sqlite3"
    total = run.n(4, 20)
    for _ in range(total):
        world = run.world(modules=5)
        world.outside_marker = donor.outside_marker  # the donor DB's marker counts as outside
        target_kind = rnd.choice(["dir", "db", "wal", "journal", "shm", "db-donor", "dir-missing", "db-missing"])
        cache = world.ws / ".ctx-lsp"
        out = world.outside / f"cache_{target_kind}"
        if target_kind == "dir":
            out.mkdir()
            os.symlink(out, cache)
        elif target_kind == "dir-missing":
            os.symlink(out, cache)
        else:
            cache.mkdir()
            name = {"wal": "index.sqlite3-wal", "journal": "index.sqlite3-journal", "shm": "index.sqlite3-shm"}.get(
                target_kind, "index.sqlite3"
            )
            if target_kind == "db-donor":
                shutil.copy(donor_db, out)
            elif target_kind != "db-missing":
                out.write_bytes(b"")
            os.symlink(out, cache / name)
        before = snapshot(world.outside)
        srv = run.server(world)
        label = f".ctx-lsp link kind {target_kind} -> {out}"
        for method, params in [
            ("ctx/bundle", {"query": "count_tokens", "budget": 4000}),
            ("workspace/executeCommand", {"command": "ctx.reindex", "arguments": []}),
            ("ctx/search", {"query": "count_tokens"}),
        ]:
            run.call_input(fam, f"{label}; {method}", srv, method, params, timeout=30)
        (world.ws / "pkg" / "new_mod.py").write_text("def brand_new():\n    return 2\n")
        time.sleep(1.0)
        run.finish(fam, srv, before)


def fam_uris(run: Run) -> None:
    fam = "outside uris"
    rnd = random.Random(f"{SEED}-{fam}")
    world = run.world(modules=10)
    ws, out = world.ws, world.outside
    srv = run.server(world)
    good = world.uri("pkg/tokens.py")
    targets = {
        "absolute outside": (out / "stolen.py").as_uri(),
        "literal ..": f"{ws.as_uri()}/../outside/stolen.py",
        "%2e%2e": f"{ws.as_uri()}/%2e%2e/outside/stolen.py",
        "%2E%2E upper": f"{ws.as_uri()}/pkg/%2E%2E/%2E%2E/outside/stolen.py",
        "%252e%252e": f"{ws.as_uri()}/%252e%252e/outside/stolen.py",
        "%2f encoded slash": f"{ws.as_uri()}/..%2foutside%2fstolen.py",
        "symlinked dir": world.uri("linkdir/stolen.py"),
        "symlinked file": world.uri("linkfile.py"),
        "/etc/passwd": "file:///etc/passwd",
        "host authority": f"file://localhost{out / 'stolen.py'}",
        "HOME ssh key": (world.home / ".ssh" / "id_rsa").as_uri(),
        "not a file uri": "http://example.com/x.py",
        "relative": "../outside/stolen.py",
    }
    for name in [*SECRET_NAMES, PEM_FILE]:
        targets[f"secret {name}"] = world.uri(name)
    fields = ["uri", "open[i]", "focus.uri", "symbol.path"]
    total = run.n(12, 200)
    items = [(t, f) for t in targets for f in fields]
    rnd.shuffle(items)
    while len(items) < total:
        items += items[: total - len(items)]
    for tname, fld in items[:total]:
        u = targets[tname]
        if fld == "uri":
            method, params, want = "ctx/outline", {"uri": u, "tier": rnd.choice([1, 2, 3])}, "uri"
        elif fld == "open[i]":
            opens = [good] * rnd.randrange(0, 3)
            i = rnd.randrange(len(opens) + 1)
            opens.insert(i, u)
            method, params, want = "ctx/bundle", {"query": "count_tokens", "open": opens}, f"open[{i}]"
        elif fld == "focus.uri":
            method = "ctx/bundle"
            params = {"query": "tokens", "focus": {"uri": u, "position": {"line": 0, "character": 0}}}
            want = "focus.uri"
        else:
            path = u.removeprefix("file://") if rnd.random() < 0.5 else u
            method, params, want = "ctx/symbol", {"name": "count_tokens", "path": path}, "path"

        # A name that stays lexically inside the workspace once decoded (%252e, or %-escapes
        # in a plain path, which is not decoded) names a missing file: any answer is fine.
        plain = fld == "symbol.path" and not params["path"].startswith("file:")
        path_value = params.get("path", "")
        inside = tname == "%252e%252e" or (
            plain and ("%" in path_value or (not path_value.startswith("/") and ".." not in path_value))
        )

        def check(resp: Any, want: str = want, inside: bool = inside) -> str:
            if inside:
                return ""
            err = (resp or {}).get("error")
            if not err:
                return f"not refused: a result for {want}"
            if err.get("code") != -32602 or want not in err.get("message", ""):
                return f"refused as {err.get('code')} {err.get('message', '')[:120]!r}, want -32602 naming {want}"
            return ""

        tname = f"{tname} (inside once decoded, missing)" if inside else tname
        run.call_input(fam, f"{tname} as {want}: {method} {json.dumps(params)[:200]}", srv, method, params, check=check)
    run.finish(fam, srv)


def fam_secrets(run: Run) -> None:
    fam = "secrets"
    rnd = random.Random(f"{SEED}-{fam}")
    world = run.world(modules=10)
    srv = run.server(world)
    queries = [
        "where is the API key",
        "secret key",
        "database password",
        "private key",
        "RSA PRIVATE KEY",
        "SECRET_KEY API_KEY DATABASE_PASSWORD",
        "service account credentials client_secret",
        "npm auth token",
        "load settings from env",
        "deploy key",
        *world.baits.values(),
    ]
    total = run.n(12, 200)
    for _ in range(total):
        q = rnd.choice(queries)
        choice = rnd.randrange(7)
        if choice == 0:
            method = "ctx/bundle"
            params = {"query": q, "budget": rnd.choice([1000, 8000, 64000]), "tier": rnd.choice([1, 2, 3])}
        elif choice == 1:
            method, params = "ctx/search", {"query": q, "limit": 50}
        elif choice == 2:
            method, params = "ctx/outline", {"uri": world.uri("config/settings.py"), "tier": rnd.choice([1, 2, 3])}
        elif choice == 3:
            method = "ctx/bundle"
            params = {
                "query": q,
                "focus": {"uri": world.uri("config/settings.py"), "position": {"line": 4, "character": 4}},
                "budget": 32000,
            }
        elif choice == 4:
            method, params = "ctx/symbol", {"name": rnd.choice(["SECRET_KEY", "API_KEY", "load_settings", "password"])}
        elif choice == 5:
            method = "workspace/executeCommand"
            params = {"command": rnd.choice(["ctx.status", "ctx.explain"]), "arguments": []}
        else:
            method, params = "ctx/bundle", {"query": q, "open": [world.uri("config/settings.py")], "budget": 16000}
        run.call_input(fam, f"{method} {json.dumps(params)[:200]}", srv, method, params)
    # The cache inside the workspace must not hold them either.
    for p in (world.ws / ".ctx-lsp").glob("*"):
        found = run.scan(world, p.read_bytes()) if p.is_file() else None
        if found is not None:
            run.record(fam, f"cache file {p.name}", "leak", f"{found[0]} marker stored in the workspace cache")
    run.finish(fam, srv)


def deep(depth: int) -> str:
    """JSON text nested `depth` levels (built as text: json.dumps would recurse)."""
    opens = "".join("[" if i % 2 else '{"a": ' for i in range(depth))
    closes = "".join("]" if i % 2 else "}" for i in reversed(range(depth)))
    return opens + '"x"' + closes


WANT_CODE = {
    "numeric method": -32600,
    "jsonrpc 1.0": -32600,
    "missing jsonrpc": -32600,
    "jsonrpc number": -32600,
    "unknown method": -32601,
    "second initialize": -32600,
}


def code_check(code: int) -> Callable[[Any], str]:
    def check(resp: Any) -> str:
        got = ((resp or {}).get("error") or {}).get("code")
        return "" if got == code else f"want error {code}, got {json.dumps(resp)[:160]}"

    return check


def fam_protocol(run: Run) -> None:
    fam = "protocol"
    rnd = random.Random(f"{SEED}-{fam}")
    world = run.world(modules=10)
    srv = run.server(world)
    good_body = json.dumps({"jsonrpc": "2.0", "id": 900001, "method": "ctx/search", "params": {"query": "x"}}).encode()
    methods = [
        ("ctx/bundle", "query"),
        ("ctx/search", "query"),
        ("ctx/outline", "uri"),
        ("ctx/docs", "library"),
        ("ctx/resolveLibrary", "name"),
        ("ctx/symbol", "name"),
        ("ctx/window", "messages"),
    ]
    cases: list[tuple[str, Callable[[Server], Any], str]] = []

    def req(body: Any) -> Callable[[Server], Any]:
        def send(s: Server) -> Any:
            s.send_bytes(frame(body))
            return body.get("id") if isinstance(body, dict) else None

        return send

    def raw(data: bytes) -> Callable[[Server], Any]:
        return lambda s: s.send_bytes(data, timeout=60)

    for m, fld in methods:
        for v in ({"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": 5, "method": "exit"}, [{"jsonrpc": "2.0"}]):
            i = rnd.randrange(10**6, 10**7)
            cases.append(
                (f"{m} {fld}={json.dumps(v)}", req({"jsonrpc": "2.0", "id": i, "method": m, "params": {fld: v}}), "id")
            )
        i = rnd.randrange(10**6, 10**7)
        cases.append(
            (
                f"{m} params={{jsonrpc}}",
                req({"jsonrpc": "2.0", "id": i, "method": m, "params": {"jsonrpc": "2.0"}}),
                "id",
            )
        )
    for n in (0, 1, 3):
        batch = [
            {"jsonrpc": "2.0", "id": rnd.randrange(10**7, 10**8), "method": "ctx/search", "params": {"query": "a"}}
            for _ in range(n)
        ]
        cases.append((f"batch of {n}", raw(frame(batch)), "any"))
    for label, body in [
        ("numeric method", {"jsonrpc": "2.0", "id": 700001, "method": 5}),
        ("jsonrpc 1.0", {"jsonrpc": "1.0", "id": 700002, "method": "ctx/search", "params": {"query": "a"}}),
        ("missing jsonrpc", {"id": 700003, "method": "ctx/search", "params": {"query": "a"}}),
        ("jsonrpc number", {"jsonrpc": 2.0, "id": 700004, "method": "ctx/search", "params": {"query": "a"}}),
        ("params a string", {"jsonrpc": "2.0", "id": 700005, "method": "ctx/search", "params": "query"}),
        ("params an array", {"jsonrpc": "2.0", "id": 700006, "method": "ctx/search", "params": [1, 2]}),
        ("unknown method", {"jsonrpc": "2.0", "id": 700007, "method": "ctx/nope"}),
        ("$/ request", {"jsonrpc": "2.0", "id": 700008, "method": "$/weird"}),
    ]:
        cases.append((label, req(body), "id"))
    cases.append(("id is an object", raw(frame({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ctx/search"})), "any"))
    bad_utf8 = b'{"jsonrpc": "2.0", "id": 700010, "method": "ctx/search", "params": {"query": "\xff\xfe\xc3"}}'
    cases.append(("invalid UTF-8 in a string", raw(frame(bad_utf8)), "any"))
    for body in [b"hello", b"{", b"[1,2", b"null", b"42", b'"str"', b"", bytes(rnd.randrange(256) for _ in range(64))]:
        cases.append((f"non-JSON/non-object body {body[:20]!r}", raw(frame(body)), "none" if body == b"" else "any"))
    L = len(good_body)
    headers: list[tuple[str, bytes]] = [
        ("length too small", frame(good_body, length=L - rnd.randrange(1, 30))),
        ("length negative", frame(good_body, length=-5)),
        ("length +N", frame(good_body, length=f"+{L}")),
        ("length non-numeric", frame(good_body, length="abc")),
        ("length 12abc", frame(good_body, length="12abc")),
        ("length empty", frame(good_body, length="")),
        ("length too big", frame(good_body, length=L + rnd.randrange(1, 60))),
        ("lowercase header", frame(good_body, header="content-length")),
        ("uppercase header", frame(good_body, header="CONTENT-LENGTH")),
        ("no header", good_body),
        ("garbage line", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("two lengths", b"Content-Length: 3\r\n" + frame(good_body)),
        ("content-type header", b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame(good_body)),
        ("LF only", f"Content-Length: {L}\n\n".encode() + good_body),
        ("length 10**12", frame(good_body, length=10**12)),
        ("length 2**63-1", frame(good_body, length=2**63 - 1)),
        ("length 10**20", frame(good_body, length=10**20)),
        ("length 2**64", frame(good_body, length=2**64)),
    ]
    for label, data in headers:
        cases.append((label, raw(data), "none"))
    for depth in [*sorted(rnd.sample(range(990, 20000), 4)), 990, 100000]:
        i = rnd.randrange(10**6, 10**7)
        body = f'{{"jsonrpc": "2.0", "id": {i}, "method": "ctx/search", "params": {{"query": {deep(depth)}}}}}'
        cases.append((f"nesting depth {depth}", raw(frame(body)), "any_or_id"))
    for mb in [1, 3, 10] if not run.quick else [1]:
        for m in ("ctx/resolveLibrary", "ctx/docs"):
            i = rnd.randrange(10**6, 10**7)
            fld = "name" if m == "ctx/resolveLibrary" else "library"
            cases.append(
                (
                    f"{m} {fld} of {mb} MB",
                    req({"jsonrpc": "2.0", "id": i, "method": m, "params": {fld: "a" * (mb << 20)}}),
                    "id",
                )
            )
    for args in ([], None, "missing", [1, 2], {"a": 1}):
        for cmd in ("ctx.status", "ctx.reindex", "ctx.explain", "ctx.prewarmDocs", "ctx.nope"):
            params: dict[str, Any] = {"command": cmd}
            if args != "missing":
                params["arguments"] = args
            i = rnd.randrange(10**6, 10**7)
            cases.append(
                (
                    f"executeCommand {cmd} arguments={args!r}",
                    req({"jsonrpc": "2.0", "id": i, "method": "workspace/executeCommand", "params": params}),
                    "id",
                )
            )
    cases.append(
        (
            "second initialize",
            req(
                {
                    "jsonrpc": "2.0",
                    "id": 700020,
                    "method": "initialize",
                    "params": {"processId": None, "capabilities": {}},
                }
            ),
            "id",
        )
    )
    if run.quick:
        cases = rnd.sample(cases, 20)
    for label, send, expect in cases:
        if not srv.alive():
            srv.kill()
            srv = run.server(world)
        if expect == "any_or_id":
            # deep nesting: either the id-null error or the id's error is fine
            def send_deep(s: Server = srv, send: Callable[[Server], Any] = send) -> Any:
                return send(s)

            run.attempt(fam, label, srv, send_deep, expect="any")
        else:
            want = WANT_CODE.get(label)
            run.attempt(
                fam, label, srv, lambda s=srv, send=send: send(s), expect=expect, check=want and code_check(want)
            )
        if run.records[-1]["outcome"] in ("hang", "exit"):
            srv.kill()
            srv = run.server(world)
    # 9 MB didOpen, then the next request's latency.
    for mb in [9] if run.quick else [0.5, 0.9, 1, 5, 9]:
        line = "def f():\n    return 1\n"
        text = line * int(mb * (1 << 20) // len(line))  # `mb` MiB (it divided by 24: "1 MB" was 961,180 bytes)
        uri = world.uri(f"pkg/big_{mb}.py")

        def open_big(s: Server = srv, uri: str = uri, text: str = text) -> Any:
            s.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
            t0 = time.monotonic()
            r = s.call(*PROBE, timeout=ANSWER_S)
            run.extra.setdefault("didopen_latency_s", {})[f"{mb}MB"] = round(time.monotonic() - t0, 3) if r else None
            return None

        run.attempt(fam, f"didOpen of {mb} MB then a request", srv, open_big, expect="none")
        lat = run.extra["didopen_latency_s"].get(f"{mb}MB")
        if lat is None or lat >= 2:
            run.records[-1]["spec"] = f"next request latency {lat}s (want < 2 s)"

    # cancel a bundle
    def cancel(s: Server = srv) -> Any:
        i = s.request("ctx/bundle", {"query": "tokens", "budget": 64000})
        s.notify("$/cancelRequest", {"id": i})
        return i

    run.attempt(fam, "$/cancelRequest of a bundle", srv, cancel)
    run.finish(fam, srv)
    # Requests after shutdown, then exit.
    srv = run.server(world)
    sd = srv.call("shutdown", None)
    run.record(fam, "shutdown", "clean" if sd is not None else "hang", "" if sd else "shutdown not answered")
    for method, params in [
        ("ctx/search", {"query": "a"}),
        ("ctx/bundle", {"query": "a"}),
        ("initialize", {"processId": None, "capabilities": {}}),
        ("shutdown", None),
    ]:
        run.attempt(
            fam,
            f"{method} after shutdown",
            srv,
            lambda m=method, p=params: srv.request(m, p),
            probe=False,
            check=code_check(-32600),
        )
    srv.notify("exit")
    try:
        code = srv.proc.wait(ANSWER_S)
        run.record(fam, "exit after shutdown", "clean" if code == 0 else "exit", f"exit code {code}")
    except subprocess.TimeoutExpired:
        run.record(fam, "exit after shutdown", "hang", "still alive 10 s after exit")
    srv.kill()


def fam_load(run: Run) -> None:
    fam = "load"
    world = run.world(modules=60)
    srv = run.server(world)
    rnd = random.Random(SEED + 1)

    def one(i: int) -> tuple[bool, float]:
        kind = i % 4
        if kind == 0:
            m, p = "ctx/search", {"query": rnd.choice(NATURAL), "limit": 10}
        elif kind == 1:
            m, p = "ctx/bundle", {"query": rnd.choice(NATURAL), "budget": 2000}
        elif kind == 2:
            m, p = "ctx/outline", {"uri": world.uri(rnd.choice(world.modules)), "tier": 2}
        else:
            m, p = "workspace/executeCommand", {"command": "ctx.status", "arguments": []}
        t0 = time.monotonic()
        r = srv.call(m, p, timeout=30)
        return (r is not None, time.monotonic() - t0)

    def burst(count: int, inflight: int, label: str) -> None:
        lock = threading.Lock()
        nxt = iter(range(count))
        lat: list[float] = []
        fails = [0]
        rss: list[int] = [srv.rss_kb()]

        def worker() -> None:
            while True:
                with lock:
                    i = next(nxt, None)
                if i is None:
                    return
                ok, dt = one(i)
                with lock:
                    lat.append(dt)
                    fails[0] += not ok
                    if i % 500 == 0:
                        rss.append(srv.rss_kb())

        threads = [threading.Thread(target=worker) for _ in range(inflight)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rss.append(srv.rss_kb())
        lat.sort()
        stats = {
            "requests": count,
            "in_flight": inflight,
            "unanswered": fails[0],
            "p50_ms": round(lat[len(lat) // 2] * 1000, 1),
            "p95_ms": round(lat[int(len(lat) * 0.95)] * 1000, 1),
            "max_ms": round(lat[-1] * 1000, 1),
            "wall_s": round(time.monotonic() - t0, 1),
            "rss_start_mb": round(rss[0] / 1024, 1),
            "rss_end_mb": round(rss[-1] / 1024, 1),
            "rss_samples_mb": [round(x / 1024, 1) for x in rss],
        }
        run.extra.setdefault("load", {})[label] = stats
        for _ in range(count - fails[0]):
            run.records.append(
                {"family": fam, "input": label, "outcome": "clean", "note": "", "excerpt": "", "spec": ""}
            )
        for _ in range(fails[0]):
            run.record(fam, label, "exit" if not srv.alive() else "hang", "unanswered within 30 s")

    burst(200, 8, "8 in flight x 200")
    burst(run.n(1000, 10000), 8, f"{run.n(1000, 10000)} in one session")
    run.finish(fam, srv)


def control(run: Run) -> None:
    """Positive controls: the user's own settings may serve an outside docs folder and opt a
    secret back in, so these answers must hold markers, and the harness must call them leaks.
    Reported apart from the families (a harness that finds nothing here is broken)."""
    fam = "control"
    world = run.world(modules=3)
    script = world.outside / "user_python"
    script.write_text(f'#!/bin/sh\necho ran > "{world.outside}/EXECUTED_user_python"\necho "[]"\n')
    script.chmod(0o755)
    options = {
        "docs": {"folders": {"evil": [str(world.outside / "docs")]}},
        "index": {"include_secrets": [".env"]},
        "python": {"interpreter": str(script)},
    }
    srv = run.server(world, options)
    run.call_input(fam, "user docs folder outside: ctx/docs", srv, "ctx/docs", {"library": "evil", "topic": "tokens"})
    run.call_input(fam, "user opted .env in: ctx/bundle", srv, "ctx/bundle", {"query": world.bait(".env")})
    run.call_input(fam, "user opted .env in: ctx/outline", srv, "ctx/outline", {"uri": world.uri(".env"), "tier": 3})
    run.call_input(fam, "user interpreter: ctx/resolveLibrary", srv, "ctx/resolveLibrary", {"name": "requests"})
    run.finish(fam, srv)
    # A planted hang: the server stopped (SIGSTOP) must be reported as a hang.
    srv = run.server(world, options)
    os.kill(srv.proc.pid, signal.SIGSTOP)
    run.call_input(fam, "planted hang (SIGSTOP)", srv, "ctx/search", {"query": "x"}, timeout=3)
    os.kill(srv.proc.pid, signal.SIGCONT)
    srv.kill()


FAMILIES = {
    "symlink/special": fam_symlinks,
    "config outside": fam_config,
    "cache": fam_cache,
    "outside uris": fam_uris,
    "secrets": fam_secrets,
    "protocol": fam_protocol,
    "load": fam_load,
    HOSTILE: fam_hostile,
}


def table(run: Run, command: str) -> str:
    rows = ["| family | inputs tried | clean | leaks | hangs | exits | notes |", "|---|---|---|---|---|---|---|"]
    for fam in FAMILIES:
        recs = [r for r in run.records if r["family"] == fam]
        if not recs:
            continue
        c = {k: sum(r["outcome"] == k for r in recs) for k in ("clean", "leak", "hang", "exit")}
        spec = sum(bool(r["spec"]) for r in recs)
        notes = []
        if spec:
            notes.append(f"{spec} answered but not as specified")
        missed = sum(r["outcome"] == "missed" for r in recs)
        if missed or fam == HOSTILE:
            notes.append(f"{missed} missed (an ordinary file not indexed or a problem not listed)")
        if fam == "load":
            for label, s in run.extra.get("load", {}).items():
                notes.append(f"{label}: p95 {s['p95_ms']} ms, RSS {s['rss_start_mb']} → {s['rss_end_mb']} MB")
        if fam == "protocol" and "didopen_latency_s" in run.extra:
            notes.append(
                "next request after didOpen: "
                + ", ".join(f"{k} {v}s" for k, v in run.extra["didopen_latency_s"].items())
            )
        rows.append(
            f"| {fam} | {len(recs)} | {c['clean']} | {c['leak']} | {c['hang']} | {c['exit']} | {'; '.join(notes)} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a few inputs per family")
    ap.add_argument("--out", type=Path, help="write every record as JSON here")
    ap.add_argument("--only", action="append", choices=list(FAMILIES), help="run only these families")
    ap.add_argument("--no-unshare", action="store_true", help="do not run the server under `unshare -n`")
    args = ap.parse_args(argv)
    netns = False
    if not args.no_unshare and shutil.which("unshare"):
        netns = subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    command = shlex.join(["python", "benchmarks/attack/run.py", *(argv if argv is not None else sys.argv[1:])])
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="ctx-attack-") as tmp:
        run = Run(args.quick, netns, Path(tmp))
        control(run)
        detected = sum(r["outcome"] == "leak" for r in run.records if r["family"] == "control")
        hangs = sum(r["outcome"] == "hang" for r in run.records if r["family"] == "control")
        run.extra["control"] = f"{detected} of 4 planted leaks and {hangs} of 1 planted hang detected"
        run.records = [r for r in run.records if r["family"] != "control"]
        for name, fn in FAMILIES.items():
            if args.only and name not in args.only:
                continue
            t0 = time.monotonic()
            try:
                fn(run)
            except Exception as err:
                run.extra.setdefault("harness_errors", []).append(f"{name}: {type(err).__name__}: {err}")
            run.extra.setdefault("family_seconds", {})[name] = round(time.monotonic() - t0, 1)
            print(
                f"[{time.strftime('%H:%M:%S')}] {name} done in {time.monotonic() - t0:.0f}s",
                file=sys.stderr,
                flush=True,
            )
    print(f"command: {command.strip()}")
    print(f"server under unshare -n: {netns}; seed {SEED}; {time.time() - started:.0f} s\n")
    print(f"harness control: {run.extra['control']}\n")
    print(table(run, command))
    bad = [r for r in run.records if r["outcome"] != "clean" or r["spec"]]
    if bad:
        print("\nNot clean or not as specified:")
        for r in bad:
            print(f"- [{r['family']}] {r['outcome']}{' / ' + r['spec'] if r['spec'] else ''}: {r['input'][:300]}")
            if r["note"]:
                print(f"    note: {r['note']}")
            if r["excerpt"]:
                print(f"    response: {r['excerpt'][:300]}")
    for k in ("harness_errors", "stderr_markers", "outside_writes", "config_no_warning"):
        if run.extra.get(k):
            print(f"\n{k}: {json.dumps(run.extra[k])[:2000]}")
    if args.out:
        args.out.write_text(
            json.dumps(
                {"command": command, "netns": netns, "seed": SEED, "records": run.records, "extra": run.extra}, indent=1
            )
        )
    return 1 if any(r["outcome"] != "clean" for r in run.records) else 0


if __name__ == "__main__":
    sys.exit(main())
