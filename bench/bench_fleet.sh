#!/usr/bin/env bash
# One monitor, many nodes (issue 19; results in BENCHMARKS.md "Fleet").
#
#   bench/bench_fleet.sh [COUNT...]          (default: 10 50 100)
#
# Starts `giulia worker` and `giulia monitor` as two processes (so that the
# monitor's own cost is measured alone), then grows a fleet of small plain
# Erlang nodes (one scheduler each, hidden, connected to nothing) to each
# COUNT in turn, observing every node at 1 s with the default sampler. After
# a 10 s warm-up, over a 30 s window: the monitor's CPU (% of one core, from
# /proc), its RSS (largest seen, sampled every second), snapshots taken
# against the expected COUNT x 30, sample failures, snapshot lateness (p50
# and p99, interpolated from the deltas of the monitor's own
# giulia_monitor_snapshot_lateness_seconds histogram, as histogram_quantile
# does), then the time to scrape /metrics (20 scrapes with curl: median and
# worst) and its size; then the CPU time of one scrape in-process
# (bench/metrics_render.c). The load average is printed with each row:
# the machine is shared, and the numbers move with it.
# Everything started here is stopped on exit. Needs `make` first.
#
# GIULIA=path runs another build of the binary (a copy of the one before a
# change, say); PERF=prefix records the monitor with `perf record -g` over
# each window into prefix-N.data (perf report --no-children -i ...), with
# DWARF call graphs (the build keeps no frame pointers).
# needs: erlang-base curl python3
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
counts=("$@")
giulia=${GIULIA:-$root/bin/giulia}
perf_prefix=${PERF:-}
[ ${#counts[@]} -eq 0 ] && counts=(10 50 100)
# shellcheck source=bench/fleet_daemons.sh
. bench/fleet_daemons.sh
fleet_init f
fleet_daemons

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
scrape() { curl -sf "$murl/metrics"; }

started=0
start_node() { # index
  erl -noshell -noinput -name "$prefix-$1@127.0.0.1" -setcookie "$cookie" \
    +S 1:1 +SDcpu 1:1 +SDio 1 +A 0 +P 1024 +Q 1024 +sbwt none +sbwtdcpu none +sbwtdio none \
    -hidden \
    >/dev/null 2>&1 &
  pids+=($!)
}
observe_node() { # index
  local body="{\"node\":\"$prefix-$1@127.0.0.1\",\"cookie\":\"$cookie\",\"interval_ms\":1000}"
  for _ in $(seq 1 100); do
    if curl -sf -XPOST -H "Content-Type: application/json" "$murl/api/monitor/observe/start" -d "$body" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.3
  done
  echo "could not observe $prefix-$1" >&2
  return 1
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"\
     "$(free -g | awk '/^Mem/ {print $2}') GB,"\
     "OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().')"
echo
echo "## one monitor, N nodes at 1 s (30 s window after 10 s warm-up)"
printf "%-6s %9s %8s %7s %9s %8s %8s %11s %11s %11s %11s %13s %9s  %s\n" nodes cpu_%core \
  cpu_ms/sn rss_MB snapshots expected failures late_50/99 dispatch_50/99 process_50/99 rpc_50/99 \
  scrape_ms scrape_KB "load (1 min, least-most in the window)"
echo "(ms; late: from the tick a snapshot was due to its completion = dispatch (tick to request"
echo " sent: the monitor) + rpc (request to reply: the node) + process (reply to completion: the"
echo " monitor); cpu_ms/sn: the monitor's CPU time per snapshot taken, which a loaded machine"
echo " blurs less than cpu_%core (x nodes / 10 = cpu_%core of a fleet that gets all its snapshots);"
echo " scrape_ms: median/worst of 20 curl scrapes)"
for n in "${counts[@]}"; do
  # Grow the fleet: start the nodes in batches of 10, then observe each.
  while [ "$started" -lt "$n" ]; do
    batch_end=$((started + 10 < n ? started + 10 : n))
    for i in $(seq "$started" $((batch_end - 1))); do start_node "$i"; done
    for i in $(seq "$started" $((batch_end - 1))); do observe_node "$i"; done
    started=$batch_end
  done
  sleep 10
  before=$(scrape)
  c0=$(cpu_ticks "$mpid")
  t0=$(date +%s.%N)
  peak=0
  perf_pid=
  if [ -n "$perf_prefix" ]; then
    perf record -F 499 --call-graph dwarf,16384 -q -p "$mpid" -o "$perf_prefix-$n.data" \
      >/dev/null 2>&1 &
    perf_pid=$!
  fi
  loads=()
  for _ in $(seq 1 30); do
    sleep 1
    r=$(rss_kb "$mpid")
    [ "$r" -gt "$peak" ] && peak=$r
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  done
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" || true
  fi
  c1=$(cpu_ticks "$mpid")
  t1=$(date +%s.%N)
  after=$(scrape)
  times=()
  for _ in $(seq 1 20); do
    times+=("$(curl -sf -o "$work/scrape.txt" -w '%{time_total}' "$murl/metrics")")
  done
  bytes=$(wc -c <"$work/scrape.txt")
  load=$(printf '%s\n' "${loads[@]}" | sort -n | sed -n '1p;$p' | paste -sd-)
  printf '%s\n' "$before" >"$work/before.txt"
  printf '%s\n' "$after" >"$work/after.txt"
  python3 - "$work/before.txt" "$work/after.txt" "$n" "$c0" "$c1" "$t0" "$t1" "$hz" "$peak" \
    "$bytes" "$load" "${times[@]}" <<'EOF'
import re, sys
def read(path):
    values = {}
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        name, value = line.rsplit(' ', 1)
        values[name] = float(value)
    return values
b, a = read(sys.argv[1]), read(sys.argv[2])
n, c0, c1, t0, t1, hz, peak, size, load = sys.argv[3:12]
times = sorted(float(x) * 1000 for x in sys.argv[12:])
wall = float(t1) - float(t0)
cpu = (float(c1) - float(c0)) / float(hz) / wall * 100
def delta(name):
    return a.get(name, 0) - b.get(name, 0)
snaps = delta('giulia_monitor_snapshots_total')
fails = delta('giulia_monitor_snapshot_failures_total')
def histogram(fam):
    buckets = []
    for key in a:
        m = re.match(fam + r'_bucket\{le="([^"]+)"\}', key)
        if m:
            le = float('inf') if m.group(1) == '+Inf' else float(m.group(1))
            buckets.append((le, a[key] - b.get(key, 0)))
    return sorted(buckets)
def quantile(buckets, q):
    total = buckets[-1][1] if buckets else 0
    if total <= 0:
        return float('nan')
    rank, lo, prev = q * total, 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float('inf'):
                return lo
            return lo + (le - lo) * (rank - prev) / max(count - prev, 1e-9)
        lo, prev = le, count
    return lo
def pair(fam):
    h = histogram(fam)
    return "%5.0f/%-5.0f" % (quantile(h, 0.5) * 1000, quantile(h, 0.99) * 1000)
cpu_ms = (float(c1) - float(c0)) / float(hz) * 1000
print("%-6s %9.1f %8.2f %7.1f %9d %8d %8d %11s %11s %11s %11s %6.1f/%-6.1f %9.1f  %s" % (
    n, cpu, cpu_ms / snaps if snaps else float('nan'), int(peak) / 1024.0, snaps, int(n) * 30, fails,
    pair('giulia_monitor_snapshot_lateness_seconds'),
    pair('giulia_monitor_sample_dispatch_delay_seconds'),
    pair('giulia_monitor_snapshot_processing_seconds'),
    pair('giulia_monitor_sample_rpc_duration_seconds'),
    times[len(times) // 2], times[-1], int(size) / 1024.0, load))
EOF
done

# The scrape's own CPU cost at the same sizes, in-process (metrics_render.c).
pkg_libs=$(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib)
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -Ibuild/gen $(pkg-config --cflags jansson) \
  -o "$work/metrics_render" bench/metrics_render.c build/release/libgiulia.a build/grammar/tree_sitter.o \
  /usr/lib/libei.a $pkg_libs -lpthread -lm
echo
echo "## /metrics render CPU time per scrape (busy fixture snapshots, full 720-point histories;"
echo "## alerts_us/snapshot: their evaluation, once per snapshot)"
"$work/metrics_render" tests/fixtures/snapshots/busy/snapshots.json "${counts[@]}"
