--[[
  load-3.lua: load or rebuild gate available from the book of record, net of held tokens.
  A held token's units are still available in the book (its order is not committed yet),
  but already deducted in the gate, so the gate gets book available minus held units.

  Input:
    KEYS[1] fs:{SKU}:stock    string, gate available in units
    KEYS[2] fs:{SKU}:held     zset, held tokens scored by created ms
    KEYS[3] fs:{SKU}:tokens   hash, token -> JSON record (see reserve-8.lua)

    ARGV[1] book available, units, integer 0..2^53
    ARGV[2] force: "1" = set even if KEYS[1] exists (rebuild; pause the SKU first so no
            reserve races it), "0" = set only if KEYS[1] is absent

  Output: array {code, gate available now (units), held units}
     1 LOADED         KEYS[1] was set to max(0, book available - held units)
     0 PRESENT        KEYS[1] existed and force was "0": nothing changed
    -8 BAD_ARGUMENT   ARGV malformed
    -9 CORRUPT        a held token's record is missing or unreadable; nothing changed
]]
local stockKey, heldKey, tokensKey = KEYS[1], KEYS[2], KEYS[3]
local book = tonumber(ARGV[1])
local force = ARGV[2]
if book == nil or book ~= math.floor(book) or book < 0 or book > 9007199254740992
    or (force ~= '0' and force ~= '1') then
  return {-8, 0, 0}
end

local current = redis.call('GET', stockKey)
local held = redis.call('ZRANGE', heldKey, 0, -1)
local heldUnits = 0
local i = 1
while i <= #held do
  local last = math.min(i + 999, #held)
  local raws = redis.call('HMGET', tokensKey, unpack(held, i, last))
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
redis.call('SET', stockKey, string.format('%d', net))
return {1, net, heldUnits}
