#!/usr/bin/env bash
# bench_mcp.sh - latency of Giulia's MCP server (docs/MCP.md), from a minimal
# C client (bench/mcp_latency.c) so that the numbers are the server's:
#
#   1. tools/call knowledge_dependents on the demo project (examples/nexus):
#      over stdio (`giulia mcp`, kg_query in that process) and over HTTP (the
#      worker's /mcp), against the same query as a plain REST GET (reference);
#   2. tools/call runtime_pulse of a real Erlang node with a 10 ms window,
#      over stdio and HTTP, against GET /api/runtime/pulse on the monitor;
#   3. stdio start to first answer (spawn, initialize, first tools/call),
#      against one `giulia dependents --json` run (reference: a CLI process).
#
# Environment: CALLS (default 2000), PULSES (default 200), RUNS (start-ups,
# default 20). Prints a Markdown table for BENCHMARKS.md.
# needs: curl erlang-base
set -eu
cd "$(dirname "$0")/.."
GIULIA=${GIULIA:-$PWD/bin/giulia}
CALLS=${CALLS:-2000}
PULSES=${PULSES:-200}
RUNS=${RUNS:-20}
tmp=$(mktemp -d /tmp/giulia-bench-mcp.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 1 300); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "no answer from $1" >&2; return 1; }
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

mkdir -p build/bench
cc -std=c11 -D_GNU_SOURCE -O2 -o build/bench/mcp_latency bench/mcp_latency.c $(pkg-config --libs libcurl)
lat=build/bench/mcp_latency

proj=$tmp/nexus
cp -r examples/nexus "$proj"
"$GIULIA" index "$proj" >/dev/null

cookie=bench$RANDOM$RANDOM
node=mcpbench$RANDOM@127.0.0.1
erl -name "$node" -setcookie "$cookie" -noshell >/dev/null 2>&1 &
pids+=($!)
wport=$(free_port); mport=$(free_port)
GIULIA_COOKIE=$cookie "$GIULIA" serve --worker-listen 127.0.0.1:$wport --monitor-listen 127.0.0.1:$mport \
  --data "$tmp/data" --mcp-allow-node "$node" >"$tmp/serve.log" 2>&1 &
pids+=($!)
wait_http http://127.0.0.1:$wport/health
wait_http http://127.0.0.1:$mport/health
curl -fs -XPOST -H "Content-Type: application/json" http://127.0.0.1:$wport/api/index/scan -d "{\"path\":\"$proj\"}" >/dev/null
for _ in $(seq 1 100); do
  curl -fs -XPOST -H "Content-Type: application/json" http://127.0.0.1:$mport/api/runtime/connect -d "{\"node\":\"$node\",\"cookie\":\"$cookie\"}" >/dev/null 2>&1 && break
  sleep 0.1
done

dep="{\"module\":\"Nexus.Repo\",\"project\":\"$proj\"}"
pulse="{\"node\":\"$node\",\"window_ms\":10}"
runtime_args=(--allow-runtime --allow-node "$node" --worker http://127.0.0.1:$wport --monitor http://127.0.0.1:$mport)

s_dep=$($lat stdio "$CALLS" knowledge_dependents "$dep" "$GIULIA" mcp --project "$proj")
h_dep=$($lat http "$CALLS" knowledge_dependents "$dep" http://127.0.0.1:$wport)
r_dep=$($lat rest "$CALLS" "/api/knowledge/dependents?module=Nexus.Repo&path=$proj" http://127.0.0.1:$wport)
s_pul=$(GIULIA_COOKIE=$cookie $lat stdio "$PULSES" runtime_pulse "$pulse" "$GIULIA" mcp --project "$proj" "${runtime_args[@]}")
h_pul=$($lat http "$PULSES" runtime_pulse "$pulse" http://127.0.0.1:$wport)
r_pul=$($lat rest "$PULSES" "/api/runtime/pulse?node=$node&window_ms=10&fresh=true" http://127.0.0.1:$mport)

firsts=()
for _ in $(seq 1 "$RUNS"); do
  out=$($lat stdio 1 knowledge_dependents "$dep" "$GIULIA" mcp --project "$proj")
  firsts+=("$(field "$out" first_answer_us)")
done
clis=()
for _ in $(seq 1 "$RUNS"); do
  t0=$(date +%s%N)
  "$GIULIA" dependents Nexus.Repo --project "$proj" --json >/dev/null
  t1=$(date +%s%N)
  clis+=($(( (t1 - t0) / 1000 )))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
first=$(median "${firsts[@]}")
cli=$(median "${clis[@]}")

ms() { awk -v u="$1" 'BEGIN {printf "%.3f", u / 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
row() { # name json reference-json
  local p50 p99 r50
  p50=$(field "$2" p50_us); p99=$(field "$2" p99_us); r50=$(field "$3" p50_us)
  echo "| $1 | $(ms "$p50") ms | $(ms "$p99") ms | $(ratio "$p50" "$r50") |"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tools/call | p50 | p99 | p50 vs the REST GET of the same data |"
echo "|---|---|---|---|"
row "knowledge_dependents, stdio ($CALLS calls)" "$s_dep" "$r_dep"
row "knowledge_dependents, HTTP /mcp ($CALLS calls)" "$h_dep" "$r_dep"
echo "| reference: GET /api/knowledge/dependents | $(ms "$(field "$r_dep" p50_us)") ms | $(ms "$(field "$r_dep" p99_us)") ms | 1.00x |"
row "runtime_pulse 10 ms window, stdio ($PULSES calls)" "$s_pul" "$r_pul"
row "runtime_pulse 10 ms window, HTTP /mcp ($PULSES calls)" "$h_pul" "$r_pul"
echo "| reference: GET /api/runtime/pulse?fresh=true | $(ms "$(field "$r_pul" p50_us)") ms | $(ms "$(field "$r_pul" p99_us)") ms | 1.00x |"
echo
echo "| start-up (median of $RUNS) | time | vs one CLI run |"
echo "|---|---|---|"
echo "| \`giulia mcp\` spawn → initialize → first tools/call answered | $(ms "$first") ms | $(ratio "$first" "$cli") |"
echo "| reference: \`giulia dependents Nexus.Repo --json\` (whole process) | $(ms "$cli") ms | 1.00x |"
