#!/usr/bin/env bash
# Assist benchmark (not a test): in-process latency (p50/p99, wall and CPU)
# of briefing, preflight with a live weight, impact_check (rename of a
# function, removal of a module), plan_validate and check
# (bench/assist_query.c) on Elixir's standard library rebuilt as source
# (bench/make_corpus.sh, one copy), per module of the project.
#
#   bench/bench_assist.sh            (make bench runs it with the others)
#   BENCH_DIR=/tmp/x BENCH_ITER=500 bench/bench_assist.sh
# needs: elixir
set -euo pipefail
cd "$(dirname "$0")/.."
iter=${BENCH_ITER:-2000}
work=${BENCH_DIR:-$(mktemp -d /tmp/giulia-bench-assist.XXXXXX)}
mkdir -p "$work"
giulia=bin/giulia
[ -x "$giulia" ] || { echo "bench_assist: build first (make)" >&2; exit 1; }
lib=build/release/libgiulia.a
mkdir -p build/bench
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -Isrc -o build/bench/assist_query bench/assist_query.c "$lib" \
  $(pkg-config --libs sqlite3 jansson zlib libpq) -lpthread -lm
[ -d "$work/stdlib/lib" ] || bench/make_corpus.sh "$work/stdlib/lib" >/dev/null
"$giulia" index "$work/stdlib" >/dev/null
echo "corpus: $(find "$work/stdlib/lib" -name '*.ex' | wc -l) files," \
  "$(cat "$work"/stdlib/lib/*.ex | wc -c) bytes"
build/bench/assist_query "$work/stdlib/.giulia/index.db" "$iter"
