/*
 * Unit tests for src/fuse/profile_view.[ch], the typed reading of a profile:
 * a profile the builder made from the recorded busy series reads field for
 * field as its JSON says (so a field the builder renames or stops writing
 * fails here, not silently in a rule), what is missing, null or of another
 * type reads as unknown, lists are capped, a newer version is refused; and
 * the reports mark the estimated counts the budget cannot stand behind.
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "fuse/fuse.h"
#include "fuse/profile_view.h"
#include "harness.h"
#include "json_util.h"

static json_t *busy_profile(void)
{
	json_t *fin = ts_fixture_json("busy", "finalize.json");
	json_t *snaps = ts_fixture_json("busy", "snapshots.json");
	json_t *p = NULL;
	TH_ASSERT_OK(fuse_profile_build(fin, snaps, NULL, NULL, &p));
	json_decref(fin);
	json_decref(snaps);
	return p;
}

static json_t *path(json_t *o, const char *dotted)
{
	json_t *at = o;
	char key[128];
	for (const char *p = dotted; at && *p;) {
		size_t n = strcspn(p, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		at = json_is_array(at) ? json_array_get(at, (size_t)strtol(key, NULL, 10))
		                       : json_object_get(at, key);
		p += n + (p[n] == '.');
	}
	return at;
}

/* The view's number equals the JSON's at `dotted`, and the JSON has one:
 * a field the builder stopped writing fails here. */
#define NUM_IS(p, dotted, field)                                                                   \
	do {                                                                                       \
		json_t *th_j_ = path((p), (dotted));                                               \
		TH_ASSERT_MSG(json_is_number(th_j_), "the profile has no number at %s", (dotted)); \
		TH_ASSERT_DBL_NEAR((field), json_number_value(th_j_), 1e-9);                       \
	} while (0)
#define STR_IS(p, dotted, field)                                                                   \
	do {                                                                                       \
		json_t *th_j_ = path((p), (dotted));                                               \
		TH_ASSERT_MSG(json_is_string(th_j_), "the profile has no string at %s", (dotted)); \
		TH_ASSERT_STR_EQ((field), json_string_value(th_j_));                               \
	} while (0)

static void view_reads_a_built_profile(void)
{
	json_t *p = busy_profile();
	struct fuse_view v;
	TH_ASSERT_OK(fuse_view_parse(p, &v));
	TH_ASSERT_INT_EQ(v.version, 1);
	STR_IS(p, "session.id", v.session.id);
	STR_IS(p, "session.node", v.session.node);
	STR_IS(p, "session.status", v.session.status);
	NUM_IS(p, "session.started_ms", v.session.started_ms);
	NUM_IS(p, "session.duration_ms", v.session.duration_ms);
	NUM_IS(p, "session.interval_ms", v.session.interval_ms);
	NUM_IS(p, "session.snapshot_count", v.session.snapshot_count);
	NUM_IS(p, "session.schedulers_online", v.session.schedulers_online);
	TH_ASSERT_INT_EQ(v.session.traced_modules.len,
	                 json_array_size(path(p, "session.traced_modules")));
	STR_IS(p, "session.traced_modules.0", v.session.traced_modules.items[0]);

	NUM_IS(p, "metrics.memory_bytes.peak", v.metrics.memory_bytes.peak);
	NUM_IS(p, "metrics.memory_bytes.growth_bytes", v.metrics.memory_bytes.growth_bytes);
	NUM_IS(p, "metrics.memory_bytes.trend_ratio", v.metrics.memory_bytes.trend_ratio);
	NUM_IS(p, "metrics.memory_categories.binary.trend_bytes",
	       v.metrics.memory_categories[FUSE_MEM_BINARY].trend_bytes);
	NUM_IS(p, "metrics.process_count.end_quarter_avg", v.metrics.process_count.end_quarter_avg);
	NUM_IS(p, "metrics.run_queue.avg", v.metrics.run_queue.avg);
	NUM_IS(p, "metrics.run_queue.above_schedulers_share",
	       v.metrics.run_queue.above_schedulers_share);
	NUM_IS(p, "metrics.scheduler_utilisation.high_share",
	       v.metrics.scheduler_utilisation.high_share);
	NUM_IS(p, "metrics.reductions_per_second.peak", v.metrics.reductions_per_second.peak);
	TH_ASSERT(v.series.t_s.len > 0);
	TH_ASSERT_INT_EQ(v.series.run_queue.len, v.series.t_s.len);
	NUM_IS(p, "series.memory_bytes.1", v.series.memory_bytes.values[1]);

	STR_IS(p, "hot_modules_basis", v.hot_modules_basis);
	TH_ASSERT_INT_EQ(v.nhot_modules, json_array_size(path(p, "hot_modules")));
	STR_IS(p, "hot_modules.0.module", v.hot_modules[0].module);
	NUM_IS(p, "hot_modules.0.reductions_share", v.hot_modules[0].reductions_share);
	/* without a graph every graph field is unknown, never zero */
	TH_ASSERT(isnan(v.hot_modules[0].graph.ca));
	TH_ASSERT_INT_EQ(v.hot_modules[0].graph.hub, FUSE_TRI_UNKNOWN);
	TH_ASSERT_INT_EQ(v.nownership_modules, json_array_size(path(p, "ownership_modules")));
	TH_ASSERT(v.explained.present && v.explained.note);
	TH_ASSERT(v.executing.present);

	TH_ASSERT_INT_EQ(v.nhotspots, json_array_size(path(p, "trace_hotspots")));
	TH_ASSERT(v.nhotspots > 0);
	STR_IS(p, "trace_hotspots.0.mfa", v.hotspots[0].mfa);
	STR_IS(p, "trace_hotspots.0.kind", v.hotspots[0].kind);
	STR_IS(p, "trace_hotspots.0.class", v.hotspots[0].class_name);
	NUM_IS(p, "trace_hotspots.0.calls", v.hotspots[0].calls);
	NUM_IS(p, "trace_hotspots.0.calls_per_second", v.hotspots[0].calls_per_second);
	NUM_IS(p, "trace_hotspots.0.per_window.max", v.hotspots[0].per_window.max);

	TH_ASSERT_INT_EQ(v.nworkload, json_array_size(path(p, "workload")));
	TH_ASSERT(v.nworkload > 0);
	STR_IS(p, "workload.0.module", v.workload[0].module);
	NUM_IS(p, "workload.0.reads", v.workload[0].reads);
	NUM_IS(p, "workload.0.operations_per_second", v.workload[0].operations_per_second);
	NUM_IS(p, "workload.0.read_share", v.workload[0].read_share);
	TH_ASSERT(v.workload[0].database.present);
	NUM_IS(p, "workload.0.database.pipeline_helper_calls",
	       v.workload[0].database.pipeline_helper_calls);
	TH_ASSERT(v.pipeline.present);
	STR_IS(p, "tracing.mode", v.tracing.mode);

	TH_ASSERT(v.top_cpu.len > 0);
	STR_IS(p, "processes.top_cpu.0.pid", v.top_cpu.items[0].pid);
	NUM_IS(p, "processes.top_cpu.0.reductions_share", v.top_cpu.items[0].reductions_share);
	NUM_IS(p, "processes.top_cpu.0.reductions_per_second",
	       v.top_cpu.items[0].reductions_per_second);
	TH_ASSERT(v.has_loggers);
	TH_ASSERT(v.graph.present && !v.graph.attached);

	TH_ASSERT_INT_EQ(v.nrecommendations, json_array_size(path(p, "recommendations")));
	TH_ASSERT(v.nrecommendations > 0);
	STR_IS(p, "recommendations.0.id", v.recommendations[0].id);
	STR_IS(p, "recommendations.0.severity", v.recommendations[0].severity);
	NUM_IS(p, "recommendations.0.rule", v.recommendations[0].rule);
	NUM_IS(p, "recommendations.0.priority", v.recommendations[0].priority);
	TH_ASSERT(v.recommendations[0].evidence != NULL);
	TH_ASSERT_INT_EQ(v.truncated, 0);
	fuse_view_destroy(&v);
	json_decref(p);
}

static void view_reads_missing_as_unknown(void)
{
	json_error_t err;
	json_t *p = json_loads(
	    "{\"session\": {\"id\": 5, \"node\": null, \"traced_modules\": [\"A\", 3, null]},"
	    " \"metrics\": {\"run_queue\": {\"avg\": \"high\"}},"
	    " \"hot_modules\": [1, {\"module\": \"A\", \"graph\": null}],"
	    " \"trace_hotspots\": [{\"mfa\": \"A.f/1\", \"firm\": null, \"callers\": {}}],"
	    " \"processes\": {\"logger\": []}, \"storage\": [], \"recommendations\": {}}",
	    0, &err);
	TH_ASSERT(p);
	struct fuse_view v;
	TH_ASSERT_OK(fuse_view_parse(p, &v));
	TH_ASSERT_INT_EQ(v.version, -1); /* absent: read as the first version */
	TH_ASSERT(v.session.present);
	TH_ASSERT(v.session.id == NULL);   /* a number where a string belongs */
	TH_ASSERT(v.session.node == NULL); /* null */
	TH_ASSERT(isnan(v.session.snapshot_count));
	TH_ASSERT_INT_EQ(v.session.traced_modules.len, 1);
	TH_ASSERT(isnan(v.metrics.run_queue.avg));
	TH_ASSERT(!v.metrics.memory_bytes.present && isnan(v.metrics.memory_bytes.peak));
	TH_ASSERT_INT_EQ(v.nhot_modules, 1); /* the entry that is not an object is left out */
	TH_ASSERT(!v.hot_modules[0].graph.present && isnan(v.hot_modules[0].graph.ca));
	TH_ASSERT_INT_EQ(v.hot_modules[0].graph.hub, FUSE_TRI_UNKNOWN);
	TH_ASSERT(isnan(v.hot_modules[0].reductions_share));
	TH_ASSERT_INT_EQ(v.nhotspots, 1);
	TH_ASSERT_INT_EQ(v.hotspots[0].firm, FUSE_TRI_UNKNOWN);
	TH_ASSERT(isnan(v.hotspots[0].high) && !v.hotspots[0].per_window.present);
	TH_ASSERT_INT_EQ(v.hotspots[0].callers.len, 0);
	TH_ASSERT(v.has_loggers && v.loggers.len == 0);
	TH_ASSERT(!v.has_workload && v.nworkload == 0);
	TH_ASSERT(!v.storage.present && !v.observer.present && !v.call_time.present);
	TH_ASSERT(!v.executing.present && !v.executing.blocked.present);
	TH_ASSERT(isnan(v.executing.blocked.share_of_samples));
	TH_ASSERT_INT_EQ(v.nrecommendations, 0);
	TH_ASSERT(v.hot_modules_basis == NULL);
	fuse_view_destroy(&v);
	/* the rules stay silent on it rather than inventing figures */
	json_t *recs = NULL;
	TH_ASSERT_OK(fuse_rules_evaluate(p, NULL, &recs));
	TH_ASSERT_INT_EQ(json_array_size(recs), 0);
	json_decref(recs);
	json_decref(p);
}

static void view_refuses_a_newer_version(void)
{
	json_t *p =
	    json_pack("{s:i, s:{s:s}}", "version", FUSE_VIEW_VERSION + 1, "session", "id", "x");
	struct fuse_view v;
	TH_ASSERT_INT_EQ(fuse_view_parse(p, &v), GI_EUNSUPPORTED);
	fuse_view_destroy(&v);
	struct gi_buf out;
	gi_buf_init(&out, 0);
	TH_ASSERT_INT_EQ(fuse_report_text(p, &out), GI_EUNSUPPORTED);
	TH_ASSERT_INT_EQ(fuse_report_html(p, &out), GI_EUNSUPPORTED);
	TH_ASSERT_INT_EQ(out.len, 0);
	gi_buf_destroy(&out);
	json_t *recs = NULL, *cmp = NULL;
	TH_ASSERT_INT_EQ(fuse_rules_evaluate(p, NULL, &recs), GI_EUNSUPPORTED);
	TH_ASSERT_INT_EQ(fuse_compare(p, p, &cmp), GI_EUNSUPPORTED);
	TH_ASSERT(!recs && !cmp);
	json_t *arr = json_array();
	TH_ASSERT_INT_EQ(fuse_view_parse(arr, &v), GI_EINVAL);
	fuse_view_destroy(&v);
	fuse_view_destroy(NULL);
	json_decref(arr);
	json_decref(p);
}

static void view_caps_lists(void)
{
	json_t *errors = json_array();
	for (int i = 0; i < FUSE_VIEW_MAX_NAMES + 25; i++)
		json_array_append_new(errors, json_sprintf("error %d", i));
	json_t *p = json_pack("{s:i, s:o}", "version", 1, "errors", errors);
	struct fuse_view v;
	TH_ASSERT_OK(fuse_view_parse(p, &v));
	TH_ASSERT_INT_EQ(v.errors.len, FUSE_VIEW_MAX_NAMES);
	TH_ASSERT_INT_EQ(v.truncated, 25);
	fuse_view_destroy(&v);
	json_decref(p);
}

/* Issue 29: both reports say which estimated counts the budget cannot
 * stand behind, and how to count exactly. */
static void reports_mark_counts_not_firm(void)
{
	json_error_t err;
	json_t *p = json_loads(
	    "{\"version\": 1, \"session\": {\"id\": \"est\", \"snapshot_count\": 10},"
	    " \"tracing\": {\"mode\": \"budget\"},"
	    " \"trace_hotspots\": ["
	    "  {\"mfa\": \"App.Slow.f/1\", \"calls\": 1000, \"low\": 500, \"high\": 5000,"
	    "   \"firm\": false},"
	    "  {\"mfa\": \"App.Fast.g/1\", \"calls\": 2000, \"low\": 1900, \"high\": 2100,"
	    "   \"firm\": true}]}",
	    0, &err);
	TH_ASSERT(p);
	struct gi_buf html, text;
	gi_buf_init(&html, 0);
	gi_buf_init(&text, 0);
	TH_ASSERT_OK(fuse_report_html(p, &html));
	TH_ASSERT_OK(fuse_report_text(p, &text));
	const char *h = gi_buf_str(&html);
	TH_ASSERT_STR_CONTAINS(h, "<td class=\"n unsure\" title=\"an estimate the budget cannot");
	TH_ASSERT_STR_CONTAINS(h, "count exactly with --overhead 0\">?500-5000</td>");
	TH_ASSERT_STR_CONTAINS(h, "<td class=\"n\">2000 +/-5%</td>");
	TH_ASSERT_STR_CONTAINS(h, "id=\"unsure-counts\">?low-high: 1 estimated count the budget");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), "?500-5000");
	TH_ASSERT_STR_CONTAINS(gi_buf_str(&text), "count exactly with --overhead 0");
	gi_buf_destroy(&html);
	gi_buf_destroy(&text);
	json_decref(p);
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(view_reads_a_built_profile),   TH_TEST(view_reads_missing_as_unknown),
	    TH_TEST(view_refuses_a_newer_version), TH_TEST(view_caps_lists),
	    TH_TEST(reports_mark_counts_not_firm), TH_END,
	};
	return th_main(argc, argv, "unit_fuse_view", tests);
}
