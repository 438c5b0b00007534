--[[
  mark-sold-3.lua: settled (or held) -> sold (the order was paid). The units stay deducted
  and keep counting against the user's limit.

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): t:TOKEN, o:ORDER
    KEYS[2] fs:{SKU}:open     hash, open tokens (see reserve-2.lua)
    KEYS[3] fs:{SKU}:done     zset, released and sold tokens scored by state change ms

    ARGV[1] token
    ARGV[2] retention, seconds (integer >= 0): released/sold tokens older than this are
            purged (record and order mapping), at most 16 per call

  Output: integer
     1 SOLD           the token was settled (or held: the settle was lost) and is now sold
     0 UNCHANGED      already sold (idempotent)
    -6 UNKNOWN_TOKEN  no such token (never issued, or purged after its retention)
    -8 BAD_ARGUMENT   ARGV malformed
    -9 CORRUPT        the record or the held count is not what reserve-2.lua wrote
   -10 WRONG_STATE    the token was released: its units went back and cannot be sold
  Time comes from Redis TIME only.
]]
--- @include time.lua
--- @include finish.lua

local gateKey, openKey, doneKey = KEYS[1], KEYS[2], KEYS[3]
local token, retention = ARGV[1], tonumber(ARGV[2])
local rec, failed = finishingRecord(gateKey, token, retention)
if not rec then return failed end
if rec.s == 'sold' then return 0 end
if rec.s ~= 'held' and rec.s ~= 'settled' then return -10 end

local nowMs = timeMs()
if not finishToken(gateKey, openKey, doneKey, token, rec, 'sold', nowMs) then return -9 end
purgeFinished(gateKey, doneKey, nowMs, retention)
return 1
