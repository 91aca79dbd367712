"""Library docs: offline, Context7-style docs of the workspace's dependencies.

See `library.LibraryDocs` (the engine's entry point) and DESIGN: Library docs.
"""

from ctx_lsp.docs.library import *  # noqa: F403 — the package's API is library's
from ctx_lsp.docs.library import __all__  # noqa: F401
