--[[
  set-sale-1.lua: define or update the sale of one SKU (reserve-2.lua enforces it).

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): sale_open,
                              sale_start_ms, sale_end_ms, sale_limit

    ARGV[1] open: "1" open, "0" closed
    ARGV[2] start, ms since the epoch (Redis TIME); 0 = no start bound
    ARGV[3] end, ms since the epoch; 0 = no end bound
    ARGV[4] per-user limit, units; 0 = no limit

  Output: integer
     1 OK
    -8 BAD_ARGUMENT   an ARGV entry is malformed (nothing written)
]]
local open = ARGV[1]
local startMs, endMs, limit = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if (open ~= '0' and open ~= '1') or startMs == nil or endMs == nil or limit == nil
    or startMs < 0 or endMs < 0 or limit < 0 or (endMs > 0 and startMs > endMs) then
  return -8
end
redis.call('HSET', KEYS[1], 'sale_open', open, 'sale_start_ms', ARGV[2], 'sale_end_ms', ARGV[3],
  'sale_limit', ARGV[4])
return 1
