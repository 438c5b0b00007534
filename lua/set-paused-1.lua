--[[
  set-paused-1.lua: pause or unpause reserves of one SKU (reserve-8.lua answers PAUSED).

  Input:
    KEYS[1] fs:{SKU}:paused   string, present = paused; value = Redis TIME ms when paused

    ARGV[1] "1" pause, "0" unpause

  Output: integer
     1 CHANGED
     0 UNCHANGED      already in that state
    -8 BAD_ARGUMENT   ARGV[1] is neither "0" nor "1"
]]
local flag = ARGV[1]
if flag == '1' then
  local time = redis.call('TIME')
  local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local set = redis.call('SET', KEYS[1], string.format('%d', nowMs), 'NX')
  if set then return 1 end
  return 0
elseif flag == '0' then
  return redis.call('DEL', KEYS[1])
end
return -8
