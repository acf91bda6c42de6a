-- Drives kestrel-lsp from a real, headless Neovim (0.7+), for tests/test_neovim.py.
--
-- Run as:  nvim --headless --clean -u NONE -c "luafile tests/nvim/drive_kestrel.lua"
-- with KESTREL_NVIM_TEST pointing at a JSON file written by the test:
--   { python, server_args, work_dir, stderr_log, results, add_file, fix_file,
--     fix_mode = "command" | "ui", strip_resolve_support, init_options, cmd_env }
-- Results (and progress, after every step) are written as JSON to `results`.
-- `checkpoint(name)` writes <work_dir>/<name>.ready and waits for <name>.go, so the
-- test can read or reconfigure the mock model between two steps.

local cfg = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.KESTREL_NVIM_TEST), "\n"))
local function opt(value) -- JSON null arrives as vim.NIL
  if value == vim.NIL then return nil end
  return value
end
local results = { steps = {}, notifications = {}, nvim_version = tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch) }

local function save()
  vim.fn.writefile({ vim.fn.json_encode(results) }, cfg.results)
end

local started = vim.loop.hrtime()
local function step(name) -- with the milliseconds since the start, to see where time goes
  table.insert(results.steps, string.format("%s@%dms", name, (vim.loop.hrtime() - started) / 1e6))
  save()
end

local function exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

local function checkpoint(name)
  step("checkpoint:" .. name)
  vim.fn.writefile({ "" }, cfg.work_dir .. "/" .. name .. ".ready")
  local ok = vim.wait(20000, function() return exists(cfg.work_dir .. "/" .. name .. ".go") end, 20)
  assert(ok, "the test did not release checkpoint " .. name)
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local function open(path)
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  vim.bo[buf].buflisted = true
  vim.bo[buf].filetype = "python" -- -u NONE: no filetype detection; languageId comes from this
  return buf
end

local function record(kind)
  return function(err, result, ctx)
    table.insert(results.notifications, { method = ctx and ctx.method or kind, params = result })
    save()
  end
end

local function main()
  vim.o.hidden = true
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  results.client_resolve_support = capabilities.textDocument.codeAction.resolveSupport or vim.NIL
  if cfg.strip_resolve_support then
    -- A client that cannot resolve code actions lazily (no codeAction/resolve support).
    capabilities.textDocument.codeAction.resolveSupport = nil
  end

  -- Log the server's stderr to a file of its own (Neovim would bury it in lsp.log).
  local cmd = { "sh", "-c", 'log="$1"; shift; exec "$@" 2>>"$log"', "sh", cfg.stderr_log, cfg.python }
  for _, arg in ipairs(cfg.server_args) do table.insert(cmd, arg) end

  local client_id = vim.lsp.start_client({
    name = "kestrel",
    cmd = cmd,
    cmd_env = opt(cfg.cmd_env),
    root_dir = cfg.work_dir,
    init_options = opt(cfg.init_options),
    capabilities = capabilities,
    on_exit = function(code, signal)
      results.server_exit = { code = code, signal = signal }
    end,
    handlers = {
      ["kestrel/status"] = record("kestrel/status"),
      ["window/showMessage"] = record("window/showMessage"),
      ["window/logMessage"] = record("window/logMessage"),
    },
  })
  assert(client_id, "vim.lsp.start_client failed")
  local client = vim.lsp.get_client_by_id(client_id)
  assert(vim.wait(20000, function() return client.initialized end, 20), "the server did not initialize")
  results.inline_completion_provider = client.server_capabilities.inlineCompletionProvider or vim.NIL
  results.code_action_provider = client.server_capabilities.codeActionProvider or vim.NIL
  step("initialized")

  -- a. inline completion: Neovim 0.7 does not know the method and sends it as is.
  local add_buf = open(cfg.add_file)
  vim.lsp.buf_attach_client(add_buf, client_id)
  local inline, inline_err = client.request_sync("textDocument/inlineCompletion", {
    textDocument = { uri = vim.uri_from_bufnr(add_buf) },
    position = { line = 1, character = 4 },
    context = { triggerKind = 2 },
  }, 20000, add_buf)
  results.inline = inline or { timeout = inline_err or "request failed" }
  step("inline")

  -- b. code actions for a diagnostic: listed without any model request.
  local fix_buf = open(cfg.fix_file)
  vim.lsp.buf_attach_client(fix_buf, client_id)
  local diagnostic = {
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 5 } },
    message = "undefined name 'pritn'",
    source = "pyflakes",
    severity = 1,
  }
  checkpoint("before_code_action")
  local actions, actions_err = client.request_sync("textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(fix_buf) },
    range = diagnostic.range,
    context = { diagnostics = { diagnostic } },
  }, 20000, fix_buf)
  results.code_actions = actions or { timeout = actions_err or "request failed" }
  step("code_actions")
  checkpoint("after_code_action") -- the test configures the model's fix here

  -- c. the fix, applied to the buffer by Neovim itself.
  local before = buffer_text(fix_buf)
  if cfg.fix_mode == "command" then
    -- What a client without resolve support runs: the action's command. The server then
    -- sends workspace/applyEdit, which Neovim's default handler applies.
    local fix
    for _, action in ipairs((actions and actions.result) or {}) do
      if action.title:find("^Fix with Kestrel") then fix = action end
    end
    assert(fix and fix.command, "no Fix action with a command")
    local executed, exec_err = client.request_sync("workspace/executeCommand", {
      command = fix.command.command,
      arguments = fix.command.arguments,
    }, 20000, fix_buf)
    results.execute = executed or { timeout = exec_err or "request failed" }
  else
    -- What a user of Neovim's own code action menu gets: pick "Fix with Kestrel" in
    -- vim.ui.select; Neovim resolves the action (codeAction/resolve) and applies its edit.
    results.menu = {}
    vim.ui.select = function(items, _, on_choice)
      local chosen
      for _, item in ipairs(items) do
        table.insert(results.menu, item[2].title)
        if not chosen and item[2].title:find("^Fix with Kestrel") then chosen = item end
      end
      on_choice(chosen)
    end
    vim.api.nvim_set_current_buf(fix_buf)
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.lsp.buf.code_action({ diagnostics = { diagnostic } })
  end
  vim.wait(20000, function() return buffer_text(fix_buf) ~= before end, 20)
  results.fixed_text = buffer_text(fix_buf)
  results.add_text = buffer_text(add_buf)
  step("fixed")

  -- Orderly shutdown (shutdown request + exit notification).
  client.stop()
  results.stopped = vim.wait(10000, function() return results.server_exit ~= nil end, 20)
  step("stopped")
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  results.error = tostring(err)
end
results.done = true
save()
vim.cmd("qa!")
