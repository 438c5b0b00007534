--[[
  settle-3.lua: held -> settled (the book committed the token's order).

  Input:
    KEYS[1] fs:{SKU}:tokens   hash, token -> JSON record (see reserve-8.lua)
    KEYS[2] fs:{SKU}:held     zset, held tokens scored by created ms
    KEYS[3] fs:{SKU}:settled  zset, settled tokens scored by created ms

    ARGV[1] token

  Output: integer
     1 SETTLED        the token was held and is now settled
     0 UNCHANGED      already settled or sold (idempotent)
    -6 UNKNOWN_TOKEN  no such token (never issued, or purged after its retention)
    -8 BAD_ARGUMENT   ARGV[1] is empty
    -9 CORRUPT        the record is not what reserve-8.lua wrote
   -10 WRONG_STATE    the token was released (its units went back): it cannot be settled
  Time comes from Redis TIME only.
]]
local tokensKey, heldKey, settledKey = KEYS[1], KEYS[2], KEYS[3]
local token = ARGV[1]
if token == nil or token == '' then return -8 end

local raw = redis.call('HGET', tokensKey, token)
if not raw then return -6 end
local ok, rec = pcall(cjson.decode, raw)
if not ok or type(rec) ~= 'table' or type(rec.t) ~= 'number' then return -9 end
if rec.s == 'settled' or rec.s == 'sold' then return 0 end
if rec.s ~= 'held' then return -10 end

local time = redis.call('TIME')
rec.s = 'settled'
rec.c = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', tokensKey, token, cjson.encode(rec))
redis.call('ZREM', heldKey, token)
redis.call('ZADD', settledKey, rec.t, token)
return 1
