#!/bin/sh
# cli_docs.sh GIULIA DOC - replaces the command reference of DOC (between the
# lines `<!-- help:begin -->` and `<!-- help:end -->`) with what
# `GIULIA help --markdown` prints: the reference is generated from the same
# help as `giulia help CMD`, and tests/integration/cli_help.c checks it.
set -eu
bin=$1
doc=$2
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.ref"' EXIT
"$bin" help --markdown >"$tmp.ref"
awk -v ref="$tmp.ref" '
	/^<!-- help:begin -->$/ { print; while ((getline line < ref) > 0) print line; skip = 1; next }
	/^<!-- help:end -->$/ { skip = 0 }
	!skip { print }
' "$doc" >"$tmp"
cat "$tmp" >"$doc"
