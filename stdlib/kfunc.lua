-- kfunc: a kernel function's entry and return on whatever this kernel has
-- (require "kfunc"): kprobe and kretprobe, else fentry and fexit, else
-- stand-ins the caller names (tracepoints of the same event).
local kfunc = {}

local exit_of = { kprobe = "kretprobe", fentry = "fexit" }

-- kfunc.pair(FUNCTION, [STAND_INS]) -> {entry =, exit =, kind =}, or nil and
-- why none is there. STAND_INS is a list of {ENTRY, EXIT} probe names tried
-- after kprobe and fentry, in order. kind is the entry's probe kind
-- ("kprobe", "fentry", "tp_btf", "tracepoint"...). `moontrace -v` tells
-- which was chosen and why the others were passed over.
function kfunc.pair(fn, stand_ins)
  local entries = { "kprobe:" .. fn, "fentry:" .. fn }
  local exits = { ["kprobe:" .. fn] = "kretprobe:" .. fn, ["fentry:" .. fn] = "fexit:" .. fn }
  for _, s in ipairs(stand_ins or {}) do
    entries[#entries + 1] = s[1]
    exits[s[1]] = s[2]
  end
  local entry, why = available(entries)
  if not entry then
    return nil, why
  end
  local exit, exit_why = available(exits[entry])
  if not exit then
    return nil, exit_why
  end
  return { entry = entry, exit = exit, kind = entry:match("^[%w_]+") }
end

-- Whether a probe kind gives the function's typed arguments as args.NAME.
function kfunc.typed(kind)
  return exit_of[kind] ~= nil or kind == "tp_btf"
end

return kfunc
