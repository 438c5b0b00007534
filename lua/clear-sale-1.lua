--[[
  clear-sale-1.lua: remove the sale of one SKU; the SKU then sells normally (no window, no
  per-user limit). Units already counted per user stay counted.

  Input:
    KEYS[1] fs:{SKU}:sale     hash (see set-sale-1.lua)

  Output: integer
     1 REMOVED        a sale was defined and is now gone
     0 UNCHANGED      no sale was defined
]]
return redis.call('DEL', KEYS[1])
