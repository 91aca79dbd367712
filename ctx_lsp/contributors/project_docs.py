"""project_docs: the agent instructions of the project.

PENGUIN.md > AGENTS.md > CLAUDE.md > README.md, first found wins, searching from the focus
file's directory up to the workspace root, so the AGENTS.md nearest to the code being
worked on applies (as agents conventionally read it). README.md is the fallback only when
no instructions file exists at any level.
"""

from __future__ import annotations

import posixpath

from ctx_lsp.contributors.base import AssemblyContext, file_candidate
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.terms import query_terms
from ctx_lsp.vocabulary import BundleRequest, ContributorName, Offer, Strategy

INSTRUCTION_FILES = ("PENGUIN.md", "AGENTS.md", "CLAUDE.md")
FALLBACK_FILE = "README.md"


_NAMES = (*INSTRUCTION_FILES, FALLBACK_FILE)


def _lookup(ctx: AssemblyContext) -> dict[str, IndexedFile]:
    return {
        f.path: f
        for f in ctx.workspace.files.values()
        if f.path.endswith(_NAMES) and posixpath.basename(f.path) in _NAMES
    }


def _levels(start_dir: str) -> list[str]:
    """'a/b' → ['a/b', 'a', ''] — directories from the focus file up to the root."""
    levels = []
    current = start_dir
    while True:
        levels.append(current)
        if not current:
            return levels
        current = posixpath.dirname(current)


def find_instructions(ctx: AssemblyContext) -> tuple[IndexedFile, str] | None:
    docs = _lookup(ctx)
    if not docs:
        return None
    start = ""
    focus = ctx.workspace.files.get(ctx.focus_path) if ctx.focus_path else None
    if focus is None and ctx.working:
        focus = ctx.working[0].entry
    if focus is not None:
        start = posixpath.dirname(focus.path)
    levels = _levels(start)
    for level in levels:
        for name in INSTRUCTION_FILES:
            entry = docs.get(posixpath.join(level, name) if level else name)
            if entry is not None:
                where = "nearest to the focus file" if level else "at the workspace root"
                return entry, f"project instructions ({name}, {where})"
    for level in levels:
        entry = docs.get(posixpath.join(level, FALLBACK_FILE) if level else FALLBACK_FILE)
        if entry is not None:
            return entry, "project README (no PENGUIN.md, AGENTS.md or CLAUDE.md found)"
    return None


class ProjectDocs:
    """The project's instructions for agents, as rich as the window type allows; a section
    that must be pruned keeps the headings the task's words match."""

    name = ContributorName.PROJECT_DOCS
    strategy = Strategy.DEPTH

    def applies(self, request: BundleRequest) -> bool:
        return True

    def offer(self, ctx: AssemblyContext) -> Offer:
        found = find_instructions(ctx)
        if found is None:
            return Offer(self.name, [], self.strategy)
        entry, reason = found
        q = set(query_terms(ctx.query))
        focus = tuple(s.qualname for s in entry.outline.symbols if q & set(query_terms(f"{s.name} {s.doc}")))
        candidate = file_candidate(ctx, entry, self.name, 1.0, reason, ctx.max_tier, focus)
        return Offer(self.name, [candidate], self.strategy)
