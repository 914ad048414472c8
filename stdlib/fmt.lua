-- fmt: small formatting helpers for scripts (require "fmt")
local fmt = {}

-- 1536 -> "1.5K"; powers of 1024, as the bcc tools print sizes.
function fmt.bytes(n)
  local units = { "", "K", "M", "G", "T" }
  local i = 1
  while n >= 1024 and i < #units do
    n = n / 1024
    i = i + 1
  end
  if i == 1 then
    return string.format("%d", n)
  end
  return string.format("%.1f%s", n, units[i])
end

-- Nanoseconds as the largest unit that keeps the number >= 1.
function fmt.duration(ns)
  if ns >= 1e9 then return string.format("%.2fs", ns / 1e9) end
  if ns >= 1e6 then return string.format("%.2fms", ns / 1e6) end
  if ns >= 1e3 then return string.format("%.2fus", ns / 1e3) end
  return string.format("%dns", ns)
end

return fmt
