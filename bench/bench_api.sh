#!/usr/bin/env bash
# bench_api.sh - the daemons under load, with wrk on loopback.
#
#   1. GET /api/knowledge/dependents on a worker holding a generated project of
#      MODULES modules (requests/s and p99 latency);
#   2. GET /api/runtime/pulse on a monitor observing a real Erlang node (the
#      pulse of a running observation is served from its latest snapshot);
#      skipped while the observer is a placeholder;
#   3. POST /api/runtime/ingest from 20 concurrent observations at a 1 s
#      interval for SECONDS_INGEST seconds with snapshots of real size (wrk,
#      one connection per observation paced at 1 request/s): latency, and
#      whether every snapshot sent was stored;
#   4. the worker's ingest ceiling (wrk, unique snapshots, synchronous=FULL);
#   5. the worker's peak memory (VmHWM) finalizing one long observation of
#      FINALIZE_SNAPSHOTS snapshots of real size, on a fresh worker.
#
# Environment: DURATION (wrk seconds, default 10), CONNS (default 32),
# MODULES (default 400), SECONDS_INGEST (default 30), FINALIZE_SNAPSHOTS
# (default 3600: one hour at 1 s), GIULIA (binary).
# Prints a Markdown table for BENCHMARKS.md.
# needs: curl wrk python3 erlang-base
set -eu
cd "$(dirname "$0")/.."
GIULIA=${GIULIA:-$PWD/bin/giulia}
DURATION=${DURATION:-10}
CONNS=${CONNS:-32}
MODULES=${MODULES:-400}
SECONDS_INGEST=${SECONDS_INGEST:-30}
FINALIZE_SNAPSHOTS=${FINALIZE_SNAPSHOTS:-3600}
tmp=$(mktemp -d /tmp/giulia-bench-api.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 1 300); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "no answer from $1" >&2; return 1; }

# wrk --latency output -> "rps p99"
wrk_summary() {
  awk '/Requests\/sec/ {rps=$2} $1=="99%" {p99=$2} END {print rps, p99}'
}

rows=()

# ---- 1. knowledge/dependents ----
proj=$tmp/proj
mkdir -p "$proj/lib"
printf 'defmodule Bench.MixProject do\n  use Mix.Project\n  def project, do: [app: :bench, version: "0.1.0"]\nend\n' >"$proj/mix.exs"
for i in $(seq 0 $((MODULES - 1))); do
  a=$(( i / 2 )); b=$(( i / 3 ))
  {
    printf 'defmodule Bench.M%04d do\n' "$i"
    printf '  def run(x) do\n    if x > 0 do\n      Bench.M%04d.run(x - 1) + Bench.M%04d.step(x)\n    else\n      0\n    end\n  end\n' "$a" "$b"
    printf '  def step(x), do: x * 2\nend\n'
  } >"$proj/lib/m$i.ex"
done
wport=$(free_port)
"$GIULIA" worker --listen "127.0.0.1:$wport" --data "$tmp/worker" 2>"$tmp/worker.log" &
pids+=($!)
wait_http "http://127.0.0.1:$wport/health"
scan=$(curl -s -XPOST -H "Content-Type: application/json" "http://127.0.0.1:$wport/api/index/scan" -d "{\"path\":\"$proj\"}")
if echo "$scan" | grep -q '"summary"'; then
  url="http://127.0.0.1:$wport/api/knowledge/dependents?module=Bench.M0001&path=$proj"
  curl -fs "$url" >/dev/null
  read -r rps p99 < <(wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency "$url" | wrk_summary)
  rows+=("| GET /api/knowledge/dependents ($MODULES modules) | wrk -t2 -c$CONNS -d${DURATION}s | $rps | $p99 |")
else
  rows+=("| GET /api/knowledge/dependents | skipped: static engine unavailable | - | - |")
fi

# ---- 2. runtime/pulse ----
mport=$(free_port)
"$GIULIA" monitor --listen "127.0.0.1:$mport" --worker "http://127.0.0.1:$wport" --data "$tmp/monitor" 2>"$tmp/monitor.log" &
pids+=($!)
wait_http "http://127.0.0.1:$mport/health"
node="bench$$@127.0.0.1"
cookie="benchcookie$$"
erl -name "$node" -setcookie "$cookie" -noshell -noinput \
  -eval 'spawn(fun() -> L = fun Loop(N) -> _ = lists:seq(1, 3000), timer:sleep(2), Loop(N + 1) end, L(0) end).' &
pids+=($!)
connected=no
for _ in $(seq 1 100); do
  if curl -fs -XPOST -H "Content-Type: application/json" "http://127.0.0.1:$mport/api/runtime/connect" \
       -d "{\"node\":\"$node\",\"cookie\":\"$cookie\"}" >/dev/null 2>&1; then connected=yes; break; fi
  sleep 0.2
done
if [ $connected = yes ]; then
  url="http://127.0.0.1:$mport/api/runtime/pulse?node=$node&fresh=true&window_ms=100"
  read -r rps p99 < <(wrk -t2 -c4 -d"${DURATION}s" --latency "$url" | wrk_summary)
  rows+=("| GET /api/runtime/pulse?fresh=true&window_ms=100 (live probe of a node) | wrk -t2 -c4 -d${DURATION}s | $rps | $p99 |")
  if curl -fs -XPOST -H "Content-Type: application/json" "http://127.0.0.1:$mport/api/monitor/observe/start" \
       -d "{\"node\":\"$node\",\"interval_ms\":1000}" >/dev/null 2>&1; then
    sleep 3
    url="http://127.0.0.1:$mport/api/runtime/pulse?node=$node"
    read -r rps p99 < <(wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency "$url" | wrk_summary)
    rows+=("| GET /api/runtime/pulse (node under observation: latest snapshot) | wrk -t2 -c$CONNS -d${DURATION}s | $rps | $p99 |")
    curl -fs -XPOST -H "Content-Type: application/json" "http://127.0.0.1:$mport/api/monitor/observe/stop" -d "{\"node\":\"$node\"}" >/dev/null || true
  else
    rows+=("| GET /api/runtime/pulse (node under observation) | skipped: observation sessions unavailable | - | - |")
  fi
else
  rows+=("| GET /api/runtime/pulse | skipped: observer unavailable | - | - |")
fi

# ---- 3. 20 observations at 1 s ----
# A snapshot of realistic size: 3 top-10 process lists and 40 traced functions.
python3 - "$tmp/snap.json" <<'EOF'
import json, sys
proc = lambda i: {"pid": "<0.%d.0>" % (100 + i), "registered_name": None,
                  "initial_call": ":gen_server.init_it/6", "current_function": ":gen_server.loop/7",
                  "module": "Bench.M%04d" % i, "reductions": 100000 - i, "cpu_share": 0.05,
                  "memory_bytes": 143000, "message_queue_len": i}
snap = {"version": 1, "session_id": "SID", "node": "bench@127.0.0.1", "seq": 0,
        "timestamp_ms": 1764496229000, "window_ms": 1000, "otp_release": "25",
        "schedulers_online": 2,
        "scheduler_utilisation": {"total": 0.42, "per_scheduler": [0.51, 0.33]},
        "run_queue": {"total": 0, "per_scheduler": [0, 0]},
        "processes": {"count": 412, "limit": 262144}, "ports": {"count": 23, "limit": 65536},
        "atoms": {"count": 21000, "limit": 1048576},
        "ets": {"count": 41, "top": [{"name": "t%d" % i, "id": "#Ref<0.1.2.%d>" % i,
                "owner_module": ":application_controller", "size": 120, "memory_bytes": 18000}
                for i in range(5)]},
        "memory": {"total": 61234567, "processes": 12000000, "processes_used": 11900000,
                   "system": 49000000, "atom": 500000, "binary": 900000, "code": 12000000,
                   "ets": 1500000},
        "reductions": {"delta": 1234567, "per_second": 1234567.0},
        "gc": {"count": 120, "words_reclaimed": 450000},
        "io": {"input_bytes": 1024, "output_bytes": 2048},
        "top_processes": {k: [proc(i) for i in range(10)]
                          for k in ("reductions", "memory", "message_queue")},
        "trace": {"modules": ["Bench.M0001"], "window_ms": 1000,
                  "calls": [{"module": "Bench.M%04d" % i, "function": "run", "arity": 1,
                             "count": 1000 + i} for i in range(40)]},
        "errors": []}
open(sys.argv[1], "w").write(json.dumps(snap))
EOF
snap_bytes=$(wc -c <"$tmp/snap.json")
# wrk's delay() paces each connection at one request per second: 20
# connections are 20 observations at a 1 s interval, each with its own session.
cat >"$tmp/obs20.lua" <<LUA
local f = io.open("$tmp/snap.json"); local body = f:read("*a"); f:close()
local counter = 0
local started = 0
tid = 0 -- global: thread:set() writes globals of the thread's state
setup = function(thread) started = started + 1; thread:set("tid", started) end
delay = function() return 1000 end
request = function()
  local session = counter % 10
  local seq = math.floor(counter / 10)
  counter = counter + 1
  local b = body:gsub('"SID"', '"obs20-' .. tid .. '-' .. session .. '"'):gsub('"seq": 0', '"seq": ' .. seq)
  return wrk.format("POST", "/api/runtime/ingest", {["Content-Type"] = "application/json"}, b)
end
done = function(summary, latency, requests)
  io.write(string.format("ACK %d %d\n", summary.requests, summary.errors.status))
end
LUA
out=$(wrk -t2 -c20 -d"${SECONDS_INGEST}s" --latency -s "$tmp/obs20.lua" "http://127.0.0.1:$wport")
read -r rps p99 < <(echo "$out" | wrk_summary)
p50=$(echo "$out" | awk '$1=="50%" {print $2}')
max=$(echo "$out" | awk '$1=="Latency" {print $4}')
read -r _ sent non2xx < <(echo "$out" | grep '^ACK')
stored=$(curl -s "http://127.0.0.1:$wport/api/runtime/observations?limit=1000" |
  python3 -c 'import json,sys; print(sum(o["snapshots"] for o in json.load(sys.stdin)["observations"] if o["session_id"].startswith("obs20-")))')
rows+=("| POST /api/runtime/ingest, 20 observations at 1 s for ${SECONDS_INGEST} s (${snap_bytes} B snapshots) | wrk -t2 -c20, 1 request/s per connection | $sent sent, $non2xx refused, $stored stored ($rps/s) | p50 $p50, p99 $p99, max $max |")

# ---- 4. ingest ceiling ----
cat >"$tmp/ingest.lua" <<EOF
local f = io.open("$tmp/snap.json"); local body = f:read("*a"); f:close()
local counter = 0
local started = 0
tid = 0 -- global: thread:set() writes globals of the thread's state
setup = function(thread) started = started + 1; thread:set("tid", started) end
request = function()
  counter = counter + 1
  local b = body:gsub('"SID"', '"ceiling-' .. tid .. '"'):gsub('"seq": 0', '"seq": ' .. counter)
  return wrk.format("POST", "/api/runtime/ingest", {["Content-Type"] = "application/json"}, b)
end
EOF
read -r rps p99 < <(wrk -t2 -c8 -d"${DURATION}s" --latency -s "$tmp/ingest.lua" "http://127.0.0.1:$wport" | wrk_summary)
rows+=("| POST /api/runtime/ingest ceiling (unique snapshots, fsync per commit) | wrk -t2 -c8 -d${DURATION}s | $rps | $p99 |")

# ---- 5. peak memory of a long finalize ----
# A fresh worker (its high-water mark is then the ingest's and the
# finalize's), one observation of FINALIZE_SNAPSHOTS snapshots sent over one
# keep-alive connection, then the finalize that builds its profile.
fport=$(free_port)
"$GIULIA" worker --listen "127.0.0.1:$fport" --data "$tmp/worker-finalize" 2>"$tmp/worker-finalize.log" &
fpid=$!
pids+=($fpid)
wait_http "http://127.0.0.1:$fport/health"
python3 - "$fport" "$FINALIZE_SNAPSHOTS" "$tmp/snap.json" <<'EOF'
import http.client, json, sys
port, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
snap = json.load(open(path))
snap["session_id"] = "long"
c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for seq in range(n):
    snap["seq"] = seq
    snap["timestamp_ms"] = 1764496229000 + seq * 1000
    body = json.dumps(snap)
    for attempt in range(2):
        try:
            c.request("POST", "/api/runtime/ingest", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            break
        except (http.client.HTTPException, OSError):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    if r.status != 200:
        sys.exit("ingest %d: HTTP %d" % (seq, r.status))
EOF
hwm_ingest=$(awk '/VmHWM/ {print $2}' "/proc/$fpid/status")
t0=$(date +%s%N)
curl -fs -XPOST -H "Content-Type: application/json" "http://127.0.0.1:$fport/api/runtime/ingest/finalize" \
  -d '{"session_id":"long","node":"bench@127.0.0.1","status":"complete","interval_ms":1000,"trace_modules":["Bench.M0001"]}' >"$tmp/finalize.json"
t1=$(date +%s%N)
hwm_fin=$(awk '/VmHWM/ {print $2}' "/proc/$fpid/status")
grep -q '"profile_id":[0-9]' "$tmp/finalize.json" || { echo "finalize built no profile: $(cat "$tmp/finalize.json")" >&2; exit 1; }
rows+=("| POST /api/runtime/ingest/finalize of one observation of $FINALIZE_SNAPSHOTS snapshots (${snap_bytes} B) | one request, fresh worker | $(( (t1 - t0) / 1000000 )) ms | peak RSS $(( hwm_ingest / 1024 )) MB after ingest, $(( hwm_fin / 1024 )) MB after finalize |")

echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo
echo "| what | load | requests/s (or result) | p99 latency |"
echo "|---|---|---|---|"
for r in "${rows[@]}"; do echo "$r"; done
