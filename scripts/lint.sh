#!/usr/bin/env bash
# make lint: formatting (clang-format), static analysis (cppcheck), the
# banned-function check (strcpy, strcat, sprintf, gets, atoi have bounded or
# checked replacements in src/base/str.h and snprintf), literals whose length
# is counted by hand (GI_LIT_LEN and its macros count it), and the include
# layers of src/ (README.md, "Layers and files"), no circle of calls through
# more than two files of src/graph (scripts/circles.awk), and the probes
# evaluated on the target (src/observe/probe/*.erl: parsed and linted as
# erl_eval will see them).
# needs: clang-format cppcheck git erlang-base
set -u
cd "$(dirname "$0")/.."
status=0
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find src tests tools fuzz bench -name '*.[ch]')

echo "lint: clang-format"
if ! clang-format --dry-run --Werror $files; then
  echo "lint: clang-format found differences; run: clang-format -i \$(git ls-files '*.c' '*.h')" >&2
  status=1
fi

echo "lint: cppcheck"
if ! cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
     --inline-suppr --suppress=missingIncludeSystem -Isrc -Itests -Itests/support \
     -D_GNU_SOURCE -D__GNUC__ $files; then
  status=1
fi

echo "lint: banned functions"
if grep -nE '\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atoll)[[:space:]]*\(' $files |
   grep -vE '(snprintf|vsnprintf)' ; then
  echo "lint: banned functions used above; use gi_strlcpy, gi_buf_*, snprintf or gi_parse_int64" >&2
  status=1
fi
echo "lint: literal lengths"
if grep -nE '(memcmp|strncmp|gi_buf_append)\([^;]*"([^"\\]|\\.)*", *[0-9]+\)' $files; then
  echo "lint: a literal's length counted by hand above; use GI_MEM_IS, GI_MEM_STARTS or GI_STR_STARTS (base/str.h) or GI_BUF_LIT (base/buf.h)" >&2
  status=1
fi
# The folders of src/, lowest first. A file may include headers of its own
# folder and of folders before it, never after (a back-arrow); an x_int.h
# header is for its own folder only. A new folder must be placed here.
LAYERS="base net source store graph observe fuse profile mcp api cli"

echo "lint: include layers ($LAYERS)"
layer_rank() {
  local i=0 l
  for l in $LAYERS; do
    [ "$l" = "$1" ] && { echo $i; return; }
    i=$((i + 1))
  done
  echo -1
}
for dir in src/*/; do
  dir=${dir#src/}; dir=${dir%/}
  if [ "$(layer_rank "$dir")" -lt 0 ]; then
    echo "lint: src/$dir is in no layer: place it in LAYERS in scripts/lint.sh and in README.md" >&2
    status=1
  fi
done
while IFS=: read -r file line text; do
  inc=$(printf '%s' "$text" | sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1/')
  case $inc in */*) ;; *) continue ;; esac # generated headers (probes.h) and system ones
  from=${file#src/}; from=${from%%/*}
  to=${inc%%/*}
  rf=$(layer_rank "$from"); rt=$(layer_rank "$to")
  if [ "$rt" -lt 0 ]; then
    echo "lint: $file:$line includes \"$inc\": src/$to is in no layer" >&2
    status=1
  elif [ "$rt" -gt "$rf" ]; then
    echo "lint: $file:$line includes \"$inc\": a back-arrow ($from may use only: $(echo "$LAYERS" | cut -d' ' -f1-$((rf + 1))))" >&2
    status=1
  elif [ "$to" != "$from" ] && [ "${inc%_int.h}" != "$inc" ]; then
    echo "lint: $file:$line includes \"$inc\": the internals of src/$to are for src/$to only" >&2
    status=1
  fi
done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $(find src -name '*.[ch]' | sort))

# A file of graph/ may call one that calls it back (a pair), never round a
# circle of three or more: each analysis stays readable on its own, and
# the dispatcher (query.c) is not a hub that every analysis depends on.
echo "lint: circles of calls in src/graph"
graph_files=$(find src/graph -name '*.c' | sort)
circles=$(awk -v files="$(echo "$graph_files" | wc -l)" -f scripts/circles.awk $graph_files $graph_files)
if [ -n "$circles" ]; then
  echo "$circles" | sed 's/^/lint: these files call each other round a circle: /' >&2
  echo "lint: move what they share below them (as kg_query_fail went to graph/args.c)" >&2
  status=1
fi

echo "lint: probes (src/observe/probe/*.erl, and session/*.erl joined as build/gen/session.erl)"
mkdir -p build/gen
cat src/observe/probe/session/*.erl >build/gen/session.erl
if ! scripts/lint_probes.escript src/observe/probe/*.erl build/gen/session.erl; then
  echo "lint: a probe above does not parse or lint; it would fail only on a node" >&2
  status=1
fi

[ $status -eq 0 ] && echo "lint: ok"
exit $status
