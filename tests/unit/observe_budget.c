/*
 * Unit tests of the overhead budget's estimator (observe/snapshot.h): the
 * estimate of a duty-cycled count, its interval, its limits; a simulated
 * duty-cycled count of a known workload lands within its interval; and the
 * snapshot builder turns a duty-cycled trace section into estimates, scaled
 * by the work counted; the profile says how long, at what duty and exposure
 * and what it cost, and what other tools held.
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "fuse/fuse.h"
#include "harness.h"
#include "term_util.h"
#include "observe/snapshot.h"

static void estimate_scales_by_the_duty(void)
{
	struct obs_estimate e;
	/* 50 cycles of 100 calls each while on, on 5% of the window */
	obs_estimate_calls(5000, 50 * 100.0 * 100.0, 50, 0.05, &e);
	TH_ASSERT_DBL_NEAR(e.estimate, 100000, 1e-6);
	TH_ASSERT(e.low < e.estimate && e.high > e.estimate);
	TH_ASSERT(e.low >= 5000);
	/* a constant count varies only as a Poisson count: a few percent here */
	TH_ASSERT(e.high - e.estimate < 0.05 * e.estimate);
}

static void full_duty_is_exact(void)
{
	struct obs_estimate e;
	obs_estimate_calls(1234, 1234.0 * 1234.0, 1, 1.0, &e);
	TH_ASSERT_DBL_NEAR(e.estimate, 1234, 1e-9);
	TH_ASSERT_DBL_NEAR(e.low, 1234, 1e-9);
	TH_ASSERT_DBL_NEAR(e.high, 1234, 1e-9);
}

static void nothing_measured_is_the_sum(void)
{
	struct obs_estimate e;
	obs_estimate_calls(7, 49, 0, 0.5, &e);
	TH_ASSERT_DBL_NEAR(e.estimate, 7, 1e-9);
	obs_estimate_calls(7, 49, 3, 0, &e);
	TH_ASSERT_DBL_NEAR(e.high, 7, 1e-9);
	obs_estimate_calls(0, 0, 10, 0.1, &e);
	TH_ASSERT_DBL_NEAR(e.estimate, 0, 1e-9);
	TH_ASSERT(e.high > 0); /* zero seen in 10% of the time: not proof of zero */
}

static void bursty_counts_widen_the_interval(void)
{
	struct obs_estimate steady, bursty;
	/* the same total over 20 cycles: all equal, or all in two cycles */
	obs_estimate_calls(2000, 20 * 100.0 * 100.0, 20, 0.1, &steady);
	obs_estimate_calls(2000, 2 * 1000.0 * 1000.0, 20, 0.1, &bursty);
	TH_ASSERT_DBL_NEAR(steady.estimate, bursty.estimate, 1e-9);
	TH_ASSERT(bursty.high - bursty.low > 3 * (steady.high - steady.low));
}

/* A deterministic workload whose call rate wanders (a slow sine plus
 * noise), counted in on-phases of `duty` of each cycle: the true total
 * falls inside the interval for most seeds, as a 95% interval should. */
static void simulated_duty_cycling_covers_the_truth(void)
{
	int covered = 0, runs = 200;
	unsigned seed = 12345;
	for (int r = 0; r < runs; r++) {
		const int cycles = 50, slots = 100; /* 1 ms slots in a 100 ms cycle */
		const double duty = 0.05;
		double truth = 0, sum = 0, sumsq = 0;
		for (int c = 0; c < cycles; c++) {
			double on = 0;
			for (int t = 0; t < slots; t++) {
				seed = seed * 1103515245u + 12345u;
				double noise = (double)((seed >> 16) % 1000) / 1000.0;
				double calls =
				    floor(50 + 30 * sin((c * slots + t) / 700.0 + r) + 40 * noise);
				truth += calls;
				if (t < (int)(duty * slots))
					on += calls;
			}
			sum += on;
			sumsq += on * on;
		}
		struct obs_estimate e;
		obs_estimate_calls(sum, sumsq, cycles, duty, &e);
		if (truth >= e.low && truth <= e.high)
			covered++;
		TH_ASSERT_MSG(fabs(e.estimate - truth) < 0.1 * truth, "run %d: %.0f vs %.0f", r,
		              e.estimate, truth);
	}
	TH_ASSERT_MSG(covered >= runs * 85 / 100, "covered %d of %d", covered, runs);
}

static void snapshot_turns_duty_counts_into_estimates(void)
{
	const char *reply_text =
	    "{\"window_ms\":1000,\"trace\":{\"modules\":[\"Elixir.Hot\"],\"window_ms\":1000,"
	    "\"calls\":[[\"Elixir.Hot\",\"f\",1,500,25000,10]],"
	    "\"duty\":{\"overhead\":0.05,\"cycle_ms\":100,\"cost\":0.5,\"paused\":false,"
	    "\"modules\":[{\"module\":\"Elixir.Hot\",\"on_us\":100000,\"cycles\":10,"
	    "\"fraction\":0.1,\"next_fraction\":0.1}]}},\"errors\":[]}";
	json_t *reply = json_loads(reply_text, 0, NULL);
	TH_ASSERT(reply != NULL);
	json_t *snap = ts_snapshot_build(reply, "n@h", "abc", 0, 1000, NULL);
	TH_ASSERT(snap != NULL);
	json_t *trace = json_object_get(snap, "trace");
	json_t *c = json_array_get(json_object_get(trace, "calls"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(c, "module")), "Hot");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(c, "measured")), 500);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(c, "count")), 5000);
	TH_ASSERT(json_is_true(json_object_get(c, "estimated")));
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(c, "duty")), 0.1, 1e-9);
	TH_ASSERT(json_integer_value(json_object_get(c, "low")) <= 5000);
	TH_ASSERT(json_integer_value(json_object_get(c, "high")) >= 5000);
	json_t *m = json_array_get(json_object_get(json_object_get(trace, "duty"), "modules"), 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(m, "module")), "Hot");
	json_decref(snap);
	json_decref(reply);
}

/* The estimate scales by the module's own exposure (the share of the time
 * it counted), and its interval reaches the estimate scaled by the share of
 * the node's work done while counting (right where CPU-bound callers were
 * slowed by counting); a window that did not count carries the last counted
 * figures over and says it measured nothing. */
static void estimate_scales_by_work_and_carries(void)
{
	const char *reply_text =
	    "{\"window_ms\":1000,\"trace\":{\"modules\":[\"Elixir.Hot\",\"Elixir.Cold\"],"
	    "\"window_ms\":1000,\"foreign\":[\"Hot: call trace patterns (local) set by another "
	    "tool on 2 of 4 functions; shared (left as they are)\"],"
	    "\"calls\":[[\"Elixir.Hot\",\"f\",1,400,16000,10],[\"Elixir.Cold\",\"g\",0,30,90,10]],"
	    "\"duty\":{\"overhead\":0.05,\"cycle_ms\":1000,\"cost\":0.9,\"paused\":false,"
	    "\"reds\":1000000,\"modules\":["
	    "{\"module\":\"Elixir.Hot\",\"on_us\":100000,\"on_reds\":20000,"
	    "\"exposed_us\":150000,\"cycles\":10,\"carried\":false},"
	    "{\"module\":\"Elixir.Cold\",\"on_us\":0,\"on_reds\":100000,"
	    "\"exposed_us\":0,\"cycles\":10,\"carried\":true}]}},\"errors\":[]}";
	json_t *reply = json_loads(reply_text, 0, NULL);
	TH_ASSERT(reply != NULL);
	json_t *snap = ts_snapshot_build(reply, "n@h", "abc", 0, 1000, NULL);
	TH_ASSERT(snap != NULL);
	json_t *trace = json_object_get(snap, "trace");
	json_t *hot = json_array_get(json_object_get(trace, "calls"), 0);
	/* 10% of the time (400 / 0.1), but 2% of the work (400 / 0.02): the
	 * interval holds both */
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(hot, "count")), 4000);
	TH_ASSERT(json_integer_value(json_object_get(hot, "high")) >= 20000);
	TH_ASSERT(json_integer_value(json_object_get(hot, "low")) <= 4000);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(hot, "measured")), 400);
	/* the time share counted (its own exposure); the work share is the
	 * module's "sampled" */
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(hot, "duty")), 0.1, 1e-9);
	json_t *cold = json_array_get(json_object_get(trace, "calls"), 1);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(cold, "count")), 300);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(cold, "measured")), 0);
	TH_ASSERT(json_is_true(json_object_get(cold, "carried")));
	json_t *mods = json_object_get(json_object_get(trace, "duty"), "modules");
	json_t *hm = json_array_get(mods, 0);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(hm, "duty")), 0.1, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(hm, "sampled")), 0.02, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(hm, "exposure")), 0.15, 1e-9);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(trace, "foreign")), 1);

	/* the profile: how long, at what duty and exposure, what it cost, and
	 * what another tool held */
	json_t *snaps = json_array();
	for (int i = 0; i < 3; i++) {
		json_t *s = json_deep_copy(snap);
		json_object_set_new(s, "seq", json_integer(i));
		json_object_set_new(s, "timestamp_ms", json_integer(1764496229000LL + i * 1000));
		json_array_append_new(snaps, s);
	}
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, snaps, NULL, NULL, &p));
	json_t *tracing = json_object_get(p, "tracing");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(tracing, "mode")), "budget");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(tracing, "windows")), 3);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(tracing, "traced_ms")), 3000, 1e-9);
	TH_ASSERT_INT_EQ(json_array_size(json_object_get(tracing, "foreign")), 1);
	json_t *b = json_object_get(p, "trace_budget");
	/* exposure: the mean of Hot's 0.15 and Cold's 0 */
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(b, "exposure_mean")), 0.075, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(b, "node_cost")), 0.0675, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(b, "duty_mean")), 0.05, 1e-9);
	/* the hotspots' totals: the calls counted over the session scaled by
	 * the time counted (1200 x 3 s / 0.3 s), the interval reaching the
	 * work-scaled 60,000: an estimate the budget cannot stand behind (the
	 * two disagree fivefold), which says so; Cold's carried windows repeat
	 * one measurement, so their errors add in full (3 x) */
	double cold_half = json_number_value(json_object_get(cold, "high")) - 300.0;
	json_t *hs = json_object_get(p, "trace_hotspots");
	json_t *hh = NULL, *ch = NULL;
	for (size_t i = 0; i < json_array_size(hs); i++) {
		const char *fn =
		    json_string_value(json_object_get(json_array_get(hs, i), "function"));
		if (fn && strcmp(fn, "f") == 0)
			hh = json_array_get(hs, i);
		if (fn && strcmp(fn, "g") == 0)
			ch = json_array_get(hs, i);
	}
	TH_ASSERT(hh != NULL && ch != NULL);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(hh, "calls")), 12000, 1e-6);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(hh, "measured")), 1200, 1e-9);
	TH_ASSERT(json_number_value(json_object_get(hh, "high")) >= 60000);
	TH_ASSERT(json_number_value(json_object_get(hh, "low")) <= 12000);
	TH_ASSERT(json_is_false(json_object_get(hh, "firm")));
	TH_ASSERT(json_is_string(json_object_get(hh, "estimate_note")));
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ch, "high")) - 900, 3 * cold_half,
	                   2.0);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ch, "measured")), 0, 1e-9);
	struct gi_buf text;
	gi_buf_init(&text, 0);
	TH_ASSERT_OK(fuse_report_text(p, &text));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text),
	                       "call counting: 3 windows, 3.0 s, under a 5.0% budget");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), "another tool: Hot: call trace patterns");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), "count exactly with --overhead 0");
	gi_buf_destroy(&text);
	/* the HTML report marks it the same way: its range, marked unsure, and
	 * how to count exactly in the cell's title */
	gi_buf_init(&text, 0);
	TH_ASSERT_OK(fuse_report_html(p, &text));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), "<td class=\"n unsure\" title=\"");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), "count exactly with --overhead 0");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), "\">?");
	gi_buf_destroy(&text);
	json_decref(p);
	json_decref(snaps);
	json_decref(snap);
	json_decref(reply);
}

/* trace_budget.calls_estimated is the functions' pooled estimates summed
 * (the hotspots' calls), not the windows' own estimates summed: a window
 * that counted 1 ms of its second makes an estimate of its own 10x off, and
 * the pooled figure (calls counted over the time counted) does not follow it. */
static const char *pooled_window(long measured, long on_us)
{
	static char text[1024];
	snprintf(text, sizeof(text),
	         "{\"window_ms\":1000,\"trace\":{\"modules\":[\"Elixir.Hot\"],"
	         "\"window_ms\":1000,\"calls\":[[\"Elixir.Hot\",\"f\",1,%ld,%ld,10]],"
	         "\"duty\":{\"overhead\":0.05,\"cycle_ms\":1000,\"cost\":0.5,"
	         "\"paused\":false,\"modules\":[{\"module\":\"Elixir.Hot\",\"on_us\":%ld,"
	         "\"exposed_us\":%ld,\"cycles\":10,\"carried\":false}]}},\"errors\":[]}",
	         measured, measured * measured / 10, on_us, on_us);
	return text;
}

static void budget_total_is_pooled(void)
{
	static const long windows[][2] = {{400, 100000}, {10, 1000}, {400, 100000}};
	json_t *snaps = json_array();
	double summed = 0;
	for (int i = 0; i < 3; i++) {
		json_t *reply = json_loads(pooled_window(windows[i][0], windows[i][1]), 0, NULL);
		TH_ASSERT(reply != NULL);
		json_t *s = ts_snapshot_build(reply, "n@h", "abc", 0, 1000, NULL);
		TH_ASSERT(s != NULL);
		summed += json_number_value(json_object_get(
		    json_array_get(json_object_get(json_object_get(s, "trace"), "calls"), 0),
		    "count"));
		json_object_set_new(s, "seq", json_integer(i));
		json_object_set_new(s, "timestamp_ms", json_integer(1764496229000LL + i * 1000));
		json_array_append_new(snaps, s);
		json_decref(reply);
	}
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, snaps, NULL, NULL, &p));
	json_t *h = json_array_get(json_object_get(p, "trace_hotspots"), 0);
	double pooled = json_number_value(json_object_get(h, "calls"));
	/* 810 calls counted in 0.201 s of 3 s */
	TH_ASSERT_DBL_NEAR(pooled, 810.0 * 3000 / 201, 1.0);
	TH_ASSERT(summed > 1.3 * pooled); /* the windows' own: 4000 + 10000 + 4000 */
	json_t *b = json_object_get(p, "trace_budget");
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(b, "calls_estimated")), pooled, 1e-6);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(b, "calls_measured")), 810, 1e-9);
	json_decref(p);
	json_decref(snaps);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(estimate_scales_by_the_duty),
	    TH_TEST(full_duty_is_exact),
	    TH_TEST(nothing_measured_is_the_sum),
	    TH_TEST(bursty_counts_widen_the_interval),
	    TH_TEST(simulated_duty_cycling_covers_the_truth),
	    TH_TEST(snapshot_turns_duty_counts_into_estimates),
	    TH_TEST(estimate_scales_by_work_and_carries),
	    TH_TEST(budget_total_is_pooled),
	    TH_END,
	};
	return th_main(argc, argv, "unit_observe_budget", tests);
}
