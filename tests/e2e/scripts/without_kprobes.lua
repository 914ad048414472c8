-- runs the shipped script --script NAME (found through MOONTRACE_PATH) as
-- on a kernel without kprobes: available() never offers a kprobe or
-- kretprobe, so the scripts fall back to fentry/fexit where there is BTF
local real_available = available
available = function(names)
  local kept = {}
  for _, name in ipairs(type(names) == "table" and names or { names }) do
    if not name:match("^kprobe:") and not name:match("^kretprobe:") then kept[#kept + 1] = name end
  end
  if #kept == 0 then return nil, "kprobes hidden" end
  return real_available(kept)
end
require(param("script", { type = "string", help = "the shipped script to run" }))
