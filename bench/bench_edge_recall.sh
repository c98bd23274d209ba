#!/usr/bin/env bash
# Edge recall: module-level remote-call edges the source reader finds in
# Elixir's standard library source, against those of the installed compiled
# .beam files (the oracle), with the residue by category. Results:
# BENCHMARKS.md "Edge recall".
#
#   bench/bench_edge_recall.sh [SOURCE_ROOT]
#
# SOURCE_ROOT (or $GIULIA_ELIXIR_SRC) holds lib/APP/lib of the Elixir version
# that `elixir --version` reports; by default build/elixir-src, Debian's
# source package of that version, which scripts/deps.sh bench fetches.
# needs: elixir src:elixir-lang
set -eu
cd "$(dirname "$0")/.."
root=${1:-${GIULIA_ELIXIR_SRC:-build/elixir-src}}
if [ ! -f "$root/lib/elixir/lib/kernel.ex" ]; then
  echo "edge recall: no Elixir source at $root (scripts/deps.sh bench fetches it)" >&2
  exit 1
fi
make -s -j2 build/release/libgiulia.a >/dev/null
mkdir -p build/bench
bin=build/bench/edge_recall
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc bench/edge_recall.c build/release/libgiulia.a \
  $(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib) /usr/lib/libei.a \
  -lpthread -lm -o "$bin"
elixir --version | tail -1
"$bin" "$root/lib" /usr/lib/elixir/lib/*/ebin
