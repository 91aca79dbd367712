"""Library docs: offline, Context7-style docs of the workspace's dependencies.

See `library.LibraryDocs` (the engine's entry point) and DESIGN: Library docs.
"""

from ctx_lsp.docs.library import (
    AGENT_DOCS_CAPS,
    DEFAULT_DOCS_CAP,
    DocsResult,
    DocsSource,
    LibraryDocs,
    LibraryMatch,
)

__all__ = [
    "AGENT_DOCS_CAPS",
    "DEFAULT_DOCS_CAP",
    "DocsResult",
    "DocsSource",
    "LibraryDocs",
    "LibraryMatch",
]
