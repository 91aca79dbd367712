"""Whether two versions of ctx-lsp derive byte-identical rows from the same tree.

A speed change to the per-file analysis (`index/files.analyse_uncounted`, the walker, the
units and their terms) must not change what the index stores or searches. This dumps,
per file under ROOT, one digest of everything derived from its bytes: the stored row
(`StoredFile`'s fields: outline JSON, units blob, line count, symbols, ...), the text
left to count, the search documents (`search.file_docs`) and the body document
(`body_terms.body_docs`). Run it once with each version on the path and compare:

    PYTHONPATH=/tmp/base python benchmarks/scalebench/rows_identical.py ROOT --out base.txt
    python benchmarks/scalebench/rows_identical.py ROOT --out new.txt --against base.txt

Every file the index would analyse is dumped (any text file up to `MAX_FILE_BYTES`, not
binary; code that a machine wrote is left out as the index leaves it out), in walk order.
`--against` prints the files whose digests differ and exits 1 if any do.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".ctx-lsp", ".venv", "venv"}


def file_digest(root: str, abs_path: str, rel_path: str, data: bytes) -> str:
    """One digest of every value derived from the file's bytes (see the module docstring)."""
    from ctx_lsp.index.body_terms import body_docs
    from ctx_lsp.index.files import analyse_uncounted, to_indexed
    from ctx_lsp.index.search import file_docs

    analysis = analyse_uncounted(rel_path, data, len(data), 0, abs_path)
    h = hashlib.blake2b(digest_size=16)
    if analysis is None:
        return "none"
    row, uncounted = analysis
    for value in row.__reduce__()[1]:
        h.update(repr(value).encode("utf-8", "surrogatepass") + b"\0")
    h.update(repr(uncounted).encode("utf-8", "surrogatepass") + b"\0")
    entry = to_indexed(row, root, abs_path, rel_path)
    h.update(repr(file_docs(entry)).encode("utf-8", "surrogatepass") + b"\0")
    h.update(repr(body_docs(entry)).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def dump(root: Path) -> list[tuple[str, str]]:
    from ctx_lsp.config import MAX_FILE_BYTES
    from ctx_lsp.index.files import machine_written
    from ctx_lsp.index.scan import looks_binary

    out: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            try:
                data = Path(path).read_bytes()
            except OSError:
                continue
            rel = Path(path).relative_to(root).as_posix()
            if len(data) > MAX_FILE_BYTES or looks_binary(data) or machine_written(rel, data) is not None:
                continue
            out.append((rel, file_digest(str(root), path, rel, data)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--out", type=Path, required=True, help="where to write `digest path` lines")
    ap.add_argument("--against", type=Path, help="a dump to compare with")
    args = ap.parse_args()
    import ctx_lsp

    rows = dump(args.root.resolve())
    args.out.write_text("".join(f"{digest} {rel}\n" for rel, digest in rows))
    print(f"{len(rows)} files from {Path(ctx_lsp.__file__).parent}", file=sys.stderr)
    if args.against is None:
        return 0
    theirs: dict[str, str] = {}
    for line in args.against.read_text().splitlines():
        digest, rel = line.split(" ", 1)
        theirs[rel] = digest
    ours = dict(rows)
    differ = sorted(rel for rel in ours.keys() | theirs.keys() if ours.get(rel) != theirs.get(rel))
    for rel in differ[:50]:
        print(f"differs: {rel}")
    print(f"{len(ours)} files, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
