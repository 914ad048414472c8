-- quantiles: percentiles from the log-linear slots mt_log_linear_slot()
-- fills in the kernel (require "quantiles").
--
--   local q = require "quantiles"
--   q.value({[slot] = count, ...}, 0.99) -> the 99th percentile
--
-- Values below 8 have a slot each; above, each power of two is split into
-- 8 slots, so a percentile is interpolated within 1/8 of its value.
local quantiles = {}

-- The values slot `s` holds: [low, high).
function quantiles.bounds(s)
  if s < 8 then
    return s, s + 1
  end
  local e = s // 8 + 2
  local width = 1 << (e - 3)
  local low = (8 + s % 8) * width
  return low, low + width
end

-- The q-quantile (0 < q <= 1) of counts by slot, interpolated linearly
-- within its slot; nil when there are no counts.
function quantiles.value(counts, q)
  local slots, total = {}, 0
  for slot, n in pairs(counts) do
    slots[#slots + 1] = slot
    total = total + n
  end
  if total == 0 then
    return nil
  end
  table.sort(slots)
  local rank, seen = q * total, 0
  for _, slot in ipairs(slots) do
    local n = counts[slot]
    if seen + n >= rank then
      local low, high = quantiles.bounds(slot)
      return low + (high - low) * (rank - seen) / n
    end
    seen = seen + n
  end
  local _, high = quantiles.bounds(slots[#slots])
  return high
end

return quantiles
