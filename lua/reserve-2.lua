--[[
  reserve-2.lua: pre-deduct units of one SKU for one order (the gate's reserve).

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see core/gate/GateKeys.h):
                                available      units
                                paused         present = reserves refused (Redis TIME ms)
                                sale_open      0/1; absent = no sale
                                sale_start_ms, sale_end_ms (0 = unbounded), sale_limit (units, 0 = none)
                                n:reserved     tokens issued (also makes tokens unique within one run)
                                n:out_of_stock, n:limit_exceeded, n:sale_closed, n:paused
                                               refusals (the console's reject rate)
                                u:USER         units held, settled or sold by USER (per-user limit)
                                o:ORDER        the order's token
                                t:TOKEN        JSON record {o=order, u=user, q=units, t=created ms,
                                               s=state, c=state change ms}
    KEYS[2] fs:{SKU}:open     hash, the open (held or settled) tokens: TOKEN -> state, and
                              #held -> how many are held

    Both keys exist from the first load on, so during a Redis Cluster slot migration this
    script runs where both are (source, or target after ASK) and never meets TRYAGAIN
    unless a migration moves one key without the other.

    ARGV[1] order id (1..128 chars)
    ARGV[2] user id ("" = anonymous; required when the sale has a per-user limit)
    ARGV[3] qty, units, integer 1..2147483647
    ARGV[4] SKU id (goes into the token so tokens are unique across SKUs too)

  Output: array {code, token, units, state}
     1 RESERVED        new token, units deducted; state "held"
     2 EXISTING        the order already holds a token on this SKU: it is returned with its
                       units and current state (held/settled/sold); nothing changed. A
                       released token is a dead attempt (given back after a failed or fenced
                       book step, or its order closed): the order gets a fresh token (1)
    -1 OUT_OF_STOCK    available < qty
    -2 LIMIT_EXCEEDED  the user's units would pass the sale's per-user limit
    -3 SALE_CLOSED     a sale is defined and not open at Redis TIME
    -4 PAUSED          the SKU is paused
    -5 NO_STOCK_KEY    field available is missing (never loaded, flushed, evicted)
    -7 USER_REQUIRED   the sale has a per-user limit and ARGV[2] is empty
    -8 BAD_ARGUMENT    an ARGV entry is malformed
    -9 CORRUPT         a stored value is not what this script wrote
  A negative code changes nothing but its n: counter (-1..-4 only). The counters are best
  effort: a failed HINCRBY (OOM, a corrupt counter) never fails a reserve or turns a refusal
  into an error. Time comes from Redis TIME only.
]]
--- @include time.lua
local gateKey, openKey = KEYS[1], KEYS[2]
local order, user, sku = ARGV[1], ARGV[2], ARGV[4]
local qty = tonumber(ARGV[3])

if order == nil or order == '' or #order > 128 or sku == nil or sku == '' or user == nil
    or qty == nil or qty ~= math.floor(qty) or qty < 1 or qty > 2147483647 then
  return {-8, '', 0, ''}
end

local f = redis.call('HMGET', gateKey, 'o:' .. order, 'paused', 'sale_open', 'sale_start_ms',
  'sale_end_ms', 'sale_limit', 'available', 'u:' .. user)
local existing, paused, saleOpen, stockRaw, usedRaw = f[1], f[2], f[3], f[7], f[8]

-- Idempotent per order: a token this order holds (held, settled or sold) is returned.
if existing then
  local raw = redis.call('HGET', gateKey, 't:' .. existing)
  if raw then
    local ok, rec = pcall(cjson.decode, raw)
    if not ok or type(rec) ~= 'table' then return {-9, existing, 0, ''} end
    -- released: its units went back, so a retry of the order is a new attempt (the book
    -- decides: a closed order answers duplicate, and the new token is given back)
    if rec.s ~= 'released' then return {2, existing, rec.q, rec.s} end
  end
  -- the record was purged after its retention: the order may reserve again
end

-- A business refusal: counted (best effort, see above), nothing else changes.
local function refuse(code, counter)
  redis.pcall('HINCRBY', gateKey, 'n:' .. counter, 1)
  return {code, '', 0, ''}
end

if paused then return refuse(-4, 'paused') end

local nowMs, time = timeMs()

if saleOpen then
  local startMs, endMs, limit = tonumber(f[4]) or 0, tonumber(f[5]) or 0, tonumber(f[6]) or 0
  if saleOpen ~= '1' or (startMs > 0 and nowMs < startMs) or (endMs > 0 and nowMs >= endMs) then
    return refuse(-3, 'sale_closed')
  end
  if limit > 0 then
    if user == '' then return {-7, '', 0, ''} end
    local used = tonumber(usedRaw or '0')
    if used == nil then return {-9, '', 0, ''} end
    if used + qty > limit then return refuse(-2, 'limit_exceeded') end
  end
end

if not stockRaw then return {-5, '', 0, ''} end
if not string.match(stockRaw, '^%-?%d+$') then return {-9, '', 0, ''} end
if tonumber(stockRaw) < qty then return refuse(-1, 'out_of_stock') end
if user ~= '' and not string.match(usedRaw or '0', '^%-?%d+$') then return {-9, '', 0, ''} end
local heldRaw = redis.call('HGET', openKey, '#held')
if heldRaw and not string.match(heldRaw, '^%d+$') then return {-9, '', 0, ''} end

-- All checks passed; the writes below cannot fail on our data (a Lua error would not roll
-- back). The counter makes the token unique within one microsecond; when it cannot be
-- counted, the order does (one order reserves once per SKU at a time).
local counted, seq = pcall(redis.call, 'HINCRBY', gateKey, 'n:reserved', 1)
if not counted then seq = 'o' .. order end
redis.call('HINCRBY', gateKey, 'available', -qty)
-- seconds + microseconds of TIME keep tokens unique across restarts without persistence;
-- the counter keeps them unique within the same microsecond.
local token = sku .. '.' .. time[1] .. string.format('%06d', tonumber(time[2])) .. '.' .. seq
redis.call('HSET', gateKey, 't:' .. token,
  cjson.encode({o = order, u = user, q = qty, t = nowMs, s = 'held', c = nowMs}), 'o:' .. order, token)
if user ~= '' then redis.call('HINCRBY', gateKey, 'u:' .. user, qty) end
redis.call('HSET', openKey, token, 'held')
redis.call('HINCRBY', openKey, '#held', 1)
return {1, token, qty, 'held'}
