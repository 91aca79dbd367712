"""Drive Aider's repo map (``aider.repomap.RepoMap``) the way Aider itself does.

Runs in Aider's OWN virtualenv (see README: /tmp/aider-venv), never in the
project's: the harness starts it as a subprocess and talks JSON lines over
stdin/stdout, so Aider's ~100 dependencies never touch ctx-lsp's environment.

What is reproduced from ``aider/coders/base_coder.py`` (aider-chat 0.86.2):
- ``mentioned_idents`` = ``set(re.split(r"\\W+", message))``;
- ``mentioned_fnames`` = file mentions in the message (full relative paths, or
  unique basenames with a '.', '_', '-' in them) plus files whose stem (>= 5
  chars) equals a mentioned identifier;
- ``chat_files`` = the open file (open mode), ``other_files`` = every other
  workspace file; Aider drops chat files from the map;
- the two fallbacks when the map comes back empty (no chat files, then no hints).

Not reproduced: ``max_context_window`` is left unset, so Aider does not grow
the map 8x when no file is in the chat; ``max_map_tokens`` is the budget.

Budget: Aider accepts a map up to 15% over ``max_map_tokens`` and estimates
tokens by sampling lines. The eval needs a hard cap, so when the real o200k
count is over budget we ask again with a proportionally smaller
``max_map_tokens`` (at most 6 times) and report the first map's size as
``raw_tokens`` so the overrun is visible. Latency is that of the first call only.

Network: no network is used or allowed; a socket guard refuses any non-local
connection, and litellm is told to use its bundled model-cost map.

Usage:
    /tmp/aider-venv/bin/python benchmarks/eval/aider_runner.py --serve
    /tmp/aider-venv/bin/python benchmarks/eval/aider_runner.py --workspace DIR \
        --query TEXT --budget N [--open PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
TAGS_CACHE = Path(os.environ.get("CTX_EVAL_AIDER_CACHE", "/tmp/eval-cache/aider-tags"))

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    """Refuse network connections: the eval must run offline and stay honest about it."""
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError(f"aider_runner: network access refused ({address!r})")
    return _real_connect(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tokens  # noqa: E402  (sibling module: o200k offline)
from aider.repomap import RepoMap  # noqa: E402

MAX_SHRINKS = 6


class O200kModel:
    """The ``main_model`` RepoMap needs: only ``token_count`` is used."""

    def token_count(self, text: str) -> int:
        return tokens.count(text)


class QuietIO:
    """The ``io`` RepoMap needs: read files like Aider (None on undecodable), stay silent."""

    def read_text(self, filename: str, silent: bool = False) -> str | None:
        try:
            with open(filename, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeError):
            return None

    def tool_output(self, *args: Any, **kwargs: Any) -> None:
        pass

    tool_warning = tool_error = tool_output


class CachedRepoMap(RepoMap):
    """RepoMap whose tags cache lives under /tmp, never inside the workspace."""

    def load_tags_cache(self) -> None:
        TAGS_CACHE.mkdir(parents=True, exist_ok=True)
        self.TAGS_CACHE_DIR = str(TAGS_CACHE)  # Path(root) / absolute path == absolute path
        super().load_tags_cache()


def ident_mentions(text: str) -> set[str]:
    return set(re.split(r"\W+", text))


def file_mentions(text: str, addable: list[str]) -> set[str]:
    """``Coder.get_file_mentions`` with no files already in the chat besides ``chat``."""
    words = {w.rstrip(",.!;:?").strip("\"'`*_") for w in text.split()}
    found: set[str] = set()
    by_base: dict[str, list[str]] = defaultdict(list)
    for rel in addable:
        if rel in words:
            found.add(rel)
        base = os.path.basename(rel)
        if any(c in base for c in "/\\._-"):
            by_base[base].append(rel)
    for base, rels in by_base.items():
        if len(rels) == 1 and base in words:
            found.add(rels[0])
    return found


def ident_filename_matches(idents: set[str], files: list[str]) -> set[str]:
    stems: dict[str, set[str]] = defaultdict(set)
    for rel in files:
        stem = Path(rel).stem.lower()
        if len(stem) >= 5:
            stems[stem].add(rel)
    out: set[str] = set()
    for ident in idents:
        if len(ident) >= 5:
            out |= stems.get(ident.lower(), set())
    return out


class Runner:
    """One RepoMap per workspace, kept warm across requests (as in an Aider session)."""

    def __init__(self) -> None:
        self.root: str | None = None
        self.repo_map: CachedRepoMap | None = None
        self.scan_s: float | None = None

    def _map_for(self, root: str, all_abs: list[str]) -> tuple[CachedRepoMap, float | None]:
        if self.root != root or self.repo_map is None:
            self.root = root
            self.repo_map = CachedRepoMap(
                map_tokens=1024, root=root, main_model=O200kModel(), io=QuietIO(), refresh="auto"
            )
            t0 = time.perf_counter()  # warm the tags cache, as a running Aider would have it
            self.repo_map.get_repo_map([], all_abs)
            self.scan_s = time.perf_counter() - t0
            return self.repo_map, self.scan_s
        return self.repo_map, None

    def repo_map_text(
        self, rm: CachedRepoMap, query: str, chat: set[str], all_abs: set[str], rel_files: list[str], chat_rel: set[str]
    ) -> str:
        addable = [f for f in rel_files if f not in chat_rel]
        fnames = file_mentions(query, addable)
        idents = ident_mentions(query)
        fnames |= ident_filename_matches(idents, rel_files)
        other = all_abs - chat
        text = rm.get_repo_map(chat, other, mentioned_fnames=fnames, mentioned_idents=idents)
        if not text:
            text = rm.get_repo_map(set(), all_abs, mentioned_fnames=fnames, mentioned_idents=idents)
        if not text:
            text = rm.get_repo_map(set(), all_abs)
        return text or ""

    def run(
        self, workspace: str, query: str, budget: int, open_file: str | None, files: list[str] | None = None
    ) -> dict[str, Any]:
        root = str(Path(workspace).resolve())
        rel_files = files if files is not None else _list_files(Path(root))
        all_abs = {os.path.join(root, f) for f in rel_files}
        chat_rel = {open_file} if open_file else set()
        chat = {os.path.join(root, f) for f in chat_rel}
        with contextlib.redirect_stdout(sys.stderr):
            rm, scan_s = self._map_for(root, sorted(all_abs))
            target = budget
            rm.max_map_tokens = target
            t0 = time.perf_counter()
            text = self.repo_map_text(rm, query, chat, all_abs, rel_files, chat_rel)
            latency = time.perf_counter() - t0
            raw_tokens = n = tokens.count(text)
            shrinks = 0
            while n > budget and shrinks < MAX_SHRINKS:
                shrinks += 1
                target = max(1, int(target * budget / n * 0.95))
                rm.max_map_tokens = target
                text = self.repo_map_text(rm, query, chat, all_abs, rel_files, chat_rel)
                n = tokens.count(text)
            if n > budget:
                text, n = "", 0  # could not fit: an empty map is the honest answer
        return {
            "map": text,
            "tokens": n,
            "raw_tokens": raw_tokens,
            "shrinks": shrinks,
            "latency_s": latency,
            "scan_s": scan_s,
            "final_max_map_tokens": target,
        }


def _list_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith((".git", ".ctx-lsp", ".aider")) and d != "__pycache__"
        )
        for name in filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return sorted(out)


def serve() -> int:
    """JSON lines: one request per line in, one response per line out (errors included)."""
    runner = Runner()
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            res = runner.run(req["workspace"], req["query"], int(req["budget"]), req.get("open_file"), req.get("files"))
        except Exception as exc:  # report, keep serving
            res = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(res) + "\n")
        out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Aider repo map for the ctx-lsp eval")
    ap.add_argument("--serve", action="store_true", help="JSON-lines server on stdin/stdout")
    ap.add_argument("--workspace")
    ap.add_argument("--query", default="")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--open", dest="open_file")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.serve:
        return serve()
    if not args.workspace:
        ap.error("--workspace is required unless --serve")
    res = Runner().run(args.workspace, args.query, args.budget, args.open_file)
    if args.json:
        print(json.dumps(res))
    else:
        print(res["map"])
        print(
            f"[aider] tokens={res['tokens']} raw={res['raw_tokens']} shrinks={res['shrinks']} "
            f"latency={res['latency_s']:.3f}s scan={res['scan_s']:.3f}s",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
