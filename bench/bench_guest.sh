#!/usr/bin/env bash
# The observer's whole cost on its target (issue 27; results in
# BENCHMARKS.md "The guest's cost").
#
#   bench/bench_guest.sh [SECONDS] [SIZES]      (default 20 s windows, "1000 10000 100000")
#
# For each size, an idle Elixir node (elixir --name) with that many sleeping
# processes. The measure is the node's own CPU time (every thread's time on a CPU,
# /proc/PID/task/*/schedstat), read over windows of SECONDS with no observer and
# with one, alternated, two rounds, in one run, for:
#   - snapshots every 1 s, sampler on (the default period and K);
#   - snapshots every 5 s (the default interval), sampler on;
#   - snapshots every 5 s, sampler off (the snapshots alone).
# The observer is bench/observe_watch.c (the session manager as the monitor
# runs it), started before the window and stopped after it. Printed per row:
# the node's cores without and with the observer (each round), the added
# cores (with - without, mean of the rounds), and what the session measured
# of itself on the node (its cost as a share of one scheduler, its scan per
# snapshot, its sampler per second, its reductions per snapshot, and its
# snapshots with a scan of all: fewer when the budget thinned the scans).
# Each window starts 8 s after the observer, once the budget has read the
# node's CPU and acted on it.
# Then a busy target (10k processes and two loops at full speed, so that
# the node's CPU cannot show the cost): the loops' work per CPU second of
# the node with and without an observer at 1 s tracing a module under the
# default budget, and the session's own measure. Needs `make` first; starts
# and stops everything itself.
# needs: elixir erlang-base
set -eu
cd "$(dirname "$0")/.."
secs=${1:-20}
sizes=${2:-"1000 10000 100000"}
work=$(mktemp -d /tmp/giulia-bench-guest.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
pkg_libs=$(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq)
erlc -o "$work" bench/observe_bench.erl bench/observe_bench_a.erl bench/observe_bench_b.erl
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -Ibuild/gen -o "$work/observe_watch" \
  bench/observe_watch.c build/release/libgiulia.a /usr/lib/libei.a $pkg_libs -lpthread -lm
erl_call_bin=$(ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1)
call() { echo "$2" | "$erl_call_bin" -name "$1@127.0.0.1" -c "$cookie" -e; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M UTC')"

start_node() { # name processes
  elixir --erl "+P 400000" --name "$1@127.0.0.1" --cookie "$cookie" -pa "$work" \
    -e 'Process.sleep(:infinity)' >/dev/null 2>&1 &
  pids+=("$!")
  for _ in $(seq 1 150); do call "$1" "ok." >/dev/null 2>&1 && break; sleep 0.2; done
  call "$1" "[spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, $2)], ok." \
    >/dev/null
  beam=$(pgrep -f "beam.smp.*-name $1@127.0.0.1" | head -n 1)
}
# the node's CPU time in µs: every thread's time on a CPU (schedstat, ns),
# not /proc/PID/stat's ticks of 10 ms (a tick was 5-10% of a window's figure)
cpu_us() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%d", s / 1000 }'; }
cores() { echo "scale=5; $1 / 1000000 / $secs" | bc; }

# one window without and one with the observer; prints "off on" in cores
# and leaves the observer's report in $work/watch.out
round() { # node interval_ms [env...]
  local node=$1 iv=$2
  shift 2
  sleep 2
  local a b off on
  a=$(cpu_us "$beam"); sleep "$secs"; b=$(cpu_us "$beam")
  off=$(cores $((b - a)))
  env "$@" "$work/observe_watch" "$cookie" "$iv" $((secs + 12)) - "$node@127.0.0.1" \
    >"$work/watch.out" 2>/dev/null &
  local w=$!
  # the budget reads the node's CPU every 5 s and thins the scans then:
  # the window starts once it has had a read to act on
  sleep 8
  a=$(cpu_us "$beam"); sleep "$secs"; b=$(cpu_us "$beam")
  on=$(cores $((b - a)))
  wait "$w" || true
  echo "$off $on"
}

printf "%-9s %-22s %-19s %-19s %9s %9s %8s %10s %9s %9s\n" processes setting off_cores on_cores \
  added self_cost scan_ms sampler_ms/s reds/snap scans
for n in $sizes; do
  name="guest$n"
  start_node "$name" "$n"
  for setting in "1000 sampler" "5000 sampler" "5000 snapshots"; do
    iv=${setting% *}
    kind=${setting#* }
    envs=(GIULIA_NOTHING=1)
    [ "$kind" = snapshots ] && envs=(GIULIA_SAMPLE_PERIOD_MS=-1)
    r1=$(round "$name" "$iv" "${envs[@]}")
    r2=$(round "$name" "$iv" "${envs[@]}")
    obs=$(grep '^observer_cost' "$work/watch.out" || true)
    get() { echo "$obs" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    set -- $r1 $r2
    added=$(echo "scale=5; (($2 - $1) + ($4 - $3)) / 2" | bc)
    printf "%-9s %-22s %-19s %-19s %9s %9s %8s %10s %9s %9s\n" "$n" "${iv} ms, $kind" \
      "$1/$3" "$2/$4" "$added" "$(get observer_cost)" "$(get observer_scan_ms)" \
      "$(get observer_sampler_ms_per_s)" "$(get observer_reds_per_snapshot)" \
      "$(get observer_scanned)"
  done
  kill -9 "${pids[-1]}" 2>/dev/null || true
done

echo "## busy target: 10k processes, two loops at full speed, Hot modules traced at 1 s"
name=guestbusy
start_node "$name" 10000
call "$name" "observe_bench:load_start(2)." >/dev/null
iters() { call "$name" "observe_bench:load_count()." | tr -dc '0-9'; }
for r in 1 2; do
  a=$(cpu_us "$beam"); i0=$(iters); sleep "$secs"; b=$(cpu_us "$beam"); i1=$(iters)
  off=$(echo "scale=1; ($i1 - $i0) / (($b - $a) / 1000000)" | bc)
  OBSERVE_WATCH_OVERHEAD=0.05 "$work/observe_watch" "$cookie" 1000 $((secs + 8)) \
    observe_bench_a "$name@127.0.0.1" >"$work/watch.out" 2>/dev/null &
  w=$!
  sleep 4
  a=$(cpu_us "$beam"); i0=$(iters); sleep "$secs"; b=$(cpu_us "$beam"); i1=$(iters)
  on=$(echo "scale=1; ($i1 - $i0) / (($b - $a) / 1000000)" | bc)
  wait "$w" || true
  echo "round $r: iterations per CPU second off $off on $on (on/off $(echo "scale=4; $on / $off" | bc)); $(grep '^observer_cost' "$work/watch.out" || echo 'no observer line')"
done
