#!/usr/bin/env bash
# bench_fuse.sh - fuse_profile_build and the reports on long sessions
# (bench/fuse_profile.c): build time, render times, output sizes, peak RSS
# of the whole process (which also holds the input snapshots).
#
# Environment: SIZES (snapshot counts, default "600 3600 14400").
# Prints a Markdown table for BENCHMARKS.md.
# needs:
set -eu
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"600 3600 14400"}
make -s build/release/libgiulia.a
tmp=$(mktemp -d /tmp/giulia-bench-fuse.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -D_REENTRANT -O2 -Isrc -o "$tmp/fuse_profile" bench/fuse_profile.c \
  build/release/libgiulia.a /usr/lib/libei.a $(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq) -lpthread -lm
echo "| snapshots | input JSON | build | text | html | profile JSON | html page | peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
for n in $SIZES; do "$tmp/fuse_profile" "$n"; done
for n in $SIZES; do "$tmp/fuse_profile" "$n" stream; done
