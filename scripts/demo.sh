#!/usr/bin/env bash
# make demo: interim demo of the static engine (the demo engineer replaces it
# with the end-to-end one of issue 7). Indexes a small Elixir project (the
# shop fixture, copied to a temporary directory) and prints its summary,
# modules, hubs and the most complex functions.
set -euo pipefail
cd "$(dirname "$0")/.."
giulia=${GIULIA_BIN:-bin}/giulia
work=$(mktemp -d /tmp/giulia-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r tests/fixtures/projects/shop "$work/shop"
project="$work/shop"

echo "== giulia index $project"
"$giulia" index "$project"
echo
echo "== summary"
"$giulia" query summary --project "$project"
echo
echo "== giulia modules"
"$giulia" modules --project "$project"
echo
echo "== giulia hubs"
"$giulia" hubs --project "$project"
echo
echo "== giulia complexity --top 5"
"$giulia" complexity --top 5 --project "$project"
echo
echo "== giulia cycles"
"$giulia" cycles --project "$project"
echo
echo "== giulia dead-code"
"$giulia" dead-code --project "$project"
