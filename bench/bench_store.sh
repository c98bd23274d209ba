#!/usr/bin/env bash
# bench_store.sh - ingest throughput into the observation store, PostgreSQL
# against SQLite in one run (bench/store_ingest.c): snapshots stored per
# second and the p99 of one obs_store_snapshot_add, 1 and 4 writer threads,
# each thread with its own connection and session, with and without the
# worker's process-wide write lock. SQLite: DATA/worker.db, WAL,
# synchronous=FULL. PostgreSQL 15: a cluster made here by initdb (default
# settings: fsync and synchronous_commit on), over loopback TCP with SCRAM.
# Both on the same file system (/tmp).
#
# Environment: SNAPSHOTS per thread (default 500). Prints a Markdown table
# for BENCHMARKS.md.
# needs: postgresql python3 curl
set -eu
cd "$(dirname "$0")/.."
SNAPSHOTS=${SNAPSHOTS:-500}
PGBIN=/usr/lib/postgresql/15/bin
make -s build/release/libgiulia.a
tmp=$(mktemp -d /tmp/giulia-bench-store.XXXXXX)
pid=
wpids=()
cleanup() {
  for w in "${wpids[@]}"; do kill "$w" 2>/dev/null; wait "$w" 2>/dev/null || true; done
  [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -o "$tmp/store_ingest" bench/store_ingest.c \
  build/release/libgiulia.a /usr/lib/libei.a $(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq) -lpthread -lm

# PostgreSQL refuses to run as root: the server runs as `postgres` then.
as_pg=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$tmp"
  as_pg=(setpriv --reuid=postgres --regid=postgres --clear-groups --)
fi
password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$password" > "$tmp/pw"
[ "$(id -u)" = 0 ] && chown postgres "$tmp/pw"
"${as_pg[@]}" "$PGBIN/initdb" -D "$tmp/pg" -U giulia --pwfile "$tmp/pw" --auth-local=trust \
  --auth-host=scram-sha-256 -E UTF8 >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as_pg[@]}" "$PGBIN/postgres" -D "$tmp/pg" -p "$port" -c listen_addresses=127.0.0.1 \
  -c unix_socket_directories="$tmp" >"$tmp/pg.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$port" && break; sleep 0.1; done
uri="postgresql://giulia:$password@127.0.0.1:$port/postgres"

run() { # backend-location threads locked
  local dir="$tmp/sqlite-$2-$3"
  GIULIA_LOG=warn "$tmp/store_ingest" "$dir" "$1" "$2" "$SNAPSHOTS" "$3"
}
get() { printf '%s\n' "$1" | sed -n "s/^$2 //p"; }
echo "| writers | lock | SQLite snapshots/s | SQLite p50 / p99 | PostgreSQL snapshots/s | PostgreSQL p50 / p99 | PG/SQLite throughput |"
echo "|---|---|---|---|---|---|---|"
for threads in 1 4; do
  for locked in 1 0; do
    [ "$threads" = 1 ] && [ "$locked" = 0 ] && continue
    s=$(run - "$threads" "$locked")
    p=$(run "$uri" "$threads" "$locked")
    ratio=$(awk -v a="$(get "$p" per_s)" -v b="$(get "$s" per_s)" 'BEGIN { printf "%.2f", a / b }')
    lock=$([ "$locked" = 1 ] && echo "process-wide (the worker's)" || echo "none")
    echo "| $threads | $lock | $(get "$s" per_s) | $(get "$s" p50_ms) / $(get "$s" p99_ms) ms | $(get "$p" per_s) | $(get "$p" p50_ms) / $(get "$p" p99_ms) ms | ${ratio}x |"
  done
done

# The whole ingest path: `giulia worker` on each store, 4 clients posting.
# Started here, not in a $(...) subshell, so that cleanup knows their pids.
worker_url=
worker() { # name extra-args...
  local name=$1 wport; shift
  wport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  GIULIA_LOG=warn bin/giulia worker --listen "127.0.0.1:$wport" --data "$tmp/$name" "$@" \
    >"$tmp/$name.log" 2>&1 &
  wpids+=($!)
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$wport/health" >/dev/null && break; sleep 0.1; done
  worker_url="http://127.0.0.1:$wport"
}
make -s bin/giulia
worker w-sqlite
wl=$worker_url
worker w-pg --store "$uri"
wp=$worker_url
echo
echo "| through the worker (HTTP) | clients | SQLite snapshots/s | SQLite p50 / p99 | PostgreSQL snapshots/s | PostgreSQL p50 / p99 | PG/SQLite throughput |"
echo "|---|---|---|---|---|---|---|"
s=$(run "$wl" 4 0)
p=$(run "$wp" 4 0)
ratio=$(awk -v a="$(get "$p" per_s)" -v b="$(get "$s" per_s)" 'BEGIN { printf "%.2f", a / b }')
echo "| POST /api/runtime/ingest | 4 | $(get "$s" per_s) | $(get "$s" p50_ms) / $(get "$s" p99_ms) ms | $(get "$p" per_s) | $(get "$p" p50_ms) / $(get "$p" p99_ms) ms | ${ratio}x |"
echo
echo "$SNAPSHOTS snapshots of $(get "$p" body_bytes) bytes per writer; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
