--[[
  include/time.lua, expanded into the scripts that read the clock where they say
  `--- @include time.lua` (core/gate/ScriptRegistry.cpp does it before hashing). Every time a
  gate script writes or compares comes from Redis TIME, through this.
]]

-- Redis TIME now: ms since the epoch, then TIME's own reply ({seconds, microseconds}, as
-- text). Call it as `local nowMs = timeMs()` where one value is wanted: in a table
-- constructor or as a last argument both values would be passed on.
local function timeMs()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000), time
end
