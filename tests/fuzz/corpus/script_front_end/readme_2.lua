local entry, why = available({ "kprobe:vfs_read", "fentry:vfs_read" })
if entry then
  local exit = entry:gsub("^kprobe:", "kretprobe:"):gsub("^fentry:", "fexit:")
  latency{ start = entry, stop = exit, key = "tid", into = hist{ name = "vfs_read" } }
else
  notice("vfs_read cannot be traced on this kernel (%s)", why)
end
