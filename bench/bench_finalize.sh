#!/usr/bin/env bash
# bench_finalize.sh - project matching at finalize (bench/finalize_match.c):
# module names only (profile_project_match, what the worker does) against
# loading every registered project's graph to list its modules (what it did
# before), in one run on the same generated projects, best of ROUNDS.
#
# Environment: PROJECTS (default 8), MODULES per project (default 400),
# ROUNDS (default 5). Prints a Markdown table for BENCHMARKS.md.
# needs:
set -eu
cd "$(dirname "$0")/.."
PROJECTS=${PROJECTS:-8}
MODULES=${MODULES:-400}
ROUNDS=${ROUNDS:-5}
make -s build/release/libgiulia.a
tmp=$(mktemp -d /tmp/giulia-bench-finalize.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -o "$tmp/finalize_match" bench/finalize_match.c \
  build/release/libgiulia.a /usr/lib/libei.a $(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq) -lpthread -lm
out=$("$tmp/finalize_match" "$tmp" "$PROJECTS" "$MODULES" "$ROUNDS")
get() { printf '%s\n' "$out" | sed -n "s/^$1 //p"; }
echo "| projects x modules | names only (CPU / wall) | every graph loaded (CPU / wall) | ratio (CPU / wall) |"
echo "|---|---|---|---|"
echo "| $(get projects) x $(get modules_per_project) | $(get names_cpu_ms) / $(get names_wall_ms) ms | $(get graphs_cpu_ms) / $(get graphs_wall_ms) ms | $(get ratio_cpu)x / $(get ratio_wall)x |"
