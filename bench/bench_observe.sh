#!/usr/bin/env bash
# Runtime observer benchmarks (results in BENCHMARKS.md "Runtime observer").
#
#   bench/bench_observe.sh [latency] [overhead] [fleet]    (default: all three)
#
# latency   snapshot latency on a target with 10k, 100k and 1M idle processes:
#           the session probe interpreted by erl_eval (as Giulia runs it)
#           against the same source compiled into a module, side by side in
#           one run on one node; plus the reply size.
# overhead  throughput of a fixed workload (2 busy processes) without an
#           observer, with one at 1 s, and with one at 1 s tracing the
#           workload's two modules; alternated A/B/C twice.
# fleet     one observer process watching 20 nodes at 1 s for 30 s: its CPU
#           and peak RSS.
# Everything started here is stopped on exit. Needs `make` first.
# needs: erlang-base
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(latency overhead fleet)
work=$(mktemp -d /tmp/giulia-bench-observe.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
pkg_libs=$(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq)

# Build the target-side driver, the workload and the compiled reference.
{
  echo "-module(giulia_obs_ref). -export([run/1]). run(Args) ->"
  cat src/observe/probe/session/*.erl
} > "$work/giulia_obs_ref.erl"
erlc -o "$work" +nowarn_unused_vars bench/observe_bench.erl bench/observe_bench_a.erl \
  bench/observe_bench_b.erl "$work/giulia_obs_ref.erl" 2>/dev/null
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -Ibuild/gen -o "$work/observe_watch" \
  bench/observe_watch.c build/release/libgiulia.a /usr/lib/libei.a $pkg_libs -lpthread -lm

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"\
     "OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().')"

if [[ " ${parts[*]} " == *" latency "* ]]; then
  echo
  echo "## snapshot latency (median of 3 samples x 2 alternated runs; ms on the target)"
  printf "%-10s %12s %12s %8s %12s %12s\n" processes interpreted compiled ratio reply_bytes ref_bytes
  for n in 10000 100000 1000000; do
    erl -noshell -pa "$work" +P 2000000 -run observe_bench latency \
      "$root/build/gen/session.erl" "$n" 3 |
      awk '{printf "%-10s %12s %12s %7sx %12s %12s\n", $1, $2, $3, $4, $5, $6}'
  done
fi

start_node() { # name [extra args...]
  local name=$1
  shift
  erl -noshell -noinput -name "$name@127.0.0.1" -setcookie "$cookie" -pa "$work" "$@" \
    >/dev/null 2>&1 &
  pids+=($!)
  disown "$!"
}
erl_call_bin=$(ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1)
call() { # node expr
  echo "$2" | "$erl_call_bin" -name "$1@127.0.0.1" -c "$cookie" -e
}
wait_node() {
  for _ in $(seq 1 100); do
    call "$1" "ok." >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "node $1 did not start" >&2
  return 1
}

if [[ " ${parts[*]} " == *" overhead "* ]]; then
  echo
  echo "## overhead on a loaded target (2 busy processes on 2 schedulers, 6 s per run, 3 rounds)"
  start_node load
  load_pid=${pids[-1]}
  wait_node load
  call load "observe_bench:load_start(2)." >/dev/null
  # CPU time of the target's OS process (clock ticks): work per CPU second is
  # what an observer can take away, whatever the neighbours' load.
  cpu() { awk '{print $14 + $15}' "/proc/$load_pid/stat"; }
  count() { call load "observe_bench:load_count()." | tr -dc '0-9'; }
  # Reductions of our session process(es) and of the whole node: the share of
  # the node's work the observer took, which the machine's noise cannot hide.
  share_probe='Ps = [P || P <- processes(), {dictionary, D} <- [process_info(P, dictionary)],
    lists:keymember(giulia_session, 1, D)],
    io_lib:format("~b ~b", [lists:sum([R || P <- Ps, {reductions, R} <- [process_info(P, reductions)]]),
    element(1, statistics(reductions))]).'
  shares() { call load "$share_probe" | tr -dc '0-9 '; }
  run() { # label mods
    local label=$1 mods=$2 watcher="" s0="" s1=""
    if [ "$mods" != "none" ]; then
      GIULIA_LOG=error "$work/observe_watch" "$cookie" 1000 9 "$mods" load@127.0.0.1 \
        >"$work/watch.out" &
      watcher=$!
      sleep 1.5
      s0=$(shares)
    fi
    local c0 c1 t0 t1
    c0=$(count); t0=$(cpu); sleep 6; c1=$(count); t1=$(cpu)
    if [ -n "$watcher" ]; then
      s1=$(shares)
      wait "$watcher"
      set -- $s0 $s1
      echo "$label $((c1 - c0)) $(( $3 - $1 )) $(( $4 - $2 )) $((t1 - t0))"
    else
      echo "$label $((c1 - c0)) 0 1 $((t1 - t0))"
    fi
  }
  results=()
  for round in 1 2 3; do
    results+=("$(run none none)")
    results+=("$(run observer -)")
    results+=("$(run observer+trace observe_bench_a,observe_bench_b)")
  done
  printf "%s\n" "${results[@]}" | awk '
    { sum[$1] += $2; n[$1]++; ours[$1] += $3; all[$1] += $4; ticks[$1] += $5 }
    END {
      base = sum["none"] / n["none"]
      pbase = sum["none"] / ticks["none"]
      printf "%-16s %14s %9s %16s %9s %12s\n", "run", "iterations/6s", "vs none",
             "iter/cpu-tick", "vs none", "observer reds"
      split("none observer observer+trace", order, " ")
      for (i = 1; i <= 3; i++) { k = order[i]; avg = sum[k] / n[k]; per = sum[k] / ticks[k];
        printf "%-16s %14.0f %8.1f%% %16.0f %8.1f%% %11.3f%%\n", k, avg,
               100.0 * (avg - base) / base, per, 100.0 * (per - pbase) / pbase,
               100.0 * ours[k] / all[k] }
    }'
  echo "(runs: $(printf "%s; " "${results[@]}"))"
fi

if [[ " ${parts[*]} " == *" fleet "* ]]; then
  echo
  echo "## one observer, 20 nodes at 1 s, 30 s"
  nodes=()
  for i in $(seq 1 20); do
    start_node "fleet$i" +S 1 +A 1
    nodes+=("fleet$i@127.0.0.1")
  done
  for i in $(seq 1 20); do wait_node "fleet$i"; done
  GIULIA_LOG=error "$work/observe_watch" "$cookie" 1000 30 - "${nodes[@]}"
fi
