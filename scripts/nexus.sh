#!/usr/bin/env bash
# Builds, starts, stops and loads examples/nexus, the demo target.
#
#   scripts/nexus.sh build [EBIN_DIR]     compile with elixirc (default build/nexus/ebin)
#   scripts/nexus.sh start                start the node in the background, wait for /health
#   scripts/nexus.sh stop                 stop it (init:stop over distribution, then signals)
#   scripts/nexus.sh status               say whether it runs
#   scripts/nexus.sh cookie               print the path of the cookie file
#   scripts/nexus.sh eval 'EXPRS.'        evaluate Erlang expressions on the node (erl_call)
#   scripts/nexus.sh load [SECONDS] [CONNECTIONS]
#                                         run the mixed wrk load (87% reads) and print
#                                         wrk's report and a `nexus-load:` summary line
#                                         (NEXUS_LOAD_MIX=export: CSV exports only)
#
# Environment (defaults in brackets):
#   NEXUS_NODE [nexus@127.0.0.1]  NEXUS_PORT [4040]  NEXUS_RUN_DIR [build/nexus-run]
#   NEXUS_EBIN [build/nexus/ebin] NEXUS_SEED [200]   NEXUS_LOG_LEVEL, NEXUS_LOG_MODE,
#   NEXUS_DB, NEXUS_PG_* (see examples/nexus/README.md)
#
# The run directory (mode 0700) holds the node's cookie (`cookie`, mode 0600),
# its SQLite database, its log (`nexus.log`) and its pid. The node reads the
# cookie from a private HOME inside the run directory, so the cookie never
# appears on a command line.
# needs: erlang-base elixir curl wrk examples/nexus/mix.exs
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
src="$here/examples/nexus"
node=${NEXUS_NODE:-nexus@127.0.0.1}
port=${NEXUS_PORT:-4040}
run=${NEXUS_RUN_DIR:-$here/build/nexus-run}
ebin=${NEXUS_EBIN:-$here/build/nexus/ebin}
seed=${NEXUS_SEED:-200}

die() { echo "nexus.sh: $*" >&2; exit 1; }

erl_call_bin() {
  local c
  c=$(find /usr/lib/erlang/lib -path "*/erl_interface-*/bin/erl_call" 2>/dev/null | sort | tail -n 1)
  [ -n "$c" ] || c=$(command -v erl_call || true)
  [ -n "$c" ] || die "erl_call not found (Debian package erlang-base; scripts/deps.sh demo)"
  echo "$c"
}

cmd_build() {
  local out=${1:-$ebin}
  local stamp="$out/.nexus-built"
  mkdir -p "$out"
  if [ -f "$stamp" ] && [ -z "$(find "$src/lib" -name '*.ex' -newer "$stamp" | head -n 1)" ]; then
    return 0
  fi
  echo "nexus.sh: compiling examples/nexus into $out" >&2
  rm -f "$out"/*.beam
  # shellcheck disable=SC2046
  (cd "$src" && elixirc --warnings-as-errors -o "$out" $(find lib -name '*.ex' | sort)) >&2
  touch "$stamp"
}

running_pid() {
  local pid
  [ -f "$run/nexus.pid" ] || return 1
  pid=$(cat "$run/nexus.pid")
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

cmd_start() {
  if pid=$(running_pid); then die "already running (pid $pid, $node); scripts/nexus.sh stop first"; fi
  if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then
    die "port $port is in use by another program; set NEXUS_PORT"
  fi
  [ -f "$ebin/Elixir.Nexus.beam" ] || cmd_build "$ebin"
  umask 077
  mkdir -p "$run/home"
  chmod 700 "$run"
  if [ ! -s "$run/cookie" ]; then
    head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 32 >"$run/cookie"
  fi
  chmod 600 "$run/cookie"
  cp "$run/cookie" "$run/home/.erlang.cookie"
  chmod 400 "$run/home/.erlang.cookie"
  : >"$run/nexus.log"
  # +Bi: Ctrl-C in the terminal does not kill the node behind the demo's
  # back; the demo stops it itself. SIGTERM still stops it cleanly.
  (
    # A caller's extra descriptors (a test harness's pipes) must not live on
    # in the node, or the caller waits for their end until the node stops.
    for fd in "/proc/$BASHPID/fd/"*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    cd "$run"
    HOME="$run/home" NEXUS_PORT="$port" NEXUS_SEED="$seed" \
      NEXUS_DB_PATH="${NEXUS_DB_PATH:-$run/nexus.db}" \
      exec elixir --name "$node" \
      --erl "-kernel inet_default_listen_options [{nodelay,true}] -kernel inet_default_connect_options [{nodelay,true}] +Bi" \
      -pa "$ebin" --no-halt -e 'Nexus.start()' >>"$run/nexus.log" 2>&1 </dev/null
  ) &
  echo $! >"$run/nexus.pid"
  local deadline=$((SECONDS + 60))
  until curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$port/health"; do
    if ! kill -0 "$(cat "$run/nexus.pid")" 2>/dev/null; then
      tail -n 20 "$run/nexus.log" >&2
      die "the node exited at start; see $run/nexus.log"
    fi
    [ $SECONDS -lt $deadline ] || die "no answer on port $port after 60 s; see $run/nexus.log"
    sleep 0.2
  done
  echo "nexus.sh: $node on http://127.0.0.1:$port (pid $(cat "$run/nexus.pid"), cookie in $run/cookie)" >&2
}

cmd_stop() {
  local pid
  if ! pid=$(running_pid); then
    rm -f "$run/nexus.pid"
    return 0
  fi
  "$(erl_call_bin)" -name "$node" -c "$(cat "$run/cookie")" -a "init stop []" >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$run/nexus.pid"
  echo "nexus.sh: $node stopped" >&2
}

cmd_eval() {
  running_pid >/dev/null || die "not running"
  printf '%s\n' "$1" | "$(erl_call_bin)" -name "$node" -c "$(cat "$run/cookie")" -e
  echo
}

cmd_load() {
  local seconds=${1:-30} conns=${2:-16}
  command -v wrk >/dev/null || die "wrk not found (Debian package wrk; scripts/deps.sh demo)"
  local threads=2
  [ "$conns" -ge 2 ] || threads=1
  exec wrk -t"$threads" -c"$conns" -d"${seconds}s" --timeout 10s \
    -s "$src/load/mixed.lua" "http://127.0.0.1:$port" -- "$seed" "${NEXUS_LOAD_MIX:-mixed}"
}

case "${1:-}" in
  build) shift; cmd_build "$@" ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) if pid=$(running_pid); then echo "running (pid $pid, $node, port $port)"; else echo "stopped"; exit 1; fi ;;
  cookie) echo "$run/cookie" ;;
  load) shift; cmd_load "$@" ;;
  eval) shift; cmd_eval "${1:?usage: nexus.sh eval 'EXPRS.'}" ;;
  *) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
