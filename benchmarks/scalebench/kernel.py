"""The Linux kernel as a monorepo workspace: fetched from Debian, prepared once, never committed.

    python benchmarks/scalebench/kernel.py prepare [--base /tmp/kernel]
    python benchmarks/scalebench/kernel.py second-tree ROOT OUT [--files 2000] [--seed 0]

Only the Debian package is reachable from this machine (no kernel.org, no GitHub clone),
so `prepare` does what a fresh clone would give, from `linux-source-6.12`:

1. `apt-get download linux-source-6.12` into BASE (with `apt-get update` first if apt
   cannot locate the package: a fresh container's lists are empty);
2. `dpkg-deb -x` into BASE/pkg;
3. untar `usr/src/linux-source-6.12.tar.xz` into BASE/src (through a `.partial`
   directory, so an interrupted run never leaves a half tree that looks done);
4. remove exactly the two lines Debian adds to the top `.gitignore` (`/*` and
   `!/debian/`: they ignore the whole tree, which a clone's `.gitignore` does not);
5. `git init` (no commit: ctx-lsp finds a repository with no history, as a shallow
   clone would have little).

Each step is skipped when its output exists, and a stamp (BASE/prepared.json, outside
the tree) records what was done; the tree itself is only ever written by ctx-lsp's
own `.ctx-lsp/` cache. The kernel is 1.5 GB of GPL code: keep it under /tmp, never in
this repository.

`second-tree` writes the branch the switch rows swap to (`scalebench.switch`): ~2,000 of
the tree's C files changed, deterministically for a seed (a function appended to ~90 %,
~5 % deleted, ~5 % added beside them), standing in for a second kernel tag.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # run as a script: `scalebench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scalebench import switch

PACKAGE = "linux-source-6.12"
DEFAULT_BASE = Path("/tmp/kernel")
STAMP = "prepared.json"
DEBIAN_GITIGNORE_LINES = ("/*", "!/debian/")
"""What Debian's packaging adds to the top `.gitignore`; removed line by line, nothing else."""
SWITCH_FILES = 2000
C_FUNCTION = "\n\nint {name}(int value)\n{{\n\treturn value;\n}}\n"
"""What the second tree appends to a C file (kernel style) and puts in an added one."""


def tree_of(base: Path, package: str = PACKAGE) -> Path:
    return base / "src" / package


def is_kernel(root: Path) -> bool:
    """A Linux tree: what the benchmark gives its own queries, edit target and targets."""
    return (root / "Kbuild").is_file() and (root / "kernel" / "fork.c").is_file() and (root / "MAINTAINERS").is_file()


def _run(cmd: list[str], cwd: Path, log: list[str]) -> subprocess.CompletedProcess[str]:
    log.append(" ".join(cmd))
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800)


def _download(base: Path, package: str, log: list[str]) -> Path:
    debs = sorted(base.glob(f"{package}_*.deb"))
    if debs:
        return debs[-1]
    r = _run(["apt-get", "download", package], base, log)
    if r.returncode != 0 and "Unable to locate" in r.stderr + r.stdout:
        update = _run(["apt-get", "update"], base, log)
        if update.returncode != 0:
            raise RuntimeError(f"apt-get update failed: {update.stderr.strip()[-500:]}")
        r = _run(["apt-get", "download", package], base, log)
    if r.returncode != 0:
        raise RuntimeError(f"apt-get download {package} failed: {r.stderr.strip()[-500:]}")
    debs = sorted(base.glob(f"{package}_*.deb"))
    if not debs:
        raise RuntimeError(f"apt-get download {package} wrote no .deb in {base}")
    return debs[-1]


def _strip_debian_gitignore(tree: Path) -> list[str]:
    """Remove exactly Debian's two lines from the top `.gitignore`; the lines removed."""
    path = tree / ".gitignore"
    if not path.is_file():
        return []
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for line in lines if line.rstrip("\n") not in DEBIAN_GITIGNORE_LINES]
    if len(kept) == len(lines):
        return []
    path.write_text("".join(kept))
    return [line.rstrip("\n") for line in lines if line.rstrip("\n") in DEBIAN_GITIGNORE_LINES]


def prepare(base: Path = DEFAULT_BASE, package: str = PACKAGE) -> Path:
    """The prepared tree under `base` (fetched and unpacked if missing); idempotent."""
    base = base.resolve()
    tree = tree_of(base, package)
    stamp_path = base / STAMP
    if stamp_path.is_file() and (tree / "Makefile").is_file():
        done = json.loads(stamp_path.read_text())
        if done.get("package") == package and done.get("tree") == str(tree):
            return tree
    base.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    log: list[str] = []
    stamp: dict[str, Any] = {"package": package, "tree": str(tree)}
    if not (tree / "Makefile").is_file():
        deb = _download(base, package, log)
        stamp["deb"] = deb.name
        tarball = base / "pkg" / "usr" / "src" / f"{package}.tar.xz"
        if not tarball.is_file():
            r = _run(["dpkg-deb", "-x", str(deb), str(base / "pkg")], base, log)
            if r.returncode != 0:
                raise RuntimeError(f"dpkg-deb -x failed: {r.stderr.strip()[-500:]}")
        partial = base / "src.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        r = _run(["tar", "-xf", str(tarball), "-C", str(partial)], base, log)
        if r.returncode != 0:
            raise RuntimeError(f"tar -xf {tarball} failed: {r.stderr.strip()[-500:]}")
        (base / "src").mkdir(exist_ok=True)
        (partial / package).rename(tree)
        partial.rmdir()
    else:
        stamp["adopted"] = "the tree was already unpacked; checked, not fetched again"
    stamp["gitignore_lines_removed"] = _strip_debian_gitignore(tree)
    if not (tree / ".git").exists():
        r = _run(["git", "init", "-q"], tree, log)
        if r.returncode != 0:
            raise RuntimeError(f"git init failed: {r.stderr.strip()[-500:]}")
    stamp.update({"commands": log, "seconds": round(time.perf_counter() - started, 1), "date": time.ctime()})
    stamp_path.write_text(json.dumps(stamp, indent=1) + "\n")
    return tree


def c_files(root: Path) -> list[Path]:
    """The tree's `.c` files (not headers: a tag-to-tag diff is mostly `.c`), sorted."""
    out = []
    for path in sorted(root.rglob("*.c")):
        if not any(part.startswith(".") for part in path.relative_to(root).parts[:-1]):
            out.append(path)
    return out


def second_tree(root: Path, out: Path, files: int = SWITCH_FILES, seed: int = 0) -> switch.SwitchPlan:
    """Branch B of the kernel for the switch rows: `files` C files changed (see the module
    docstring); `kernel/fork.c` is left alone (the didChange rows edit it)."""
    return switch.plan(root, c_files(root), "c", C_FUNCTION, files, seed, out, exclude=[root / "kernel" / "fork.c"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="fetch and unpack the kernel tree (idempotent)")
    p.add_argument("--base", type=Path, default=DEFAULT_BASE)
    s = sub.add_parser("second-tree", help="write the branch the switch rows swap to")
    s.add_argument("root", type=Path)
    s.add_argument("out", type=Path)
    s.add_argument("--files", type=int, default=SWITCH_FILES)
    s.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.command == "prepare":
        print(prepare(args.base))
        return 0
    plan = second_tree(args.root.resolve(), args.out.resolve(), args.files, args.seed)
    print(json.dumps(switch.describe(plan), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
