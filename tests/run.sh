#!/usr/bin/env bash
# Runs every test suite built under $1 (a build variant directory): unit,
# integration, e2e; prints each suite's results and, last, the total line
# `N passed, N failed, N skipped`, after the names of the skipped tests.
# Exits non-zero on any failure.
#
#   tests/run.sh build/release [SUITE...]
#
# TEST_JOBS suites run at once (default 3: most suites spend their time
# waiting on BEAM nodes, daemons and browsers, not on a core). Suites are
# independent by construction: each test runs in a temporary directory of its
# own, on free ports, with nodes of random names, and copies any fixture it
# indexes. The longest-running kinds start first (e2e, then integration, then
# unit) so that the pool drains evenly; each suite's output is printed whole
# when it ends, with its duration, so concurrent suites never interleave.
# TEST_JOBS=1 runs them one after another, in the order unit, integration, e2e.
# A suite whose source's header comment has an ` * alone: REASON` line (one
# that must load the machine itself, e.g. to saturate a node) runs after the
# others have ended, with nothing beside it.
set -u
variant=${1:?usage: tests/run.sh BUILD_DIR [SUITE...]}
shift
jobs=${TEST_JOBS:-3}
case "$jobs" in '' | *[!0-9]* | 0)
  echo "tests/run.sh: TEST_JOBS must be a positive number, not '$jobs'" >&2
  exit 2
  ;;
esac
passed=0 failed=0 skipped=0
skips=() fails=()
export GIULIA_SRC=${GIULIA_SRC:-$(pwd)}
export GIULIA_BIN=${GIULIA_BIN:-$(pwd)/$variant/bin}
suites=()
if [ $# -gt 0 ]; then
  for s in "$@"; do suites+=("$variant/tests/$s"); done
else
  kinds="unit integration e2e"
  [ "$jobs" -eq 1 ] || kinds="e2e integration unit"
  for kind in $kinds; do
    for s in "$variant"/tests/${kind}_*; do
      [ -x "$s" ] && suites+=("$s")
    done
  done
fi
# Suites that must run alone go last, one at a time.
together=() alone=()
for s in "${suites[@]}"; do
  name=$(basename "$s")
  src="$GIULIA_SRC/tests/${name%%_*}/${name#*_}.c"
  if [ -f "$src" ] && grep -q '^ \* alone:' "$src"; then alone+=("$s"); else together+=("$s"); fi
done
suites=("${together[@]}" "${alone[@]}")
n_together=${#together[@]}
logs=$(mktemp -d)
declare -A pids=()
cleanup() {
  # A suite still running when the runner is stopped: stop it and its
  # children (each suite is its own process group, see start()).
  for i in "${!pids[@]}"; do kill -TERM -- "-${pids[$i]}" 2>/dev/null; done
  rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Under the sanitizers every process a suite starts (the suite itself, the
# daemons, the CLI runs) writes its reports to $logs/i.san/ rather than to a
# log nobody reads: a daemon's leak at shutdown or its UBSan finding fails
# the suite (report), not only a crash the test happens to notice.
sanitized=false
case "$variant:$GIULIA_BIN" in *asan:* | *:*/asan/*) sanitized=true ;; esac

# Starts suite i in the background, in a process group of its own, its output
# in $logs/i.log; $logs/i.rc appears when it has ended.
start() {
  local i=$1
  set -m
  (
    if $sanitized; then
      mkdir -p "$logs/$i.san"
      export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$logs/$i.san/asan"
      export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$logs/$i.san/ubsan:print_stacktrace=1"
    fi
    t0=$(date +%s%N)
    "${suites[$i]}" >"$logs/$i.log" 2>&1
    rc=$?
    echo "$(((($(date +%s%N) - t0) / 1000000)))" >"$logs/$i.ms"
    echo "$rc" >"$logs/$i.rc"
  ) &
  pids[$i]=$!
  set +m
}

# Prints suite i's output and adds its totals; each sanitizer report of a
# process it started is a failure of its own.
report() {
  local i=$1 name out ms f
  name=$(basename "${suites[$i]}")
  ms=$(cat "$logs/$i.ms" 2>/dev/null || echo "?")
  echo "== $name ($((ms / 1000)) s)"
  cat "$logs/$i.log"
  for f in "$logs/$i.san"/*; do
    [ -f "$f" ] || continue
    echo "FAIL $name: a process it started reported to the sanitizers ($(basename "$f")):"
    head -n 80 "$f"
    fails+=("$name: a sanitizer report ($(basename "$f"))")
    failed=$((failed + 1))
  done
  out=$(grep '^#TOTALS' "$logs/$i.log" | tail -n 1)
  if [ -z "$out" ]; then
    echo "FAIL $name: the suite ended without its totals (crashed? exit status $(cat "$logs/$i.rc"))"
    fails+=("$name: the suite ended without its totals")
    failed=$((failed + 1))
    return
  fi
  while read -r _ t; do skips+=("$t"); done < <(grep '^skip ' "$logs/$i.log")
  while read -r t; do fails+=("$t"); done < <(grep '^FAIL ' "$logs/$i.log")
  set -- $out
  passed=$((passed + $2)) failed=$((failed + $3)) skipped=$((skipped + $4))
}

n=${#suites[@]}
next=0
done_count=0
while [ "$done_count" -lt "$n" ]; do
  # an alone suite starts only once nothing else runs, and nothing beside it
  while [ "$next" -lt "$n" ] && [ "${#pids[@]}" -lt "$jobs" ] &&
    { [ "$next" -lt "$n_together" ] || [ "${#pids[@]}" -eq 0 ]; }; do
    start "$next"
    next=$((next + 1))
  done
  wait -n 2>/dev/null || true
  for i in "${!pids[@]}"; do
    [ -f "$logs/$i.rc" ] || continue
    wait "${pids[$i]}" 2>/dev/null
    unset "pids[$i]"
    report "$i"
    done_count=$((done_count + 1))
  done
done
# Skips are only for capabilities a machine lacks (harness.h): name them.
for t in "${skips[@]}"; do echo "skipped: $t"; done
# The failures again, last: a long log is often read from its tail.
for t in "${fails[@]}"; do echo "failed: ${t#FAIL }"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
