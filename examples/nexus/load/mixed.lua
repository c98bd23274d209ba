-- mixed.lua: a steady mixed load for Nexus, ~87% reads and ~13% writes.
--
--   wrk -t2 -c16 -d30s -s examples/nexus/load/mixed.lua http://127.0.0.1:4040 -- SEED
--
-- An optional second argument picks another mix: `export` sends only CSV
-- exports of 400 products (CPU-bound rendering in the request handlers,
-- the load that saturates the schedulers; counted as reads).
--
-- SEED is the NEXUS_SEED the target was started with (default 200): it
-- bounds the ids of the seeded rows (users SEED, products 2*SEED, orders
-- 5*SEED), so that every request in the mix succeeds. Orders the load
-- creates are the only rows it deletes. At the end it prints one line:
--
--   nexus-load: duration_s=.. requests=.. rps=.. reads=.. writes=.. read_pct=..
--               errors=.. (connect=.. read=.. write=.. timeout=.. status=..)
--               latency_ms p50=.. p99=.. max=..

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end

local seed = 200
-- Globals, so that done() can read them from each thread with thread:get().
reads, writes = 0, 0
local created = {}
local words = { "amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor",
  "indigo", "juniper", "kestrel", "lagoon", "meadow", "nimbus", "orchid", "pebble" }
local json = { ["Content-Type"] = "application/json" }

local mix = "mixed"

function init(args)
  seed = tonumber(args[1] or "200") or 200
  mix = args[2] or "mixed"
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
end

local function id(n) return tostring(math.random(1, n)) end

local function read_request(r)
  if r <= 24 then
    return wrk.format("GET", "/api/users/" .. id(seed))
  elseif r <= 48 then
    return wrk.format("GET", "/api/products/" .. id(seed * 2))
  elseif r <= 58 then
    return wrk.format("GET", "/api/products?limit=20&offset=" .. tostring(math.random(0, seed)))
  elseif r <= 68 then
    return wrk.format("GET", "/api/search?table=products&limit=10&q=" .. words[math.random(#words)])
  elseif r <= 76 then
    return wrk.format("GET", "/api/orders/" .. id(seed * 5))
  elseif r <= 82 then
    return wrk.format("GET", "/api/stats/orders?op=sum&field=total&group_by=status")
  elseif r <= 86 then
    local body = '{"requests":[{"method":"GET","path":"/api/users/' .. id(seed) ..
      '"},{"method":"GET","path":"/api/products/' .. id(seed * 2) ..
      '"},{"method":"GET","path":"/api/orders/' .. id(seed * 5) .. '"}]}'
    return wrk.format("POST", "/api/batch", json, body)
  else
    return wrk.format("GET", "/api/export/products.csv?limit=200")
  end
end

local function create_order()
  local body = '{"user_id":' .. id(seed) .. ',"product_id":' .. id(seed * 2) ..
    ',"quantity":' .. tostring(math.random(1, 5)) .. '}'
  return wrk.format("POST", "/api/orders", json, body)
end

local function write_request(r)
  if r <= 93 then
    return create_order()
  elseif r <= 97 then
    return wrk.format("PUT", "/api/products/" .. id(seed * 2), json,
      '{"stock":' .. tostring(math.random(10, 500)) .. '}')
  elseif r <= 99 then
    local statuses = { "paid", "shipped", "delivered" }
    return wrk.format("PUT", "/api/orders/" .. id(seed * 5), json,
      '{"status":"' .. statuses[math.random(#statuses)] .. '"}')
  else
    local victim = table.remove(created)
    if victim then
      return wrk.format("DELETE", "/api/orders/" .. victim)
    end
    return create_order()
  end
end

function request()
  if mix == "export" then
    reads = reads + 1
    return wrk.format("GET", "/api/export/products.csv?limit=400")
  end
  local r = math.random(1, 100)
  if r <= 87 then
    reads = reads + 1
    return read_request(r)
  end
  writes = writes + 1
  return write_request(r)
end

function response(status, headers, body)
  if status == 201 and #created < 1000 then
    local new_id = string.match(body, '"id":(%d+),"table":"orders"}$')
    if new_id then table.insert(created, new_id) end
  end
end

function done(summary, latency, requests)
  local r, w = 0, 0
  for _, t in ipairs(threads) do
    r = r + (t:get("reads") or 0)
    w = w + (t:get("writes") or 0)
  end
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.status + e.timeout
  local secs = summary.duration / 1e6
  local pct = 0
  if r + w > 0 then pct = 100 * r / (r + w) end
  io.write(string.format(
    "nexus-load: duration_s=%.2f requests=%d rps=%.1f reads=%d writes=%d read_pct=%.1f " ..
    "errors=%d (connect=%d read=%d write=%d timeout=%d status=%d) " ..
    "latency_ms p50=%.2f p99=%.2f max=%.2f\n",
    secs, summary.requests, summary.requests / secs, r, w, pct,
    errors, e.connect, e.read, e.write, e.timeout, e.status,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
