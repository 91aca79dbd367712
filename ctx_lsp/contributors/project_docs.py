"""project_docs: the agent instructions of the project.

PENGUIN.md > AGENTS.md > CLAUDE.md > README.md, first found wins, searching from the focus
file's directory up to the workspace root, so the AGENTS.md nearest to the code being
worked on applies (as agents conventionally read it). README.md is the fallback only when
no instructions file exists at any level.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Mapping
from dataclasses import replace

from ctx_lsp.contributors.base import AssemblyContext, file_candidate
from ctx_lsp.errors import CtxError
from ctx_lsp.index.files import IndexedFile
from ctx_lsp.index.terms import query_terms
from ctx_lsp.tokens import TokenCounter
from ctx_lsp.vocabulary import BundleRequest, Candidate, ContributorName, Offer, Rendering, Strategy, Tier, memoised

INSTRUCTION_FILES = ("PENGUIN.md", "AGENTS.md", "CLAUDE.md")
FALLBACK_FILE = "README.md"
README_FOCUS_MIN_HEADINGS = 2
"""A README is shown beyond its headings only when the task's words match at least two of
its sections: one shared word ("response", "client") is how every code task matches it."""
README_WHOLE_MAX_TOKENS = 400
"""A README this small is shown whole anyway: its headings would save next to nothing."""


_NAMES = (*INSTRUCTION_FILES, FALLBACK_FILE)


_found: list[tuple[Mapping[str, IndexedFile], dict[str, IndexedFile]]] = []
"""The last index seen and its instruction files: the index's `files` is replaced, never
changed, on every update, so the scan of every file (~2 ms on Django) runs once per index
version rather than once per request."""
_found_lock = threading.Lock()


def _lookup(ctx: AssemblyContext) -> dict[str, IndexedFile]:
    files = ctx.workspace.files
    with _found_lock:
        if _found and _found[0][0] is files:
            return _found[0][1]
    docs = {f.path: f for f in files.values() if f.path.endswith(_NAMES) and posixpath.basename(f.path) in _NAMES}
    with _found_lock:
        _found[:] = [(files, docs)]
    return docs


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
        # Agent instructions are read whole when they fit; a README (the fallback) is for
        # people, so its headings say enough unless the task is about what it documents.
        is_readme = posixpath.basename(entry.path) == FALLBACK_FILE
        skim = (
            is_readme and len(focus) < README_FOCUS_MIN_HEADINGS and _whole_tokens(ctx, entry) > README_WHOLE_MAX_TOKENS
        )
        tier = Tier.OUTLINE if skim else ctx.max_tier
        candidate = file_candidate(ctx, entry, self.name, 1.0, reason, tier, focus)
        return Offer(self.name, [readable(ctx, entry, candidate)], self.strategy)


def readable(ctx: AssemblyContext, entry: IndexedFile, candidate: Candidate) -> Candidate:
    """The candidate with its whole text (tier 3, or markdown without headings) trimmed of
    the blank lines that blanked HTML and badges leave at its start and end.

    Markdown is rendered readable (`readable_markdown`: no HTML, no badges, same line
    numbers) wherever it is rendered; an instructions file is shown whole in most bundles,
    and a README's centred logo would otherwise open it with a run of empty lines."""
    outlined = candidate.render
    if entry.outline.language != "markdown":
        return candidate

    def rendering(tier: Tier, cap: int) -> Rendering:
        whole = outlined(tier, cap)
        if tier < Tier.FULL and entry.outline.symbols:
            return whole
        return _trimmed(whole, ctx.counter)

    return replace(candidate, render=memoised(rendering))


def _trimmed(rendering: Rendering, counter: TokenCounter) -> Rendering:
    """The rendering without the blank lines it starts with (a README's centred logo and
    badges, once blanked) and, when it is not cut, ends with; its range starts and ends
    later and earlier to match, so line numbers still hold."""
    content = rendering.content
    body = content.lstrip("\n")
    leading = len(content) - len(body)
    if not body.strip():
        return rendering
    end_line = rendering.end_line
    if not rendering.truncated:
        kept = body.rstrip("\n")
        end_line -= max(0, body.count("\n") - kept.count("\n") - 1)
        body = kept + "\n" if content.endswith("\n") else kept
    if body == content:
        return rendering
    return replace(
        rendering,
        content=body,
        tokens=counter.count(body),
        start_line=rendering.start_line + leading,
        end_line=end_line,
    )


def _whole_tokens(ctx: AssemblyContext, entry: IndexedFile) -> int:
    """The file's whole count (made on first use); one that cannot be read counts as big."""
    try:
        return ctx.workspace.whole_tokens(entry, ctx.counter)
    except CtxError:
        return README_WHOLE_MAX_TOKENS + 1
