-- :CtxLsp status|bundle|explain|symbol|reindex. Everything else loads on first use.
if vim.g.loaded_ctx_lsp then
  return
end
vim.g.loaded_ctx_lsp = true

vim.api.nvim_create_user_command('CtxLsp', function(opts)
  require('ctx_lsp').command(opts)
end, {
  nargs = '*',
  desc = 'ctx-lsp: status, bundle [agent] [task…], explain, symbol [name], reindex',
  complete = function(arglead, cmdline, cursorpos)
    return require('ctx_lsp').complete(arglead, cmdline, cursorpos)
  end,
})
