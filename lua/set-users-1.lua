--[[
  set-users-1.lua: replace every user's units of one SKU (the per-user limit's count) with
  the figures given, computed by the engine from the book of record and the gate's held
  tokens while no reserve can pass the gate (the SKU paused or its stock key absent).

  Input:
    KEYS[1] fs:{SKU}:users    hash, user -> units held, settled or sold (see reserve-8.lua)

    ARGV    pairs: user id (1..128 characters, so at most 512 bytes of UTF-8), units (>= 1)

  Output: array {code, users set}
     1 SET            KEYS[1] now holds exactly the figures given
    -8 BAD_ARGUMENT   ARGV malformed; nothing changed
]]
local usersKey = KEYS[1]
if #ARGV % 2 ~= 0 then return {-8, 0} end
for i = 1, #ARGV, 2 do
  local user, n = ARGV[i], tonumber(ARGV[i + 1])
  if user == '' or #user > 512 or n == nil or n ~= math.floor(n) or n < 1 then return {-8, 0} end
end

-- Checks done: replace the hash, 500 users per HSET (unpack has a stack limit).
redis.call('DEL', usersKey)
local i = 1
while i <= #ARGV do
  local last = math.min(i + 999, #ARGV)
  redis.call('HSET', usersKey, unpack(ARGV, i, last))
  i = last + 1
end
return {1, #ARGV / 2}
