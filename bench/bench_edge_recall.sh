#!/usr/bin/env bash
# Edge recall: module-level remote-call edges the source reader finds in
# Elixir's standard library source, against those of the installed compiled
# .beam files (the oracle), with the residue by category. Results:
# BENCHMARKS.md "Edge recall".
#
#   bench/bench_edge_recall.sh [SOURCE_ROOT]
#
# SOURCE_ROOT (or $GIULIA_ELIXIR_SRC) holds lib/APP/lib of the Elixir version
# that `elixir --version` reports (Debian ships the .beam files only), e.g.
#   git -C elixir archive v1.14.0 lib | tar -x -C /tmp/ex114
# Without it the benchmark says so and stops.
# needs: elixir
set -eu
cd "$(dirname "$0")/.."
root=${1:-${GIULIA_ELIXIR_SRC:-}}
if [ -z "$root" ] || [ ! -d "$root/lib" ]; then
  echo "edge recall: no Elixir source (set GIULIA_ELIXIR_SRC or pass SOURCE_ROOT); skipped"
  exit 0
fi
make -s -j2 build/release/libgiulia.a >/dev/null
mkdir -p build/bench
bin=build/bench/edge_recall
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc bench/edge_recall.c build/release/libgiulia.a \
  $(pkg-config --libs tree-sitter sqlite3 libmicrohttpd jansson libcurl zlib) /usr/lib/libei.a \
  -lpthread -lm -o "$bin"
elixir --version | tail -1
"$bin" "$root/lib" /usr/lib/elixir/lib/*/ebin
