--[[
  settle-2.lua: held -> settled (the book committed the token's order).

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): t:TOKEN
    KEYS[2] fs:{SKU}:open     hash, open tokens (see reserve-2.lua)

    ARGV[1] token

  Output: integer
     1 SETTLED        the token was held and is now settled
     0 UNCHANGED      already settled or sold (idempotent)
    -6 UNKNOWN_TOKEN  no such token (never issued, or purged after its retention)
    -8 BAD_ARGUMENT   ARGV[1] is empty
    -9 CORRUPT        the record or the held count is not what reserve-2.lua wrote
   -10 WRONG_STATE    the token was released (its units went back): it cannot be settled
  Time comes from Redis TIME only.
]]
--- @include time.lua
local gateKey, openKey = KEYS[1], KEYS[2]
local token = ARGV[1]
if token == nil or token == '' then return -8 end

local raw = redis.call('HGET', gateKey, 't:' .. token)
if not raw then return -6 end
local ok, rec = pcall(cjson.decode, raw)
if not ok or type(rec) ~= 'table' or type(rec.t) ~= 'number' then return -9 end
if rec.s == 'settled' or rec.s == 'sold' then return 0 end
if rec.s ~= 'held' then return -10 end
local heldRaw = redis.call('HGET', openKey, '#held')
if heldRaw and not string.match(heldRaw, '^%d+$') then return -9 end

local nowMs = timeMs()
rec.s = 'settled'
rec.c = nowMs
redis.call('HSET', gateKey, 't:' .. token, cjson.encode(rec))
redis.call('HSET', openKey, token, 'settled')
if heldRaw and tonumber(heldRaw) > 0 then redis.call('HINCRBY', openKey, '#held', -1) end
return 1
