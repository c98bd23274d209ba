#!/usr/bin/env bash
# The overhead budget: what duty-cycled call counting costs the target and
# how close its estimates come to full counts (BENCHMARKS.md "Overhead
# budget").
#
#   bench/bench_budget.sh [cpu] [demo]    (default: both)
#
# cpu   the worst case: 2 processes calling the tiny functions of two traced
#       modules in a loop (bench/observe_bench_a/b).
# demo  examples/nexus under a fixed wrk load (scripts/nexus.sh load, 16
#       connections), tracing Nexus.Repo and Nexus.Registry.TableRegistry.
# Each with: no observer, observation without tracing, full call_count, and
# budgets of 2%, 5% and 10%; interleaved, $rounds rounds (BENCH_ROUNDS,
# default 6) of $seconds s (BENCH_SECONDS, default 8), the order rotating
# from round to round. BENCH_MODES picks modes (also observe_nosampler:
# observation with the sampler off).
# needs: wrk erlang-base python3 scripts/nexus.sh
#
# Work is the target's work per CPU second (loop iterations or requests
# divided by the CPU time of the target's OS process), which the
# neighbours' load cannot blur, as a ratio to the run without observer of
# the same round: the median over rounds and its range. Estimates are
# compared over the very windows the observer reported (its per-window
# records, bench/observe_watch.c): on cpu against the true calls (the
# workload's calls per iteration x the iterations a recorder on the target
# saw in those windows), on the demo as calls per node reduction against
# the same under full counting in the same round (a call path takes the
# same reductions counted or not). Per run and pooled over the rounds, and
# how often the stated 95% interval holds the reference
# (bench/budget_report.py). The utilisation ceiling is off in these runs (a
# CPU-bound target is always above it).
set -eu
cd "$(dirname "$0")/.."
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(cpu demo)
work=$(mktemp -d /tmp/giulia-bench-budget.XXXXXX)
pids=()
nexus_started=""
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "$nexus_started" ]; then
    NEXUS_NODE=$nexus_node NEXUS_PORT=$nexus_port NEXUS_RUN_DIR="$work/nexus-run" \
      scripts/nexus.sh stop >/dev/null 2>&1 || true
  fi
  [ -n "${BENCH_KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
seconds=${BENCH_SECONDS:-8}
rounds=${BENCH_ROUNDS:-6}
settle=4 # the observer's first windows: patterns set, the fraction adapting
modes=${BENCH_MODES:-"none observe full b2 b5 b10"}
pkg_libs=$(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib)
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -Ibuild/gen -o "$work/observe_watch" \
  bench/observe_watch.c build/release/libgiulia.a /usr/lib/libei.a $pkg_libs -lpthread -lm
erlc -o "$work" bench/observe_bench.erl bench/observe_bench_a.erl bench/observe_bench_b.erl
erl_call_bin=$(ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "machine: $(nproc) cores, OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().'),"\
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"

# watcher MODE COOKIE MODS NODE OUT WINDOWS: starts an observer in the background
# and echoes its pid; MODE none starts nothing.
watcher() {
  local mode=$1 cookie=$2 mods=$3 node=$4 out=$5 windows=$6 overhead=0 period=
  case $mode in
    none) return 0 ;;
    observe) mods=- ;;
    observe_nosampler) mods=- period=-1 ;;
    b2) overhead=0.02 ;;
    b5) overhead=0.05 ;;
    b10) overhead=0.10 ;;
  esac
  GIULIA_SAMPLE_PERIOD_MS=$period OBSERVE_WATCH_OVERHEAD=$overhead OBSERVE_WATCH_CALLS=$out \
    OBSERVE_WATCH_WINDOWS=$windows GIULIA_LOG=error \
    "$work/observe_watch" "$cookie" 1000 $((seconds + settle + 3)) "$mods" "$node" \
    >>"$work/watch.out" 2>&1 &
  echo $!
}
sessions() {
  echo 'length([P || P <- processes(), {dictionary, D} <- [process_info(P, dictionary)],
    lists:keymember(giulia_session, 1, D)]).' | "$erl_call_bin" -name "$1" -c "$2" -e | tr -dc '0-9'
}
settled() { # NODE COOKIE WANT
  for _ in $(seq 1 150); do [ "$(sessions "$1" "$2")" = "$3" ] && return 0; sleep 0.2; done
  echo "bench_budget: $1 did not settle at $3 sessions" >&2; return 1
}

run_target() { # NAME COOKIE MODS TARGET_PID WORKFN UNIT [TRUTH]
  local node=$1 cookie=$2 mods=$3 tpid=$4 workfn=$5 order
  : >"$work/runs"
  for round in $(seq 1 "$rounds"); do
    # the order rotates from round to round, so that no mode always
    # follows the same one (a slow barrier's or a warm cache's after-effects)
    read -ra order <<<"$modes"
    local shift=$(((round - 1) % ${#order[@]}))
    order=("${order[@]:$shift}" "${order[@]:0:$shift}")
    for mode in "${order[@]}"; do
      settled "$node" "$cookie" 0
      w=$(watcher "$mode" "$cookie" "$mods" "$node" "$work/calls.$mode.$round" \
        "$work/win.$mode.$round")
      [ -n "$w" ] && { pids+=("$w"); sleep "$settle"; settled "$node" "$cookie" 1; }
      [ -n "${recorder:-}" ] && $recorder "$work/rec.discard"
      t0=$(date +%s%3N)
      k0=$(ticks "$tpid")
      done_work=$($workfn)
      k1=$(ticks "$tpid")
      t1=$(date +%s%3N)
      [ -n "${recorder:-}" ] && $recorder "$work/rec.$mode.$round"
      # the observer is not this shell's child (started in $(...)): poll
      if [ -n "$w" ]; then while kill -0 "$w" 2>/dev/null; do sleep 0.2; done; fi
      echo "$mode $round $t0 $t1 $done_work $((k1 - k0))" >>"$work/runs"
    done
  done
  python3 bench/budget_report.py "$work" "$6" "${7:-}"
  echo "(runs, mode round t0 t1 work cpu-ticks: $(tr '\n' ';' <"$work/runs"))"
}

if [[ " ${parts[*]} " == *" cpu "* ]]; then
  echo
  echo "## cpu: 2 processes calling tiny functions of 2 traced modules (${seconds} s per run, $rounds rounds)"
  cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  name="budget_cpu_$$@127.0.0.1"
  erl -noshell -noinput -name "$name" -setcookie "$cookie" -pa "$work" \
    +sbwt none +sbwtdcpu none +sbwtdio none >/dev/null 2>&1 &
  lpid=$!
  pids+=("$lpid")
  call() { echo "$1" | "$erl_call_bin" -name "$name" -c "$cookie" -e; }
  for _ in $(seq 1 100); do call "ok." >/dev/null 2>&1 && break; sleep 0.2; done
  call "observe_bench:load_start(2)." >/dev/null
  call "observe_bench:recorder_start()." >/dev/null
  cpu_recorder() { call "observe_bench:recorder_dump(\"$1\")." >/dev/null; }
  recorder=cpu_recorder
  cpu_work() {
    local c0 c1
    c0=$(call "observe_bench:load_count()." | tr -dc '0-9'); sleep "$seconds"
    c1=$(call "observe_bench:load_count()." | tr -dc '0-9'); echo $((c1 - c0))
  }
  # the calls per loop iteration, known from the code (bench/observe_bench*.erl)
  run_target "$name" "$cookie" observe_bench_a,observe_bench_b "$lpid" cpu_work iterations \
    ":observe_bench_a.work/1=201,:observe_bench_b.step/1=200,:observe_bench_b.square/1=200"
fi

if [[ " ${parts[*]} " == *" demo "* ]]; then
  echo
  echo "## demo: examples/nexus under wrk (16 connections, ${seconds} s per run, $rounds rounds)"
  nexus_node="budget_bench_$$@127.0.0.1"
  nexus_port=$(free_port)
  export NEXUS_NODE=$nexus_node NEXUS_PORT=$nexus_port NEXUS_RUN_DIR="$work/nexus-run"
  scripts/nexus.sh build >/dev/null
  ERL_AFLAGS="+sbwt none +sbwtdcpu none +sbwtdio none" scripts/nexus.sh start 2>/dev/null
  nexus_started=1
  npid=$(cat "$work/nexus-run/nexus.pid")
  ncookie=$(cat "$work/nexus-run/cookie")
  scripts/nexus.sh load 3 16 >/dev/null 2>&1 || true # warm-up
  demo_work() { scripts/nexus.sh load "$seconds" 16 2>&1 | awk '/requests in/ {print $1}'; }
  recorder=""
  run_target "$nexus_node" "$ncookie" Nexus.Repo,Nexus.Registry.TableRegistry "$npid" demo_work requests
  scripts/nexus.sh stop >/dev/null 2>&1 || true
  nexus_started=""
fi
echo
echo "observers:"
sed 's/^/  /' "$work/watch.out" | grep -v ' info ' || true
