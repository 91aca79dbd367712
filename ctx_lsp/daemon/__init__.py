"""The per-workspace daemon behind the CLI (`ctx-lsp daemon`): `server` holds the warm
engine, `client` is the CLI's stdlib-only side, `address` keeps the socket private."""
