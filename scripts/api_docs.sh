#!/bin/sh
# api_docs.sh GIULIA DOC - replaces the static queries' reference of DOC
# (between the lines `<!-- query-registry:begin -->` and
# `<!-- query-registry:end -->`) with what `GIULIA query --list --format
# markdown` prints: the reference is generated from the registry of queries
# (src/graph/query_list.h), and tests/integration/query_registry.c checks it.
set -eu
bin=$1
doc=$2
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.ref"' EXIT
"$bin" query --list --format markdown >"$tmp.ref"
awk -v ref="$tmp.ref" '
	/^<!-- query-registry:begin -->$/ { print; while ((getline line < ref) > 0) print line; skip = 1; next }
	/^<!-- query-registry:end -->$/ { skip = 0 }
	!skip { print }
' "$doc" >"$tmp"
cat "$tmp" >"$doc"
