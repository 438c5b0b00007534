--[[
  reserve-8.lua: pre-deduct units of one SKU for one order (the gate's reserve).

  Input:
    KEYS[1] fs:{SKU}:stock    string, gate available in units
    KEYS[2] fs:{SKU}:orders   hash, order id -> token
    KEYS[3] fs:{SKU}:tokens   hash, token -> JSON record {o=order, u=user, q=units,
                              t=created ms, s=state, c=state change ms}
    KEYS[4] fs:{SKU}:held     zset, held tokens scored by created ms
    KEYS[5] fs:{SKU}:users    hash, user -> units held, settled or sold (per-user limit)
    KEYS[6] fs:{SKU}:sale     hash, open (0/1), start_ms, end_ms, limit (units); absent = no sale
    KEYS[7] fs:{SKU}:paused   string, present = reserves refused
    KEYS[8] fs:{SKU}:counts   hash of counters, outcome -> calls: `reserved` (tokens issued;
                              also makes tokens unique within one run), `out_of_stock`,
                              `limit_exceeded`, `sale_closed`, `paused` (the refusals the
                              console shows as the reject rate)

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
    -5 NO_STOCK_KEY    KEYS[1] is missing (never loaded, flushed, evicted)
    -7 USER_REQUIRED   the sale has a per-user limit and ARGV[2] is empty
    -8 BAD_ARGUMENT    an ARGV entry is malformed
    -9 CORRUPT         a stored value is not what this script wrote
  A negative code changes nothing but its counter in KEYS[8] (-1..-4 only). The counters
  are best effort: a failed HINCRBY (OOM, a corrupt KEYS[8]) never fails a reserve or
  turns a refusal into an error. Time comes from Redis TIME only.
]]
local stockKey, ordersKey, tokensKey, heldKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local usersKey, saleKey, pausedKey, countsKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local order, user, sku = ARGV[1], ARGV[2], ARGV[4]
local qty = tonumber(ARGV[3])

if order == nil or order == '' or #order > 128 or sku == nil or sku == '' or user == nil
    or qty == nil or qty ~= math.floor(qty) or qty < 1 or qty > 2147483647 then
  return {-8, '', 0, ''}
end

-- Idempotent per order: a token this order holds (held, settled or sold) is returned.
local existing = redis.call('HGET', ordersKey, order)
if existing then
  local raw = redis.call('HGET', tokensKey, existing)
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
  redis.pcall('HINCRBY', countsKey, counter, 1)
  return {code, '', 0, ''}
end

if redis.call('EXISTS', pausedKey) == 1 then return refuse(-4, 'paused') end

local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local sale = redis.call('HMGET', saleKey, 'open', 'start_ms', 'end_ms', 'limit')
if sale[1] then
  local startMs, endMs, limit = tonumber(sale[2]) or 0, tonumber(sale[3]) or 0, tonumber(sale[4]) or 0
  if sale[1] ~= '1' or (startMs > 0 and nowMs < startMs) or (endMs > 0 and nowMs >= endMs) then
    return refuse(-3, 'sale_closed')
  end
  if limit > 0 then
    if user == '' then return {-7, '', 0, ''} end
    local used = tonumber(redis.call('HGET', usersKey, user) or '0')
    if used == nil then return {-9, '', 0, ''} end
    if used + qty > limit then return refuse(-2, 'limit_exceeded') end
  end
end

local stockRaw = redis.call('GET', stockKey)
if not stockRaw then return {-5, '', 0, ''} end
if not string.match(stockRaw, '^%-?%d+$') then return {-9, '', 0, ''} end
local available = tonumber(stockRaw)
if available < qty then return refuse(-1, 'out_of_stock') end
if user ~= '' and not string.match(redis.call('HGET', usersKey, user) or '0', '^%-?%d+$') then
  return {-9, '', 0, ''}
end

-- All checks passed; the writes below cannot fail on our data (a Lua error would not roll
-- back). The counter makes the token unique within one microsecond; when it cannot be
-- counted, the order does (one order reserves once per SKU at a time).
local counted, seq = pcall(redis.call, 'HINCRBY', countsKey, 'reserved', 1)
if not counted then seq = 'o' .. order end
redis.call('DECRBY', stockKey, qty)
-- seconds + microseconds of TIME keep tokens unique across restarts without persistence;
-- the counter keeps them unique within the same microsecond.
local token = sku .. '.' .. time[1] .. string.format('%06d', tonumber(time[2])) .. '.' .. seq
redis.call('HSET', tokensKey, token,
  cjson.encode({o = order, u = user, q = qty, t = nowMs, s = 'held', c = nowMs}))
redis.call('HSET', ordersKey, order, token)
redis.call('ZADD', heldKey, nowMs, token)
if user ~= '' then redis.call('HINCRBY', usersKey, user, qty) end
return {1, token, qty, 'held'}
