-- Options of the ctx_lsp plugin: defaults, then `vim.g.ctx_lsp`, then `setup(opts)`.

---@alias ctx_lsp.View 'split'|'vsplit'|'tab'|'float'|'none'

---@class ctx_lsp.Opts
---@field register? string Register that receives the bundle text (default `+` with a clipboard, else `"`).
---@field agent? string Agent for `:CtxLsp bundle` without one (default `default`).
---@field budget? integer Token budget for bundles; nil lets the agent's budget apply.
---@field view? ctx_lsp.View Where bundle, explain and symbol buffers open (default `split`).
---@field status_view? ctx_lsp.View Where `:CtxLsp status` opens (default `float`).
---@field client_name? string Name of the LSP config (default `ctx_lsp`).
---@field timeout_ms? integer How long to wait for the server to initialize or answer `:checkhealth` (default 10000).

local M = {}

---@type ctx_lsp.Opts
M.defaults = {
  register = nil,
  agent = 'default',
  budget = nil,
  view = 'split',
  status_view = 'float',
  client_name = 'ctx_lsp',
  timeout_ms = 10000,
}

---@type ctx_lsp.Opts
local from_setup = {}

---@param opts ctx_lsp.Opts?
function M.set(opts)
  vim.validate('opts', opts, 'table', true)
  from_setup = vim.tbl_deep_extend('force', from_setup, opts or {})
end

--- The effective options (re-read each time, so `vim.g.ctx_lsp` may change at any moment).
---@return ctx_lsp.Opts
function M.get()
  local g = vim.g.ctx_lsp
  return vim.tbl_deep_extend('force', M.defaults, type(g) == 'table' and g or {}, from_setup)
end

--- `+` when Neovim has a clipboard provider, else the unnamed register.
---@return string
function M.register()
  local reg = M.get().register
  if reg and reg ~= '' then
    return reg
  end
  return vim.fn.has('clipboard') == 1 and '+' or '"'
end

return M
