/*
 * Unit tests of the profile's call_time columns: snapshots with per-function
 * times (docs/SNAPSHOT.md trace.calls time_calls/time_us, trace.call_time)
 * become trace hotspots with total time, mean per call and share of traced
 * time, a profile-level call_time summary, and the text and HTML reports
 * show them; without call_time the columns are null and the reports keep
 * their count-only layout. Hand-computed expectations.
 * needs:
 */
#include <math.h>
#include <string.h>

#include "base/buf.h"
#include "fuse/fuse.h"
#include "harness.h"
#include "json_util.h"

/* One snapshot of a session tracing Calc, with call_time when `timed`. */
static json_t *snapshot(long seq, bool timed)
{
	json_t *calls = json_pack("[{s:s, s:s, s:i, s:i}, {s:s, s:s, s:i, s:i}]", "module", "Calc",
	                          "function", "slow", "arity", 1, "count", 100, "module", "Calc",
	                          "function", "quick", "arity", 0, "count", 900);
	json_t *trace =
	    json_pack("{s:[s], s:i, s:o}", "modules", "Calc", "window_ms", 1000, "calls", calls);
	if (timed) {
		/* slow/1: 50 timed calls, 40 ms; quick/0: 450 timed calls, 10 ms */
		json_t *slow = json_array_get(calls, 0), *quick = json_array_get(calls, 1);
		json_object_set_new(slow, "time_calls", json_integer(50));
		json_object_set_new(slow, "time_us", json_integer(40000));
		json_object_set_new(quick, "time_calls", json_integer(450));
		json_object_set_new(quick, "time_us", json_integer(10000));
		json_object_set_new(trace, "call_time",
		                    json_pack("{s:i, s:i, s:i, s:i, s:b, s:s, s:[]}", "flagged",
		                              seq == 0 ? 3 : 5, "flag_cap", 100, "refused",
		                              seq == 0 ? 1 : 0, "trace_messages", 7, "suspended", 0,
		                              "isolation", "global", "processes"));
	}
	return json_pack("{s:i, s:s, s:i, s:I, s:i, s:{s:i, s:f}, s:o, s:[]}", "version", 1, "node",
	                 "calc@127.0.0.1", "seq", (int)seq, "timestamp_ms",
	                 (json_int_t)(1764496229000LL + seq * 1000), "window_ms", 1000,
	                 "reductions", "delta", 1000000, "per_second", 1e6, "trace", trace,
	                 "errors");
}

static json_t *profile_of(bool timed)
{
	json_t *snaps = json_array();
	for (long i = 0; i < 4; i++)
		json_array_append_new(snaps, snapshot(i, timed));
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(NULL, snaps, NULL, NULL, &p));
	json_decref(snaps);
	return p;
}

static void hotspots_carry_time_per_function(void)
{
	json_t *p = profile_of(true);
	json_t *hs = json_object_get(p, "trace_hotspots");
	json_t *slow = ts_json_find(hs, "function", "slow");
	json_t *quick = ts_json_find(hs, "function", "quick");
	TH_ASSERT(slow && quick);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(slow, "calls")), 400, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(slow, "time_us")), 160000, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(slow, "time_calls")), 200, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(slow, "mean_us")), 800, 1e-6);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(slow, "time_share")), 0.8, 1e-3);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(quick, "mean_us")), 22.2222, 1e-3);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(quick, "time_share")), 0.2, 1e-3);
	/* no graph attached: the graph columns are unknown, not zero */
	TH_ASSERT(json_is_null(json_object_get(slow, "fan_in")));
	TH_ASSERT(json_is_null(json_object_get(slow, "module_hub")));
	json_t *ct = json_object_get(p, "call_time");
	TH_ASSERT(json_is_object(ct));
	TH_ASSERT_INT_EQ(json_integer_value(json_object_get(ct, "windows")), 4);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ct, "flagged_max")), 5, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ct, "flagged_avg")), 4.5, 1e-3);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ct, "refused_max")), 1, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ct, "trace_messages")), 28, 1e-9);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(ct, "time_us")), 200000, 1e-9);
	TH_ASSERT_STR_EQ(json_string_value(json_object_get(ct, "isolation")), "global");

	struct gi_buf text;
	gi_buf_init(&text, 1 << 20);
	TH_ASSERT_OK(fuse_report_text(p, &text));
	const char *t = gi_buf_str(&text);
	TH_ASSERT_STR_CONTAINS(t, "Trace hotspots by time");
	TH_ASSERT_STR_CONTAINS(t, "us/call");
	/* ordered by time: slow/1 (160 ms, 80%) before quick/0 */
	const char *s = strstr(t, "Calc.slow/1"), *q = strstr(t, "Calc.quick/0");
	TH_ASSERT(s && q && s < q);
	TH_ASSERT_STR_CONTAINS(s, "160.0 ms");
	TH_ASSERT_STR_CONTAINS(s, "80.0%");
	TH_ASSERT_STR_CONTAINS(t, "28 foreign"); /* the note is wrapped at 80 columns */
	TH_ASSERT_STR_CONTAINS(t, "trace messages dropped");
	gi_buf_destroy(&text);

	struct gi_buf html;
	gi_buf_init(&html, 1 << 22);
	TH_ASSERT_OK(fuse_report_html(p, &html));
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&html), "&micro;s/call");
	gi_buf_destroy(&html);
	json_decref(p);
}

static void hotspots_without_call_time_keep_counts_only(void)
{
	json_t *p = profile_of(false);
	json_t *slow = ts_json_find(json_object_get(p, "trace_hotspots"), "function", "slow");
	TH_ASSERT(slow != NULL);
	TH_ASSERT_DBL_NEAR(json_number_value(json_object_get(slow, "calls")), 400, 1e-9);
	TH_ASSERT(json_is_null(json_object_get(slow, "time_us")));
	TH_ASSERT(json_is_null(json_object_get(slow, "mean_us")));
	TH_ASSERT(json_is_null(json_object_get(slow, "time_share")));
	TH_ASSERT(json_is_null(json_object_get(p, "call_time")));
	struct gi_buf text;
	gi_buf_init(&text, 1 << 20);
	TH_ASSERT_OK(fuse_report_text(p, &text));
	TH_ASSERT(strstr(gi_buf_str(&text), "Trace hotspots (") != NULL);
	TH_ASSERT(strstr(gi_buf_str(&text), "us/call") == NULL);
	gi_buf_destroy(&text);
	json_decref(p);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(hotspots_carry_time_per_function),
	    TH_TEST(hotspots_without_call_time_keep_counts_only),
	    TH_END,
	};
	return th_main(argc, argv, "unit_fuse_calltime", tests);
}
