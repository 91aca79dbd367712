"""`python -m ctx_lsp` — the same entry point as the `ctx-lsp` script, so PATH never matters."""

import sys

from ctx_lsp.cli import main

sys.exit(main())
