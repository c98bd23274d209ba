# fleet_daemons.sh - sourced by bench_fleet.sh and bench_fleet_cpu.sh.
#
#   fleet_init PREFIX_LETTER    a work directory removed on exit with every
#                               process in `pids`, a cookie and a node-name
#                               prefix for the fleet, two free loopback ports;
#                               sets work, pids, cookie, prefix, wport,
#                               mport, wurl and murl
#   fleet_daemons [WRAPPER...]  `giulia worker` and `giulia monitor` as two
#                               processes (the monitor under WRAPPER when one
#                               is given: valgrind, say), waited for until
#                               both answer /health; sets mpid
#
# Both use $giulia, the binary under test.
# needs: curl python3
fleet_init() {
  work=$(mktemp -d "/tmp/giulia-bench-fleet-$1.XXXXXX")
  pids=()
  trap fleet_cleanup EXIT
  cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  prefix="$1$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  wport=$(fleet_free_port)
  mport=$(fleet_free_port)
  wurl="http://127.0.0.1:$wport"
  murl="http://127.0.0.1:$mport"
}

fleet_daemons() {
  "$giulia" worker --listen "127.0.0.1:$wport" --data "$work/worker" >"$work/worker.log" 2>&1 &
  pids+=($!)
  "$@" "$giulia" monitor --listen "127.0.0.1:$mport" --worker "$wurl" \
    --data "$work/monitor" >"$work/monitor.log" 2>&1 &
  mpid=$!
  pids+=($mpid)
  for _ in $(seq 1 600); do
    curl -sf "$murl/health" >/dev/null 2>&1 && curl -sf "$wurl/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
}

fleet_cleanup() {
  exec 2>/dev/null # not the shell's notes on the jobs it kills
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait
  rm -rf "$work"
}

fleet_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
