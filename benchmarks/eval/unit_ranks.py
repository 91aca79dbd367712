"""Where one instance's answer lines rank among ctx-lsp's code units (issue 22).

`explain.py` says what a bundle showed and missed; this says why a changed line was not
shown: the unit ranking retrieval computes for the task (`contributors/retrieval.py`,
`offered_files` and `best_units`), best first, with each unit's score, cost in tokens,
the running cost of the units up to it and its matched terms, and a star on every unit
that holds an answer line. In open mode the open file's lines do not count (as in the
metrics); its units, marked `o`, are ranked but left to the working files and not counted
in the running cost. A starred unit whose running cost is over the room for units means
the budget ran out; a starred unit far down means ranking.

    python benchmarks/eval/unit_ranks.py --repo REPO_PATH --commit SHA_PREFIX \\
        --mode open --budget 2000 [--ctx-root CHECKOUT] [--top 15]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gitrepo import DEFAULT_WS_ROOT, GitRepo
from run import find_instance


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", required=True, help="commit sha (prefix)")
    ap.add_argument("--mode", default="cold", choices=["cold", "open"])
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--pool", type=int, default=400)
    ap.add_argument("--top", type=int, default=15, help="units printed besides the starred ones")
    ap.add_argument("--ctx-root", default=None, help="a ctx-lsp checkout to import instead of the installed one")
    args = ap.parse_args(argv)
    if args.ctx_root:
        sys.path.insert(0, args.ctx_root)
    from ctx_lsp.assembly import pipeline
    from ctx_lsp.contributors.retrieval import best_units, body_files, offered_files
    from ctx_lsp.engine import Engine
    from ctx_lsp.params import parse_bundle

    inst = find_instance(args.repo, args.pool, args.commit)
    if inst is None:
        print(f"no instance for {args.commit} in the newest {args.pool}", file=sys.stderr)
        return 1
    ws = GitRepo(args.repo).workspace(inst.parent, Path(DEFAULT_WS_ROOT))
    open_file = inst.open_file if args.mode == "open" else None
    wanted = {(ln["path"], ln["line"]) for ln in inst.lines(args.mode)}
    print(f"# {inst.id}  workspace {ws}\ntask: {inst.task[:300]}\nopen: {open_file}")
    print(f"answer lines: {sorted(wanted)[:20]}")

    engine = Engine([str(ws)], {"index": {"watch": False}})
    engine.index()
    params = {"query": inst.task, "budget": args.budget}
    if open_file:
        params["open"] = [(Path(ws) / open_file).as_uri()]
    request = parse_bundle(params)
    ctx = pipeline.prepare(request, pipeline.plan(request, engine.loaded.config), engine.bundle_sources())
    files = [(r, entry) for _, r, entry in offered_files(ctx)]
    print("files ranked:", [r.path for r, _ in files[:15]])
    found = body_files(ctx, {r.abs_path for r, _ in files})
    print("files found by their code's words:", [r.path for r, _ in found])
    spent = 0
    for place, u in enumerate(best_units(ctx, files, found)):
        own = u.path == open_file  # shown by the working files, not from retrieval's room
        spent += 0 if own else u.cost
        hit = any((u.path, n) in wanted for n in range(u.unit.start, u.unit.end + 1))
        if place < args.top or hit:
            owner = u.unit.owner or "(module code)"
            mark = "*" if hit else "o" if own else " "
            print(
                f"{mark} {place:3} {u.score:7.2f} {u.path}:{u.unit.start}-{u.unit.end} {owner} "
                f"{u.cost} tokens ({spent} up to here) {', '.join(u.matched[:6])}"
            )
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
