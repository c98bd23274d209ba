#!/usr/bin/env bash
# The long run (issue 13; results in BENCHMARKS.md "Long run: faults during
# an observation"). Not a test and not part of `make bench`: it takes the
# time it is given.
#
#   bench/longrun.sh                      # the full run: an hour at 1 s,
#                                         # worker SIGKILLed every 5 minutes,
#                                         # monitor SIGKILLed once
#   DURATION_S=360 WORKER_KILL_EVERY_S=60 MONITOR_KILL_AT_S=150 bench/longrun.sh
#                                         # the shortened run
#
# One Erlang node with a small busy workload, a `giulia worker` and a
# `giulia monitor` (separate processes, separate data directories) on free
# loopback ports, and one observation at INTERVAL_MS (1000). Every
# WORKER_KILL_EVERY_S the worker is killed with SIGKILL and restarted after
# DOWN_S (2) seconds; at MONITOR_KILL_AT_S the monitor is killed with SIGKILL,
# restarted DOWN_S later, and `giulia-observe start NODE` is run again (the new
# monitor adopts the orphaned observation). At the end `giulia-observe stop`
# builds the profile, and the script reads back what the worker stored:
#
#   numbered    snapshots the monitors numbered (the finalize's next_seq)
#   stored      snapshots the worker holds for the session
#   lost        numbered but not stored (holes in the numbers)
#   duplicated  stored twice (same seq, or the same sample under two seqs)
#   profiles    profiles built (1 expected) and observations (1 expected)
#   gaps        the gaps the profile marks (the monitor's downtime shows as
#               a pause: no snapshot was taken while no monitor ran)
#
# Needs `make` first. Everything started here is killed on exit.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
DURATION_S=${DURATION_S:-3600}
WORKER_KILL_EVERY_S=${WORKER_KILL_EVERY_S:-300}
MONITOR_KILL_AT_S=${MONITOR_KILL_AT_S:-$((DURATION_S / 2 + 30))}
INTERVAL_MS=${INTERVAL_MS:-1000}
DOWN_S=${DOWN_S:-2}
# BIN_DIR: where giulia and giulia-observe are (default bin/); a copy keeps a
# long run on one build while the tree is rebuilt.
bindir=${BIN_DIR:-$root/bin}
bin="$bindir/giulia"
[ -x "$bin" ] || { echo "longrun: build first (make)" >&2; exit 2; }

work=$(mktemp -d /tmp/giulia-longrun.XXXXXX)
node_pid="" worker_pid="" monitor_pid=""
cleanup() {
  exec 2>/dev/null # no "Killed" notices for the processes stopped here
  for p in $monitor_pid $worker_pid $node_pid; do kill -9 "$p" || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_health() { # url
  for _ in $(seq 1 300); do
    curl -sf "$1/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "longrun: $1 did not come up" >&2
  exit 1
}

cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
node="longrun$$@127.0.0.1"
erl -noshell -noinput -name "$node" -setcookie "$cookie" -eval '
  spawn(fun() -> L = fun Loop(N) -> _ = lists:seq(1, 2000), timer:sleep(5), Loop(N + 1) end,
                 L(0) end).' >/dev/null 2>&1 &
node_pid=$!

wport=$(free_port)
mport=$(free_port)
wurl="http://127.0.0.1:$wport"
murl="http://127.0.0.1:$mport"
start_worker() {
  "$bin" worker --listen "127.0.0.1:$wport" --data "$work/worker" >>"$work/worker.log" 2>&1 &
  worker_pid=$!
  wait_health "$wurl"
}
start_monitor() {
  "$bin" monitor --listen "127.0.0.1:$mport" --worker "$wurl" --data "$work/monitor" \
    >>"$work/monitor.log" 2>&1 &
  monitor_pid=$!
  wait_health "$murl"
}
observe_start() {
  for _ in $(seq 1 100); do
    GIULIA_MONITOR_URL=$murl "$bindir/giulia-observe" start "$node" "$cookie" \
      "$INTERVAL_MS" >>"$work/observe.log" 2>&1 && return 0
    sleep 0.3 # the node may still be starting
  done
  echo "longrun: could not start the observation; see $work/observe.log" >&2
  cat "$work/observe.log" >&2
  exit 1
}

start_worker
start_monitor
observe_start
t0=$(date +%s)
worker_kills=0
monitor_kills=0
next_worker_kill=$WORKER_KILL_EVERY_S
echo "longrun: observing $node every $INTERVAL_MS ms for $DURATION_S s; worker killed every" \
  "$WORKER_KILL_EVERY_S s, monitor once at $MONITOR_KILL_AT_S s (down $DOWN_S s each time)"
while :; do
  now=$(($(date +%s) - t0))
  [ "$now" -ge "$DURATION_S" ] && break
  if [ "$now" -ge "$next_worker_kill" ]; then
    kill -9 "$worker_pid"
    wait "$worker_pid" 2>/dev/null || true
    worker_kills=$((worker_kills + 1))
    sleep "$DOWN_S"
    start_worker
    next_worker_kill=$((next_worker_kill + WORKER_KILL_EVERY_S))
    echo "  t=${now}s worker killed and restarted ($worker_kills)"
  fi
  if [ "$monitor_kills" -eq 0 ] && [ "$now" -ge "$MONITOR_KILL_AT_S" ]; then
    kill -9 "$monitor_pid"
    wait "$monitor_pid" 2>/dev/null || true
    monitor_kills=1
    sleep "$DOWN_S"
    start_monitor
    observe_start
    echo "  t=${now}s monitor killed, restarted, observation started again"
  fi
  sleep 1
done

stop_json=$(GIULIA_MONITOR_URL=$murl "$bindir/giulia-observe" stop "$node" --json)
sid=$(echo "$stop_json" | jq -r .session_id)
obs=$(curl -s "$wurl/api/runtime/observation/$sid?include=snapshots")
profiles=$(curl -s "$wurl/api/runtime/profiles" | jq '.profiles | length')
observations=$(curl -s "$wurl/api/runtime/observations" | jq '.observations | length')
profile_id=$(echo "$obs" | jq .profile_id)
profile=$(curl -s "$wurl/api/runtime/profile/$profile_id")
numbered=$(echo "$obs" | jq .next_seq)
stored=$(echo "$obs" | jq '.snapshot_data | length')
distinct_seq=$(echo "$obs" | jq '[.snapshot_data[].seq] | unique | length')
distinct_ts=$(echo "$obs" | jq '[.snapshot_data[].timestamp_ms] | unique | length')
lost=$((numbered - stored))
duplicated=$((stored - distinct_seq + stored - distinct_ts))
adopted=$(grep -c "continued after a monitor died" "$work/monitor.log" || true)
echo
echo "## long run: $DURATION_S s at $INTERVAL_MS ms, $worker_kills worker kill(s)," \
  "$monitor_kills monitor kill(s), $adopted adoption(s)"
printf "%-12s %s\n" session "$sid" numbered "$numbered" stored "$stored" lost "$lost" \
  duplicated "$duplicated" observations "$observations" profiles "$profiles"
echo "$profile" | jq -r '.profile.session | "status       \(.status)\ngaps         \(.gaps | length) (\(.snapshots_missing) snapshots missing)"'
echo "$profile" | jq -r '.profile.session.gaps[] | "  after seq \(.after_seq) before \(.before_seq): \(.missing) missing (\(.cause))"'
echo "header:      $(GIULIA_WORKER_URL=$wurl "$bin" profile "$profile_id" 2>/dev/null | head -1)"
