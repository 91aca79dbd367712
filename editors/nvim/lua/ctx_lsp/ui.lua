-- Scratch buffers and windows for ctx_lsp's views.

local api = vim.api

local M = {}

---@type table<string, integer> buffer name → bufnr
local buffers = {}

--- Find or create the scratch buffer `name` and fill it with `lines`.
---@param name string e.g. `ctx-lsp://bundle`
---@param lines string[]
---@param filetype string?
---@return integer bufnr
function M.scratch(name, lines, filetype)
  local buf = buffers[name]
  if not (buf and api.nvim_buf_is_valid(buf)) then
    buf = api.nvim_create_buf(false, true)
    -- buftype=nofile before the filetype is set, so vim.lsp.enable() never attaches to it.
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    pcall(api.nvim_buf_set_name, buf, name)
    buffers[name] = buf
    vim.keymap.set('n', 'q', function()
      M.close(buf)
    end, { buffer = buf, nowait = true, desc = 'ctx-lsp: close' })
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if filetype and vim.bo[buf].filetype ~= filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

--- Close the windows showing `buf` (in the current tab), keeping at least one window.
---@param buf integer
function M.close(buf)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf and #api.nvim_tabpage_list_wins(0) > 1 then
      pcall(api.nvim_win_close, win, true)
    end
  end
end

---@param lines string[]
---@param title string
---@return vim.api.keyset.win_config
local function float_config(lines, title)
  local width = #title + 4
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line) + 2)
  end
  width = math.min(width, math.max(vim.o.columns - 4, 20))
  local height = math.min(math.max(#lines, 1), math.max(vim.o.lines - 6, 3))
  return {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(math.floor((vim.o.lines - height) / 2) - 1, 0),
    col = math.max(math.floor((vim.o.columns - width) / 2), 0),
    style = 'minimal',
    border = 'rounded',
    title = ' ' .. title .. ' ',
    title_pos = 'center',
  }
end

--- Show `buf`: reuse a window of the current tab that shows it, else open one as `view` says.
---@param buf integer
---@param view ctx_lsp.View
---@param title string? float title
---@return integer? win
function M.show(buf, view, title)
  if view == 'none' then
    return nil
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf then
      api.nvim_set_current_win(win)
      if view == 'float' then
        api.nvim_win_set_config(win, float_config(api.nvim_buf_get_lines(buf, 0, -1, false), title or ''))
      end
      return win
    end
  end
  if view == 'float' then
    local win = api.nvim_open_win(buf, true, float_config(api.nvim_buf_get_lines(buf, 0, -1, false), title or ''))
    vim.wo[win].wrap = false
    vim.keymap.set('n', '<Esc>', function()
      M.close(buf)
    end, { buffer = buf, nowait = true, desc = 'ctx-lsp: close' })
    return win
  end
  local cmd = ({ vsplit = 'vertical botright sbuffer ', tab = 'tab sbuffer ' })[view] or 'botright sbuffer '
  vim.cmd(cmd .. buf)
  return api.nvim_get_current_win()
end

return M
