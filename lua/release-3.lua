--[[
  release-3.lua: held or settled -> released (compensation): gives the token's units back to
  gate available and to the user's quota, exactly once.

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): available, u:USER,
                              t:TOKEN, o:ORDER
    KEYS[2] fs:{SKU}:open     hash, open tokens (see reserve-2.lua)
    KEYS[3] fs:{SKU}:done     zset, released and sold tokens scored by state change ms

    ARGV[1] token
    ARGV[2] retention, seconds (integer >= 0): released/sold tokens older than this are
            purged (record and order mapping), at most 16 per call

  Output: integer
     1 RELEASED        units given back to available
     2 RELEASED_NO_KEY released, but available is missing: nothing added; the next load from
                       the book counts the units (the token is no longer held)
     0 UNCHANGED       already released or sold (idempotent: units are given back once)
    -6 UNKNOWN_TOKEN   no such token (never issued, or purged after its retention)
    -8 BAD_ARGUMENT    ARGV malformed
    -9 CORRUPT         the record, available, the user's units or the held count are not
                       what this gate wrote
  Time comes from Redis TIME only.
]]
--- @include time.lua
--- @include finish.lua

local gateKey, openKey, doneKey = KEYS[1], KEYS[2], KEYS[3]
local token, retention = ARGV[1], tonumber(ARGV[2])
local rec, failed = finishingRecord(gateKey, token, retention)
if not rec then return failed end
if rec.s == 'released' or rec.s == 'sold' then return 0 end
if rec.s ~= 'held' and rec.s ~= 'settled' then return -9 end
local hasUser = type(rec.u) == 'string' and rec.u ~= ''
local f = redis.call('HMGET', gateKey, 'available', hasUser and ('u:' .. rec.u) or 'u:')
local stockRaw = f[1]
if stockRaw and not string.match(stockRaw, '^%-?%d+$') then return -9 end
if hasUser and not string.match(f[2] or '0', '^%-?%d+$') then return -9 end

local nowMs = timeMs()
if not finishToken(gateKey, openKey, doneKey, token, rec, 'released', nowMs) then return -9 end
if hasUser then
  if redis.call('HINCRBY', gateKey, 'u:' .. rec.u, -rec.q) <= 0 then redis.call('HDEL', gateKey, 'u:' .. rec.u) end
end
local code = 2
if stockRaw then
  redis.call('HINCRBY', gateKey, 'available', rec.q)
  code = 1
end
purgeFinished(gateKey, doneKey, nowMs, retention)
return code
