--[[
  load-2.lua: load or rebuild gate available from the book of record, net of held tokens.
  A held token's units are still available in the book (its order is not committed yet),
  but already deducted in the gate, so the gate gets book available minus held units.

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): available, t:TOKEN
    KEYS[2] fs:{SKU}:open     hash, open tokens (see reserve-2.lua); #held is created here,
                              so both keys a reserve needs exist from the first load on

    ARGV[1] book available, units, integer 0..2^53
    ARGV[2] force: "1" = set even if available exists (rebuild; pause the SKU first so no
            reserve races it), "0" = set only if available is absent

  Output: array {code, gate available now (units), held units}
     1 LOADED         available was set to max(0, book available - held units)
     0 PRESENT        available existed and force was "0": nothing changed
    -8 BAD_ARGUMENT   ARGV malformed
    -9 CORRUPT        a held token's record is missing or unreadable; nothing changed
]]
local gateKey, openKey = KEYS[1], KEYS[2]
local book = tonumber(ARGV[1])
local force = ARGV[2]
if book == nil or book ~= math.floor(book) or book < 0 or book > 9007199254740992
    or (force ~= '0' and force ~= '1') then
  return {-8, 0, 0}
end

local current = redis.call('HGET', gateKey, 'available')
local open = redis.call('HGETALL', openKey)
local held = {}
for i = 1, #open, 2 do
  if open[i + 1] == 'held' then held[#held + 1] = 't:' .. open[i] end
end
local heldUnits = 0
local i = 1
while i <= #held do
  local last = math.min(i + 999, #held)
  local raws = redis.call('HMGET', gateKey, unpack(held, i, last))
  for _, raw in ipairs(raws) do
    if not raw then return {-9, 0, 0} end
    local ok, rec = pcall(cjson.decode, raw)
    if not ok or type(rec) ~= 'table' or type(rec.q) ~= 'number' then return {-9, 0, 0} end
    heldUnits = heldUnits + rec.q
  end
  i = last + 1
end

if current and force == '0' then
  return {0, tonumber(current) or 0, heldUnits}
end
local net = book - heldUnits
if net < 0 then net = 0 end
redis.call('HSET', gateKey, 'available', string.format('%d', net))
redis.call('HSETNX', openKey, '#held', #held)
return {1, net, heldUnits}
