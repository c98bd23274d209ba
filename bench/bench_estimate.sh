#!/usr/bin/env bash
# The estimator under the default 5% budget against exact counts (BENCHMARKS.md
# "Estimates under the budget"; docs/RULES.md "The estimator").
#
#   bench/bench_estimate.sh [ROUNDS]    (default 4)
#
# Runs the workloads of tests/integration/estimate.c round after round on one
# real Elixir node whose traced functions count their own calls (a counters
# array read every 10 ms by a recorder on the target: the ground truth):
# steady requests, the same beside bursts of unrelated CPU work, a process
# per request beside spawn storms, idle-then-burst (a CPU-bound loop for
# 50-300 ms every 0.3-1.2 s), and a CPU-bound loop. Each run is 11 windows of
# 500 ms after 3 settling ones; per run and function it compares with the
# truth over the very same windows the session's estimate (the profile's
# calls, its 95% interval and whether it stands behind it, `firm`) and,
# side by side over the same windows, the estimator it replaced (each
# window's calls counted over the share of the node's reductions done while
# counting). Reports per workload: runs, how often the interval held the
# truth, the worst factor off of the estimates and of the firm ones, the
# share of firm ones, and the old estimator's worst factor.
# needs: erlang-base elixir python3
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-4}
make -j2 build/release/tests/integration_estimate >/dev/null
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
out=$(mktemp /tmp/giulia-bench-estimate.XXXXXX)
trap 'rm -f "$out"' EXIT
ESTIMATE_ROUNDS=$rounds ESTIMATE_RECORD=1 build/release/tests/integration_estimate \
  >"$out" 2>&1 || { grep -v ' info ' "$out" | tail -20; exit 1; }
python3 - "$out" <<'PY'
import sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("RECORD "):
        _, mode, fn, truth, est, low, high, firm, old = line.split()
        rows[mode].append((float(truth), float(est), float(low), float(high), firm == "1", float(old)))
def off(e, t):
    if t <= 0 or e <= 0 or e != e:
        return float("inf")
    return max(e / t, t / e)
def held(t, lo, hi):
    return lo <= t <= hi or (lo <= t and hi == 0 and lo > 0)  # no upper bound known
print(f"{'workload':<11} {'runs':>4} {'missed':>6} {'in 95%':>7} {'worst':>7} {'firm':>5} "
      f"{'worst firm':>10} {'old worst':>9} {'old median':>10}")
allr = []
for mode in ["steady", "bursty", "spawn", "idle_burst", "cpu"]:
    r = rows.get(mode, [])
    if not r:
        continue
    seen = [x for x in r if x[1] > 0]
    allr += seen
    cov = sum(1 for t, e, lo, hi, f, o in seen if held(t, lo, hi))
    worst = max([off(e, t) for t, e, lo, hi, f, o in seen] or [float("nan")])
    firm = [off(e, t) for t, e, lo, hi, f, o in seen if f]
    olds = sorted(off(o, t) for t, e, lo, hi, f, o in r)
    print(f"{mode:<11} {len(r):>4} {len(r)-len(seen):>6} "
          f"{(100*cov/len(seen) if seen else float('nan')):>6.0f}% {worst:>6.2f}x {len(firm):>5} "
          f"{(max(firm) if firm else float('nan')):>9.2f}x {olds[-1]:>8.2f}x {olds[len(olds)//2]:>9.2f}x")
cov = sum(1 for t, e, lo, hi, f, o in allr if held(t, lo, hi))
firm = [off(e, t) for t, e, lo, hi, f, o in allr if f]
print(f"all: {len(allr)} estimates given (2 functions per run), the interval held the truth in "
      f"{100*cov/max(1,len(allr)):.0f}%; {len(firm)} firm, worst firm "
      f"{(max(firm) if firm else float('nan')):.2f}x")
PY
