-- wrk-reserve.lua: buyers of one unit each for scripts/bench-server.sh (wrk 4.1, LuaJIT).
--
-- Each request is POST /v1/reservations for a fresh order id (RUN-t<thread>-<n>) and
-- user, 1 unit of one SKU. Arguments after wrk's `--`:
--   SKU RUN BUYERS DONEFILE THREADS
--   BUYERS   0: buy until wrk's -d ends (the winners' case); N: the crowd, N buyers in all
--            (split over wrk's threads); a thread whose buyers all have their answer sends
--            GET /healthz until the others are done, then the last one ends wrk (SIGINT to
--            the process, which wrk's main thread takes) instead of waiting out -d.
--   DONEFILE a scratch file the threads append one byte to when their buyers are done.
--   THREADS  wrk's -t (a thread starts before the later ones are set up, so it is told).
-- The bearer token comes from the environment (FLASHSTOCK_TOKEN), never the command line.
-- Prints one JSON line on stdout at the end: answers by result word, non-200 answers, the
-- seconds from the first request to the last buyer's answer (and to the last `reserved`
-- answer: when the SKU sold out), and wrk's latency percentiles in ms.

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } fs_timespec;
  int clock_gettime(int clk, fs_timespec *tp);
  int kill(int pid, int sig);
  int getpid(void);
]]
local ts = ffi.new("fs_timespec")
local function now()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

-- Main state: number the threads (their share of the buyers follows from the number).
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

-- Thread state. The counters and times are globals: done() reads them with thread:get().
local sku, run, quota, donefile, threadCount
sent, answers, reservedN, outOfStock, other, non200 = 0, 0, 0, 0, 0, 0
t0, tLast, tReserved = nil, nil, nil
local finished = false
local token = os.getenv("FLASHSTOCK_TOKEN")
local headers = {["Content-Type"] = "application/json"}
if token and token ~= "" then headers["Authorization"] = "Bearer " .. token end

function init(args)
  sku, run = args[1], args[2]
  local buyers = tonumber(args[3]) or 0
  donefile = args[4]
  threadCount = tonumber(args[5]) or 1
  if buyers > 0 then
    quota = math.floor(buyers / threadCount)
    if tid == 1 then quota = quota + buyers % threadCount end
  else
    quota = 0
  end
end

local verified = false
function request()
  -- wrk 4.1 calls request() once in its first thread to check the script
  -- (script_verify_request) and never sends that request: it takes no buyer number.
  if tid == 1 and not verified then
    verified = true
    return wrk.format("GET", "/healthz")
  end
  if t0 == nil then t0 = now() end
  if quota > 0 and sent >= quota then
    return wrk.format("GET", "/healthz")
  end
  sent = sent + 1
  local order = run .. "-t" .. tid .. "-" .. sent
  local body = '{"order":"' .. order .. '","user":"u' .. order .. '","lines":[{"sku":"' .. sku .. '","qty":1}]}'
  return wrk.format("POST", "/v1/reservations", headers, body)
end

function response(status, hdrs, body)
  local result = string.match(body, '"result":"([a-z_]+)"')
  if result == nil and status == 200 then return end -- /healthz while the others finish
  answers = answers + 1
  tLast = now()
  if status ~= 200 then non200 = non200 + 1 end
  if result == "reserved" then
    reservedN = reservedN + 1
    tReserved = tLast
  elseif result == "out_of_stock" then
    outOfStock = outOfStock + 1
  else
    other = other + 1
  end
  if quota > 0 and answers >= quota and not finished then
    finished = true
    local f = io.open(donefile, "a")
    f:write("x")
    f:close()
    f = io.open(donefile, "r")
    local done = #f:read("*a")
    f:close()
    if done >= threadCount then
      ffi.C.kill(ffi.C.getpid(), 2) -- SIGINT: wrk's main thread stops the run
    end
  end
end

function done(summary, latency, requests)
  local a, r, o, x, e = 0, 0, 0, 0, 0
  local first, last, lastReserved = nil, nil, nil
  for _, t in ipairs(threads) do
    a = a + (t:get("answers") or 0)
    r = r + (t:get("reservedN") or 0)
    o = o + (t:get("outOfStock") or 0)
    x = x + (t:get("other") or 0)
    e = e + (t:get("non200") or 0)
    local t0v, tl, tr = t:get("t0"), t:get("tLast"), t:get("tReserved")
    if t0v and (first == nil or t0v < first) then first = t0v end
    if tl and (last == nil or tl > last) then last = tl end
    if tr and (lastReserved == nil or tr > lastReserved) then lastReserved = tr end
  end
  local seconds = (first and last) and (last - first) or 0
  local soldOut = (first and lastReserved) and (lastReserved - first) or 0
  local errs = summary.errors
  io.write(string.format(
    '{"answers":%d,"reserved":%d,"out_of_stock":%d,"other":%d,"non_200":%d,"seconds":%.4f,' ..
    '"answers_per_s":%.1f,"reserved_per_s":%.1f,"last_reserved_s":%.4f,"p50_ms":%.3f,"p99_ms":%.3f,' ..
    '"socket_errors":%d}\n',
    a, r, o, x, e, seconds, seconds > 0 and a / seconds or 0, seconds > 0 and r / seconds or 0, soldOut,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    errs.connect + errs.read + errs.write + errs.timeout))
end
