--[[
  mark-sold-5.lua: settled (or held) -> sold (the order was paid). The units stay deducted
  and keep counting against the user's limit.

  Input:
    KEYS[1] fs:{SKU}:tokens   hash, token -> JSON record (see reserve-8.lua)
    KEYS[2] fs:{SKU}:held     zset, held tokens scored by created ms
    KEYS[3] fs:{SKU}:settled  zset, settled tokens scored by created ms
    KEYS[4] fs:{SKU}:done     zset, released and sold tokens scored by state change ms
    KEYS[5] fs:{SKU}:orders   hash, order id -> token

    ARGV[1] token
    ARGV[2] retention, seconds (integer >= 0): released/sold tokens older than this are
            purged (record and order mapping), at most 16 per call

  Output: integer
     1 SOLD           the token was settled (or held: the settle was lost) and is now sold
     0 UNCHANGED      already sold (idempotent)
    -6 UNKNOWN_TOKEN  no such token (never issued, or purged after its retention)
    -8 BAD_ARGUMENT   ARGV malformed
    -9 CORRUPT        the record is not what reserve-8.lua wrote
   -10 WRONG_STATE    the token was released: its units went back and cannot be sold
  Time comes from Redis TIME only.
]]
local tokensKey, heldKey, settledKey, doneKey, ordersKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token = ARGV[1]
local retention = tonumber(ARGV[2])
if token == nil or token == '' or retention == nil or retention < 0 then return -8 end

local raw = redis.call('HGET', tokensKey, token)
if not raw then return -6 end
local ok, rec = pcall(cjson.decode, raw)
if not ok or type(rec) ~= 'table' then return -9 end
if rec.s == 'sold' then return 0 end
if rec.s ~= 'held' and rec.s ~= 'settled' then return -10 end

local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
rec.s = 'sold'
rec.c = nowMs
redis.call('HSET', tokensKey, token, cjson.encode(rec))
redis.call('ZREM', heldKey, token)
redis.call('ZREM', settledKey, token)
redis.call('ZADD', doneKey, nowMs, token)

-- Purge a few finished tokens past their retention (bounded work per call).
local old = redis.call('ZRANGEBYSCORE', doneKey, '-inf', nowMs - retention * 1000, 'LIMIT', 0, 16)
for _, t in ipairs(old) do
  local r = redis.call('HGET', tokensKey, t)
  if r then
    local okOld, o = pcall(cjson.decode, r)
    if okOld and type(o) == 'table' and o.o and redis.call('HGET', ordersKey, o.o) == t then
      redis.call('HDEL', ordersKey, o.o)
    end
    redis.call('HDEL', tokensKey, t)
  end
  redis.call('ZREM', doneKey, t)
end
return 1
