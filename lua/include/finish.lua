--[[
  include/finish.lua, expanded into release-3.lua and mark-sold-3.lua where they say
  `--- @include finish.lua` (core/gate/ScriptRegistry.cpp does it before hashing).
  Keys as in reserve-2.lua: gate = fs:{SKU}:gate, open = fs:{SKU}:open, done = fs:{SKU}:done
  (zset, released and sold tokens scored by state change ms).
]]

-- The record of `token` after the checks both scripts make first: the record, or nil and
-- the code to return (-8 BAD_ARGUMENT, -6 UNKNOWN_TOKEN, -9 CORRUPT).
local function finishingRecord(gateKey, token, retention)
  if token == nil or token == '' or retention == nil or retention < 0 then return nil, -8 end
  local raw = redis.call('HGET', gateKey, 't:' .. token)
  if not raw then return nil, -6 end
  local ok, rec = pcall(cjson.decode, raw)
  if not ok or type(rec) ~= 'table' or type(rec.q) ~= 'number' then return nil, -9 end
  return rec
end

-- Moves a held or settled token to `state` (released or sold) at `nowMs`: its record, the
-- open index (and the held count when it was held) and the done zset. Returns false, having
-- written nothing, when the held count is not a number (the caller answers CORRUPT).
local function finishToken(gateKey, openKey, doneKey, token, rec, state, nowMs)
  local heldRaw = redis.call('HGET', openKey, '#held')
  if heldRaw and not string.match(heldRaw, '^%d+$') then return false end
  local wasHeld = rec.s == 'held'
  rec.s = state
  rec.c = nowMs
  redis.call('HSET', gateKey, 't:' .. token, cjson.encode(rec))
  if redis.call('HDEL', openKey, token) == 1 and wasHeld then
    redis.call('HINCRBY', openKey, '#held', -1)
  end
  redis.call('ZADD', doneKey, nowMs, token)
  return true
end

-- Purges a few finished tokens past their retention (bounded work per call): record, order
-- mapping and done entry. `retention` is in seconds.
local function purgeFinished(gateKey, doneKey, nowMs, retention)
  local old = redis.call('ZRANGEBYSCORE', doneKey, '-inf', nowMs - retention * 1000, 'LIMIT', 0, 16)
  for _, t in ipairs(old) do
    local r = redis.call('HGET', gateKey, 't:' .. t)
    if r then
      local okOld, o = pcall(cjson.decode, r)
      if okOld and type(o) == 'table' and o.o and redis.call('HGET', gateKey, 'o:' .. o.o) == t then
        redis.call('HDEL', gateKey, 'o:' .. o.o)
      end
      redis.call('HDEL', gateKey, 't:' .. t)
    end
    redis.call('ZREM', doneKey, t)
  end
end
