#!/usr/bin/env bash
# Runs every test suite built under $1 (a build variant directory) in order:
# unit, integration, e2e; prints each suite's results and, last, the total line
# `N passed, N failed, N skipped`, after the names of the skipped tests.
# Exits non-zero on any failure.
#
#   tests/run.sh build/release [SUITE...]
set -u
variant=${1:?usage: tests/run.sh BUILD_DIR [SUITE...]}
shift
passed=0 failed=0 skipped=0
skips=()
export GIULIA_SRC=${GIULIA_SRC:-$(pwd)}
export GIULIA_BIN=${GIULIA_BIN:-$(pwd)/$variant/bin}
suites=()
if [ $# -gt 0 ]; then
  for s in "$@"; do suites+=("$variant/tests/$s"); done
else
  for kind in unit integration e2e; do
    for s in "$variant"/tests/${kind}_*; do
      [ -x "$s" ] && suites+=("$s")
    done
  done
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for suite in "${suites[@]}"; do
  name=$(basename "$suite")
  echo "== $name"
  "$suite" 2>&1 | tee "$log"
  out=$(grep '^#TOTALS' "$log" | tail -n 1)
  if [ -z "$out" ]; then
    echo "FAIL $name: the suite ended without its totals (crashed?)"
    failed=$((failed + 1))
    continue
  fi
  while read -r _ t; do skips+=("$t"); done < <(grep '^skip ' "$log")
  set -- $out
  passed=$((passed + $2)) failed=$((failed + $3)) skipped=$((skipped + $4))
done
# Skips are only for capabilities a machine lacks (harness.h): name them.
for t in "${skips[@]}"; do echo "skipped: $t"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
