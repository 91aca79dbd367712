"""The parse floor: read + tree-sitter parse every `.py` file, in one process (one core).

DESIGN's "about 445 files/s per core" is this measurement; ctx-lsp's cold index does this
and more (outline walk, tokens, the cache), so it is the floor a cold index can approach
(divided by the cores it uses). Prints JSON `{"files", "bytes", "seconds", "read_s"}`;
`seconds` excludes the interpreter start and the import of tree-sitter.

    python benchmarks/scalebench/parse_floor.py ROOT
"""

from __future__ import annotations

import json
import os
import sys
import time

SKIP = {"__pycache__", "node_modules", ".git", ".hg", ".ctx-lsp", ".venv", "venv", "build", "dist"}


def main() -> int:
    import tree_sitter_python
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_python.language()))
    root = sys.argv[1]
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP and not d.startswith(".")]
        paths += [os.path.join(dirpath, f) for f in filenames if f.endswith(".py")]
    started = time.perf_counter()
    size = 0
    read_s = 0.0
    for path in paths:
        t0 = time.perf_counter()
        with open(path, "rb") as fh:
            data = fh.read()
        read_s += time.perf_counter() - t0
        size += len(data)
        parser.parse(data)
    print(json.dumps({"files": len(paths), "bytes": size, "seconds": time.perf_counter() - started, "read_s": read_s}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
