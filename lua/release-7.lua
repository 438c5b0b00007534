--[[
  release-7.lua: held or settled -> released (compensation): gives the token's units back to
  gate available and to the user's quota, exactly once.

  Input:
    KEYS[1] fs:{SKU}:stock    string, gate available in units
    KEYS[2] fs:{SKU}:tokens   hash, token -> JSON record (see reserve-8.lua)
    KEYS[3] fs:{SKU}:held     zset, held tokens scored by created ms
    KEYS[4] fs:{SKU}:settled  zset, settled tokens scored by created ms
    KEYS[5] fs:{SKU}:done     zset, released and sold tokens scored by state change ms
    KEYS[6] fs:{SKU}:users    hash, user -> units held, settled or sold
    KEYS[7] fs:{SKU}:orders   hash, order id -> token

    ARGV[1] token
    ARGV[2] retention, seconds (integer >= 0): released/sold tokens older than this are
            purged (record and order mapping), at most 16 per call

  Output: integer
     1 RELEASED        units given back to KEYS[1]
     2 RELEASED_NO_KEY released, but KEYS[1] is missing: nothing added; the next load from
                       the book counts the units (the token is no longer held)
     0 UNCHANGED       already released or sold (idempotent: units are given back once)
    -6 UNKNOWN_TOKEN   no such token (never issued, or purged after its retention)
    -8 BAD_ARGUMENT    ARGV malformed
    -9 CORRUPT         the record or the stock key is not what this gate wrote
  Time comes from Redis TIME only.
]]
local stockKey, tokensKey, heldKey, settledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local doneKey, usersKey, ordersKey = KEYS[5], KEYS[6], KEYS[7]
local token = ARGV[1]
local retention = tonumber(ARGV[2])
if token == nil or token == '' or retention == nil or retention < 0 then return -8 end

local raw = redis.call('HGET', tokensKey, token)
if not raw then return -6 end
local ok, rec = pcall(cjson.decode, raw)
if not ok or type(rec) ~= 'table' or type(rec.q) ~= 'number' then return -9 end
if rec.s == 'released' or rec.s == 'sold' then return 0 end
if rec.s ~= 'held' and rec.s ~= 'settled' then return -9 end
local stockRaw = redis.call('GET', stockKey)
if stockRaw and not string.match(stockRaw, '^%-?%d+$') then return -9 end
if rec.u and rec.u ~= '' and not string.match(redis.call('HGET', usersKey, rec.u) or '0', '^%-?%d+$') then
  return -9
end

local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
rec.s = 'released'
rec.c = nowMs
redis.call('HSET', tokensKey, token, cjson.encode(rec))
redis.call('ZREM', heldKey, token)
redis.call('ZREM', settledKey, token)
redis.call('ZADD', doneKey, nowMs, token)
if rec.u and rec.u ~= '' then
  if redis.call('HINCRBY', usersKey, rec.u, -rec.q) <= 0 then redis.call('HDEL', usersKey, rec.u) end
end
local code = 2
if stockRaw then
  redis.call('INCRBY', stockKey, rec.q)
  code = 1
end

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
return code
