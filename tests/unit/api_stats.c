/*
 * Unit tests of the monitor's snapshot computations (src/api/runtime_stats.c):
 * history points (JSON and the compact ring), trends, alerts and hot
 * modules on hand-made snapshots.
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/alert_rules.h"
#include "api/runtime_stats.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/json_text.h"
#include "harness.h"
#include "observe/snapshot_view.h"

/* A snapshot at t seconds with the given total memory, scheduler use and
 * longest message queue. */
static json_t *snap_at(int t, double memory, double sched, int queue)
{
	json_t *s =
	    json_pack("{s:I, s:i, s:i, s:{s:f}, s:{s:i}, s:{s:i, s:i}, s:{s:i, s:i},"
	              " s:{s:f}, s:{s:[{s:s, s:i, s:f, s:i}, {s:s, s:i, s:f, s:i},"
	              " {s:s, s:i, s:f, s:i}], s:[{s:i}]}}",
	              "timestamp_ms", (json_int_t)(1764496229000LL + t * 1000LL), "seq", t,
	              "schedulers_online", 2, "scheduler_utilisation", "total", sched, "run_queue",
	              "total", 0, "processes", "count", 400, "limit", 1000, "atoms", "count", 10,
	              "limit", 1000, "memory", "total", memory, "top_processes", "reductions",
	              "module", "A.Repo", "reductions", 600, "cpu_share", 0.6, "memory_bytes", 10,
	              "module", "B.Web", "reductions", 300, "cpu_share", 0.3, "memory_bytes", 20,
	              "module", "A.Repo", "reductions", 100, "cpu_share", 0.1, "memory_bytes", 30,
	              "message_queue", "message_queue_len", queue);
	TH_ASSERT(s != NULL);
	return s;
}

static json_t *points_of(double mem0, double mem_step, int n)
{
	json_t *pts = json_array();
	for (int i = 0; i < n; i++) {
		json_t *s = snap_at(i * 10, mem0 + mem_step * i, 0.2, 0);
		json_array_append_new(pts, api_stats_point(s));
		json_decref(s);
	}
	return pts;
}

static const char *direction(json_t *trend)
{
	return json_string_value(json_object_get(trend, "direction"));
}

static void point_has_every_metric(void)
{
	json_t *s = snap_at(3, 5e7, 0.5, 42);
	json_t *p = api_stats_point(s);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(p, "seq")), 3);
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(p, "memory_total")), 5e7, 1);
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(p, "scheduler_utilisation")), 0.5, 1e-9);
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(p, "max_message_queue")), 42, 1e-9);
	/* Unknown values are null, never invented. */
	TH_ASSERT(json_is_null(json_object_get(p, "memory_binary")));
	TH_ASSERT(json_is_null(json_object_get(p, "reductions_per_second")));
	json_decref(p);
	json_decref(s);
}

static void trend_directions(void)
{
	json_t *rising = points_of(1e8, 5e6, 10); /* +45 % over the window */
	json_t *t = api_stats_metric_trend(rising, "memory_total");
	TH_ASSERT_STR_EQ(direction(t), "rising");
	TH_ASSERT(json_real_value(json_object_get(t, "change_pct")) > 30);
	TH_ASSERT(json_real_value(json_object_get(t, "slope_per_minute")) > 0);
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(t, "max")), 1e8 + 45e6, 1);
	json_decref(t);
	json_decref(rising);

	json_t *flat = points_of(1e8, 1e4, 10);
	t = api_stats_metric_trend(flat, "memory_total");
	TH_ASSERT_STR_EQ(direction(t), "stable");
	json_decref(t);
	json_decref(flat);

	json_t *falling = points_of(1e8, -5e6, 10);
	t = api_stats_metric_trend(falling, "memory_total");
	TH_ASSERT_STR_EQ(direction(t), "falling");
	json_decref(t);
	json_decref(falling);

	json_t *one = points_of(1e8, 0, 1);
	t = api_stats_metric_trend(one, "memory_total");
	TH_ASSERT_STR_EQ(direction(t), "insufficient_data");
	json_decref(t);
	/* A metric that is always zero is stable, not a division by zero. */
	json_t *zeros = points_of(0, 0, 5);
	t = api_stats_metric_trend(zeros, "run_queue");
	TH_ASSERT_STR_EQ(direction(t), "stable");
	TH_ASSERT(isfinite(json_real_value(json_object_get(t, "change_pct"))));
	json_decref(t);
	json_t *all = api_stats_trend(zeros);
	TH_ASSERT(json_object_get(all, "memory_total") != NULL);
	TH_ASSERT(json_object_get(all, "max_message_queue") != NULL);
	json_decref(all);
	json_decref(zeros);
	json_decref(one);
}

static bool has_alert(json_t *alerts, const char *metric, const char *severity)
{
	size_t i;
	json_t *a;
	json_array_foreach(alerts, i, a)
	{
		if (strcmp(json_string_value(json_object_get(a, "metric")), metric) == 0 &&
		    strcmp(json_string_value(json_object_get(a, "severity")), severity) == 0)
			return true;
	}
	return false;
}

static void alerts_fire_on_thresholds(void)
{
	json_t *calm = snap_at(0, 1e8, 0.2, 3);
	json_t *a = api_stats_alerts(calm, NULL);
	TH_ASSERT_INT_EQ(json_array_size(a), 0);
	json_decref(a);
	json_decref(calm);

	json_t *busy = snap_at(0, 1e8, 0.8, 2000);
	a = api_stats_alerts(busy, NULL);
	TH_ASSERT(has_alert(a, "scheduler_utilisation", "warning"));
	TH_ASSERT(has_alert(a, "max_message_queue", "warning"));
	json_decref(a);
	json_decref(busy);

	json_t *hot = snap_at(0, 1e8, 0.95, 20000);
	json_object_set_new(json_object_get(hot, "processes"), "count", json_integer(950));
	a = api_stats_alerts(hot, NULL);
	TH_ASSERT(has_alert(a, "scheduler_utilisation", "critical"));
	TH_ASSERT(has_alert(a, "max_message_queue", "critical"));
	TH_ASSERT(has_alert(a, "processes", "critical"));
	json_decref(a);

	json_t *growing = points_of(1e8, 5e6, 10);
	a = api_stats_alerts(hot, growing);
	TH_ASSERT(has_alert(a, "memory_total", "warning"));
	json_decref(a);
	json_decref(growing);
	json_decref(hot);
}

/* The observer's own processes warming up (a session's heap growing from
 * nothing on a small node) are not the node's memory growing: the memory
 * figures of points and alerts leave them out. */
static void observer_memory_is_not_the_nodes(void)
{
	json_t *pts = json_array();
	for (int i = 0; i < 10; i++) {
		/* 20 MB of node, the observer from 0.1 to 9.1 MB: +45% in all */
		json_t *s = snap_at(i * 10, 2e7 + 1e6 * i, 0.2, 0);
		json_object_set_new(s, "observer", json_pack("{s:f}", "memory", 1e5 + 1e6 * i));
		json_array_append_new(pts, api_stats_point(s));
		json_decref(s);
	}
	json_t *t = api_stats_metric_trend(pts, "memory_total");
	TH_ASSERT_STR_EQ(direction(t), "stable");
	json_decref(t);
	json_t *last = snap_at(90, 2.9e7, 0.2, 0);
	json_object_set_new(last, "observer", json_pack("{s:f}", "memory", 9.1e6));
	json_t *a = api_stats_alerts(last, pts);
	TH_ASSERT(!has_alert(a, "memory_total", "warning"));
	json_decref(a);
	json_decref(last);
	json_decref(pts);
}

static void hot_modules_are_aggregated_and_ranked(void)
{
	json_t *s = snap_at(0, 1e8, 0.2, 0);
	json_t *mods = api_stats_hot_modules(s);
	TH_ASSERT_INT_EQ(json_array_size(mods), 2);
	json_t *first = json_array_get(mods, 0);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(first, "module")), "A.Repo");
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(first, "reductions")), 700, 1e-9);
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(first, "cpu_share")), 0.7, 1e-9);
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(first, "processes")), 2);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(mods, 1), "module")),
	                 "B.Web");
	json_decref(mods);
	json_decref(s);
	/* A snapshot without processes has no hot modules. */
	json_t *empty = json_object();
	mods = api_stats_hot_modules(empty);
	TH_ASSERT_INT_EQ(json_array_size(mods), 0);
	json_decref(mods);
	json_decref(empty);
}

/* The live feed writes the hot modules as text straight from the view: the
 * same bytes as the JSON list serialised, on a list with ties (kept in the
 * order modules first appear), processes without a module or with unknown
 * figures, names that need escaping, and more processes and modules than
 * the fast paths hold on the stack. */
static void hot_modules_text_is_the_json_list(void)
{
	json_t *procs = json_array();
	static const char *const names[] = {"B.Tie",      "A.Tie",   NULL,
	                                    "Quote\"d\\", "Ctl\x01", "(unknown)"};
	for (int i = 0; i < 6; i++) {
		json_t *p = json_pack("{s:i, s:f, s:i}", "reductions", 100, "cpu_share", 0.125,
		                      "memory_bytes", 1000 + i);
		if (names[i])
			json_object_set_new(p, "module", json_string(names[i]));
		json_array_append_new(procs, p);
	}
	/* no cpu_share and no memory: they add nothing, the process still counts */
	json_array_append_new(procs, json_pack("{s:s, s:f}", "module", "A.Tie", "reductions", 0.5));
	for (int i = 0; i < 90; i++) { /* past the 64 entries and 32 modules kept on the stack */
		char name[32];
		snprintf(name, sizeof(name), "Many.M%d", i % 40);
		json_array_append_new(procs, json_pack("{s:s, s:f, s:f, s:i}", "module", name,
		                                       "reductions", 1.0 / (i + 3), "cpu_share",
		                                       1e-7 * i, "memory_bytes", i));
	}
	json_t *snap = json_pack("{s:{s:o}}", "top_processes", "reductions", procs);
	struct obs_view v;
	TH_ASSERT_OK(obs_view_parse(snap, &v));
	json_t *list = api_stats_hot_modules_of_view(&v);
	char *want = gi_json_text(list, NULL);
	struct gi_buf b;
	gi_buf_init(&b, 0);
	GI_BUF_LIT(&b, "x");
	TH_ASSERT_OK(api_stats_hot_modules_append(&b, &v));
	TH_ASSERT_STR_EQ(gi_buf_str(&b) + 1, want);
	/* Ties in first-appearance order; the empty module and "(unknown)" are one. */
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(list, 0), "module")),
	                 "(unknown)");
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(json_array_get(list, 0), "processes")),
	                 2);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(list, 1), "module")),
	                 "A.Tie");
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(json_array_get(list, 1), "reductions")),
	                   100.5, 1e-12);
	TH_ASSERT_DBL_NEAR(json_real_value(json_object_get(json_array_get(list, 1), "cpu_share")),
	                   0.125, 1e-12);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(list, 2), "module")),
	                 "B.Tie");
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(list, 3), "module")),
	                 "Quote\"d\\");
	TH_ASSERT_INT_EQ(json_array_size(list), 5 + 40);
	/* No view: an empty list, as the JSON form gives. */
	gi_buf_reset(&b);
	TH_ASSERT_OK(api_stats_hot_modules_append(&b, NULL));
	TH_ASSERT_STR_EQ(gi_buf_str(&b), "[]");
	gi_buf_destroy(&b);
	gi_free(want);
	json_decref(list);
	obs_view_destroy(&v);
	json_decref(snap);
}

/* The monitor's compact ring gives what the JSON points gave: the same
 * points (newest `limit`, after wrapping round) and the same trends. */
static void compact_history_matches_the_json_points(void)
{
	enum { CAP = 50, TOTAL = 75 };
	struct api_history h;
	api_history_init(&h, CAP);
	TH_ASSERT(api_history_json(&h, 0) == NULL);
	json_t *all = json_array();
	for (int i = 0; i < TOTAL; i++) {
		json_t *snap = snap_at(i, 4e7 + 1e5 * i, 0.1 + 0.001 * i, i % 7);
		struct api_point p;
		api_stats_point_read(snap, &p);
		api_history_add(&h, &p);
		json_array_append_new(all, api_stats_point(snap));
		json_decref(snap);
	}
	TH_ASSERT_INT_EQ(h.len, CAP);
	json_t *kept = json_array(), *last10 = json_array();
	for (int i = TOTAL - CAP; i < TOTAL; i++)
		json_array_append(kept, json_array_get(all, (size_t)i));
	for (int i = TOTAL - 10; i < TOTAL; i++)
		json_array_append(last10, json_array_get(all, (size_t)i));
	json_t *got = api_history_json(&h, 0), *got10 = api_history_json(&h, 10);
	TH_ASSERT(json_equal(got, kept));
	TH_ASSERT(json_equal(got10, last10));
	json_t *t1 = api_history_trend(&h, 0), *t2 = api_stats_trend(kept);
	TH_ASSERT(json_equal(t1, t2));
	TH_ASSERT_STR_EQ(direction(json_object_get(t1, "memory_total")), "rising");
	/* Alerts on the ring and on its JSON agree too. */
	json_t *snap = snap_at(TOTAL, 4e7 + 1e5 * TOTAL, 0.99, 5000);
	json_t *a1 = api_alert_rules_eval_history(api_alert_rules_builtin(), snap, &h);
	json_t *a2 = api_alert_rules_eval(api_alert_rules_builtin(), snap, kept);
	TH_ASSERT(json_array_size(a1) > 0);
	TH_ASSERT(json_equal(a1, a2));
	json_decref(a1);
	json_decref(a2);
	json_decref(snap);
	json_decref(t1);
	json_decref(t2);
	json_decref(got);
	json_decref(got10);
	json_decref(kept);
	json_decref(last10);
	json_decref(all);
	api_history_destroy(&h);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(point_has_every_metric),
	    TH_TEST(trend_directions),
	    TH_TEST(alerts_fire_on_thresholds),
	    TH_TEST(observer_memory_is_not_the_nodes),
	    TH_TEST(hot_modules_are_aggregated_and_ranked),
	    TH_TEST(hot_modules_text_is_the_json_list),
	    TH_TEST(compact_history_matches_the_json_points),
	    TH_END,
	};
	return th_main(argc, argv, "unit_api_stats", tests);
}
