#!/usr/bin/env bash
# Runs every benchmark script bench/*.sh in turn (each prints its own table).
#   bench/run.sh [NAME...]
set -eu
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then scripts=("$@"); else scripts=(bench/bench_*.sh); fi
for s in "${scripts[@]}"; do
  [ -f "$s" ] || s="bench/bench_$s.sh"
  [ -f "$s" ] || continue
  echo "== $s"
  bash "$s"
done
