-- ctx_lsp: Neovim client commands for ctx-lsp (budgeted context bundles for coding agents).
-- The LSP client itself comes from `lsp/ctx_lsp.lua` and `vim.lsp.enable('ctx_lsp')`;
-- this module talks to it: `:CtxLsp status|bundle|explain|symbol|reindex`. See `:help ctx_lsp`.

local api = vim.api
local config = require('ctx_lsp.config')
local ui = require('ctx_lsp.ui')

local M = {}

--- Subcommands of `:CtxLsp`, in completion order.
M.subcommands = { 'status', 'bundle', 'explain', 'symbol', 'reindex' }

--- Agent names with built-in defaults (any other name gets the `default` agent's).
M.agents = { 'default', 'planner', 'analyst', 'reviewer', 'architect', 'designer', 'implementer', 'tester', 'debugger' }

---@class ctx_lsp.Range
---@field start_line integer 1-based, inclusive
---@field end_line integer 1-based, inclusive

---@class ctx_lsp.Section
---@field id string
---@field contributor string
---@field path string
---@field uri string?
---@field tier integer
---@field range ctx_lsp.Range?
---@field tokens integer
---@field salience number
---@field reason string
---@field content string

---@class ctx_lsp.BundleResult
---@field sections ctx_lsp.Section[]
---@field text string The rendered bundle, ready to paste.
---@field total_tokens integer
---@field budget integer
---@field snapshot table

---@class ctx_lsp.SymbolMatch
---@field path string
---@field uri string
---@field qualname string
---@field kind string
---@field range ctx_lsp.Range
---@field signature string
---@field body string?
---@field tokens integer
---@field truncated boolean

---@class ctx_lsp.BundleOpts
---@field agent? string
---@field query? string The task, in words and identifiers.
---@field budget? integer
---@field register? string
---@field view? ctx_lsp.View

---@alias ctx_lsp.Callback fun(err: lsp.ResponseError|string|nil, result: any)

--- The last `ctx/bundle` result and its params (nil before the first bundle).
---@type { params: table, result: ctx_lsp.BundleResult }?
M.last_bundle = nil

---@param opts ctx_lsp.Opts?
function M.setup(opts)
  config.set(opts)
end

---@param msg string
---@param level integer?
local function notify(msg, level)
  vim.notify('ctx-lsp: ' .. msg, level or vim.log.levels.INFO, { title = 'ctx-lsp' })
end

---@param chunks [string, string?][]
local function echo(chunks)
  api.nvim_echo(chunks, true, {})
end

--- Fire `User CtxLsp<Event>` (e.g. `CtxLspBundle`) so scripts can follow results.
---@param event string
---@param data table
local function fire(event, data)
  api.nvim_exec_autocmds('User', { pattern = 'CtxLsp' .. event, modeline = false, data = data })
end

---@param err lsp.ResponseError|string
---@return string
local function err_text(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- The ctx_lsp client for `bufnr` (or any running one), preferring one attached to it.
---@param bufnr integer?
---@return vim.lsp.Client?
function M.client(bufnr)
  local name = config.get().client_name
  local clients = vim.lsp.get_clients({ bufnr = bufnr or api.nvim_get_current_buf(), name = name })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = name })
  end
  return clients[1]
end

--- Run `fn(client)` once the client is initialized; report (and call back) when there is none.
---@param what string request or command name, for messages
---@param cb ctx_lsp.Callback?
---@param fn fun(client: vim.lsp.Client)
local function with_client(what, cb, fn)
  local name = config.get().client_name
  local client = M.client()
  if not client then
    local msg = ('%s: no %s client is running; call vim.lsp.enable(%q) and open a file of the project'):format(
      what,
      name,
      name
    )
    notify(msg, vim.log.levels.ERROR)
    if cb then
      cb(msg, nil)
    end
    return
  end
  if client.initialized then
    fn(client)
    return
  end
  local waited, step = 0, 50
  local timeout = config.get().timeout_ms
  local timer = assert(vim.uv.new_timer())
  timer:start(step, step, function()
    waited = waited + step
    if client.initialized or client:is_stopped() or waited >= timeout then
      timer:stop()
      timer:close()
      vim.schedule(function()
        if client.initialized then
          fn(client)
        else
          local msg = ('%s: the %s server did not initialize within %d ms'):format(what, name, timeout)
          notify(msg, vim.log.levels.ERROR)
          if cb then
            cb(msg, nil)
          end
        end
      end)
    end
  end)
end

--- Send `method` to the ctx_lsp client; errors are reported with `vim.notify(…, ERROR)`.
--- `label` names the request in messages (the command name for workspace/executeCommand).
---@param method string
---@param params table
---@param label string
---@param on_result fun(result: any, client: vim.lsp.Client)
---@param cb ctx_lsp.Callback?
---@param bufnr integer? nil flushes pending edits of every buffer first
local function request(method, params, label, on_result, cb, bufnr)
  with_client(label, cb, function(client)
    local ok = client:request(method, params, function(err, result)
      if err then
        notify(('%s failed: %s'):format(label, err_text(err)), vim.log.levels.ERROR)
        if cb then
          cb(err, nil)
        end
        return
      end
      on_result(result, client)
      if cb then
        cb(nil, result)
      end
    end, bufnr)
    if not ok then
      local msg = ('%s: the %s server is not running'):format(label, client.name)
      notify(msg, vim.log.levels.ERROR)
      if cb then
        cb(msg, nil)
      end
    end
  end)
end

---@param command string
---@param on_result fun(result: any, client: vim.lsp.Client)
---@param cb ctx_lsp.Callback?
local function execute(command, on_result, cb)
  request('workspace/executeCommand', { command = command }, command, on_result, cb)
end

---@param text string
---@return string[]
local function lines_of(text)
  return vim.split(text or '', '\n', { plain = true })
end

---@param t table?
---@return string
local function counts(t)
  local parts = {}
  for k, v in vim.spairs(t or {}) do
    parts[#parts + 1] = ('%s %s'):format(k, v)
  end
  return #parts > 0 and table.concat(parts, ', ') or 'none'
end

-- ---------------------------------------------------------------- status

--- Lines of the `:CtxLsp status` view for a `ctx.status` result.
---@param s table
---@param client vim.lsp.Client?
---@return string[]
function M.format_status(s, client)
  local lines = {
    ('ctx-lsp %s — %s'):format(s.version or '?', table.concat(s.folders or {}, ', ')),
  }
  local function add(label, value)
    lines[#lines + 1] = ('  %-14s: %s'):format(label, value)
  end
  if client then
    add('client', ('%s (id %d), root %s'):format(client.name, client.id, client.root_dir or '-'))
  end
  add('indexing', s.indexing and 'in progress' or 'done')
  add('files indexed', ('%d (%s)'):format(s.files_indexed or 0, counts(s.files_by_language)))
  add('symbols', s.symbols or 0)
  add(
    'tokens',
    ('%d (%s), ~%d estimated in other text'):format(s.tokens or 0, s.tokenizer or '?', s.tokens_estimated or 0)
  )
  add('open buffers', s.open_documents or 0)
  local w = s.watcher or {}
  add('watcher', ('%s, %d events%s'):format(w.state or '?', w.events or 0, w.error and (' — ' .. w.error) or ''))
  add('skipped files', ('%s; ignored directories: %d'):format(counts(s.skipped), s.ignored_dirs or 0))
  local li = s.last_index or {}
  add('last index', ('%ss (%d parsed, %d from cache)'):format(li.seconds or '?', li.parsed or 0, li.reused or 0))
  local cache = s.cache or {}
  add('cache', #(cache.locations or {}) > 0 and table.concat(cache.locations, ', ') or 'off')
  if type(cache.docs) == 'table' then
    local d = cache.docs
    add(
      'docs cache',
      ('%d lookups, hit rate %s, hit p50 %s ms, miss p50 %s ms'):format(
        d.lookups or 0,
        d.hit_rate and ('%d%%'):format(d.hit_rate * 100) or '-',
        d.hit_p50_ms or '-',
        d.miss_p50_ms or '-'
      )
    )
  end
  local snap = s.last_snapshot
  if type(snap) == 'table' then
    add(
      'last bundle',
      ('%d/%d tokens (%s%%), %s'):format(
        snap.total_used or 0,
        snap.available_budget or 0,
        snap.utilization_pct or '?',
        snap.context_window_type or '?'
      )
    )
  end
  if #(s.too_large or {}) > 0 then
    add('too large', table.concat(vim.list_slice(s.too_large, 1, 10), ', '))
  end
  for _, p in ipairs(vim.list_slice(s.problems or {}, 1, 10)) do
    add('problem', p)
  end
  local warnings = vim.list_extend(vim.list_extend({}, cache.warnings or {}), (s.config or {}).warnings or {})
  for _, warning in ipairs(warnings) do
    add('warning', warning)
  end
  lines[#lines + 1] = ''
  lines[#lines + 1] = 'q: close'
  return lines
end

--- `:CtxLsp status`: run `ctx.status` and show it (a float by default).
---@param cb ctx_lsp.Callback?
function M.status(cb)
  execute('ctx.status', function(result, client)
    local buf = ui.scratch('ctx-lsp://status', M.format_status(result, client), 'ctxlspstatus')
    ui.show(buf, config.get().status_view, 'ctx-lsp status')
    fire('Status', { result = result, buf = buf })
  end, cb)
end

-- ---------------------------------------------------------------- bundle

--- Params of `ctx/bundle` for the current buffer: focus = cursor (if the client is attached
--- to it), open = the other loaded buffers the client is attached to.
---@param client vim.lsp.Client
---@param opts ctx_lsp.BundleOpts
---@return table
function M.bundle_params(client, opts)
  local o = config.get()
  local buf = api.nvim_get_current_buf()
  local params = { agent = opts.agent or o.agent }
  if opts.query and opts.query ~= '' then
    params.query = opts.query
  end
  local budget = opts.budget or o.budget
  if budget then
    params.budget = budget
  end
  if client.attached_buffers[buf] then
    local pos = vim.lsp.util.make_position_params(0, client.offset_encoding)
    params.focus = { uri = pos.textDocument.uri, position = pos.position }
  end
  local open = {}
  for b in pairs(client.attached_buffers) do
    if b ~= buf and api.nvim_buf_is_loaded(b) then
      open[#open + 1] = vim.uri_from_bufnr(b)
    end
  end
  table.sort(open)
  if #open > 0 then
    params.open = open
  end
  return params
end

--- `:CtxLsp bundle [agent] [task…]`: ask for a bundle, show its text in a markdown scratch
--- buffer, put it in a register and echo the tokens used.
---@param opts ctx_lsp.BundleOpts?
---@param cb ctx_lsp.Callback?
function M.bundle(opts, cb)
  opts = opts or {}
  with_client('ctx/bundle', cb, function(client)
    local params = M.bundle_params(client, opts)
    -- bufnr nil: pending didChange of every buffer is flushed before the request.
    request('ctx/bundle', params, 'ctx/bundle', function(result)
      ---@cast result ctx_lsp.BundleResult
      M.last_bundle = { params = params, result = result }
      local buf = ui.scratch('ctx-lsp://bundle', lines_of(result.text), 'markdown')
      ui.show(buf, opts.view or config.get().view, 'ctx-lsp bundle')
      local reg = opts.register or config.register()
      vim.fn.setreg(reg, result.text)
      echo({
        { 'ctx-lsp: ', 'Title' },
        {
          ('bundle for %s: %d/%d tokens, %d sections'):format(
            params.agent,
            result.total_tokens,
            result.budget,
            #result.sections
          ),
        },
        { (' → register %s'):format(reg), 'Comment' },
      })
      fire('Bundle', { result = result, params = params, buf = buf, register = reg })
    end, cb)
  end)
end

-- ---------------------------------------------------------------- explain

--- Lines (markdown) of the `:CtxLsp explain` view for a `ctx.explain` result.
---@param e table
---@return string[]
function M.format_explain(e)
  local cands = vim.deepcopy(e.candidates or {})
  table.sort(cands, function(a, b)
    if a.included ~= b.included then
      return a.included
    end
    return (a.rank or 0) > (b.rank or 0)
  end)
  local n_in = 0
  for _, c in ipairs(cands) do
    n_in = n_in + (c.included and 1 or 0)
  end
  local lines = {
    '# ctx.explain — the last bundle',
    '',
    ('query: %s · agent: %s · %d/%d tokens · %.1f ms'):format(
      e.query ~= '' and ('"' .. e.query .. '"') or '(none)',
      e.agent or '?',
      e.total_tokens or 0,
      e.budget or 0,
      e.elapsed_ms or 0
    ),
  }
  local heading_out = false
  lines[#lines + 1] = ''
  lines[#lines + 1] = ('## In (%d)'):format(n_in)
  for _, c in ipairs(cands) do
    if not c.included and not heading_out then
      heading_out = true
      lines[#lines + 1] = ''
      lines[#lines + 1] = ('## Out (%d)'):format(#cands - n_in)
    end
    lines[#lines + 1] = ('- %s `%s` — %s · rank %.3f · salience %.2f%s'):format(
      c.included and ('[tier ' .. tostring(c.tier or '?') .. ']') or '[out]',
      c.path ~= '' and c.path or c.id,
      c.contributor,
      c.rank or 0,
      c.salience or 0,
      (c.tokens or 0) > 0 and (' · ' .. c.tokens .. ' tokens') or ''
    )
    lines[#lines + 1] = '  - why: ' .. (c.reason or '')
    if not c.included then
      lines[#lines + 1] = '  - ' .. (c.outcome or '')
    end
  end
  return lines
end

--- `:CtxLsp explain`: why each candidate of the last bundle was in or out.
---@param cb ctx_lsp.Callback?
function M.explain(cb)
  execute('ctx.explain', function(result)
    local buf = ui.scratch('ctx-lsp://explain', M.format_explain(result), 'markdown')
    ui.show(buf, config.get().view, 'ctx-lsp explain')
    fire('Explain', { result = result, buf = buf })
  end, cb)
end

-- ---------------------------------------------------------------- symbol

---@param m ctx_lsp.SymbolMatch
---@return string
local function describe(m)
  return ('%s (%s) %s:%d-%d, %d tokens%s'):format(
    m.qualname,
    m.kind,
    m.path,
    m.range.start_line,
    m.range.end_line,
    m.tokens or 0,
    m.truncated and ', truncated' or ''
  )
end

--- Show one `ctx/symbol` match in a scratch buffer with the source file's filetype;
--- `gd` there jumps to the symbol in its file.
---@param m ctx_lsp.SymbolMatch
---@param note string? the server's note (e.g. a close match instead of an exact one)
---@return integer bufnr
function M.show_symbol(m, note)
  local text = (m.body and m.body ~= vim.NIL and m.body ~= '') and m.body or m.signature
  text = text:gsub('\n$', '')
  local ft = vim.filetype.match({ filename = m.path }) or ''
  local buf = ui.scratch('ctx-lsp://symbol', lines_of(text), ft)
  vim.b[buf].ctx_lsp_symbol = m
  vim.keymap.set('n', 'gd', function()
    local target = vim.uri_to_fname(m.uri)
    ui.close(buf)
    vim.cmd.edit(vim.fn.fnameescape(target))
    pcall(api.nvim_win_set_cursor, 0, { m.range.start_line, 0 })
  end, { buffer = buf, desc = 'ctx-lsp: go to the symbol in its file' })
  ui.show(buf, config.get().view, m.qualname)
  echo({ { 'ctx-lsp: ', 'Title' }, { describe(m) }, note and { ' — ' .. note, 'Comment' } or nil })
  return buf
end

--- `:CtxLsp symbol [name]` (default: the word under the cursor): the symbol's code, from
--- `ctx/symbol`. Several matches are offered with `vim.ui.select`.
---@param name string?
---@param cb ctx_lsp.Callback?
function M.symbol(name, cb)
  if not name or name == '' then
    name = vim.fn.expand('<cword>')
  end
  if name == '' then
    notify('symbol: no name given and no word under the cursor', vim.log.levels.ERROR)
    if cb then
      cb('no name', nil)
    end
    return
  end
  request('ctx/symbol', { name = name, include_body = true }, 'ctx/symbol', function(result)
    local matches = result.matches or {}
    local note = result.note ~= vim.NIL and result.note or nil
    if #matches == 0 then
      notify(('symbol: nothing named %q%s'):format(name, note and ('; ' .. note) or ''), vim.log.levels.WARN)
      fire('Symbol', { result = result })
      return
    end
    if #matches == 1 then
      local buf = M.show_symbol(matches[1], note)
      fire('Symbol', { result = result, match = matches[1], buf = buf })
      return
    end
    vim.ui.select(matches, {
      prompt = ('ctx-lsp: %d symbols named %s%s'):format(
        result.total_matches or #matches,
        name,
        (result.total_matches or #matches) > #matches and (' (showing ' .. #matches .. ')') or ''
      ),
      kind = 'ctx_lsp_symbol',
      format_item = function(m)
        return ('%s  %s:%d  (%s)'):format(m.qualname, m.path, m.range.start_line, m.kind)
      end,
    }, function(choice)
      local buf = choice and M.show_symbol(choice) or nil
      fire('Symbol', { result = result, match = choice, buf = buf })
    end)
  end, cb)
end

-- ---------------------------------------------------------------- reindex

--- `:CtxLsp reindex`: re-scan and re-parse the workspace (progress shows in `vim.lsp.status()`).
---@param cb ctx_lsp.Callback?
function M.reindex(cb)
  local started = vim.uv.hrtime()
  with_client('ctx.reindex', cb, function()
    notify('re-indexing the workspace…')
    execute('ctx.reindex', function(result)
      local li = result.last_index or {}
      notify(
        ('re-indexed %d files (%s) in %.2fs; server index %ss'):format(
          result.files_indexed or 0,
          counts(result.files_by_language),
          (vim.uv.hrtime() - started) / 1e9,
          li.seconds or '?'
        )
      )
      fire('Reindex', { result = result })
    end, cb)
  end)
end

-- ---------------------------------------------------------------- :CtxLsp

--- Dispatch `:CtxLsp {subcommand} [args]`.
---@param opts { fargs: string[] }
function M.command(opts)
  if vim.fn.has('nvim-0.11') == 0 then
    notify('needs Neovim 0.11+ (vim.lsp.config / vim.lsp.enable); see :checkhealth ctx_lsp', vim.log.levels.ERROR)
    return
  end
  local args = opts.fargs or {}
  local sub = args[1] or 'status'
  if sub == 'status' then
    M.status()
  elseif sub == 'bundle' then
    M.bundle({ agent = args[2], query = table.concat(args, ' ', 3) })
  elseif sub == 'explain' then
    M.explain()
  elseif sub == 'symbol' then
    M.symbol(args[2])
  elseif sub == 'reindex' then
    M.reindex()
  else
    notify(
      ('unknown subcommand %q; use one of: %s'):format(sub, table.concat(M.subcommands, ', ')),
      vim.log.levels.ERROR
    )
  end
end

--- Completion for `:CtxLsp`: subcommands, then agent names after `bundle`.
---@param arglead string
---@param cmdline string
---@param cursorpos integer
---@return string[]
function M.complete(arglead, cmdline, cursorpos)
  local before = cmdline:sub(1, cursorpos)
  local words = vim.split(vim.trim(before), '%s+')
  local n = #words + (before:match('%s$') and 1 or 0) -- index of the word being completed
  local function starting(list)
    return vim.tbl_filter(function(w)
      return vim.startswith(w, arglead)
    end, list)
  end
  if n == 2 then
    return starting(M.subcommands)
  end
  if n == 3 and words[2] == 'bundle' then
    return starting(M.agents)
  end
  return {}
end

return M
