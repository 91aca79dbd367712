-- The temporary workspace the suite runs in: a small Python project with docs.

local M = {}

M.files = {
  ['pyproject.toml'] = '[project]\nname = "demo"\nversion = "0.1.0"\n',
  ['README.md'] = '# Demo\n\nThe demo project computes totals of normalized items.\n',
  ['docs/guide.md'] = '# Guide\n\n## Totals\n\nCall `compute_total` with a list of numbers.\n',
  ['demo/__init__.py'] = '"""The demo package."""\n',
  ['demo/app.py'] = table.concat({
    '"""The demo application."""',
    '',
    'from demo.util import normalize',
    '',
    '',
    'def compute_total(items):',
    '    """Sum the normalized items."""',
    '    return sum(normalize(i) for i in items)',
    '',
    '',
    'def main():',
    '    return compute_total([1, 2, 3])',
    '',
  }, '\n'),
  ['demo/util.py'] = table.concat({
    'def normalize(value):',
    '    """Clamp a value to be non-negative."""',
    '    return max(value, 0)',
    '',
    '',
    'class Runner:',
    '    def run(self):',
    '        return "runner"',
    '',
  }, '\n'),
  ['demo/jobs.py'] = table.concat({
    'class Job:',
    '    def run(self):',
    '        return "job"',
    '',
  }, '\n'),
}

--- Expected `files_by_language` of the indexed workspace.
M.languages = { markdown = 2, python = 4, text = 1 }

---@param T T
---@param root string
function M.create(T, root)
  for rel, text in pairs(M.files) do
    T.write(root .. '/' .. rel, text)
  end
end

return M
