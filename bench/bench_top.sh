#!/usr/bin/env bash
# One-shot `giulia top` against recon's proc_window (issue 31, item 4;
# results in BENCHMARKS.md "One-shot top against recon").
#
#   bench/bench_top.sh [ROUNDS]        (default 10 rounds per size)
#
# A target node with 10k, then 100k idle processes (and one busy one). Per
# round, alternated in one run: `giulia top NODE --window 1000 -n 10`; the
# reference, bench/top_ref.erl (what recon:proc_window(reductions, 10,
# 1000) does, compiled and loaded on this bench's own target) called
# through erl_call; `giulia top --watch --count 1 --window 1000 --json`,
# one snapshot of a session (what one-shot `top` ran before issue 31, item
# 4); and an idle second of the target (its baseline). For
# each: the wall time beyond the window at the caller, and the target's CPU
# (utime+stime of its beam.smp from /proc, less the idle baseline) per call.
# Needs `make` first.
# needs: erlang-base
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-10}
work=$(mktemp -d /tmp/giulia-bench-top.XXXXXX)
node_pid=
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
erlc -o "$work" bench/top_ref.erl
erl_call_bin=$(ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1)
tck=$(getconf CLK_TCK)
window=1000

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"\
     "OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().')"
echo "command: giulia top NODE --window $window -n 10; reference: top_ref:proc_window(reductions, 10, $window) via erl_call"
echo "$rounds rounds per size, alternated; per call: wall beyond the window (ms), target CPU (ms, idle baseline subtracted)"
printf "%-10s %-9s %10s %10s %10s %10s\n" processes arm wall_ms cpu_ms wall_ratio cpu_ratio

ticks() { # utime+stime of the node's beam.smp
  awk '{print $14 + $15}' "/proc/$node_pid/stat"
}
now_ms() { date +%s%3N; }

for n in 10000 100000; do
  name="benchtop$n"
  erl -noshell -noinput -name "$name@127.0.0.1" -setcookie "$cookie" -pa "$work" +P 2000000 \
    -eval "[spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, $n)],
           spawn(fun L() -> lists:seq(1, 1000), timer:sleep(10), L() end),
           register(ready, self()), receive stop -> ok end." >/dev/null 2>&1 &
  node_pid=$!
  for _ in $(seq 1 100); do
    echo "is_pid(whereis(ready))." |
      "$erl_call_bin" -name "$name@127.0.0.1" -c "$cookie" -e 2>/dev/null | grep -q true && break
    sleep 0.2
  done
  [ "$(cat /proc/$node_pid/comm)" = beam.smp ] || { echo "node $name: no beam.smp" >&2; exit 1; }
  # one call of each first: code loaded, caches warm
  bin/giulia top "$name@127.0.0.1" --cookie "$cookie" --window 100 >/dev/null
  "$erl_call_bin" -name "$name@127.0.0.1" -c "$cookie" -a "top_ref proc_window [reductions,10,100]" >/dev/null
  declare -A wall=() cpu=()
  for arm in giulia ref session idle; do wall[$arm]=0; cpu[$arm]=0; done
  # Each measurement of the target's CPU runs on for a settle time after
  # the call (what a call leaves the node to do, such as freeing the heaps
  # of its process, is the call's); the idle arm is the same time with no
  # call. The callers' order swaps every round.
  settle=500
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then order="giulia ref session idle"; else order="ref giulia session idle"; fi
    for arm in $order; do
      c0=$(ticks); t0=$(now_ms)
      case $arm in
        giulia) bin/giulia top "$name@127.0.0.1" --cookie "$cookie" --window $window -n 10 >/dev/null ;;
        ref) "$erl_call_bin" -name "$name@127.0.0.1" -c "$cookie" \
               -a "top_ref proc_window [reductions,10,$window]" >/dev/null ;;
        session) bin/giulia top "$name@127.0.0.1" --cookie "$cookie" --watch --count 1 --window $window \
                   --interval $window -n 10 --json >/dev/null ;;
        idle) sleep "$(awk -v w=$window 'BEGIN {print w / 1000}')" ;;
      esac
      t1=$(now_ms)
      sleep "$(awk -v s=$settle -v w=$window -v d=$((t1 - t0)) 'BEGIN {x = (s + w - d) / 1000; print (x > 0 ? x : 0)}')"
      c1=$(ticks)
      wall[$arm]=$((wall[$arm] + t1 - t0 - window))
      cpu[$arm]=$((cpu[$arm] + c1 - c0))
    done
  done
  awk -v n="$n" -v r="$rounds" -v tck="$tck" -v gw="${wall[giulia]}" -v rw="${wall[ref]}" \
      -v gc="${cpu[giulia]}" -v rc="${cpu[ref]}" -v ic="${cpu[idle]}" \
      -v sw="${wall[session]}" -v sc="${cpu[session]}" 'BEGIN {
    g_cpu = (gc - ic) * 1000 / tck / r; r_cpu = (rc - ic) * 1000 / tck / r
    g_wall = gw / r; r_wall = rw / r
    printf "%-10s %-9s %10.0f %10.1f %9.2fx %9.2fx\n", n, "giulia", g_wall, g_cpu,
           g_wall / (r_wall > 0 ? r_wall : 1), g_cpu / (r_cpu > 0 ? r_cpu : 1)
    printf "%-10s %-9s %10.0f %10.1f %10s %10s\n", n, "recon", r_wall, r_cpu, "1", "1"
    s_cpu = (sc - ic) * 1000 / tck / r; s_wall = sw / r
    printf "%-10s %-9s %10.0f %10.1f %9.2fx %9.2fx\n", n, "session", s_wall, s_cpu,
           s_wall / (r_wall > 0 ? r_wall : 1), s_cpu / (r_cpu > 0 ? r_cpu : 1)
    printf "%-10s %-9s %10s %10.1f\n", n, "idle", "-", ic * 1000 / tck / r
  }'
  kill -9 "$node_pid" 2>/dev/null || true
  wait "$node_pid" 2>/dev/null || true
  node_pid=
done
