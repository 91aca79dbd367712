"""The MCP adapter: `ctx-lsp mcp`, the engine's requests as MCP tools over stdio.

A thin layer like `server/` (the LSP adapter), beside it: one `Engine` for the workspace,
tool arguments turned into the same plain dicts the LSP and the CLI send and checked by
the same parsers (`ctx_lsp.params`), results trimmed to what an agent's context can take.
Only this package imports the MCP SDK (an optional extra: `pip install 'ctx-lsp[mcp]'`).

- `arguments.py`: MCP arguments → the parsers' dicts (workspace-relative paths, `path:line`
  focus), and the MCP output cap applied to budgets;
- `output.py`: results → the text an agent reads and a compact `structured_content`;
- `server.py`: the tools, their descriptions, the server and `run`.
"""
