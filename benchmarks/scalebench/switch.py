"""A branch switch on disk: a second tree that differs from a workspace in ~N files, and
the swap between the two, done the way `git checkout` does it.

The measured workspace is never written: the switch happens in a *scratch copy* whose
files are hard links to the workspace's (`hardlink_copy`, seconds for the kernel's 86K
files, no second 1.5 GB on disk) and whose `.ctx-lsp/` cache is a real copy (SQLite
writes it in place). Every change the swap makes replaces a directory entry instead of
writing through it — new content goes to a temporary file that `os.replace` renames over
the link, a deleted file is unlinked — so the shared inodes, and the pristine tree, are
never touched. That is also what `git checkout` does (a new file per blob, new mtimes),
so what the server's watcher sees is a checkout's pattern of events.

The second tree (`plan`) is deterministic for a (file list, seed): a seeded sample of
the workspace's files of one language, ~90 % modified (a definition appended, in that
language's syntax, named `ctx_switch_<seed>_<i>`), ~5 % deleted, ~5 % added beside
them. It is materialised under a directory of its own (`b/` + `plan.json`), so the swap
itself only copies bytes, as a checkout writes blobs it already has.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

CACHE_DIR = ".ctx-lsp"
MODIFIED_SHARE = 0.90
DELETED_SHARE = 0.05
"""The rest of the changed files are added ones: a release-to-release diff is mostly edits."""
PLAN_FILE = "plan.json"


@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """Branch B relative to the workspace (branch A); paths relative to the root."""

    seed: int
    language: str
    modified: tuple[str, ...]
    added: tuple[str, ...]
    deleted: tuple[str, ...]
    probe_path: str
    """A modified file whose appended definition a bundle is asked about: it appears
    after the switch to B, and is gone again after the switch back."""
    probe_ident: str
    overlay: str
    """The directory holding B's content of the modified and added files."""

    @property
    def changed(self) -> int:
        return len(self.modified) + len(self.added) + len(self.deleted)


def ident(seed: int, i: int) -> str:
    return f"ctx_switch_{seed}_{i}"


def plan(
    root: Path,
    files: Iterable[Path],
    language: str,
    definition: str,
    n: int,
    seed: int,
    out: Path,
    exclude: Iterable[Path] = (),
) -> SwitchPlan:
    """Write branch B of `root` under `out` (reused when its plan matches): `n` of `files`
    changed, with `definition` (a format string with `{name}`) as what is appended or added."""
    root = root.resolve()
    skip = {p.resolve() for p in exclude}
    pool = sorted(p.relative_to(root).as_posix() for p in files if p.resolve() not in skip)
    rng = random.Random(f"switch-{seed}")
    n = min(n, len(pool))
    chosen = rng.sample(pool, n)
    n_deleted = round(n * DELETED_SHARE)
    n_modified = max(1, round(n * MODIFIED_SHARE)) if n else 0
    modified = sorted(chosen[:n_modified])
    deleted = sorted(chosen[n_modified : n_modified + n_deleted])
    beside = chosen[n_modified + n_deleted :]
    added = sorted(
        f"{Path(rel).parent.as_posix()}/ctx_switch_added_{seed}_{i}{Path(rel).suffix}".removeprefix("./")
        for i, rel in enumerate(beside)
    )
    probe = chosen[0] if chosen else ""
    expected: dict[str, Any] = {
        "seed": seed,
        "language": language,
        "modified": modified,
        "added": added,
        "deleted": deleted,
        "probe_path": probe,
        "probe_ident": ident(seed, 0),
        "overlay": str(out / "b"),
    }
    stamp = out / PLAN_FILE
    if stamp.is_file() and json.loads(stamp.read_text()) == expected:
        return _plan_of(expected)
    shutil.rmtree(out, ignore_errors=True)
    overlay = out / "b"
    index = {rel: i for i, rel in enumerate(chosen)}
    for rel in modified:
        data = (root / rel).read_bytes()
        target = overlay / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tail = b"" if data.endswith(b"\n") or not data else b"\n"
        target.write_bytes(data + tail + definition.format(name=ident(seed, index[rel])).encode())
    for i, rel in enumerate(added):
        target = overlay / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(definition.format(name=f"ctx_switch_added_{seed}_{i}").lstrip("\n"))
    out.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(expected, indent=1) + "\n")
    return _plan_of(expected)


def _plan_of(d: dict[str, Any]) -> SwitchPlan:
    return SwitchPlan(
        seed=int(d["seed"]),
        language=str(d["language"]),
        modified=tuple(d["modified"]),
        added=tuple(d["added"]),
        deleted=tuple(d["deleted"]),
        probe_path=str(d["probe_path"]),
        probe_ident=str(d["probe_ident"]),
        overlay=str(d["overlay"]),
    )


def hardlink_copy(src: Path, dst: Path) -> int:
    """`cp -al src dst`, except the cache, which is copied (SQLite writes it in place, and a
    hard link would let it write the workspace's own). Returns the files linked."""
    src, dst = src.resolve(), dst.resolve()
    if dst == src or src in dst.parents:
        raise ValueError(f"the scratch copy {dst} must be outside {src}")
    shutil.rmtree(dst, ignore_errors=True)
    linked = 0
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        here = dst if rel == "." else dst / rel
        here.mkdir(parents=True, exist_ok=True)
        if rel == "." and CACHE_DIR in dirnames:
            dirnames.remove(CACHE_DIR)
            shutil.copytree(src / CACHE_DIR, dst / CACHE_DIR, symlinks=True)
        for name in filenames:
            source = os.path.join(dirpath, name)
            target = here / name
            if os.path.islink(source):
                os.symlink(os.readlink(source), target)
            else:
                os.link(source, target)
                linked += 1
        for name in list(dirnames):  # links to directories: recreated, never walked
            if os.path.islink(os.path.join(dirpath, name)):
                os.symlink(os.readlink(os.path.join(dirpath, name)), here / name)
                dirnames.remove(name)
    return linked


def _put(data: bytes, target: Path) -> None:
    """Replace the directory entry (never write through a hard link to the pristine tree)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.ctx-switch-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def apply(p: SwitchPlan, copy: Path, pristine: Path, to: str) -> dict[str, float | int]:
    """Swap the scratch copy to branch `to` ("b" or "a"); what it wrote and how long it took."""
    copy, pristine = copy.resolve(), pristine.resolve()
    if copy == pristine or pristine in copy.parents or copy in pristine.parents:
        raise ValueError(f"refusing to switch {copy}: it is (or holds) the measured tree {pristine}")
    overlay = Path(p.overlay)
    started = time.perf_counter()
    written = removed = 0
    if to == "b":
        for rel in (*p.modified, *p.added):
            _put((overlay / rel).read_bytes(), copy / rel)
            written += 1
        for rel in p.deleted:
            (copy / rel).unlink(missing_ok=True)
            removed += 1
    elif to == "a":
        for rel in (*p.modified, *p.deleted):
            _put((pristine / rel).read_bytes(), copy / rel)
            written += 1
        for rel in p.added:
            (copy / rel).unlink(missing_ok=True)
            removed += 1
    else:
        raise ValueError(f"unknown branch {to!r}: 'a' or 'b'")
    return {"written": written, "removed": removed, "seconds": time.perf_counter() - started}


def describe(p: SwitchPlan) -> dict[str, object]:
    out = asdict(p)
    for key in ("modified", "added", "deleted"):
        out[key] = len(out[key])
    return out
