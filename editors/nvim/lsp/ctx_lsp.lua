-- ctx-lsp: budgeted context bundles for coding agents.
-- Enable with `vim.lsp.enable('ctx_lsp')` (Neovim 0.11+); override any field with
-- `vim.lsp.config('ctx_lsp', { ... })`. See `:help ctx_lsp-config`.

---@type vim.lsp.Config
return {
  cmd = { 'ctx-lsp', 'serve' },
  -- The server indexes every text file in the workspace, and an open buffer overrides the
  -- file on disk, so attaching to a filetype keeps its unsaved edits in the bundles.
  -- Code is outlined with tree-sitter (Python, TypeScript/TSX, JavaScript/JSX, Go, Rust, Java,
  -- C, C++, C#, Ruby), markdown by headings; the rest is whole-or-nothing text.
  filetypes = {
    'python',
    'typescript',
    'typescriptreact',
    'javascript',
    'javascriptreact',
    'go',
    'rust',
    'java',
    'c',
    'cpp',
    'cs',
    'ruby',
    'markdown',
    'rst',
    'text',
    'toml',
    'yaml',
    'json',
    'jsonc',
  },
  root_markers = {
    'pyproject.toml',
    'ctx-lsp.toml',
    '.ctx-lsp.toml',
    'package.json',
    'go.mod',
    'Cargo.toml',
    '.git',
  },
  -- Without a workspace folder the server has nothing to index and stays idle.
  workspace_required = true,
  -- Sent as `initializationOptions`: the same keys as `[tool.ctx-lsp]` in pyproject.toml,
  -- e.g. `{ index = { ignore = { 'build/**' } }, agents = { implementer = { budget = 8000 } } }`.
  init_options = {},
  -- Sent with `workspace/didChangeConfiguration` when not empty; the server reads the
  -- `ctxLsp` section (same keys as init_options) and applies them on top.
  settings = {},
}
