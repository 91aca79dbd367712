"""The contributors a bundle is built from, in the order their sections are presented.

Instructions first (what the project asks of an agent), then prior workflow outputs,
then what is being worked on, then what the task's words found, then asked-for library
docs, and the map of the rest last. The conversation is not here: it is windowed before
assembly and reserved out of the budget (see `assembly.pipeline`).
"""

from __future__ import annotations

from ctx_lsp.contributors.artifacts import Artifacts
from ctx_lsp.contributors.base import Contributor
from ctx_lsp.contributors.codebase_map import CodebaseMap
from ctx_lsp.contributors.library_docs import LibraryDocsContributor
from ctx_lsp.contributors.project_docs import ProjectDocs
from ctx_lsp.contributors.retrieval import Retrieval
from ctx_lsp.contributors.working_files import WorkingFiles

CONTRIBUTORS: tuple[Contributor, ...] = (
    ProjectDocs(),
    Artifacts(),
    WorkingFiles(),
    Retrieval(),
    LibraryDocsContributor(),
    CodebaseMap(),
)
