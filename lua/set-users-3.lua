--[[
  set-users-3.lua: set every user's units of one SKU (the per-user limit's count) from the
  book of record, plus the units of the user's tokens still held (pre-deducted in the gate,
  not yet in the book). Replaces the whole hash, so a count the gate got wrong (a rebuild
  after book-only mode, a release it could not see) is corrected too.

  Input:
    KEYS[1] fs:{SKU}:users    hash, user -> units held, settled or sold (see reserve-8.lua)
    KEYS[2] fs:{SKU}:held     zset, held tokens scored by created ms
    KEYS[3] fs:{SKU}:tokens   hash, token -> JSON record (see reserve-8.lua)

    ARGV    pairs: user id (1..128 chars), the book's units of that user (integer >= 1)

  Output: array {code, users set}
     1 SET            KEYS[1] now holds the book's units plus held tokens' units
    -8 BAD_ARGUMENT   ARGV malformed; nothing changed
    -9 CORRUPT        a held token's record is missing or unreadable; nothing changed
]]
local usersKey, heldKey, tokensKey = KEYS[1], KEYS[2], KEYS[3]
if #ARGV % 2 ~= 0 then return {-8, 0} end

local units = {}
for i = 1, #ARGV, 2 do
  local user, n = ARGV[i], tonumber(ARGV[i + 1])
  if user == '' or #user > 128 or n == nil or n ~= math.floor(n) or n < 1 then return {-8, 0} end
  units[user] = (units[user] or 0) + n
end

local held = redis.call('ZRANGE', heldKey, 0, -1)
local i = 1
while i <= #held do
  local last = math.min(i + 999, #held)
  local raws = redis.call('HMGET', tokensKey, unpack(held, i, last))
  for _, raw in ipairs(raws) do
    if not raw then return {-9, 0} end
    local ok, rec = pcall(cjson.decode, raw)
    if not ok or type(rec) ~= 'table' or type(rec.q) ~= 'number' or type(rec.u) ~= 'string' then
      return {-9, 0}
    end
    if rec.u ~= '' then units[rec.u] = (units[rec.u] or 0) + rec.q end
  end
  i = last + 1
end

-- Checks done: replace the hash, 500 users per HSET.
redis.call('DEL', usersKey)
local batch, count = {}, 0
for user, n in pairs(units) do
  batch[#batch + 1] = user
  batch[#batch + 1] = string.format('%d', n)
  count = count + 1
  if #batch >= 1000 then
    redis.call('HSET', usersKey, unpack(batch))
    batch = {}
  end
end
if #batch > 0 then redis.call('HSET', usersKey, unpack(batch)) end
return {1, count}
