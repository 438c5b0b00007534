--[[
  open-tokens-2.lua: read helper, every held or settled token of one SKU with its record
  (the reconciler's view). Read-only.

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): t:TOKEN records
    KEYS[2] fs:{SKU}:open     hash, open tokens (see reserve-2.lua)

  Output: array {now ms (Redis TIME), token1, record1, token2, record2, ...}, held tokens
  first, each group oldest first. A record is the JSON text reserve-2.lua wrote, or "" if
  it is missing (the C++ side reports such a token as state unknown).
]]
--- @include time.lua
local nowMs = timeMs()
local out = {nowMs}
local open = redis.call('HGETALL', KEYS[2])
local tokens = {}
for i = 1, #open, 2 do
  if open[i] ~= '#held' then tokens[#tokens + 1] = {token = open[i], held = open[i + 1] == 'held'} end
end
local i = 1
while i <= #tokens do
  local last = math.min(i + 999, #tokens)
  local fields = {}
  for j = i, last do fields[#fields + 1] = 't:' .. tokens[j].token end
  local raws = redis.call('HMGET', KEYS[1], unpack(fields))
  for j = i, last do
    local raw = raws[j - i + 1] or ''
    tokens[j].raw = raw
    local ok, rec = pcall(cjson.decode, raw)
    tokens[j].created = (ok and type(rec) == 'table' and tonumber(rec.t)) or 0
  end
  i = last + 1
end
table.sort(tokens, function(a, b)
  if a.held ~= b.held then return a.held end
  if a.created ~= b.created then return a.created < b.created end
  return a.token < b.token
end)
for _, t in ipairs(tokens) do
  out[#out + 1] = t.token
  out[#out + 1] = t.raw
end
return out
