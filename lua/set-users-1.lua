--[[
  set-users-1.lua: replace every user's units of one SKU (the per-user limit's count) with
  the figures given, computed by the engine from the book of record and the gate's held
  tokens while no reserve can pass the gate (the SKU paused or its available absent).

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): u:USER -> units held,
                              settled or sold

    ARGV    pairs: user id (1..128 characters, so at most 512 bytes of UTF-8), units (>= 1)

  Output: array {code, users set}
     1 SET            the u: fields now hold exactly the figures given
    -8 BAD_ARGUMENT   ARGV malformed; nothing changed
]]
local gateKey = KEYS[1]
if #ARGV % 2 ~= 0 then return {-8, 0} end
for i = 1, #ARGV, 2 do
  local user, n = ARGV[i], tonumber(ARGV[i + 1])
  if user == '' or #user > 512 or n == nil or n ~= math.floor(n) or n < 1 then return {-8, 0} end
end

-- Checks done: drop every u: field (scanned, the hash also holds tokens and orders), then
-- set the figures, 500 users per HSET (unpack has a stack limit).
local cursor = '0'
repeat
  local page = redis.call('HSCAN', gateKey, cursor, 'MATCH', 'u:*', 'COUNT', 1000)
  cursor = page[1]
  local fields = {}
  for i = 1, #page[2], 2 do fields[#fields + 1] = page[2][i] end
  if #fields > 0 then redis.call('HDEL', gateKey, unpack(fields)) end
until cursor == '0'
local fieldValues = {}
for i = 1, #ARGV, 2 do
  fieldValues[#fieldValues + 1] = 'u:' .. ARGV[i]
  fieldValues[#fieldValues + 1] = ARGV[i + 1]
end
local i = 1
while i <= #fieldValues do
  local last = math.min(i + 999, #fieldValues)
  redis.call('HSET', gateKey, unpack(fieldValues, i, last))
  i = last + 1
end
return {1, #ARGV / 2}
