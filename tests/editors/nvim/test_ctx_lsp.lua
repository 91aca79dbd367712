-- Tests of editors/nvim against the real server; run by run.lua, in this order (they share
-- one Neovim, one server and one workspace).

local api = vim.api
local fixture = require('fixture')

---@param T T
return function(T)
  local expected_files = 0
  for _, n in pairs(fixture.languages) do
    expected_files = expected_files + n
  end
  local app, util ---@type integer, integer

  ---@return vim.lsp.Client
  local function client()
    return assert(vim.lsp.get_clients({ name = 'ctx_lsp' })[1], 'no ctx_lsp client')
  end

  ---@return table
  local function server_status()
    local resp = assert(client():request_sync('workspace/executeCommand', { command = 'ctx.status' }, 5000, app))
    assert(not resp.err, resp.err and resp.err.message)
    return resp.result
  end

  --- Back to a single window showing demo/app.py (closes floats and scratch splits).
  local function focus_app()
    for _, win in ipairs(api.nvim_list_wins()) do
      if api.nvim_win_get_config(win).relative ~= '' then
        api.nvim_win_close(win, true)
      end
    end
    vim.cmd('silent! tabonly')
    api.nvim_set_current_buf(app)
    vim.cmd('silent! only')
  end

  local function is_modified_on_disk(rel, needle)
    local f = assert(io.open(T.ws .. '/' .. rel))
    local s = f:read('*a')
    f:close()
    return s:find(needle, 1, true) ~= nil
  end

  T.test('plugin/ defines :CtxLsp with subcommand and agent completion', function()
    T.eq(vim.fn.exists(':CtxLsp'), 2, ':CtxLsp exists')
    T.eq(package.loaded['ctx_lsp'], nil, 'ctx_lsp is loaded lazily, not by plugin/')
    T.eq(vim.fn.getcompletion('CtxLsp ', 'cmdline'), { 'status', 'bundle', 'explain', 'symbol', 'reindex' })
    T.eq(vim.fn.getcompletion('CtxLsp re', 'cmdline'), { 'reindex' })
    T.eq(vim.fn.getcompletion('CtxLsp bundle imp', 'cmdline'), { 'implementer' })
  end)

  T.test(':CtxLsp without a running client says how to start one', function()
    local note = T.expect_notify(function()
      vim.cmd('CtxLsp status')
    end, vim.log.levels.ERROR, 'an error notification')
    T.contains(note.msg, 'ctx-lsp: ctx.status: no ctx_lsp client is running; call vim.lsp.enable("ctx_lsp")')
  end)

  T.test('doc/ctx_lsp.txt has valid help tags', function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. '/doc', 'p')
    local src = api.nvim_get_runtime_file('doc/ctx_lsp.txt', false)[1]
    T.ok(src, 'doc/ctx_lsp.txt on the runtimepath')
    vim.fn.writefile(vim.fn.readfile(src), dir .. '/doc/ctx_lsp.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir .. '/doc')) -- errors on duplicate tags
    local tags = vim.fn.readfile(dir .. '/doc/tags')
    for _, tag in ipairs({ 'ctx_lsp', ':CtxLsp', ':CtxLsp-bundle', 'ctx_lsp-config', 'ctx_lsp-health', 'g:ctx_lsp' }) do
      T.contains(tags, tag .. '\t', 'tags file')
    end
    vim.opt.rtp:append(dir)
    vim.cmd('help :CtxLsp-symbol')
    T.eq(vim.bo.filetype, 'help', 'help buffer')
    T.contains(vim.fn.getline('.'), '*:CtxLsp-symbol*', 'help jumps to the tag')
    vim.cmd('helpclose')
    vim.opt.rtp:remove(dir)
    vim.fn.delete(dir, 'rf')
  end)

  T.test("vim.lsp.enable('ctx_lsp') attaches through lsp/ctx_lsp.lua", function()
    vim.lsp.enable('ctx_lsp')
    vim.cmd.edit(vim.fn.fnameescape(T.ws .. '/demo/app.py'))
    app = api.nvim_get_current_buf()
    T.eq(vim.bo[app].filetype, 'python', 'filetype')
    T.wait(function()
      local c = vim.lsp.get_clients({ name = 'ctx_lsp', bufnr = app })[1]
      return c and c.initialized
    end, 'the ctx_lsp client to attach and initialize')
    local c = client()
    T.eq(vim.list_slice(c.config.cmd, 1, 2), { 'ctx-lsp', 'serve' }, 'cmd from lsp/ctx_lsp.lua')
    T.eq(
      c.config.root_markers,
      { 'pyproject.toml', 'ctx-lsp.toml', '.ctx-lsp.toml', 'package.json', 'go.mod', 'Cargo.toml', '.git' },
      'root_markers'
    )
    T.eq(c.config.workspace_required, true, 'workspace_required')
    T.eq(c.root_dir, T.ws, 'root_dir (found by the pyproject.toml root marker)')
    T.eq(c.server_info and c.server_info.name, 'ctx-lsp', 'serverInfo.name')
    T.ok(vim.tbl_contains(c.config.filetypes, 'markdown'), 'markdown buffers attach too')
    for _, ft in ipairs({ 'typescript', 'typescriptreact', 'javascript', 'go', 'rust', 'java', 'c', 'cpp', 'cs', 'ruby' }) do
      T.ok(vim.tbl_contains(c.config.filetypes, ft), ft .. ' buffers attach too')
    end
    -- Wait for the start-up index: the watcher starts when it is done.
    local s
    T.wait(function()
      s = server_status()
      return not s.indexing and s.watcher.state ~= 'off' and s.files_indexed >= expected_files
    end, 'the start-up index to finish')
  end)

  T.test('a buffer outside any project starts no client (workspace_required)', function()
    local lonely = vim.fn.tempname() .. '/notes.md'
    T.write(lonely, '# Notes\n')
    vim.cmd.edit(vim.fn.fnameescape(lonely))
    local buf = api.nvim_get_current_buf()
    T.eq(vim.bo[buf].filetype, 'markdown', 'filetype')
    vim.wait(300)
    T.eq(#vim.lsp.get_clients({ bufnr = buf }), 0, 'clients attached to a file outside any project')
    T.eq(#vim.lsp.get_clients({ name = 'ctx_lsp' }), 1, 'ctx_lsp clients')
    vim.cmd('bwipeout!')
    vim.fn.delete(vim.fs.dirname(lonely), 'rf')
    api.nvim_set_current_buf(app)
  end)

  T.test(':CtxLsp explain before any bundle reports the server error', function()
    local note = T.expect_notify(function()
      vim.cmd('CtxLsp explain')
    end, vim.log.levels.ERROR, 'an error notification')
    T.contains(note.msg, 'ctx.explain failed', 'notification names the command')
    T.contains(note.msg, 'no bundle yet', 'notification carries the server message')
  end)

  T.test(':CtxLsp status shows files indexed and the watcher in a float', function()
    focus_app()
    local data = T.run('CtxLsp status', 'Status')
    T.eq(data.result.files_indexed, expected_files, 'files_indexed')
    T.eq(data.result.files_by_language, fixture.languages, 'files_by_language')
    local win = api.nvim_get_current_win()
    T.ok(api.nvim_win_get_config(win).relative ~= '', 'status opens in a floating window')
    local lines = T.lines(api.nvim_win_get_buf(win))
    T.contains(lines[1], 'ctx-lsp 0.1.0 — ' .. T.ws, 'title line')
    T.contains(lines, ('files indexed : %d (markdown 2, python 4, text 1)'):format(expected_files))
    T.contains(lines, 'watcher       : watching')
    T.contains(lines, 'open buffers  : 1')
    vim.cmd('normal q')
    T.eq(api.nvim_win_is_valid(win), false, 'q closes the float')
  end)

  T.test(':CtxLsp bundle includes an unsaved buffer edit (scratch buffer + register)', function()
    focus_app()
    -- A second loaded buffer the client is attached to: it goes into params.open.
    vim.cmd.edit(vim.fn.fnameescape(T.ws .. '/demo/util.py'))
    util = api.nvim_get_current_buf()
    api.nvim_set_current_buf(app)
    T.wait(function()
      return client().attached_buffers[util]
    end, 'util.py to attach')
    -- Edit app.py without writing it.
    api.nvim_buf_set_lines(app, 9, 9, false, {
      'def unsaved_marker_fn():',
      '    return "UNSAVED-EDIT-7f3a"',
      '',
      '',
    })
    api.nvim_win_set_cursor(0, { 10, 4 })
    T.ok(vim.bo[app].modified, 'app.py is modified')
    T.ok(not is_modified_on_disk('demo/app.py', 'UNSAVED-EDIT-7f3a'), 'the edit is not on disk')

    local data = T.run('CtxLsp bundle implementer add unsaved_marker_fn to compute_total', 'Bundle')
    local params = data.params
    T.eq(params.agent, 'implementer', 'agent')
    T.eq(params.query, 'add unsaved_marker_fn to compute_total', 'query')
    T.eq(params.focus.uri, vim.uri_from_bufnr(app), 'focus uri')
    T.eq(params.focus.position.line, 9, 'focus line (0-based)')
    T.eq(params.open, { vim.uri_from_bufnr(util) }, 'open = the other attached buffer')

    local buf = api.nvim_get_current_buf()
    T.eq(buf, data.buf, 'the scratch buffer is shown and current')
    T.eq(api.nvim_buf_get_name(buf), 'ctx-lsp://bundle', 'scratch buffer name')
    T.eq(vim.bo[buf].filetype, 'markdown', 'scratch filetype')
    T.eq(vim.bo[buf].buftype, 'nofile', 'scratch buftype')
    T.eq(#vim.lsp.get_clients({ bufnr = buf }), 0, 'no LSP client attaches to the scratch buffer')
    local lines = T.lines(buf)
    T.contains(lines, 'def unsaved_marker_fn():', 'bundle buffer')
    T.contains(lines, 'UNSAVED-EDIT-7f3a', 'bundle buffer')
    T.contains(lines, 'demo/util.py', 'bundle buffer (the open buffer)')
    T.eq(table.concat(lines, '\n'), data.result.text, 'buffer holds the bundle text')

    T.eq(data.register, '"', 'register without a clipboard provider')
    T.contains(vim.fn.getreg('"'), 'UNSAVED-EDIT-7f3a', 'register')
    local r = data.result
    T.ok(r.total_tokens > 0 and r.total_tokens <= r.budget, 'tokens within the budget')
    T.eq(r.budget, 6000, "implementer's default budget")
    T.contains(
      vim.fn.execute('messages'),
      ('ctx-lsp: bundle for implementer: %d/%d tokens, %d sections → register "'):format(
        r.total_tokens,
        r.budget,
        #r.sections
      ),
      ':messages'
    )
    T.eq(require('ctx_lsp').last_bundle.result.text, r.text, 'last_bundle')
    T.ok(vim.bo[app].modified, 'app.py is still unsaved')
  end)

  T.test(':CtxLsp explain shows why candidates of the last bundle are in or out', function()
    focus_app()
    local data = T.run('CtxLsp explain', 'Explain')
    T.eq(data.result.agent, 'implementer', 'explain.agent')
    T.eq(data.result.query, 'add unsaved_marker_fn to compute_total', 'explain.query')
    local lines = T.lines(data.buf)
    T.eq(api.nvim_get_current_buf(), data.buf, 'the explain buffer is current')
    T.eq(lines[1], '# ctx.explain — the last bundle')
    T.contains(lines, 'agent: implementer')
    T.contains(lines, '## In (')
    T.contains(lines, '`demo/app.py` — working_files')
    T.contains(lines, '  - why: ')
  end)

  T.test('options from vim.g.ctx_lsp and setup(): register, agent, view', function()
    focus_app()
    vim.g.ctx_lsp = { register = 'a', agent = 'planner' }
    require('ctx_lsp').setup({ view = 'none' })
    local ok, data = pcall(T.run, 'CtxLsp bundle', 'Bundle')
    vim.g.ctx_lsp = nil
    require('ctx_lsp').setup({ view = 'split' })
    assert(ok, data)
    T.eq(data.params.agent, 'planner', 'agent from vim.g.ctx_lsp')
    T.eq(data.params.query, nil, 'no query without a task')
    T.eq(data.register, 'a', 'register from vim.g.ctx_lsp')
    T.eq(vim.fn.getreg('a'), data.result.text, 'register a')
    T.eq(data.result.budget, 4000, "planner's default budget")
    T.eq(api.nvim_get_current_buf(), app, "view = 'none' opens no window")
    T.eq(#api.nvim_list_wins(), 1, 'windows')
  end)

  T.test('a server error is notified at ERROR level naming the request', function()
    focus_app()
    local note = T.expect_notify(function()
      require('ctx_lsp').bundle({ budget = -5 })
    end, vim.log.levels.ERROR, 'an error notification')
    T.contains(note.msg, 'ctx-lsp: ctx/bundle failed: budget', 'notification')
    note = T.expect_notify(function()
      vim.cmd('CtxLsp frobnicate')
    end, vim.log.levels.ERROR, 'an error notification')
    T.contains(note.msg, 'unknown subcommand "frobnicate"; use one of: status, bundle', 'notification')
  end)

  T.test(':CtxLsp symbol NAME shows the body in a buffer of its filetype', function()
    focus_app()
    local data = T.run('CtxLsp symbol normalize', 'Symbol')
    T.eq(data.match.qualname, 'normalize', 'qualname')
    T.eq(data.match.path, 'demo/util.py', 'path')
    local lines = T.lines(data.buf)
    T.eq(api.nvim_get_current_buf(), data.buf, 'the symbol buffer is current')
    T.eq(vim.bo[data.buf].filetype, 'python', 'filetype of the source file')
    T.contains(lines, 'def normalize(value):')
    T.contains(lines, 'return max(value, 0)')
    T.contains(vim.fn.execute('messages'), 'ctx-lsp: normalize (function) demo/util.py:1-3')
  end)

  T.test(':CtxLsp symbol without a name uses the word under the cursor (unsaved text)', function()
    focus_app()
    api.nvim_win_set_cursor(0, { 10, 6 }) -- on unsaved_marker_fn (only in the buffer)
    T.eq(vim.fn.expand('<cword>'), 'unsaved_marker_fn', 'word under cursor')
    local data = T.run('CtxLsp symbol', 'Symbol')
    T.ok(data.match, 'a match for the unsaved function: ' .. vim.inspect(data.result))
    T.eq(data.match.qualname, 'unsaved_marker_fn', 'qualname')
    T.contains(T.lines(data.buf), 'return "UNSAVED-EDIT-7f3a"')
  end)

  T.test(':CtxLsp symbol with several matches offers them with vim.ui.select', function()
    focus_app()
    local offered ---@type string[]
    local orig = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      offered = vim.tbl_map(opts.format_item, items)
      for _, item in ipairs(items) do
        if item.qualname == 'Job.run' then
          return on_choice(item)
        end
      end
      on_choice(nil)
    end
    local ok, data = pcall(T.run, 'CtxLsp symbol run', 'Symbol')
    vim.ui.select = orig
    assert(ok, data)
    T.ok(offered and #offered >= 2, 'several matches offered: ' .. vim.inspect(offered))
    T.contains(offered, 'Job.run  demo/jobs.py:2')
    T.contains(offered, 'Runner.run  demo/util.py:7')
    T.eq(data.match.qualname, 'Job.run', 'chosen match')
    T.contains(T.lines(data.buf), 'return "job"')
  end)

  T.test(':CtxLsp symbol for an unknown name warns with the server note', function()
    focus_app()
    local data = T.run('CtxLsp symbol no_such_symbol_here', 'Symbol')
    T.eq(#data.result.matches, 0, 'matches')
    local note = T.notes[#T.notes]
    T.eq(note.level, vim.log.levels.WARN, 'level')
    T.contains(note.msg, 'ctx-lsp: symbol: nothing named "no_such_symbol_here"; ' .. data.result.note)
    T.eq(api.nvim_get_current_buf(), app, 'no buffer opens')
  end)

  T.test(':checkhealth ctx_lsp reports OK for the executable and the server', function()
    focus_app()
    vim.cmd('checkhealth ctx_lsp')
    local lines = T.lines(0)
    T.eq(api.nvim_buf_get_name(0), 'health://', 'health buffer')
    T.contains(lines, 'ctx-lsp: executable')
    T.contains(lines, '- ✅ OK `ctx-lsp` found: ')
    T.contains(lines, '- ✅ OK version: ctx-lsp 0.1.0')
    T.contains(lines, '- ✅ OK Neovim 0.11')
    T.contains(lines, '- ✅ OK enabled: vim.lsp.enable("ctx_lsp")')
    T.contains(lines, ('- ✅ OK %d files indexed (markdown 2, python 4, text 1)'):format(expected_files))
    T.contains(lines, '- ✅ OK file watcher: watching')
    T.not_contains(lines, 'ERROR', 'health report')
    T.not_contains(lines, 'WARNING', 'health report')
    vim.cmd('silent! tabclose')
  end)

  T.test(':checkhealth ctx_lsp reports a missing executable with the fix', function()
    focus_app()
    local saved = vim.deepcopy(vim.lsp.config.ctx_lsp.cmd)
    vim.lsp.config('ctx_lsp', { cmd = { 'ctx-lsp-not-installed', 'serve' } })
    local ok, err = pcall(vim.cmd, 'checkhealth ctx_lsp')
    local lines = T.lines(0)
    vim.lsp.config('ctx_lsp', { cmd = saved })
    vim.cmd('silent! tabclose')
    assert(ok, err)
    T.contains(lines, '- ❌ ERROR `ctx-lsp-not-installed` is not executable (cmd = ctx-lsp-not-installed serve)')
    T.contains(lines, 'pipx install /path/to/ctx-lsp')
    T.contains(lines, "vim.lsp.config('ctx_lsp', { cmd = { '/path/to/ctx-lsp', 'serve' } })")
    T.eq(vim.lsp.config.ctx_lsp.cmd, saved, 'cmd restored')
  end)

  T.test(':CtxLsp reindex re-indexes and reports the file count', function()
    focus_app()
    local data = T.run('CtxLsp reindex', 'Reindex')
    T.eq(data.result.files_indexed, expected_files, 'files_indexed after reindex')
    local note = T.notes[#T.notes]
    T.contains(note.msg, ('ctx-lsp: re-indexed %d files (markdown 2, python 4, text 1)'):format(expected_files))
  end)
end
