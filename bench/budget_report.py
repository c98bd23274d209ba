#!/usr/bin/env python3
# budget_report.py - the tables of bench/bench_budget.sh (BENCHMARKS.md
# "Overhead budget"), from the files one run of it wrote in DIR:
#
#   budget_report.py DIR UNIT [TRUTH]
#
# DIR/runs: "mode round t0_ms t1_ms work ticks" per run (work: loop
#   iterations or requests between the wall-clock times t0 and t1; ticks:
#   the target's CPU ticks meanwhile).
# DIR/win.MODE.ROUND: the observer's windows (bench/observe_watch.c
#   OBSERVE_WATCH_WINDOWS); DIR/calls.MODE.ROUND its duty means.
# DIR/rec.MODE.ROUND (with TRUTH): "wall_ms iterations" every 20 ms from the
#   target (bench/observe_bench.erl recorder).
# TRUTH: "fn=calls per unit of work,..." known from the workload's code.
#
# Work lost: per round, the mode's work per CPU tick over that of the run
# without observer in the same round; the median over rounds and the range.
# Estimates, over the windows that lie inside the run's measured interval:
# with TRUTH, each function's counted calls against TRUTH x the work the
# recorder saw in the same windows; without, its calls per node reduction
# against the same under full counting in the same round (a call path takes
# the same reductions counted or not). Functions whose reference rate is
# below 100 calls/s are left out. Per run (one run's windows) and pooled
# (every round's windows of the mode summed: the longer observation).
# Coverage: the share of (window, function) pairs whose stated 95% interval
# holds the reference.
import os
import statistics
import sys

MODES = ["none", "observe", "observe_nosampler", "full", "b2", "b5", "b10"]
LABEL = {"none": "no observer", "observe": "observe, no trace",
         "observe_nosampler": "observe, no sampler", "full": "full call_count",
         "b2": "budget 2%", "b5": "budget 5%", "b10": "budget 10%"}


def read_runs(d):
    runs = {}
    for line in open(os.path.join(d, "runs")):
        mode, rnd, t0, t1, work, ticks = line.split()
        runs[(mode, int(rnd))] = (int(t0), int(t1), float(work), float(ticks))
    return runs


def read_windows(path):
    """[(end_ms, window_ms, reds, {fn: (count, measured, low, high, carried)})]"""
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        p = line.split()
        if p[0] == "W":
            # the node's reductions without the session's own where known
            reds = float(p[4]) if len(p) > 4 and float(p[4]) >= 0 else float(p[3])
            out.append((int(p[1]), float(p[2]), reds, {}))
        elif p[0] == "C" and out:
            out[-1][3][p[1]] = tuple(float(x) for x in p[2:7])
    return out


def read_recorder(path):
    pts = []
    if os.path.exists(path):
        for line in open(path):
            t, c = line.split()
            pts.append((int(t), int(c)))
    return pts


def at(pts, t):
    """The counter at wall time t, interpolated between readings."""
    lo, hi = 0, len(pts) - 1
    if not pts or t <= pts[0][0]:
        return pts[0][1] if pts else 0
    if t >= pts[-1][0]:
        return pts[-1][1]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pts[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (ta, ca), (tb, cb) = pts[lo], pts[hi]
    return ca + (cb - ca) * (t - ta) / max(1, tb - ta)


def duty_of(path):
    duty = exposure = None
    if os.path.exists(path):
        for line in open(path):
            p = line.split()
            if p[0] == "#duty":
                duty = float(p[1])
            elif p[0] == "#exposure":
                exposure = float(p[1])
    return duty, exposure


def inside(wins, t0, t1):
    return [w for w in wins if w[0] - w[1] >= t0 - 50 and w[0] <= t1 + 50]


def main():
    d, unit = sys.argv[1], sys.argv[2]
    truth = {}
    if len(sys.argv) > 3 and sys.argv[3]:
        for kv in sys.argv[3].split(","):
            k, v = kv.split("=")
            truth[k] = float(v)
    runs = read_runs(d)
    rounds = sorted({r for (_, r) in runs})
    print(f"{'run':<20} {unit + '/tick':>14} {'vs none: median':>16} {'range':>17} "
          f"{'vs observe':>11} "
          f"{'duty/exposed':>13} {'est. error: mean':>17} {'max':>7} {'pooled mean':>12} "
          f"{'pooled max':>11} {'in 95% interval':>16}")
    for mode in MODES:
        ratios, per_tick, errs, pooled, cover = [], [], [], {}, [0, 0]
        vs_observe = []
        duties, exposures = [], []
        for r in rounds:
            if (mode, r) not in runs or ("none", r) not in runs:
                continue
            t0, t1, work, ticks = runs[(mode, r)]
            base = runs[("none", r)][2] / max(1, runs[("none", r)][3])
            per_tick.append(work / max(1, ticks))
            ratios.append(work / max(1, ticks) / base - 1)
            if ("observe", r) in runs:
                ow, ot = runs[("observe", r)][2:4]
                vs_observe.append(work / max(1, ticks) / (ow / max(1, ot)) - 1)
            if mode in ("none", "observe", "observe_nosampler"):
                continue
            du, ex = duty_of(os.path.join(d, f"calls.{mode}.{r}"))
            if mode != "full" and du is not None:
                duties.append(du)
                exposures.append(ex)
            wins = inside(read_windows(os.path.join(d, f"win.{mode}.{r}")), t0, t1)
            if not wins:
                continue
            span_s = sum(w[1] for w in wins) / 1000
            if truth:
                rec = read_recorder(os.path.join(d, f"rec.{mode}.{r}"))
                units = [at(rec, w[0]) - at(rec, w[0] - w[1]) for w in wins]
                ref_rate = {fn: t for fn, t in truth.items()}  # calls per unit
                reds_or_units = units
            else:
                if mode == "full":
                    continue
                t0f, t1f, _, _ = runs[("full", r)]
                fw = inside(read_windows(os.path.join(d, f"win.full.{r}")), t0f, t1f)
                fr = sum(w[2] for w in fw)
                ref_rate = {}
                for w in fw:
                    for fn, c in w[3].items():
                        ref_rate[fn] = ref_rate.get(fn, 0) + c[0]
                ref_rate = {fn: n / fr for fn, n in ref_rate.items() if fr > 0}
                reds_or_units = [w[2] for w in wins]
            total_units = sum(reds_or_units)
            for fn, rate in ref_rate.items():
                if rate * total_units / max(span_s, 1e-9) < 100:
                    continue
                est = sum(w[3].get(fn, (0,) * 5)[0] for w in wins)
                errs.append(abs(est / (rate * total_units) - 1))
                p = pooled.setdefault(fn, [0.0, 0.0])
                p[0] += est
                p[1] += rate * total_units
                for w, u in zip(wins, reds_or_units):
                    c = w[3].get(fn)
                    if c is None or c[4] or mode == "full":
                        continue
                    cover[1] += 1
                    cover[0] += c[2] <= rate * u <= c[3]
        if not per_tick:
            continue
        pe = [abs(a / b - 1) for a, b in pooled.values() if b > 0]
        med = statistics.median(ratios) if ratios else float("nan")
        rng = f"{100 * min(ratios):+.1f}..{100 * max(ratios):+.1f}%" if ratios else "-"
        dx = (f"{statistics.mean(duties):.3f}/{statistics.mean(exposures):.3f}"
              if duties else "-")
        print(f"{LABEL[mode]:<20} {statistics.median(per_tick):>14.2f} {100 * med:>+15.1f}% "
              f"{rng:>17} "
              f"{(f'{100 * statistics.median(vs_observe):+.1f}%' if vs_observe else '-'):>11} "
              f"{dx:>13} "
              f"{(f'{100 * statistics.mean(errs):.1f}%' if errs else '-'):>17} "
              f"{(f'{100 * max(errs):.1f}%' if errs else '-'):>7} "
              f"{(f'{100 * statistics.mean(pe):.1f}%' if pe else '-'):>12} "
              f"{(f'{100 * max(pe):.1f}%' if pe else '-'):>11} "
              f"{(f'{100 * cover[0] / cover[1]:.0f}% of {cover[1]}' if cover[1] else '-'):>16}")
    print(f"({len(rounds)} rounds; vs none / vs observe: the median over rounds of the "
          "ratio to that run of the same round; estimate error per function above 100 "
          "calls/s; pooled: every round's windows of the mode summed)")


main()
