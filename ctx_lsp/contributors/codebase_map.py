"""codebase_map: a ranked outline of the rest of the repository (Aider's repo-map idea).

Files are ranked by the reference graph, personalised towards the working files and the
identifiers the task names; each file shows only its most-referenced definitions, so a
map of many files fits where their full outlines would not. The graph is maintained
incrementally with the index; a request only personalises it.
"""

from __future__ import annotations

from ctx_lsp.contributors.base import AssemblyContext, definition_ranks, file_candidate
from ctx_lsp.contributors.kinds import is_changelog, is_test_path, mentions_tests, wants_changelog
from ctx_lsp.relevance import MAP_DEFINITIONS_PER_FILE, MAP_TEST_FILE_FACTOR, MAX_MAP_FILES
from ctx_lsp.vocabulary import BundleRequest, Candidate, ContributorName, Offer, Strategy, Tier


class CodebaseMap:
    """Files by personalised graph rank as compact outlines; definitions are ranked only
    for the files actually rendered."""

    name = ContributorName.CODEBASE_MAP
    strategy = Strategy.BREADTH

    def applies(self, request: BundleRequest) -> bool:
        return True

    def offer(self, ctx: AssemblyContext) -> Offer:
        rank = ctx.rank
        candidates: list[Candidate] = []
        if rank is None:
            return Offer(self.name, candidates, self.strategy)
        working = ctx.working_paths
        changelogs = wants_changelog(ctx.query)
        tests = mentions_tests(ctx.query)
        for f in rank.files:
            if len(candidates) >= MAX_MAP_FILES:
                break
            entry = ctx.workspace.files.get(f.abs_path)
            if entry is None or f.abs_path in working or (not changelogs and is_changelog(entry.path)):
                continue
            mentioned = rank.mentioned_in.get(f.abs_path, ())
            reason = f"graph rank {f.score:.2f}" + (f"; defines {', '.join(mentioned[:3])}" if mentioned else "")
            salience = f.score
            if not tests and is_test_path(entry.path):
                salience *= MAP_TEST_FILE_FACTOR
                reason += f" × {MAP_TEST_FILE_FACTOR} (a test; the task is not about tests)"
            ranks = definition_ranks(ctx, rank, entry.abs_path, MAP_DEFINITIONS_PER_FILE) if entry.symbols else None
            candidates.append(
                file_candidate(ctx, entry, self.name, salience, reason, Tier.OUTLINE, ranks=ranks, compact=True)
            )
        candidates.sort(key=lambda c: -c.salience)  # stable: graph order among equals
        return Offer(self.name, candidates, self.strategy)
