#!/usr/bin/env bash
# Elixir reader throughput on one core: bare tree-sitter parse against
# ex_parse (parse + extraction) over the same corpus, best of 3 rounds.
#
#   bench/bench_elixir_extract.sh [CORPUS_DIR]
#
# Without CORPUS_DIR, a corpus is made with bench/make_corpus.sh in a
# temporary directory (removed afterwards). Needs `make` done first.
# needs: elixir
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$corpus" ]; then
  corpus=$tmp/corpus
  bench/make_corpus.sh "$corpus" >/dev/null
fi
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -Isrc -Ibuild/tree-sitter-runtime/vendor/tree-sitter/lib/include -o "$tmp/elixir_extract" bench/elixir_extract.c \
  build/release/libgiulia.a $(pkg-config --libs jansson) -lpthread -lm
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/elixir_extract" "$corpus" 3
