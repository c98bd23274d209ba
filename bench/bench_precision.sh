#!/usr/bin/env bash
# Precision of `giulia contracts` and of dead-code's `unreferenced` on real
# code, against the hand-checked expectations in bench/precision/: each
# listed finding must be there with its verdict (true or false); one that is
# not is "unchecked" and fails the run until someone checks it by hand.
# Results: BENCHMARKS.md "Precision on real code".
#
#   bench/bench_precision.sh [NAME=DIR...]
#
# DIR is a checkout of the repository NAME at the commit its expectation
# file names (phoenix, plug, ecto; fetch them yourself: the bench never uses
# the network), and elixir is Elixir's own source (build/elixir-src, which
# scripts/deps.sh bench fetches). Each is indexed into build/bench/precision.
# needs: jq elixir src:elixir-lang
set -eu
cd "$(dirname "$0")/.."
make -s -j2 bin/giulia >/dev/null
giulia=$PWD/bin/giulia
out=build/bench/precision
mkdir -p "$out"
corpora=("$@")
[ ${#corpora[@]} -gt 0 ] || corpora=("elixir=build/elixir-src/lib")
status=0
printf '%-8s %9s %10s %13s %6s %9s %9s\n' corpus contracts unreferenced checked_true false unchecked precision
for c in "${corpora[@]}"; do
  name=${c%%=*} dir=${c#*=}
  db="$out/$name.db"
  "$giulia" index "$dir" --db "$db" --jobs 2 >/dev/null
  contracts=$("$giulia" contracts --project "$dir" --db "$db" --json | jq '.total')
  "$giulia" dead-code --project "$dir" --db "$db" --json |
    jq -r '.functions[] | select(.reason == "unreferenced") | "\(.module).\(.name)/\(.arity)"' >"$out/$name.listed"
  listed=$(wc -l <"$out/$name.listed")
  expect=bench/precision/$name.unreferenced
  t=0 f=0 u=0
  while read -r fn; do
    verdict=$( [ -f "$expect" ] && awk -v fn="$fn" '$1 == fn { print $2 }' "$expect" || true)
    case "$verdict" in
      true) t=$((t + 1)) ;;
      false) f=$((f + 1)) ;;
      *) u=$((u + 1)); echo "unchecked: $name $fn" >&2 ;;
    esac
  done <"$out/$name.listed"
  precision=$(awk -v t="$t" -v n="$listed" 'BEGIN { if (n == 0) print "-"; else printf "%.2f", t / n }')
  printf '%-8s %9s %10s %13s %6s %9s %9s\n' "$name" "$contracts" "$listed" "$t" "$f" "$u" "$precision"
  [ "$contracts" -eq 0 ] || status=1
  [ "$u" -eq 0 ] || [ ! -f "$expect" ] || status=1
done
exit $status
