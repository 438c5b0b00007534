--[[
  set-paused-1.lua: pause or unpause reserves of one SKU (reserve-2.lua answers PAUSED).

  Input:
    KEYS[1] fs:{SKU}:gate     hash, the SKU's gate (see reserve-2.lua): paused, present =
                              paused; value = Redis TIME ms when paused

    ARGV[1] "1" pause, "0" unpause

  Output: integer
     1 CHANGED
     0 UNCHANGED      already in that state
    -8 BAD_ARGUMENT   ARGV[1] is neither "0" nor "1"
]]
--- @include time.lua
local flag = ARGV[1]
if flag == '1' then
  local nowMs = timeMs()
  return redis.call('HSETNX', KEYS[1], 'paused', string.format('%d', nowMs))
elseif flag == '0' then
  return redis.call('HDEL', KEYS[1], 'paused')
end
return -8
