#!/usr/bin/env bash
# Cold commands (not a test): a fresh `giulia` process per question, as
# assistants, editors and people run it, on Elixir's own lib/ (Debian's
# source package of the installed version, build/elixir-src, as
# bench_edge_recall.sh finds it). Side by side in one run, alternated round
# by round (the machine is shared: ratios, medians):
#   - hubs, dependents Kernel, impact Kernel, search code and `giulia mcp`
#     over stdio (initialize and one knowledge_dependents call), answered
#     from the snapshots (DB.graph, DB.search) against the same binary
#     rebuilding the graph and the search index (GIULIA_GRAPH_SNAPSHOT=0);
#   - `giulia --version` against /bin/true, and against the same objects
#     linked with every library dynamically (libcurl, libpq, libmicrohttpd
#     and what they pull in), the dynamic linker's cost.
#   - a fresh `giulia index` of the same lib/ at 1 and at 2 parser threads
#     against Elixir's own parser for the parse alone: one `elixir` process
#     that reads every file then runs Code.string_to_quoted/2 (columns,
#     token metadata) on them in 2 Erlang processes, less the same process
#     reading the files without parsing them (whole processes, CPU);
#     BENCH_INDEX_ROUNDS rounds (default 5), the four alternated;
#   - re-indexing after a one-file edit, and with nothing changed.
# Wall and CPU (user + system) and peak RSS per process from bench/cold_run.c.
#
#   bench/bench_cold.sh                  (BENCH_ROUNDS=21 by default)
#   BENCH_DIR=/tmp/x BENCH_ROUNDS=5 bench/bench_cold.sh [SOURCE_ROOT]
#   BENCH_ROUNDS=0 bench/bench_cold.sh   (the index sections only)
#   BENCH_ROUNDS=0 BENCH_INDEX_ROUNDS=0 bench/bench_cold.sh   (the re-index only)
#   BENCH_BASE=/path/to/other/giulia ...   (the re-index alternated with
#       another build on a copy of its own, and their ratios)
# needs: elixir src:elixir-lang
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${BENCH_ROUNDS:-21}
root=${1:-${GIULIA_ELIXIR_SRC:-build/elixir-src}}
[ -f "$root/lib/elixir/lib/kernel.ex" ] ||
  { echo "bench_cold: no Elixir source at $root (scripts/deps.sh bench fetches it)" >&2; exit 1; }
giulia=$PWD/bin/giulia
[ -x "$giulia" ] || { echo "bench_cold: build first (make)" >&2; exit 1; }
work=${BENCH_DIR:-$(mktemp -d /tmp/giulia-bench-cold.XXXXXX)}
mkdir -p build/bench "$work"
cc -std=c11 -D_GNU_SOURCE -O2 -o build/bench/cold_run bench/cold_run.c
run=$PWD/build/bench/cold_run
# The same objects, every library linked dynamically (the build before
# issue 31).
cc -o build/bench/giulia_all_dynamic build/release/obj/src/cli/main.o build/release/libgiulia.a \
  /usr/lib/libei.a $(pkg-config --libs sqlite3 libmicrohttpd jansson libcurl zlib libpq) \
  -lpthread -lm
alldyn=$PWD/build/bench/giulia_all_dynamic

proj="$work/elixir"
if [ ! -d "$proj/lib" ]; then
  mkdir -p "$proj" && cp -r "$root/lib" "$proj/lib"
fi
"$giulia" index "$proj" >/dev/null 2>&1 || true
files=$(find "$proj/lib" -name '*.ex' -o -name '*.exs' | wc -l)
bytes=$(find "$proj/lib" \( -name '*.ex' -o -name '*.exs' \) -print0 | xargs -0 cat | wc -c)
echo "corpus: $files files, $(awk "BEGIN{printf \"%.1f\", $bytes/1048576}") MB ($root/lib), load $(cut -d' ' -f1-3 /proc/loadavg)"

# `giulia mcp` over stdio as an assistant starts it: initialize, then one
# tool call, then end of input.
mcp_in="$work/mcp.jsonl"
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"knowledge_dependents","arguments":{"module":"Kernel"}}}' \
  >"$mcp_in"

declare -A wall cpu rss
cases=(hubs dependents impact search mcp version)
cmd_of() {
  case $1 in
    hubs) echo "hubs" ;;
    dependents) echo "dependents Kernel" ;;
    impact) echo "impact Kernel" ;;
    search) echo "search code split a string" ;;
    mcp) echo "mcp --project $proj" ;;
  esac
}
measure() { # key, then cold_run's arguments
  local key=$1 out
  shift
  out=$(cd "$proj" && "$run" "$@" <"$mcp_in" 2>/dev/null) || { echo "bench_cold: $* failed" >&2; exit 1; }
  wall[$key]+="$(echo "$out" | awk '{print $2}') "
  cpu[$key]+="$(echo "$out" | awk '{print $4}') "
  rss[$key]+="$(echo "$out" | awk '{print $6}') "
}
for _ in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    if [ "$c" = version ]; then
      measure "version snapshot" -- "$giulia" --version
      measure "version true" -- /bin/true
      measure "version dynamic" -- "$alldyn" --version
    else
      # shellcheck disable=SC2046
      measure "$c snapshot" -- "$giulia" $(cmd_of "$c")
      # shellcheck disable=SC2046
      measure "$c rows" GIULIA_GRAPH_SNAPSHOT=0 -- "$giulia" $(cmd_of "$c")
    fi
  done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p90() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {i=int(NR*0.9+0.5); if(i<1)i=1; print a[i]}'; }
ms() { awk "BEGIN{printf \"%.2f\", $1/1000}"; }
ratio() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
row() { # label, key, reference key
  local w c rw rc
  w=$(echo "${wall[$2]}" | median) c=$(echo "${cpu[$2]}" | median)
  rw=$(echo "${wall[$3]}" | median) rc=$(echo "${cpu[$3]}" | median)
  printf '%-44s %10s %10s %10s   %s / %s\n' "$1" "$(ms "$w")" "$(ms "$(echo "${wall[$2]}" | p90)")" "$(ms "$c")" \
    "$(ratio "$w" "$rw")" "$(ratio "$c" "$rc")"
}
if [ "$rounds" -gt 0 ]; then
printf '%-44s %10s %10s %10s   %s\n' "cold process (p50 of $rounds, alternated)" "wall ms" "p90 ms" "cpu ms" "ratio wall / cpu"
for c in hubs dependents impact search mcp; do
  label=$(cmd_of "$c")
  row "$label (snapshot)" "$c snapshot" "$c rows"
  row "$label (graph from the rows)" "$c rows" "$c rows"
done
row "giulia --version" "version snapshot" "version true"
row "/bin/true" "version true" "version true"
row "giulia --version, every library dynamic" "version dynamic" "version true"
echo "(ratios: against the graph from the rows for queries, against /bin/true for --version)"
fi

# A fresh index against Elixir's parser, the parse alone: the Elixir
# process that parses less the same process reading the files only.
ex_script='
  [dir, mode] = System.argv()
  files = Path.wildcard(dir <> "/lib/**/*.{ex,exs}")
  texts = Enum.map(files, &File.read!/1)
  work = if mode == "parse",
    do: fn t -> Code.string_to_quoted(t, columns: true, token_metadata: true) end,
    else: fn t -> byte_size(t) end
  texts |> Task.async_stream(work, max_concurrency: 2, timeout: :infinity, ordered: false) |> Stream.run()'
index_rounds=${BENCH_INDEX_ROUNDS:-5}
fresh="$work/fresh"
if [ "$index_rounds" -gt 0 ]; then
for _ in $(seq "$index_rounds"); do
  for j in 1 2; do
    rm -rf "$fresh" && mkdir -p "$fresh"
    measure "index jobs $j" -- "$giulia" index "$proj" --db "$fresh/index.db" --jobs "$j"
  done
  measure "elixir parse" -- elixir -e "$ex_script" "$proj" parse
  measure "elixir read" -- elixir -e "$ex_script" "$proj" read
done
ex_parse=$(( $(echo "${cpu[elixir parse]}" | median) - $(echo "${cpu[elixir read]}" | median) ))
printf '\n%-44s %10s %10s %10s   %s\n' "fresh index (p50 of $index_rounds, alternated)" "wall ms" "cpu ms" "rss MB" "cpu / Elixir's parse alone"
irow() { # label, key
  local c
  c=$(echo "${cpu[$2]}" | median)
  printf '%-44s %10s %10s %10s   %s\n' "$1" "$(ms "$(echo "${wall[$2]}" | median)")" "$(ms "$c")" \
    "$(awk "BEGIN{printf \"%.1f\", $(echo "${rss[$2]}" | tr ' ' '\n' | grep . | sort -n | tail -1)/1024}")" \
    "$(ratio "$c" "$ex_parse")"
}
irow "giulia index, 1 thread" "index jobs 1"
irow "giulia index, 2 threads" "index jobs 2"
irow "elixir: read + Code.string_to_quoted, 2 procs" "elixir parse"
irow "elixir: read only" "elixir read"
printf '%-44s %10s %10s %10s   %s\n' "Elixir's parse alone (the difference)" "" "$(ms "$ex_parse")" "" "1.00"
echo "(rss: the largest of the rounds; ratio: the process's CPU / Elixir's parse alone)"
fi

# Re-index after editing one file (a mid-sized one, ~31 KB), and with nothing
# changed, median of 10: the index's own time (elapsed_ms, in-process) and
# the whole process's CPU, which includes the graph snapshot written after
# an index that changed something. With BENCH_BASE, the same on a copy of
# the project indexed by that build, the two alternated edit by edit.
base=${BENCH_BASE:-}
sides=(new)
if [ -n "$base" ]; then
  rm -rf "$work/elixir-base" && cp -r "$proj" "$work/elixir-base" && rm -rf "$work/elixir-base/.giulia"
  "$base" index "$work/elixir-base" >/dev/null 2>&1
  sides+=(base)
fi
declare -A inc_el inc_cpu noop_el noop_cpu
reindex() { # binary, project; prints "elapsed_ms cpu_us"
  local out
  out=$("$run" -o "$work/index.json" -- "$1" index "$2" --json)
  printf '%s %s\n' "$(sed -n 's/.*"elapsed_ms": \([0-9.]*\).*/\1/p' "$work/index.json")" \
    "$(echo "$out" | awk '{print $4}')"
}
for i in $(seq 10); do
  for side in "${sides[@]}"; do
    if [ "$side" = new ]; then bin=$giulia dir=$proj; else bin=$base dir="$work/elixir-base"; fi
    printf '\n# edit %s\n' "$i" >>"$dir/lib/elixir/lib/calendar/date.ex"
    read -r e c < <(reindex "$bin" "$dir")
    inc_el[$side]+="$e " inc_cpu[$side]+="$c "
    read -r e c < <(reindex "$bin" "$dir")
    noop_el[$side]+="$e " noop_cpu[$side]+="$c "
  done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '\n%-44s %10s ms in-process %10s ms cpu (whole process)\n' "index, one file edited (median of 10)" \
  "$(echo "${inc_el[new]}" | med)" "$(ms "$(echo "${inc_cpu[new]}" | med)")"
printf '%-44s %10s ms in-process %10s ms cpu (whole process)\n' "index, nothing changed (median of 10)" \
  "$(echo "${noop_el[new]}" | med)" "$(ms "$(echo "${noop_cpu[new]}" | med)")"
if [ -n "$base" ]; then
  printf '%-44s %10s ms in-process %10s ms cpu   %s x\n' "  BENCH_BASE, one file edited" \
    "$(echo "${inc_el[base]}" | med)" "$(ms "$(echo "${inc_cpu[base]}" | med)")" \
    "$(ratio "$(echo "${inc_cpu[new]}" | med)" "$(echo "${inc_cpu[base]}" | med)")"
  printf '%-44s %10s ms in-process %10s ms cpu   %s x\n' "  BENCH_BASE, nothing changed" \
    "$(echo "${noop_el[base]}" | med)" "$(ms "$(echo "${noop_cpu[base]}" | med)")" \
    "$(ratio "$(echo "${noop_cpu[new]}" | med)" "$(echo "${noop_cpu[base]}" | med)")"
  echo "(x: this build's CPU / the other's, alternated in the same minutes)"
fi
