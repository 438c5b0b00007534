--[[
  clear-sale-1.lua: remove the sale of one SKU; the SKU then sells normally (no window, no
  per-user limit). Units already counted per user stay counted.

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): sale_* fields

  Output: integer
     1 REMOVED        a sale was defined and is now gone
     0 UNCHANGED      no sale was defined
]]
local removed = redis.call('HDEL', KEYS[1], 'sale_open', 'sale_start_ms', 'sale_end_ms', 'sale_limit')
if removed > 0 then return 1 end
return 0
