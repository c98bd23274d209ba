#!/usr/bin/env bash
# Checks benchmark (not a test; docs/CHECKS.md): on Elixir's standard library
# rebuilt as source with its contracts (bench/make_corpus.sh --contracts),
# reports in one run:
#   - the full index (2 parser threads, sites included) against the bare
#     tree-sitter parse of the same files on 2 threads (bench/ts_parse.c), as
#     a CPU ratio (goal: at most 1.3), and, when BASE_GIULIA names a giulia
#     built without the sites (an earlier commit), that binary's index too,
#     so that the sites' own cost is a ratio of the same run;
#   - what each check finds on the corpus (the library compiles, so every
#     missing_callback, orphan_spec and @impl finding there is either a
#     false positive or a definition the corpus generator could not print);
#   - in-process latency (p50/p99, wall and CPU) of each check
#     (bench/checks_query.c).
# Timings are the best of BENCH_ROUNDS runs (default 3).
#
#   bench/bench_checks.sh
#   BASE_GIULIA=/tmp/old/bin/giulia BENCH_DIR=/tmp/x bench/bench_checks.sh
# needs: elixir jq
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${BENCH_ROUNDS:-3}
work=${BENCH_DIR:-$(mktemp -d /tmp/giulia-bench-checks.XXXXXX)}
mkdir -p "$work"
giulia=bin/giulia
[ -x "$giulia" ] || { echo "bench_checks: build first (make)" >&2; exit 1; }

lib=build/release/libgiulia.a
libs="$(pkg-config --libs sqlite3 jansson libpq zlib libcurl) -lpthread -lm"
mkdir -p build/bench
for tool in ts_parse checks_query; do
  cc -std=c11 -D_GNU_SOURCE -O2 -Isrc -Ibuild/tree-sitter-runtime/vendor/tree-sitter/lib/include -o "build/bench/$tool" "bench/$tool.c" "$lib" $libs
done

proj="$work/stdlib"
[ -d "$proj/lib" ] || bench/make_corpus.sh --contracts "$proj/lib" >/dev/null
files=$(find "$proj/lib" -name '*.ex' | wc -l)
bytes=$(cat "$proj"/lib/*.ex | wc -c)
echo "corpus: $files files, $bytes bytes ($proj)"

best() { sort -n | sed -n 1p; }
ts_cpu=$(for _ in $(seq "$rounds"); do build/bench/ts_parse "$proj" 2 | sed -n 's/^cpu_ms //p'; done | best)

# index_cpu BINARY DB: the best CPU ms (user + system) of `rounds` full indexes.
index_cpu() {
  for _ in $(seq "$rounds"); do
    rm -f "$2" "$2-wal" "$2-shm"
    /usr/bin/time -f '%U %S' "$1" index "$proj" --db "$2" --jobs 2 2>&1 >/dev/null | tail -1 |
      awk '{printf "%.1f\n", ($1 + $2) * 1000}'
  done | best
}
db="$work/index.db"
idx_cpu=$(index_cpu "$giulia" "$db")
ratio() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
echo "bare parse cpu_ms $ts_cpu; full index cpu_ms $idx_cpu; index/parse $(ratio "$idx_cpu" "$ts_cpu")"
if [ -n "${BASE_GIULIA:-}" ]; then
  base_cpu=$(index_cpu "$BASE_GIULIA" "$work/base.db")
  echo "index without sites ($BASE_GIULIA) cpu_ms $base_cpu; index/parse $(ratio "$base_cpu" "$ts_cpu"); with/without sites $(ratio "$idx_cpu" "$base_cpu")"
fi
rm -f "$db" "$db-wal" "$db-shm"
"$giulia" index "$proj" --db "$db" >/dev/null
db_kb=$(du -k "$db" | cut -f1)
echo "index database $db_kb KB"

for q in contracts conventions; do
  echo "$q: $("$giulia" "$q" --db "$db" --json | jq -c '{total, counts}')"
done
echo "structs (with external): $("$giulia" structs --external --db "$db" --json | jq -c '{total, sites: ([.structs[].counts | .built + .updated + .matched] | add)}')"
# The first duplicates after an index hashes the clause bodies (docs/CHECKS.md).
/usr/bin/time -f '%e %U %S' -o "$work/dup_time.txt" "$giulia" duplicates --db "$db" --json >/dev/null
echo "first duplicates after the index (hashes the bodies): $(awk '{printf "wall %.0f ms, cpu %.0f ms", $1 * 1000, ($2 + $3) * 1000}' "$work/dup_time.txt")"
echo "duplicates: $("$giulia" duplicates --db "$db" --json | jq -c '{total, bodies, type1: ([.groups[] | select(.type == 1)] | length), type2: ([.groups[] | select(.type == 2)] | length)}')"

build/bench/checks_query "$db" 50
