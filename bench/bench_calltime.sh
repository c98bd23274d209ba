#!/usr/bin/env bash
# call_time against call_count: what each costs the target (results in
# BENCHMARKS.md "call_time vs call_count").
#
#   bench/bench_calltime.sh [demo] [cpu]    (default: both)
#
# demo  examples/nexus under a fixed wrk load (scripts/nexus.sh load: 87%
#       reads, 16 connections), observed at 1 s tracing Nexus.Repo and
#       Nexus.Registry.TableRegistry: no observer, call_count, call_count +
#       call_time; alternated, 3 rounds of 8 s each.
# cpu   the worst case: 2 processes calling two modules of tiny functions in a
#       loop (bench/observe_bench_a/b), same three runs.
# needs: wrk erlang-base scripts/nexus.sh
#
# Each run reports the target's work per CPU second (requests or loop
# iterations divided by the CPU time of the target's OS process), which the
# neighbours' load on a shared machine cannot blur, as a ratio to the run
# without observer measured in the same round. Needs `make` first; starts its
# own Nexus on a free port with its own run directory, and stops everything
# it started on exit.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(demo cpu)
work=$(mktemp -d /tmp/giulia-bench-calltime.XXXXXX)
pids=()
nexus_started=""
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "$nexus_started" ]; then
    NEXUS_NODE=$nexus_node NEXUS_PORT=$nexus_port NEXUS_RUN_DIR="$work/nexus-run" \
      scripts/nexus.sh stop >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
seconds=8
rounds=3
settle=4 # after an observer starts: its patterns are set and its first window chose the flags
pkg_libs=$(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq)
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -Ibuild/gen -o "$work/observe_watch" \
  bench/observe_watch.c build/release/libgiulia.a /usr/lib/libei.a $pkg_libs -lpthread -lm
erlc -o "$work" bench/observe_bench.erl bench/observe_bench_a.erl bench/observe_bench_b.erl
erl_call_bin=$(ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"\
     "OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().'),"\
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"

# watcher MODE COOKIE MODS NODE: starts an observer for MODE (count|time) in
# the background and echoes its pid; MODE none starts nothing.
watcher() {
  local mode=$1 cookie=$2 mods=$3 node=$4 ct=0
  [ "$mode" = none ] && return 0
  [ "$mode" = time ] && ct=1
  OBSERVE_WATCH_CALL_TIME=$ct GIULIA_LOG=error "$work/observe_watch" "$cookie" 1000 \
    $((seconds + settle + 2)) "$mods" "$node" >>"$work/watch.out" 2>&1 &
  echo $!
}

# ours NODE COOKIE: "<sessions> <processes flagged by a session>" on the node.
ours() {
  echo 'S = [P || P <- processes(), {dictionary, D} <- [process_info(P, dictionary)],
    lists:keymember(giulia_session, 1, D)],
    F = [P || P <- processes(), {tracer, T} <- [erlang:trace_info(P, tracer)], lists:member(T, S)],
    io_lib:format("~b ~b", [length(S), length(F)]).' |
    "$erl_call_bin" -name "$1" -c "$2" -e | tr -dc '0-9 '
}
# settled MODE NODE COOKIE: waits until the previous observer is gone from the
# node (none) or the new one is tracing (count) and flagging (time): a run
# must never measure a session that is still setting up or cleaning up.
settled() {
  local mode=$1 node=$2 cookie=$3 s f
  for _ in $(seq 1 150); do
    read -r s f <<<"$(ours "$node" "$cookie")"
    case $mode in
      none) [ "${s:-1}" = 0 ] && return 0 ;;
      count) [ "${s:-0}" = 1 ] && return 0 ;;
      time) [ "${s:-0}" = 1 ] && return 0 ;; # flags may already be gone (rate cap)
    esac
    sleep 0.2
  done
  echo "bench_calltime: $node did not settle for $mode (sessions ${s:-?}, flagged ${f:-?})" >&2
  return 1
}

# summarise LABEL: reads "mode work ticks" lines on stdin, prints the table.
summarise() {
  awk -v unit="$1" '
    { w[$1] += $2; t[$1] += $3; n[$1]++ }
    END {
      base = w["none"] / t["none"]
      printf "%-22s %14s %14s %10s\n", "run", unit "/run", unit "/cpu-tick", "vs none"
      split("none count time", order, " ")
      split("no observer|call_count|call_count+call_time", label, "|")
      for (i = 1; i <= 3; i++) { k = order[i]; per = w[k] / t[k]
        printf "%-22s %14.0f %14.2f %9.1f%%\n", label[i], w[k] / n[k], per,
               100.0 * (per - base) / base }
    }'
}

if [[ " ${parts[*]} " == *" demo "* ]]; then
  echo
  echo "## demo: examples/nexus under wrk (16 connections, ${seconds} s per run, $rounds rounds)"
  nexus_node="calltime_bench_$$@127.0.0.1"
  nexus_port=$(free_port)
  export NEXUS_NODE=$nexus_node NEXUS_PORT=$nexus_port NEXUS_RUN_DIR="$work/nexus-run"
  scripts/nexus.sh build >/dev/null
  # No scheduler busy-waiting: the target's CPU time is then its work, not
  # spinning that depends on how busy the machine is.
  ERL_AFLAGS="+sbwt none +sbwtdcpu none +sbwtdio none" scripts/nexus.sh start 2>/dev/null
  nexus_started=1
  npid=$(cat "$work/nexus-run/nexus.pid")
  ncookie=$(cat "$work/nexus-run/cookie")
  mods=Nexus.Repo,Nexus.Registry.TableRegistry
  scripts/nexus.sh load 3 16 >/dev/null 2>&1 || true # warm-up
  results=()
  for round in $(seq 1 "$rounds"); do
    for mode in none count time; do
      settled none "$nexus_node" "$ncookie"
      w=$(watcher "$mode" "$ncookie" "$mods" "$nexus_node")
      [ -n "$w" ] && { pids+=("$w"); sleep "$settle"; settled "$mode" "$nexus_node" "$ncookie"; }
      t0=$(ticks "$npid")
      reqs=$(scripts/nexus.sh load "$seconds" 16 2>&1 | awk '/requests in/ {print $1}')
      t1=$(ticks "$npid")
      [ -n "$w" ] && wait "$w" 2>/dev/null || true
      results+=("$mode ${reqs:-0} $((t1 - t0))")
    done
  done
  printf "%s\n" "${results[@]}" | summarise requests
  echo "(runs, mode requests cpu-ticks: $(printf "%s; " "${results[@]}"))"
  scripts/nexus.sh stop >/dev/null 2>&1 || true
  nexus_started=""
fi

if [[ " ${parts[*]} " == *" cpu "* ]]; then
  echo
  echo "## cpu: 2 processes calling tiny functions of 2 traced modules (${seconds} s per run, $rounds rounds)"
  cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  name="calltime_cpu_$$"
  erl -noshell -noinput -name "$name@127.0.0.1" -setcookie "$cookie" -pa "$work" \
    +sbwt none +sbwtdcpu none +sbwtdio none \
    >/dev/null 2>&1 &
  lpid=$!
  pids+=("$lpid")
  call() { echo "$1" | "$erl_call_bin" -name "$name@127.0.0.1" -c "$cookie" -e; }
  for _ in $(seq 1 100); do call "ok." >/dev/null 2>&1 && break; sleep 0.2; done
  call "observe_bench:load_start(2)." >/dev/null
  count() { call "observe_bench:load_count()." | tr -dc '0-9'; }
  results=()
  for round in $(seq 1 "$rounds"); do
    for mode in none count time; do
      settled none "$name@127.0.0.1" "$cookie"
      w=$(watcher "$mode" "$cookie" observe_bench_a,observe_bench_b "$name@127.0.0.1")
      [ -n "$w" ] && { pids+=("$w"); sleep "$settle"; settled "$mode" "$name@127.0.0.1" "$cookie"; }
      c0=$(count); t0=$(ticks "$lpid")
      sleep "$seconds"
      c1=$(count); t1=$(ticks "$lpid")
      [ -n "$w" ] && wait "$w" 2>/dev/null || true
      results+=("$mode $((c1 - c0)) $((t1 - t0))")
    done
  done
  printf "%s\n" "${results[@]}" | summarise iterations
  echo "(runs, mode iterations cpu-ticks: $(printf "%s; " "${results[@]}"))"
fi
echo
echo "observers:"
sed 's/^/  /' "$work/watch.out" | grep -v ' info ' || true
