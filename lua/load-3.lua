--[[
  load-3.lua: load or rebuild gate available from the book of record, net of the units of
  the tokens the book did not count. A token the book's live order held when the caller
  read the book ("booked") is in the book's figures already. Any other token that is held,
  settled or sold now and was open at or after the caller's token snapshot is deducted in
  the gate and counted as available in the figure the caller read: held (not in the book
  yet, or committed since the read), settled (its order released in the book, its gate
  release still to come) or sold (committed and paid since the read). Its units come off.

  The caller (core/GateRestore.cpp) reads the open tokens (open-tokens-2.lua, which gives
  Redis TIME), then, in one book transaction, the book's available and which of those
  tokens live orders hold, then calls this. A figure that then moves in the book moved
  through a token this script sees, so no unit is counted twice.

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): available, t:TOKEN
    KEYS[2] fs:{SKU}:open     hash, open tokens (see reserve-2.lua); #held is created here,
                              so both keys a reserve needs exist from the first load on
    KEYS[3] fs:{SKU}:done     zset, released and sold tokens scored by state change ms

    ARGV[1] book available, units, integer 0..2^53
    ARGV[2] force: "1" = set even if available exists (rebuild; pause the SKU first so no
            reserve races it), "0" = set only if available is absent
    ARGV[3] snapshot ms (Redis TIME of the caller's open-tokens read), integer >= 0; tokens
            that finished (done) at or after it are looked at too. -1: no snapshot (a
            first load): the open tokens only
    ARGV[4..] the booked tokens

  Output: array {code, gate available now (units), units netted out}
     1 LOADED         available was set to max(0, book available - units netted out)
     0 PRESENT        available existed and force was "0": nothing changed
    -8 BAD_ARGUMENT   ARGV malformed
    -9 CORRUPT        a token's record is missing or unreadable; nothing changed
]]
local gateKey, openKey, doneKey = KEYS[1], KEYS[2], KEYS[3]
local book = tonumber(ARGV[1])
local force = ARGV[2]
local since = tonumber(ARGV[3])
if book == nil or book ~= math.floor(book) or book < 0 or book > 9007199254740992
    or (force ~= '0' and force ~= '1') or since == nil or since ~= math.floor(since) or since < -1 then
  return {-8, 0, 0}
end

local current = redis.call('HGET', gateKey, 'available')
if current and force == '0' then
  return {0, tonumber(current) or 0, 0}
end

local booked = {}
for i = 4, #ARGV do booked[ARGV[i]] = true end
local seen, fields = {}, {}
local function consider(token)
  if token ~= '#held' and not booked[token] and not seen[token] then
    seen[token] = true
    fields[#fields + 1] = 't:' .. token
  end
end
local open = redis.call('HGETALL', openKey)
local held = 0
for i = 1, #open, 2 do
  consider(open[i])
  if open[i + 1] == 'held' then held = held + 1 end
end
if since >= 0 then
  for _, token in ipairs(redis.call('ZRANGEBYSCORE', doneKey, since, '+inf')) do consider(token) end
end

local netted = 0
local i = 1
while i <= #fields do
  local last = math.min(i + 999, #fields)
  local raws = redis.call('HMGET', gateKey, unpack(fields, i, last))
  for _, raw in ipairs(raws) do
    if not raw then return {-9, 0, 0} end
    local ok, rec = pcall(cjson.decode, raw)
    if not ok or type(rec) ~= 'table' or type(rec.q) ~= 'number' then return {-9, 0, 0} end
    if rec.s == 'held' or rec.s == 'settled' or rec.s == 'sold' then netted = netted + rec.q end
  end
  i = last + 1
end

local net = book - netted
if net < 0 then net = 0 end
redis.call('HSET', gateKey, 'available', string.format('%d', net))
redis.call('HSETNX', openKey, '#held', held)
return {1, net, netted}
