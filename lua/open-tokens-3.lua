--[[
  open-tokens-3.lua: read helper, every held or settled token of one SKU with its record
  (the reconciler's view). Read-only.

  Input:
    KEYS[1] fs:{SKU}:held     zset, held tokens scored by created ms
    KEYS[2] fs:{SKU}:settled  zset, settled tokens scored by created ms
    KEYS[3] fs:{SKU}:tokens   hash, token -> JSON record (see reserve-8.lua)

  Output: array {now ms (Redis TIME), token1, record1, token2, record2, ...}, held tokens
  first, each group oldest first. A record is the JSON text reserve-8.lua wrote, or "" if
  it is missing (the C++ side reports such a token as state unknown).
]]
local time = redis.call('TIME')
local out = {tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)}
for _, key in ipairs({KEYS[1], KEYS[2]}) do
  local tokens = redis.call('ZRANGE', key, 0, -1)
  local i = 1
  while i <= #tokens do
    local last = math.min(i + 999, #tokens)
    local raws = redis.call('HMGET', KEYS[3], unpack(tokens, i, last))
    for j = i, last do
      out[#out + 1] = tokens[j]
      out[#out + 1] = raws[j - i + 1] or ''
    end
    i = last + 1
  end
end
return out
