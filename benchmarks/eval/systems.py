"""The systems under test, behind one small interface.

Each system turns (workspace, task text, budget, optional open file) into a
:class:`metrics.Bundle`. ``prepare`` is called once per workspace before any
timed request, so latency is per request on a warm system (an editor session),
and the one-off cost of a new workspace is recorded separately as ``scan_s``.

Systems:
- ``ctxlsp``        ctx-lsp through its CLI, one process per request (what a script sees);
- ``ctxlsp-inproc`` ctx-lsp's CLI ``main()`` called in this process (no interpreter
                    start-up per request, but a new engine each time, as the CLI does);
- ``ctxlsp-engine`` one ctx-lsp ``Engine`` per workspace kept warm (the server's path);
- ``bm25``          whole files ranked by BM25 (``bm25_baseline.py``);
- ``bm25-chunks``   30-line windows ranked by BM25, packed best first (the stronger
                    lexical baseline for line recall);
- ``aider``         Aider's repo map, in Aider's own virtualenv (``aider_runner.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import bm25_baseline
import langs
from metrics import Bundle, Piece

HERE = Path(__file__).resolve().parent
PROJECT_ROOT = HERE.parents[1]
DEFAULT_AIDER_PYTHON = os.environ.get("CTX_EVAL_AIDER_PYTHON", "/tmp/aider-venv/bin/python")
# Aider's map depends on set iteration order inside Aider, i.e. on Python's string
# hash seed: without a fixed seed two runs give different maps for the same request.
AIDER_HASH_SEED = "0"


def file_hash(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def tree_hash(root: Path, pattern: str = "**/*") -> str:
    """Fingerprint of a source tree (every file: code, queries, data), so cached results
    die when the engine changes."""
    h = hashlib.sha256()
    for p in sorted(root.glob(pattern)):
        if "__pycache__" in p.parts or p.suffix == ".pyc" or not p.is_file():
            continue
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def snapshot_project(root: Path) -> Path:
    """Copy ``root/ctx_lsp`` to /tmp keyed by its fingerprint and return the copy's root.

    The engine is being edited while evals run; running from a frozen copy keeps
    every row of one run (and its cache key) on exactly one version of the code.
    """
    key = tree_hash(root / "ctx_lsp")
    dest = Path(os.environ.get("CTX_EVAL_CACHE", "/tmp/eval-cache")) / "ctxlsp-snapshots" / key
    if not (dest / "ctx_lsp").is_dir():
        tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(root / "ctx_lsp", tmp / "ctx_lsp", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if dest.exists():
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, dest)
    return dest


def _split_rev(spec: str) -> tuple[str, str | None]:
    """``DIR@REV`` -> (DIR, REV); a plain DIR -> (DIR, None)."""
    if "@" in spec:
        path, _, rev = spec.rpartition("@")
        if path and rev and Path(path).is_dir():
            return path, rev
    return spec, None


def _git(root: str, *args: str) -> str:
    return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=True).stdout.strip()


def ctxlsp_source_root() -> Path:
    """The checkout measured: $CTX_EVAL_CTXLSP_ROOT (run.py --ctx-root), default this one.

    ``DIR@REV`` (e.g. ``/work/wt-lang@lang``) measures the commit REV of the checkout at
    DIR, not its work tree: ``ctx_lsp/`` at REV is exported with ``git archive`` to
    /tmp/eval-cache/ctxlsp-src/<sha>/, so uncommitted edits in DIR are left out.
    """
    spec = os.environ.get("CTX_EVAL_CTXLSP_ROOT", str(PROJECT_ROOT))
    path, rev = _split_rev(spec)
    if rev is None:
        return Path(path).resolve()
    sha = _git(path, "rev-parse", "--verify", f"{rev}^{{commit}}")
    dest = Path(os.environ.get("CTX_EVAL_CACHE", "/tmp/eval-cache")) / "ctxlsp-src" / sha
    if not (dest / "ctx_lsp" / "__init__.py").is_file():
        tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", path, "archive", sha, "ctx_lsp"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        if dest.exists():
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, dest)
    return dest


def ctxlsp_root() -> Path:
    """Where ctx-lsp is run from: a frozen copy of :func:`ctxlsp_source_root`.

    Set CTX_EVAL_NO_SNAPSHOT=1 to run the live tree instead.
    """
    root = ctxlsp_source_root()
    if not (root / "ctx_lsp" / "__init__.py").is_file():
        raise SystemExit(f"--ctx-root {root}: no ctx_lsp/ package there")
    if os.environ.get("CTX_EVAL_NO_SNAPSHOT"):
        return root
    return snapshot_project(root)


def ctxlsp_provenance() -> dict[str, str]:
    """Which checkout is measured: its path, git commit and whether ctx_lsp/ was dirty."""
    spec = os.environ.get("CTX_EVAL_CTXLSP_ROOT", str(PROJECT_ROOT))
    path, rev = _split_rev(spec)
    out = {"root": str(Path(path).resolve())}
    try:
        if rev is not None:
            out["commit"] = _git(path, "rev-parse", "--verify", f"{rev}^{{commit}}")
            out["dirty"] = "no (git archive of the commit)"
            out["branch"] = rev
            return out
        out["commit"] = _git(path, "rev-parse", "HEAD")
        out["dirty"] = "yes" if _git(path, "status", "--porcelain", "--", "ctx_lsp") else "no"
        out["branch"] = _git(path, "rev-parse", "--abbrev-ref", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        pass
    return out


_REPORTED: set[tuple[str, str]] = set()


def _report_import(system: str, where: str) -> None:
    """Say once per system and location where ctx_lsp was imported from (stderr)."""
    if (system, where) not in _REPORTED:
        _REPORTED.add((system, where))
        print(f"[systems] {system}: ctx_lsp imported from {where}", file=sys.stderr, flush=True)


def _check_imported_from(root: Path, system: str = "ctxlsp-inproc") -> None:
    import ctx_lsp

    where = Path(ctx_lsp.__file__).resolve()
    if root.resolve() not in where.parents:
        raise RuntimeError(f"ctx_lsp was imported from {where}, not from {root}")
    _report_import(system, str(where))


def fresh_ctxlsp_cache(workspace: Path) -> None:
    """Drop the ``.ctx-lsp/`` cache an earlier run left in a shared workspace.

    Workspaces under /tmp/eval-ws are reused across runs, and two checkouts of ctx-lsp
    (main and a branch) must each index the parent tree themselves: otherwise one would
    restore the index the other wrote and measure it.
    """
    shutil.rmtree(workspace / ".ctx-lsp", ignore_errors=True)


class System(ABC):
    name: str
    language: str = "python"  # the instance's language (run.py sets it per repository)

    def set_language(self, lang: str) -> None:
        self.language = lang

    @abstractmethod
    def version_key(self) -> str:
        """Changes whenever the system's code changes (invalidates cached results)."""

    def prepare(self, workspace: Path, files: list[str]) -> float | None:
        """Untimed warm-up for a new workspace; returns its duration in seconds."""
        return None

    @abstractmethod
    def bundle(self, workspace: Path, files: list[str], query: str, budget: int, open_file: str | None) -> Bundle: ...

    def close(self) -> None:  # noqa: B027 - optional hook: most systems hold nothing to release
        """Release what the system holds (an engine, a subprocess); nothing by default."""


# --------------------------------------------------------------------------- ctx-lsp


def _rel_path(workspace: Path, section: dict) -> str | None:
    path = section.get("path")
    if not path and section.get("uri", "").startswith("file:"):
        path = unquote(urlparse(section["uri"]).path)
    if not path:
        return None
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(workspace.resolve())
        except ValueError:
            return None
    return p.as_posix()


def bundle_from_ctxlsp_json(workspace: Path, data: dict, latency_s: float) -> Bundle:
    pieces = []
    for s in data.get("sections", []):
        rng = s.get("range") or {}
        pieces.append(
            Piece(
                path=_rel_path(workspace, s),
                content=s.get("content", ""),
                start_line=rng.get("start_line"),
                end_line=rng.get("end_line"),
            )
        )
    extra = {
        "sections": [
            {k: s.get(k) for k in ("contributor", "path", "tier", "range", "tokens")} for s in data.get("sections", [])
        ]
    }
    return Bundle(pieces, data.get("text", ""), latency_s, data.get("total_tokens"), extra)


def ctxlsp_args(workspace: Path, query: str, budget: int, open_file: str | None) -> list[str]:
    args = ["bundle", "--workspace", str(workspace), "--query", query, "--budget", str(budget), "--format", "json"]
    if open_file:
        args += ["--open", open_file]
    return args


class CtxLspCli(System):
    """``python -m ctx_lsp bundle ... --format json`` as a subprocess, run from the checkout."""

    name = "ctxlsp"

    def __init__(self, project_root: Path | None = None, python: str | None = None, timeout_s: float = 600) -> None:
        self.root = project_root or ctxlsp_root()
        # $CTX_EVAL_CTXLSP_PYTHON (run.py --ctx-python): an interpreter with the checkout's
        # dependencies, e.g. /work/venv-lang/bin/python for /work/wt-lang.
        self.python = python or os.environ.get("CTX_EVAL_CTXLSP_PYTHON") or sys.executable
        self.timeout_s = timeout_s
        self._checked = False

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.root) + os.pathsep + env.get("PYTHONPATH", "")
        return env

    def check_import(self) -> str:
        """Where the subprocess imports ctx_lsp from; it must be the measured copy."""
        proc = subprocess.run(
            [self.python, "-c", "import ctx_lsp; print(ctx_lsp.__file__)"],
            cwd=self.root,
            env=self._env(),
            capture_output=True,
            text=True,
            check=True,
        )
        where = Path(proc.stdout.strip()).resolve()
        if self.root.resolve() not in where.parents:
            raise RuntimeError(f"the ctx-lsp subprocess imports ctx_lsp from {where}, not from {self.root}")
        _report_import(f"{self.name} ({self.python})", str(where))
        self._checked = True
        return str(where)

    @staticmethod
    def available(project_root: Path = PROJECT_ROOT) -> bool:
        proc = subprocess.run(
            [sys.executable, "-m", "ctx_lsp", "bundle", "--help"], cwd=project_root, capture_output=True, text=True
        )
        return proc.returncode == 0

    def version_key(self) -> str:
        return tree_hash(self.root / "ctx_lsp")

    def _run(self, workspace: Path, query: str, budget: int, open_file: str | None) -> tuple[dict, float]:
        if not self._checked:
            self.check_import()
        env = self._env()
        t0 = time.perf_counter()
        proc = subprocess.run(
            [self.python, "-m", "ctx_lsp", *ctxlsp_args(workspace, query, budget, open_file)],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=self.timeout_s,
        )
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ctx-lsp exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return json.loads(proc.stdout), elapsed

    def prepare(self, workspace: Path, files: list[str]) -> float | None:
        fresh_ctxlsp_cache(workspace)
        _, elapsed = self._run(workspace, "warm up the index", 1000, None)
        return elapsed

    def bundle(self, workspace: Path, files: list[str], query: str, budget: int, open_file: str | None) -> Bundle:
        data, elapsed = self._run(workspace, query, budget, open_file)
        return bundle_from_ctxlsp_json(workspace, data, elapsed)


class CtxLspInProcess(System):
    """ctx-lsp's CLI entry point called in this process, stdout captured.

    Same arguments and output as :class:`CtxLspCli`, without interpreter start-up
    and imports per request; whatever the engine caches in-process stays warm.
    """

    name = "ctxlsp-inproc"

    def __init__(self, project_root: Path | None = None) -> None:
        self.root = project_root or ctxlsp_root()
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))
        from ctx_lsp import cli

        _check_imported_from(self.root)
        self.cli = cli

    def version_key(self) -> str:
        return tree_hash(self.root / "ctx_lsp")

    def _run(self, workspace: Path, query: str, budget: int, open_file: str | None) -> tuple[dict, float]:
        buf = io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(buf):
            rc = self.cli.main(ctxlsp_args(workspace, query, budget, open_file))
        elapsed = time.perf_counter() - t0
        if rc not in (0, None):
            raise RuntimeError(f"ctx-lsp main() returned {rc}")
        return json.loads(buf.getvalue()), elapsed

    def prepare(self, workspace: Path, files: list[str]) -> float | None:
        fresh_ctxlsp_cache(workspace)
        return self._run(workspace, "warm up the index", 1000, None)[1]

    def bundle(self, workspace: Path, files: list[str], query: str, budget: int, open_file: str | None) -> Bundle:
        data, elapsed = self._run(workspace, query, budget, open_file)
        return bundle_from_ctxlsp_json(workspace, data, elapsed)


class CtxLspEngine(System):
    """ctx-lsp's ``Engine`` kept open per workspace: the warm path a running server has.

    Mirrors what ``ctx_lsp.cli`` does for ``bundle`` (Engine([ws]) -> index() ->
    bundle(BundleRequest) -> to_wire), but indexes once per workspace in
    ``prepare`` and then serves every request from the same engine. This uses the
    engine's Python API, which is younger than the CLI; if it moves, fix it here.
    """

    name = "ctxlsp-engine"

    def __init__(self, project_root: Path | None = None) -> None:
        self.root = project_root or ctxlsp_root()
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))
        from ctx_lsp import engine as engine_mod
        from ctx_lsp import wire

        _check_imported_from(self.root, self.name)
        self._mod = engine_mod
        self._wire = wire
        self._ws: Path | None = None
        self._engine: Any = None

    def version_key(self) -> str:
        overrides = os.environ.get("CTX_EVAL_CTXLSP_CONFIG", "")
        suffix = f"+{hashlib.sha256(overrides.encode()).hexdigest()[:8]}" if overrides else ""
        return tree_hash(self.root / "ctx_lsp") + suffix

    def _close_engine(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
            self._ws = None

    def prepare(self, workspace: Path, files: list[str]) -> float | None:
        self._close_engine()
        fresh_ctxlsp_cache(workspace)
        t0 = time.perf_counter()
        overrides = json.loads(os.environ.get("CTX_EVAL_CTXLSP_CONFIG") or "null")
        self._engine = self._mod.Engine([workspace.resolve()], overrides)
        self._engine.index()
        # The engine reads the repository's history in the background and ranks without it
        # until it is in: measuring history means waiting for it (an older ctx-lsp read it
        # on the first bundle instead).
        wait_for_history = getattr(self._engine, "wait_for_history", None)
        if wait_for_history is not None and not wait_for_history(60.0):
            raise RuntimeError(f"{workspace}: the history was not read within 60 s")
        self._ws = workspace
        return time.perf_counter() - t0

    def bundle(self, workspace: Path, files: list[str], query: str, budget: int, open_file: str | None) -> Bundle:
        if self._ws != workspace or self._engine is None:
            self.prepare(workspace, files)
        opened = (str(workspace.resolve() / open_file),) if open_file else ()
        req = self._mod.BundleRequest(query=query, budget=budget, open=opened, format="markdown")
        t0 = time.perf_counter()
        result = self._engine.bundle(req)
        elapsed = time.perf_counter() - t0
        return bundle_from_ctxlsp_json(workspace, self._wire.to_wire(result), elapsed)

    def close(self) -> None:
        self._close_engine()


# --------------------------------------------------------------------------- BM25


class Bm25System(System):
    name = "bm25"

    def __init__(self) -> None:
        self._ws: Path | None = None
        self._index: Any = None

    def version_key(self) -> str:
        return file_hash(HERE / "bm25_baseline.py", HERE / "tokens.py", HERE / "langs.py")

    def set_language(self, lang: str) -> None:
        if lang != self.language:
            self._ws = self._index = None
        self.language = lang

    def _build(self, workspace: Path, files: list[str]) -> Any:
        index = bm25_baseline.BM25Index.from_workspace(workspace, files, langs.EXTENSIONS[self.language])
        for doc in index.docs:  # token counts are index-time work, not per-request
            doc.block()
        return index

    def prepare(self, workspace: Path, files: list[str]) -> float | None:
        t0 = time.perf_counter()
        self._index = self._build(workspace, files)
        self._ws = workspace
        return time.perf_counter() - t0

    def _ready(self, workspace: Path, files: list[str]) -> Any:
        if self._ws != workspace or self._index is None:
            self.prepare(workspace, files)
        return self._index

    def bundle(self, workspace: Path, files: list[str], query: str, budget: int, open_file: str | None) -> Bundle:
        index = self._ready(workspace, files)
        t0 = time.perf_counter()
        chosen = bm25_baseline.pack(index, query, budget, open_file)
        elapsed = time.perf_counter() - t0
        by_path = {d.path: d.text for d in index.docs}
        pieces = [Piece(path, by_path[path]) for path, _, _ in chosen]
        text = "".join(block for _, block, _ in chosen)
        return Bundle(pieces, text, elapsed, sum(n for _, _, n in chosen), {"files": [p for p, _, _ in chosen]})


class Bm25ChunksSystem(Bm25System):
    """Retrieval-augmented generation's usual unit: windows of lines, not files."""

    name = "bm25-chunks"

    def _build(self, workspace: Path, files: list[str]) -> Any:
        return bm25_baseline.ChunkIndex.from_workspace(workspace, files, langs.EXTENSIONS[self.language])

    def bundle(self, workspace: Path, files: list[str], query: str, budget: int, open_file: str | None) -> Bundle:
        index = self._ready(workspace, files)
        t0 = time.perf_counter()
        chosen = bm25_baseline.pack_chunks(index, query, budget, open_file)
        elapsed = time.perf_counter() - t0
        pieces = [Piece(path, block, start, end) for path, start, end, block, _ in chosen]
        text = "".join(block for *_, block, _ in chosen)
        return Bundle(pieces, text, elapsed, sum(n for *_, n in chosen), {"files": sorted({p for p, *_ in chosen})})


# --------------------------------------------------------------------------- Aider


def parse_aider_map(text: str, files: set[str]) -> list[Piece]:
    """Split a repo map into one piece per file entry.

    Entries are ``path:`` followed by ``│``/``⋮`` code lines, or a bare ``path``
    line for files shown without tags. Headers are recognised only when they name
    a workspace file, so a stray code line can never become a "found" file.
    """
    pieces: list[Piece] = []
    cur: Piece | None = None
    for line in text.splitlines():
        if line.startswith(("│", "⋮")):
            if cur is not None:
                cur.content += line[1:] + "\n"
            continue
        s = line.strip()
        if not s:
            continue
        path = s[:-1] if s.endswith(":") and s[:-1] in files else s
        if path in files:
            cur = Piece(path, "")
            pieces.append(cur)
        elif cur is not None:  # unexpected line: keep it with the current entry
            cur.content += line + "\n"
    return pieces


class AiderSystem(System):
    """Aider's RepoMap in its own venv, via a long-lived ``aider_runner.py --serve``."""

    name = "aider"

    def __init__(self, python: str = DEFAULT_AIDER_PYTHON) -> None:
        self.python = python
        self._proc: subprocess.Popen[str] | None = None
        self._version: str | None = None

    def version_key(self) -> str:
        if self._version is None:
            out = subprocess.run(
                [self.python, "-c", "import aider, grep_ast, tree_sitter_language_pack as t;print(aider.__version__)"],
                capture_output=True,
                text=True,
                check=True,
            )
            self._version = (
                out.stdout.strip()
                + "-"
                + file_hash(HERE / "aider_runner.py", HERE / "tokens.py")
                + f"-h{AIDER_HASH_SEED}"
            )
        return self._version

    def _request(self, req: dict[str, Any]) -> dict[str, Any]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [self.python, str(HERE / "aider_runner.py"), "--serve"],
                env=dict(os.environ, PYTHONHASHSEED=AIDER_HASH_SEED),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                cwd="/tmp",
            )
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("aider_runner exited")
        res = json.loads(line)
        if "error" in res:
            raise RuntimeError(f"aider_runner: {res['error']}")
        return res

    def prepare(self, workspace: Path, files: list[str]) -> float | None:
        res = self._request(
            {"workspace": str(workspace), "query": "", "budget": 1024, "open_file": None, "files": files}
        )
        return res.get("scan_s")

    def bundle(self, workspace: Path, files: list[str], query: str, budget: int, open_file: str | None) -> Bundle:
        res = self._request(
            {"workspace": str(workspace), "query": query, "budget": budget, "open_file": open_file, "files": files}
        )
        pieces = parse_aider_map(res["map"], set(files))
        extra = {k: res[k] for k in ("raw_tokens", "shrinks", "final_max_map_tokens")}
        return Bundle(pieces, res["map"], res["latency_s"], res["tokens"], extra)

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin:
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None


SYSTEMS = {
    "ctxlsp": CtxLspCli,
    "ctxlsp-inproc": CtxLspInProcess,
    "ctxlsp-engine": CtxLspEngine,
    "bm25": Bm25System,
    "bm25-chunks": Bm25ChunksSystem,
    "aider": AiderSystem,
}


def make_system(name: str) -> System:
    try:
        return SYSTEMS[name]()
    except KeyError:
        raise SystemExit(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}") from None
