#!/usr/bin/env bash
# The sampler's cost on the target (results in BENCHMARKS.md "Sampler").
#
#   bench/bench_sampler.sh [SECONDS] [sessions|ticks]   (default 8 s per run, both parts)
#
# ticks: the time the sampler's ticks take on the target, as it measures
# itself (executing.tick_us of a 5 s pulse), against the window: the share of
# one core the sampler keeps busy, robust to the neighbours' load because it
# is timed on the target around each tick. Beside it, the snapshot's own
# cost (sample_ms) for comparison.
#
# For targets with 1k, 10k and 100k idle processes plus 2 busy ones (so that
# the sampler has candidates that execute), one observer session at 1 s runs
# with the sampler off and on (default period and K), alternated, 2 rounds.
# Per second of observation it reports the target's CPU time (its OS
# process, clock ticks) and the session process's reductions, and their
# ratio on/off in the same run; plus the busy processes' iterations per CPU
# tick of the target (work the observer may take away). Needs `make` first.
# Everything started here is stopped on exit.
# needs: erlang-base
set -eu
cd "$(dirname "$0")/.."
secs=${1:-8}
part=${2:-all}
work=$(mktemp -d /tmp/giulia-bench-sampler.XXXXXX)
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
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), OTP"\
     "$(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().')"
# Reductions of the live session process since the previous probe (the
# first probe of a run stores its count on the bench node).
probe='Ps = [P || P <- processes(), {dictionary, D} <- [process_info(P, dictionary)],
  lists:keymember(giulia_session, 1, D)],
  Now = maps:from_list([{P, R} || P <- Ps, {reductions, R} <- [process_info(P, reductions)]]),
  Old = persistent_term:get(bench_session_reds, #{}),
  persistent_term:put(bench_session_reds, Now),
  io_lib:format("~b", [lists:sum([R - maps:get(P, Old, 0) || {P, R} <- maps:to_list(Now)])]).'
start_target() { # name n
  erl -noshell -noinput -name "$1@127.0.0.1" -setcookie "$cookie" -pa "$work" +P 400000 \
    >/dev/null 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 100); do call "$1" "ok." >/dev/null 2>&1 && break; sleep 0.2; done
  call "$1" "[spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, $2)], ok." >/dev/null
  call "$1" "observe_bench:load_start(2)." >/dev/null
}
if [ "$part" = all ] || [ "$part" = ticks ]; then
  echo "## sampler ticks, timed on the target (5 s pulses, 3 per size, 2 busy processes)"
  printf "%-9s %8s %10s %12s %14s %12s\n" processes ticks tick_ms busy_pct us_per_tick sample_ms
  for n in 1000 10000 100000; do
    start_target "tick$n" "$n"
    for _ in 1 2 3; do
      bin/giulia pulse "tick$n@127.0.0.1" --cookie "$cookie" --window 5000 --json |
        python3 -c '
import json, sys
d = json.load(sys.stdin); e = d["executing"]; n = sys.argv[1]
w = d["window_ms"]; t = e["ticks"]; us = e["tick_us"]
print("%-9s %8d %10.1f %11.3f%% %14.0f %12.1f" % (n, t, us / 1000, 100.0 * us / 1000 / w,
      us / t if t else 0, d["sample_ms"]))' "$n"
    done
    kill -9 "$pid" 2>/dev/null || true
  done
fi
[ "$part" = ticks ] && exit 0
echo "## sessions at 1 s, sampler off and on"
printf "%-9s %-8s %12s %14s %14s %12s\n" processes sampler cpu_ms_per_s session_reds/s iter/cpu_tick ticks
for n in 1000 10000 100000; do
  name="samp$n"
  erl -noshell -noinput -name "$name@127.0.0.1" -setcookie "$cookie" -pa "$work" +P 400000 \
    >/dev/null 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 100); do call "$name" "ok." >/dev/null 2>&1 && break; sleep 0.2; done
  call "$name" "[spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, $n)], ok." >/dev/null
  call "$name" "observe_bench:load_start(2)." >/dev/null
  for round in 1 2; do
    for mode in off on; do
      period=-1
      [ "$mode" = on ] && period=0
      GIULIA_LOG=error GIULIA_SAMPLE_PERIOD_MS=$period "$work/observe_watch" "$cookie" 1000 \
        $((secs + 3)) - "$name@127.0.0.1" >"$work/watch.out" &
      w=$!
      sleep 2
      call "$name" "$probe" >/dev/null
      r0=0
      c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
      i0=$(call "$name" "observe_bench:load_count()." | tr -dc '0-9')
      t0=$(date +%s%N)
      sleep "$secs"
      r1=$(call "$name" "$probe" | tr -dc '0-9-')
      c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
      i1=$(call "$name" "observe_bench:load_count()." | tr -dc '0-9')
      t1=$(date +%s%N)
      wait "$w"
      sleep 3 # the session process is gone before the next run
      echo "$n $mode $(( (c1 - c0) * 10 )) $((r1 - r0)) $((i1 - i0)) $(( (t1 - t0) / 1000000 ))"
    done
  done >"$work/runs.$n"
  awk -v n="$n" '
    { cpu[$2] += $3; reds[$2] += $4; iter[$2] += $5; ms[$2] += $6; ticks[$2] += $3 / 10 }
    END {
      for (k in cpu) {
        s = ms[k] / 1000
        printf "%-9s %-8s %12.1f %14.0f %14.0f\n", n, k, cpu[k] / s, reds[k] / s, iter[k] / ticks[k]
      }
      s_on = ms["on"] / 1000; s_off = ms["off"] / 1000
      printf "%-9s %-8s cpu on/off %.3f (+%.2f%% of a core), session reductions on/off %.2f, work per cpu tick on/off %.3f\n",
        n, "ratio", (cpu["on"] / s_on) / (cpu["off"] / s_off),
        (cpu["on"] / s_on - cpu["off"] / s_off) / 10,
        (reds["on"] / s_on) / (reds["off"] / s_off),
        (iter["on"] / ticks["on"]) / (iter["off"] / ticks["off"])
    }' "$work/runs.$n"
  kill -9 "$pid" 2>/dev/null || true
done
