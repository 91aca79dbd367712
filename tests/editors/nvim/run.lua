-- Headless end-to-end suite for editors/nvim against the real ctx-lsp server.
--
--   nvim --headless -u NONE -i NONE --cmd 'set rtp^=editors/nvim' -l tests/editors/nvim/run.lua [filter]
--
-- Run from the repository root with `ctx-lsp` on PATH. Prints one line per test and
-- "N passed, N failed, N skipped"; exits 1 when a test fails. `filter` (a Lua pattern)
-- keeps only the tests whose name matches.

local api = vim.api
local here = vim.fs.dirname(vim.fs.abspath(debug.getinfo(1, 'S').source:sub(2)))
package.path = here .. '/?.lua;' .. package.path

local filter = _G.arg and _G.arg[1] or nil

---@class T
local T = { tests = {}, notes = {}, events = {} }

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end
T.out = out

local SKIP = {}

--- Register a test.
---@param name string
---@param fn fun()
function T.test(name, fn)
  T.tests[#T.tests + 1] = { name = name, fn = fn }
end

---@param reason string
function T.skip(reason)
  error({ [SKIP] = true, reason = reason }, 0)
end

---@param cond any
---@param msg string
function T.ok(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

function T.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(('%s: expected %s, got %s'):format(what or 'value', vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

--- Assert that `text` (a string or a list of lines) contains the plain string `needle`.
function T.contains(text, needle, what)
  local s = type(text) == 'table' and table.concat(text, '\n') or tostring(text)
  if not s:find(needle, 1, true) then
    local shown = #s > 1500 and (s:sub(1, 1500) .. '\n…') or s
    error(('%s: %q not found in:\n%s'):format(what or 'text', needle, shown), 2)
  end
end

function T.not_contains(text, needle, what)
  local s = type(text) == 'table' and table.concat(text, '\n') or tostring(text)
  if s:find(needle, 1, true) then
    error(('%s: %q should not be there'):format(what or 'text', needle), 2)
  end
end

---@param cond fun(): any
---@param what string
---@param timeout integer?
function T.wait(cond, what, timeout)
  local ok = vim.wait(timeout or 10000, cond, 10)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
end

---@param buf integer?
---@return string[]
function T.lines(buf)
  return api.nvim_buf_get_lines(buf or 0, 0, -1, false)
end

-- Record every vim.notify (and User CtxLsp* event) instead of printing it.
vim.notify = function(msg, level)
  T.notes[#T.notes + 1] = { msg = msg, level = level or vim.log.levels.INFO }
end

api.nvim_create_autocmd('User', {
  pattern = 'CtxLsp*',
  callback = function(args)
    T.events[#T.events + 1] = { name = args.match, data = args.data }
  end,
})

--- Run an Ex command and wait for `User CtxLsp<event>`; fails on an ERROR notification.
---@param cmd string
---@param event string e.g. 'Bundle'
---@return table data of the event
function T.run(cmd, event)
  local n_events, n_notes = #T.events, #T.notes
  vim.cmd(cmd)
  local got
  T.wait(function()
    for i = n_notes + 1, #T.notes do
      if T.notes[i].level >= vim.log.levels.ERROR then
        error(('%s: error notification: %s'):format(cmd, T.notes[i].msg), 0)
      end
    end
    for i = n_events + 1, #T.events do
      if T.events[i].name == 'CtxLsp' .. event then
        got = T.events[i].data
        return true
      end
    end
  end, 'User CtxLsp' .. event .. ' after :' .. cmd)
  return got
end

--- Run `fn` and wait for a notification at `level` or above; returns it.
function T.expect_notify(fn, level, what)
  local n = #T.notes
  fn()
  local note
  T.wait(function()
    for i = n + 1, #T.notes do
      if T.notes[i].level >= level then
        note = T.notes[i]
        return true
      end
    end
  end, what or 'a notification')
  return note
end

---@param path string
---@param text string
function T.write(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

-- Neovim with -u NONE and -l has no filetype detection and sources no plugin/ files.
vim.cmd('filetype on')
vim.cmd('runtime! plugin/ctx_lsp.lua')

-- CTX_LSP_TEST_LOG=path: the server logs there (the pytest wrapper shows it on failure).
local log = vim.env.CTX_LSP_TEST_LOG
if log and log ~= '' then
  vim.lsp.config('ctx_lsp', { cmd = { 'ctx-lsp', 'serve', '--log-file', log } })
end

local started = vim.uv.hrtime()
local ws = vim.fn.tempname()
require('fixture').create(T, ws)
T.ws = assert(vim.uv.fs_realpath(ws))

require('test_ctx_lsp')(T)

local passed, failed, skipped = 0, 0, 0
for _, t in ipairs(T.tests) do
  if not filter or t.name:find(filter) then
    local t0 = vim.uv.hrtime()
    local ok, err = xpcall(t.fn, function(e)
      if type(e) == 'table' and e[SKIP] then
        return e
      end
      return debug.traceback(tostring(e), 2)
    end)
    local ms = (vim.uv.hrtime() - t0) / 1e6
    if ok then
      passed = passed + 1
      out(('PASS  %-62s %6.0f ms'):format(t.name, ms))
    elseif type(err) == 'table' and err[SKIP] then
      skipped = skipped + 1
      out(('SKIP  %s: %s'):format(t.name, err.reason))
    else
      failed = failed + 1
      out(('FAIL  %s\n      %s'):format(t.name, tostring(err):gsub('\n', '\n      ')))
      for _, note in ipairs(T.notes) do
        out(('      notify[%d]: %s'):format(note.level, note.msg))
      end
    end
  end
end

-- Stop the server cleanly (shutdown + exit) before leaving.
for _, client in ipairs(vim.lsp.get_clients()) do
  client:stop()
end
vim.wait(3000, function()
  return #vim.lsp.get_clients() == 0
end, 20)
vim.fn.delete(ws, 'rf')

out(('%d passed, %d failed, %d skipped in %.1f s'):format(passed, failed, skipped, (vim.uv.hrtime() - started) / 1e9))
if failed > 0 or passed == 0 then
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
