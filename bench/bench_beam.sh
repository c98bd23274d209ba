#!/usr/bin/env bash
# BEAM reader benchmark: reads every .beam file of the installed Erlang/OTP and
# Elixir into facts with 2 threads (and 1 for comparison), 3 runs each after a
# warm-up, and prints the runs (wall time includes the directory walk; peak RSS
# is the process's). Goal: under 2 s on 2 cores. Results: BENCHMARKS.md
# `## BEAM reader`.
#
#   bench/bench_beam.sh [ROOT...]     (default: /usr/lib/erlang /usr/lib/elixir)
# needs: elixir
set -eu
cd "$(dirname "$0")/.."
roots=("$@")
[ ${#roots[@]} -gt 0 ] || roots=(/usr/lib/erlang /usr/lib/elixir)
make -s -j2 build/release/libgiulia.a >/dev/null
bin=build/bench/bench_beam
mkdir -p build/bench
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc bench/bench_beam.c build/release/libgiulia.a \
  $(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq) /usr/lib/libei.a \
  -lpthread -lm -o "$bin"
"$bin" 2 "${roots[@]}" >/dev/null # warm the page cache
for threads in 2 1; do
  for run in 1 2 3; do
    "$bin" "$threads" "${roots[@]}"
  done
done
# Into the graph: the same files through `giulia index --beam` (SQLite store, one
# transaction), when this build has the static engine's beam_dirs wiring.
make -s -j2 bin/giulia >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/project"
beam_args=()
for r in "${roots[@]}"; do beam_args+=(--beam "$r"); done
if bin/giulia index "$tmp/project" --db "$tmp/warm.db" --json --jobs 2 "${beam_args[@]}" \
     >/dev/null 2>&1; then
  for run in 1 2 3; do
    rm -f "$tmp/index.db"*
    /usr/bin/time -f 'giulia index --beam: peak_rss_kb=%M' -o "$tmp/time" \
      bin/giulia index "$tmp/project" --db "$tmp/index.db" --json --jobs 2 "${beam_args[@]}" \
      | grep -E '"(files|modules|functions|edges|elapsed_ms)"' | tr -d ' \n'
    echo " $(cat "$tmp/time")"
  done
else
  echo "giulia index --beam: not available in this build (static engine not merged)"
fi
