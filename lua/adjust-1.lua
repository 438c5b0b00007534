--[[
  adjust-1.lua: add units to gate available when the book restocks or adjusts, only if
  available exists (an absent one is loaded from the book later, which already counts them).

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): available

    ARGV[1] units to add, integer (negative lowers; the result is clamped at 0 and the
            reconciler heals any difference)

  Output: array {code, gate available now (units)}
     1 ADJUSTED       available changed
     0 NO_STOCK_KEY   available is absent: nothing done
    -8 BAD_ARGUMENT   ARGV[1] is not an integer
    -9 CORRUPT        available is not an integer
]]
local units = tonumber(ARGV[1])
if units == nil or units ~= math.floor(units) or math.abs(units) > 9007199254740992 then return {-8, 0} end
local raw = redis.call('HGET', KEYS[1], 'available')
if not raw then return {0, 0} end
local current = tonumber(raw)
if current == nil then return {-9, 0} end
local value = current + units
if value < 0 then value = 0 end
redis.call('HSET', KEYS[1], 'available', string.format('%d', value))
return {1, value}
