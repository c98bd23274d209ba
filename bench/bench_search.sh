#!/usr/bin/env bash
# Search benchmark (not a test): quality and latency of `search text`,
# `search code` (ranked) and `search code --mode hybrid` on Elixir's
# standard library as documented source (bench/make_corpus.sh --docs: the
# Debian package ships no .ex files, so its definitions and Docs chunks are
# written back as source) and on the fixture tests/fixtures/projects/notes,
# with the queries of bench/search_eval.tsv (bench/search_eval.c). Reports,
# in one run: the index time of the corpus, the first-query cost of the
# search index and of the word vectors (learned from the installed .beam
# docs and the project, then cached), their RSS, MRR@10 and recall@10 per
# search on the whole set and on its two halves (the hybrid parameters were
# chosen on the odd lines, "dev"; the even lines, "held", were not looked
# at for that), and p50/p99 latency of warm queries.
#
#   bench/bench_search.sh            (make bench runs it with the others)
#   BENCH_DIR=/tmp/x BENCH_ROUNDS=1 bench/bench_search.sh
# needs: elixir
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${BENCH_ROUNDS:-3}
work=${BENCH_DIR:-$(mktemp -d /tmp/giulia-bench-search.XXXXXX)}
mkdir -p "$work"
giulia=bin/giulia
[ -x "$giulia" ] || { echo "bench_search: build first (make)" >&2; exit 1; }
lib=build/release/libgiulia.a
mkdir -p build/bench
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -Isrc -o build/bench/search_eval bench/search_eval.c "$lib" \
  $(pkg-config --libs sqlite3 jansson zlib) -lpthread -lm

[ -d "$work/stdlib/lib" ] || bench/make_corpus.sh --docs "$work/stdlib/lib" >/dev/null
rm -rf "$work/stdlib/.giulia" "$work/notes"
cp -r tests/fixtures/projects/notes "$work/notes"
start=$(date +%s%N)
"$giulia" index "$work/stdlib" >/dev/null
index_ms=$(( ($(date +%s%N) - start) / 1000000 ))
"$giulia" index "$work/notes" >/dev/null
echo "corpus: $(find "$work/stdlib/lib" -name '*.ex' | wc -l) files," \
  "$(cat "$work"/stdlib/lib/*.ex | wc -c) bytes; index ${index_ms} ms"

grep -v '^#' bench/search_eval.tsv | awk -F'\t' -v d="$work/dev.tsv" -v h="$work/held.tsv" \
  '$1=="stdlib"{n++; print > (n%2==1 ? d : h)}'
db="$work/stdlib/.giulia/index.db"
echo "== stdlib, all queries (vectors learned: first hybrid query)"
build/bench/search_eval "$db" bench/search_eval.tsv stdlib "$rounds"
echo "== stdlib, dev half (cached vectors)"
SKIP_TEXT=1 build/bench/search_eval "$db" "$work/dev.tsv" stdlib 1
echo "== stdlib, held-out half"
SKIP_TEXT=1 build/bench/search_eval "$db" "$work/held.tsv" stdlib 1
echo "== notes fixture"
build/bench/search_eval "$work/notes/.giulia/index.db" bench/search_eval.tsv notes "$rounds"
