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

function ctemplate.c(template, values)
  values = values or {}
  for name in template:gmatch("%${([%a_][%w_]*)}") do
    if values[name] == nil then
      error("C template: no value for ${" .. name .. "}", 2)
    end
  end
  local filled = template:gsub("%${([%a_][%w_]*)}", function(name)
    return tostring(values[name])
  end)
  local joined = filled:gsub("%s*\n%s*", " "):gsub("^%s+", ""):gsub("%s+$", "")
  return joined
end

return ctemplate
