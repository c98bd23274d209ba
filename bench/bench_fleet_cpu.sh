#!/usr/bin/env bash
# The monitor's own CPU per snapshot (issue 19; results in BENCHMARKS.md
# "Fleet"), measured so that a shared machine's load moves it little.
#
#   bench/bench_fleet_cpu.sh [NODES [SECONDS]]        (default: 20 nodes, 40 s)
#
# Starts `giulia worker` and `giulia monitor` as two processes, NODES small
# plain Erlang nodes (as bench_fleet.sh starts them) observed at 1 s with the
# default sampler, waits 10 s, then over SECONDS: the monitor's CPU time
# (utime + stime of its whole process, from /proc) divided by the snapshots
# it took (giulia_monitor_snapshots_total). The
# cost per snapshot barely depends on the number of nodes (every snapshot is
# decoded, recorded, serialised and delivered alone), so 20 nodes predict
# 100; bench_fleet.sh 100 confirms it.
#
# CALLGRIND=1 runs the monitor under valgrind's callgrind instead and counts
# the instructions it executed in the window per snapshot (counters zeroed at
# the start of the window, dumped at its end): deterministic up to the
# nodes' own variation, whatever the load. Use few nodes (5-10): the monitor
# runs ~50x slower there. The dump is kept in $CALLGRIND_OUT if set
# (callgrind_annotate it). GIULIA=path runs another build of the binary;
# PERF=file records the monitor with `perf record -g` over the window.
# needs: erlang-base curl python3 valgrind
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
nodes=${1:-20}
window=${2:-40}
giulia=${GIULIA:-$root/bin/giulia}
# shellcheck source=bench/fleet_daemons.sh
. bench/fleet_daemons.sh
fleet_init c
wrap=()
if [ "${CALLGRIND:-}" = 1 ]; then
  wrap=(valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" --dump-instr=no)
fi
fleet_daemons "${wrap[@]}"
for i in $(seq 0 $((nodes - 1))); do
  erl -noshell -noinput -name "$prefix-$i@127.0.0.1" -setcookie "$cookie" \
    +S 1:1 +SDcpu 1:1 +SDio 1 +A 0 +P 1024 +Q 1024 +sbwt none +sbwtdcpu none +sbwtdio none \
    -hidden >/dev/null 2>&1 &
  pids+=($!)
done
for i in $(seq 0 $((nodes - 1))); do
  body="{\"node\":\"$prefix-$i@127.0.0.1\",\"cookie\":\"$cookie\",\"interval_ms\":1000}"
  for _ in $(seq 1 100); do
    curl -sf -m 30 -XPOST -H "Content-Type: application/json" "$murl/api/monitor/observe/start" -d "$body" >/dev/null 2>&1 && break
    sleep 0.3
  done
done
sleep 10

hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
counter() { # url family
  curl -sf -m 60 "$1/metrics" | awk -v f="$2" '$1 == f {print $2; exit}'
}
[ "${CALLGRIND:-}" = 1 ] && callgrind_control -z "$mpid" >/dev/null
s0=$(counter "$murl" giulia_monitor_snapshots_total)
c0=$(ticks "$mpid")
l0=$(cut -d' ' -f1 /proc/loadavg)
if [ -n "${PERF:-}" ]; then
  perf record -F 999 --call-graph dwarf,16384 -q -p "$mpid" -o "$PERF" >/dev/null 2>&1 &
  perf_pid=$!
fi
sleep "$window"
[ -n "${PERF:-}" ] && { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
c1=$(ticks "$mpid")
s1=$(counter "$murl" giulia_monitor_snapshots_total)
l1=$(cut -d' ' -f1 /proc/loadavg)
# How the delivery went (batches: since the monitor started; absent from
# builds before batching).
curl -sf -m 60 "$murl/api/monitor/observe/status" | python3 -c '
import json, sys
d = json.load(sys.stdin).get("delivery", {})
print("delivery: %s delivered, %s in %s batches, %s connections" % (d.get("delivered"),
      d.get("batched", "-"), d.get("batches", "-"), d.get("connections")))' || true
instr=
if [ "${CALLGRIND:-}" = 1 ]; then
  callgrind_control -d "$mpid" >/dev/null
  sleep 1
  dump=$(ls -t "$work"/callgrind.out* | head -1)
  instr=$(awk '/^totals:/ {print $2} /^summary:/ {s=$2} END {if (s) print s}' "$dump" | tail -1)
  [ -n "${CALLGRIND_OUT:-}" ] && cp "$dump" "$CALLGRIND_OUT"
fi
python3 - "$nodes" "$window" "$hz" "$c0" "$c1" "$s0" "$s1" "$l0" "$l1" "${instr:-}" <<'EOF'
import sys
n, window, hz, c0, c1, s0, s1, l0, l1 = sys.argv[1:10]
instr = sys.argv[10] if len(sys.argv) > 10 else ''
snaps = float(s1) - float(s0)
cpu_ms = (float(c1) - float(c0)) / float(hz) * 1000
line = "nodes %s, %s s: %d snapshots, monitor CPU %.0f ms = %.3f ms per snapshot" % (
    n, window, snaps, cpu_ms, cpu_ms / snaps if snaps else float('nan'))
if instr:
    line += ", %.2f M instructions per snapshot" % (float(instr) / snaps / 1e6)
print(line + " (load %s -> %s)" % (l0, l1))
EOF
