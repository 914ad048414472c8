-- ctemplate: C written as C in scripts (require "ctemplate")
--
--   local c = require("ctemplate").c
--   action = c([[
--     __auto_type ring = ${ring};
--     if (!ring) return 0;
--   ]], { ring = ring_of("args.ctx") })
--
-- Each ${name} is replaced by values[name] (a string or a number); a name
-- without a value is an error at the line that filled the template. The
-- lines are joined into one, so the C reads as a block in the script and
-- the generated program stays as it would be written by concatenation.
local ctemplate = {}

-- Bytes Lua's %s matches: space, \t, \n, \v, \f, \r.
local space = { [32] = true, [9] = true, [10] = true, [11] = true, [12] = true, [13] = true }

-- S with each run of whitespace that holds a newline made one space, and
-- none at either end. Found from the newlines: patterns tried at every
-- byte (gsub("%s*\n%s*", " ") and trimming) took 3 of the 4 ms uring.lua's
-- 313 templates took at each start.
local function joined(s)
  local parts, from = {}, 1
  local at = s:find("\n", 1, true)
  while at do
    local first, last = at, at
    while first > from and space[s:byte(first - 1)] do first = first - 1 end
    while space[s:byte(last + 1)] do last = last + 1 end
    parts[#parts + 1] = s:sub(from, first - 1)
    from = last + 1
    at = s:find("\n", from, true)
  end
  parts[#parts + 1] = s:sub(from)
  s = table.concat(parts, " ")
  local head, tail = 1, #s
  while space[s:byte(head)] do head = head + 1 end
  while tail >= head and space[s:byte(tail)] do tail = tail - 1 end
  return s:sub(head, tail)
end

function ctemplate.c(template, values)
  values = values or {}
  local missing
  local filled = template:gsub("%${([%a_][%w_]*)}", function(name)
    local value = values[name]
    if value == nil then
      missing = missing or name
      return ""
    end
    return tostring(value)
  end)
  if missing then
    error("C template: no value for ${" .. missing .. "}", 2)
  end
  return joined(filled)
end

return ctemplate
