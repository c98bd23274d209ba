#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS, with its corpus under build/fuzz/corpus
# seeded from fuzz/corpus/NAME when that exists. Crashes are written to
# build/fuzz/crashes/NAME/ and make the script fail.
#
#   scripts/fuzz.sh SECONDS TARGET...
# needs: clang libclang-rt-14-dev
set -u
# UBSan findings are crashes too: without halt_on_error the recoverable checks
# print a line and carry on, and a run "passes" with undefined behaviour in it.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
seconds=${1:?usage: fuzz.sh SECONDS TARGET...}
shift
status=0
for target in "$@"; do
  name=$(basename "$target")
  corpus=build/fuzz/corpus/$name
  crashes=build/fuzz/crashes/$name
  mkdir -p "$corpus" "$crashes"
  seeds=()
  [ -d "fuzz/corpus/$name" ] && seeds+=("fuzz/corpus/$name")
  echo "fuzz: $name for ${seconds}s"
  if ! "$target" -max_total_time="$seconds" -artifact_prefix="$crashes/" -print_final_stats=1 \
       "$corpus" "${seeds[@]}" 2>build/fuzz/$name.log; then
    echo "fuzz: $name found a problem; see build/fuzz/$name.log and $crashes" >&2
    status=1
  fi
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' build/fuzz/$name.log || true
done
exit $status
