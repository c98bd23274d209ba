/*
 * Unit tests of the /metrics writer (src/api/metrics.c) and the alert rules
 * (src/api/alert_rules.c): both formats, escaping of hostile label values,
 * the series cap, content negotiation, the rule file's checks and the
 * evaluation of rules read from a file. The exposition of a real monitor is
 * checked by promtool and a real Prometheus in tests/integration/fleet.c.
 * needs:
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/alert_rules.h"
#include "api/metrics.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/str.h"
#include "harness.h"

static char *render(enum api_metrics_format f, void (*fill)(struct api_metrics *), size_t cap)
{
	struct api_metrics mx;
	api_metrics_init(&mx, f, cap);
	fill(&mx);
	size_t len = 0;
	char *text = api_metrics_finish(&mx, &len);
	api_metrics_destroy(&mx);
	TH_ASSERT_INT_EQ(strlen(text), len);
	return text;
}

static void fill_counter(struct api_metrics *mx)
{
	api_metrics_family(mx, "giulia_x", API_METRICS_COUNTER, "Things.");
	const char *labels[] = {"node", "a@h", NULL};
	api_metrics_sample(mx, "", labels, 3);
	api_metrics_sample(mx, "", labels, NAN); /* unknown: left out */
}

static void counters_are_named_per_format(void)
{
	char *prom = render(API_METRICS_PROMETHEUS, fill_counter, 0);
	TH_ASSERT_STR_CONTAINS(prom, "# TYPE giulia_x_total counter\n");
	TH_ASSERT_STR_CONTAINS(prom, "giulia_x_total{node=\"a@h\"} 3\n");
	TH_ASSERT(strstr(prom, "# EOF") == NULL);
	TH_ASSERT(strstr(prom, "NaN") == NULL);
	gi_free(prom);
	char *om = render(API_METRICS_OPENMETRICS, fill_counter, 0);
	TH_ASSERT_STR_CONTAINS(om, "# TYPE giulia_x counter\n");
	TH_ASSERT_STR_CONTAINS(om, "giulia_x_total{node=\"a@h\"} 3\n");
	size_t n = strlen(om);
	TH_ASSERT(n > 6 && strcmp(om + n - 6, "# EOF\n") == 0);
	gi_free(om);
}

static void fill_hostile(struct api_metrics *mx)
{
	api_metrics_family(mx, "giulia_y", API_METRICS_GAUGE, "Back\\slash\nnewline.");
	/* A quote, a backslash, a newline, a control byte and invalid UTF-8. */
	const char *labels[] = {"module",
	                        "a\"b\\c\nd\x01"
	                        "e\xff\xc3(z",
	                        "ok", "Ä", NULL};
	api_metrics_sample(mx, "", labels, 0.25);
}

static void label_values_are_escaped(void)
{
	char *text = render(API_METRICS_PROMETHEUS, fill_hostile, 0);
	TH_ASSERT_STR_CONTAINS(text, "# HELP giulia_y Back\\\\slash\\nnewline.\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_y{module=\"a\\\"b\\\\c\\nd?e?"
	                             "?(z\",ok=\"\xc3\x84\"} 0.25\n");
	/* Every line is a comment or name{...} value: no line was broken. */
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		TH_ASSERT(line[0] == '#' || GI_STR_STARTS(line, "giulia_"));
	gi_free(text);
}

static void fill_numbers(struct api_metrics *mx)
{
	api_metrics_family(mx, "giulia_z_seconds", API_METRICS_HISTOGRAM, "Latency.");
	const double bounds[] = {0.0025, 0.1, 1};
	const unsigned long long counts[] = {1, 2, 0, 4};
	api_metrics_histogram(mx, NULL, bounds, counts, 3, 12.5);
	api_metrics_family(mx, "giulia_big", API_METRICS_GAUGE, "Big.");
	api_metrics_sample(mx, "", NULL, 5523600);
	api_metrics_sample(mx, "", NULL, INFINITY);
}

static void histograms_and_numbers(void)
{
	char *text = render(API_METRICS_PROMETHEUS, fill_numbers, 0);
	TH_ASSERT_STR_CONTAINS(text, "giulia_z_seconds_bucket{le=\"0.0025\"} 1\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_z_seconds_bucket{le=\"0.1\"} 3\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_z_seconds_bucket{le=\"1\"} 3\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_z_seconds_bucket{le=\"+Inf\"} 7\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_z_seconds_sum 12.5\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_z_seconds_count 7\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_big 5523600\n");
	TH_ASSERT_STR_CONTAINS(text, "giulia_big +Inf\n");
	gi_free(text);
}

static void fill_many(struct api_metrics *mx)
{
	api_metrics_family(mx, "giulia_many", API_METRICS_GAUGE, "Many.");
	char v[16];
	for (int i = 0; i < 100; i++) {
		snprintf(v, sizeof(v), "%d", i);
		const char *labels[] = {"i", v, NULL};
		api_metrics_sample(mx, "", labels, i);
	}
}

static void the_series_cap_holds_and_is_reported(void)
{
	char *text = render(API_METRICS_PROMETHEUS, fill_many, 10);
	TH_ASSERT_STR_CONTAINS(text, "giulia_many{i=\"9\"} 9\n");
	TH_ASSERT(strstr(text, "giulia_many{i=\"10\"}") == NULL);
	TH_ASSERT_STR_CONTAINS(text, "giulia_metrics_series_dropped 90\n");
	gi_free(text);
}

static void content_negotiation(void)
{
	TH_ASSERT_INT_EQ(api_metrics_negotiate(NULL), API_METRICS_PROMETHEUS);
	TH_ASSERT_INT_EQ(api_metrics_negotiate("text/plain"), API_METRICS_PROMETHEUS);
	TH_ASSERT_INT_EQ(api_metrics_negotiate("*/*"), API_METRICS_PROMETHEUS);
	/* What Prometheus 2.x sends. */
	TH_ASSERT_INT_EQ(api_metrics_negotiate("application/openmetrics-text;version=1.0.0,"
	                                       "application/openmetrics-text;version=0.0.1;q=0.75,"
	                                       "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
	                 API_METRICS_OPENMETRICS);
	TH_ASSERT_INT_EQ(api_metrics_negotiate("text/plain, application/openmetrics-text; q=0"),
	                 API_METRICS_PROMETHEUS);
	TH_ASSERT_STR_CONTAINS(api_metrics_content_type(API_METRICS_OPENMETRICS),
	                       "application/openmetrics-text");
	TH_ASSERT_STR_CONTAINS(api_metrics_content_type(API_METRICS_PROMETHEUS), "version=0.0.4");
}

/* ---- alert rules ---- */

static int parse(const char *text, struct api_alert_rules **out, char *err, size_t size)
{
	return api_alert_rules_parse(text, strlen(text), out, err, size);
}

static void expect_refused(const char *text, const char *why)
{
	struct api_alert_rules *r = NULL;
	char err[512] = "";
	int rc = parse(text, &r, err, sizeof(err));
	TH_ASSERT_MSG(rc != 0, "accepted: %s", text);
	TH_ASSERT(r == NULL);
	TH_ASSERT_STR_CONTAINS(err, why);
}

static void rule_files_are_checked(void)
{
	expect_refused("", "not JSON");
	expect_refused("[]", "must be a JSON object");
	expect_refused("{\"rules\":[]}", "\"version\" must be 1");
	expect_refused("{\"version\":2,\"rules\":[]}", "\"version\" must be 1");
	expect_refused("{\"version\":1,\"rules\":[],\"extra\":1}", "unknown top-level field");
	expect_refused("{\"version\":1,\"rules\":{}}", "\"rules\" must be an array");
	expect_refused("{\"version\":1,\"rules\":[1]}", "rule 1: must be an object");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"Bad Name\",\"metric\":\"run_queue\","
	               "\"warning\":1}]}",
	               "\"name\" must be");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"nope\","
	               "\"warning\":1}]}",
	               "unknown level metric \"nope\"");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"run_queue\"}]}",
	               "give \"warning\", \"critical\" or both");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"run_queue\","
	               "\"warning\":5,\"critical\":1}]}",
	               "\"critical\" must be at least \"warning\"");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"run_queue\","
	               "\"warning\":\"5\"}]}",
	               "must be finite numbers");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"run_queue\","
	               "\"warning\":1,\"colour\":\"red\"}]}",
	               "unknown field \"colour\"");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"run_queue\","
	               "\"warning\":1},{\"name\":\"a\",\"metric\":\"run_queue\",\"warning\":2}]}",
	               "defined twice");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"run_queue\","
	               "\"warning\":1,\"min_points\":3}]}",
	               "belong to trend rules");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"kind\":\"trend\",\"metric\":"
	               "\"memory_total\",\"warning\":1,\"min_points\":1}]}",
	               "\"min_points\" must be a whole number from 2 to 720");
	expect_refused("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"run_queue\","
	               "\"warning\":1,\"summary\":\"two\\nlines\"}]}",
	               "\"summary\" must be text");
	expect_refused("{\"version\":1,\"version\":1,\"rules\":[]}", "not JSON");
	/* Too many rules, and a file over the size cap. */
	char *big = gi_malloc(API_ALERT_RULES_FILE_MAX + 2);
	memset(big, ' ', API_ALERT_RULES_FILE_MAX + 1);
	big[API_ALERT_RULES_FILE_MAX + 1] = '\0';
	expect_refused(big, "over");
	gi_free(big);
	char many[16384] = "{\"version\":1,\"rules\":[";
	for (int i = 0; i < API_ALERT_RULES_MAX + 1; i++) {
		char one[128];
		snprintf(one, sizeof(one),
		         "%s{\"name\":\"r%d\",\"metric\":\"run_queue\",\"warning\":1}",
		         i ? "," : "", i);
		strncat(many, one, sizeof(many) - strlen(many) - 1);
	}
	strncat(many, "]}", sizeof(many) - strlen(many) - 1);
	expect_refused(many, "at most");
}

static json_t *snapshot(double util, double processes, double schedulers)
{
	json_t *s =
	    json_pack("{s:i, s:f, s:{s:f}, s:{s:f}, s:{s:f, s:i}}", "version", 1,
	              "schedulers_online", schedulers, "scheduler_utilisation", "total", util,
	              "run_queue", "total", 3.0, "processes", "count", processes, "limit", 1000);
	TH_ASSERT(s != NULL);
	return s;
}

static bool fired(json_t *alerts, const char *rule, const char *severity)
{
	size_t i;
	json_t *a;
	json_array_foreach(alerts, i, a)
	{
		if (strcmp(json_string_value(json_object_get(a, "rule")), rule) == 0 &&
		    strcmp(json_string_value(json_object_get(a, "severity")), severity) == 0)
			return true;
	}
	return false;
}

static void rules_from_a_file_fire(void)
{
	const char *file =
	    "{\"version\":1,\"builtin\":true,\"rules\":["
	    " {\"name\":\"scheduler_utilisation_high\",\"metric\":\"scheduler_utilisation\","
	    "  \"warning\":0.3,\"critical\":0.6},"
	    " {\"name\":\"few_processes\",\"metric\":\"process_count\",\"direction\":\"below\","
	    "  \"warning\":50,\"critical\":10,\"summary\":\"processes alive\"},"
	    " {\"name\":\"run_queue_per_scheduler\",\"metric\":\"run_queue\",\"per\":\"scheduler\","
	    "  \"warning\":1}]}";
	struct api_alert_rules *r = NULL;
	char err[512];
	TH_ASSERT_OK(parse(file, &r, err, sizeof(err)));
	/* The built-in eight, one of them replaced by name, and two more. */
	TH_ASSERT_INT_EQ(api_alert_rules_count(r), 10);
	TH_ASSERT_STR_EQ(api_alert_rules_name(r, 0), "scheduler_utilisation_high");
	json_t *s = snapshot(0.4, 5, 2);
	json_t *a = api_alert_rules_eval(r, s, NULL);
	TH_ASSERT(fired(a, "scheduler_utilisation_high", "warning"));
	TH_ASSERT(fired(a, "few_processes", "critical"));
	TH_ASSERT(fired(a, "run_queue_per_scheduler", "warning")); /* 3 >= 1 x 2 */
	json_decref(a);
	json_decref(s);
	s = snapshot(0.1, 500, 4);
	a = api_alert_rules_eval(r, s, NULL);
	TH_ASSERT_INT_EQ(json_array_size(a), 0); /* 3 < 1 x 4; 500 processes; 10% */
	json_decref(a);
	json_decref(s);
	api_alert_rules_free(r);

	/* builtin: false keeps only the file's rules. */
	TH_ASSERT_OK(parse("{\"version\":1,\"builtin\":false,\"rules\":[{\"name\":\"q\","
	                   "\"kind\":\"trend\",\"metric\":\"memory_total\",\"warning\":5}]}",
	                   &r, err, sizeof(err)));
	TH_ASSERT_INT_EQ(api_alert_rules_count(r), 1);
	json_t *points = json_array();
	for (int i = 0; i < 6; i++)
		json_array_append_new(points, json_pack("{s:I, s:f}", "timestamp_ms",
		                                        (json_int_t)(i * 1000), "memory_total",
		                                        1e8 + i * 1e7));
	a = api_alert_rules_eval(r, NULL, points);
	TH_ASSERT(fired(a, "q", "warning"));
	json_decref(a);
	json_decref(points);
	api_alert_rules_free(r);
}

static void rule_files_are_loaded_with_their_name_in_errors(void)
{
	char path[700], err[1024];
	snprintf(path, sizeof(path), "%s/rules.json", th_tmpdir());
	FILE *f = fopen(path, "w");
	TH_ASSERT(f != NULL);
	fputs("{\"version\":1,\"rules\":[{\"name\":\"a\",\"metric\":\"nope\",\"warning\":1}]}", f);
	fclose(f);
	struct api_alert_rules *r = NULL;
	TH_ASSERT_INT_EQ(api_alert_rules_load(path, &r, err, sizeof(err)), GI_EINVAL);
	TH_ASSERT_STR_CONTAINS(err, path);
	TH_ASSERT_STR_CONTAINS(err, "unknown level metric");
	snprintf(path, sizeof(path), "%s/missing.json", th_tmpdir());
	TH_ASSERT_INT_EQ(api_alert_rules_load(path, &r, err, sizeof(err)), GI_EIO);
	TH_ASSERT_STR_CONTAINS(err, "cannot be read");
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(counters_are_named_per_format),
	    TH_TEST(label_values_are_escaped),
	    TH_TEST(histograms_and_numbers),
	    TH_TEST(the_series_cap_holds_and_is_reported),
	    TH_TEST(content_negotiation),
	    TH_TEST(rule_files_are_checked),
	    TH_TEST(rules_from_a_file_fire),
	    TH_TEST(rule_files_are_loaded_with_their_name_in_errors),
	    TH_END,
	};
	return th_main(argc, argv, "unit_api_metrics", tests);
}
